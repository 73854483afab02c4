"""One call frame: the machine state of a running message, and what it needs of its machine.

The frame sits at the bottom of the EVM's core: the instructions, the block compiler and the
inspector receive frames, and the interpreter makes them. So that nothing here imports
those modules, not even for types, the machine a frame runs in is described by protocols of
what the code below the interpreter uses of it (``Machine``, ``CodeTables``, ``Observer``);
``secant.evm.interpreter.Evm`` satisfies them structurally. They are types only: at run time
``frame.evm`` is the ``Evm`` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from secant.evm.opcodes import CREATE, CREATE2

if TYPE_CHECKING:
    from secant.evm.env import BlockEnv
    from secant.evm.forks import Fork
    from secant.evm.state import TxState, WorldState
    from secant.types import BranchEvent

BlockFn = Callable[[list[int], Any], int]
"""A compiled basic block: runs on ``(stack, frame)`` and returns the pc of the next block."""


class CodeTables(Protocol):
    """What a frame reads of its code's analysis (``secant.evm.analysis.CodeAnalysis``)."""

    jumpdests: frozenset[int]

    def blocks_for(self, variant: int) -> list[BlockFn | None]:
        """The compiled table of ``variant``, indexed by pc."""
        ...

    def hooked_blocks_for(self, variant: int, hooks: frozenset[int]) -> list[BlockFn | None]:
        """The table of ``variant`` whose blocks at ``hooks`` call ``on_hooked_block``."""
        ...


class Observer(Protocol):
    """The hooks that code below the interpreter calls on the machine's inspector.

    ``secant.evm.inspector.Inspector`` has these and the rest (the generated blocks call
    more of them, the interpreter calls the message hooks on its own ``Inspector``).
    """

    def on_block(self, frame: Frame, pc: int) -> None:
        """Execution entered the basic block starting at ``pc``."""
        ...

    def on_hooked_block(self, frame: Frame, pc: int) -> None:
        """Execution is entering the block at ``pc``, which the hooks name."""
        ...

    def on_selfdestruct(self, frame: Frame, beneficiary: int, balance: int) -> None:
        """SELFDESTRUCT sends ``balance`` to ``beneficiary``."""
        ...


class Machine(Protocol):
    """What frames, instructions and interceptors use of the machine that runs them.

    ``secant.evm.interpreter.Evm`` is the machine; see it for what each member means.
    ``env`` is assigned by interceptors (``secant.evm.intercept.set_block_env``).
    """

    env: BlockEnv
    state: WorldState
    fork: Fork
    variant: int
    branch_append: Callable[[BranchEvent], None] | None
    block_hooks: Mapping[bytes, frozenset[int]] | None
    origin: int
    gas_price: int
    blob_hashes: tuple[bytes, ...]
    blob_base_fee: int

    @property
    def inspector(self) -> Observer | None:
        """The inspector attached to the run (None: the plain tables run)."""
        ...

    @property
    def cheatcodes(self) -> object | None:
        """The message interceptor installed (None: none)."""
        ...

    def analyze(self, code: bytes, code_hash: bytes) -> CodeTables:
        """The cached analysis of ``code`` for the machine's fork."""
        ...

    def begin_call(self, parent: Frame, kind: int, caller: int, address: int,
                   code_address: int, value: int, transfer: bool, is_static: bool, gas: int,
                   data: bytes) -> None:
        """Start a CALL-family message of ``parent`` (its gas is charged)."""
        ...

    def begin_create(self, parent: Frame, kind: int, value: int, initcode: bytes,
                     address: int, salt: int = 0) -> None:
        """Start a CREATE or CREATE2 of ``parent`` (its gas is charged)."""
        ...


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
        evm: Machine,
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


