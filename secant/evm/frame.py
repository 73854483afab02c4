"""One call frame: the machine state of a running message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from secant.evm.opcodes import CREATE, CREATE2

if TYPE_CHECKING:
    from secant.evm.blockgen import BlockFn
    from secant.evm.env import BlockEnv
    from secant.evm.interpreter import Evm
    from secant.evm.state import TxState, WorldState


class Frame:
    """Machine state of one message (call or create) while it runs.

    Instructions receive the frame and mutate it directly; the fields are plain attributes
    (``__slots__``) because they are read on every instruction.
    """

    __slots__ = (
        "branch_log",
        "cmp",
        "evm",
        "state",
        "tx",
        "env",
        "stack",
        "memory",
        "pc",
        "gas",
        "code",
        "code_hash",
        "blocks",
        "jumpdests",
        "caller",
        "address",
        "code_address",
        "value",
        "calldata",
        "is_static",
        "depth",
        "kind",
        "return_data",
        "output",
        "snapshot",
        "parent",
        "ret_offset",
        "ret_size",
        "error",
        "trail",
    )

    def __init__(
        self,
        evm: Evm,
        kind: int,
        caller: int,
        address: int,
        code_address: int,
        value: int,
        calldata: bytes,
        code: bytes,
        code_hash: bytes,
        gas: int,
        depth: int,
        is_static: bool,
        snapshot: int,
        parent: Frame | None,
    ) -> None:
        self.evm = evm
        self.state: WorldState = evm.state
        self.tx: TxState = evm.state.tx
        self.env: BlockEnv = evm.env
        self.stack: list[int] = []
        self.memory = bytearray()
        self.pc = 0
        self.gas = gas
        self.code = code
        self.code_hash = code_hash
        analysis = evm.analyze(code, code_hash)
        hooks = evm.block_hooks
        watched = hooks.get(code_hash) if hooks is not None else None
        self.blocks: list[BlockFn | None] = (
            analysis.hooked_blocks_for(evm.variant, watched) if watched
            else analysis.blocks_for(evm.variant))
        # The recorded tables' instrumentation (secant.evm.inspector): the branch log's
        # append, and the starts of the blocks this frame ran, in order.
        self.branch_log = evm.branch_append
        self.trail: list[int] = []
        self.jumpdests: frozenset[int] = analysis.jumpdests
        self.kind = kind
        self.caller = caller
        self.address = address
        self.code_address = code_address
        self.value = value
        self.calldata = calldata
        self.is_static = is_static
        self.depth = depth
        # Traced runs only: the comparison whose result last left a basic block on the stack
        # (value, relation, lhs, rhs), for a JUMPI in a later block (solc's && and ||).
        self.cmp: tuple[int, str, int, int] | None = None
        self.return_data = b""
        self.output = b""
        self.snapshot = snapshot
        self.parent = parent
        self.ret_offset = 0
        self.ret_size = 0
        self.error: str | None = None

    @property
    def is_create(self) -> bool:
        """Whether this frame runs initcode."""
        return self.kind == CREATE or self.kind == CREATE2

    def __repr__(self) -> str:
        return f"Frame(depth={self.depth}, address={self.address:#x}, pc={self.pc}, gas={self.gas})"


