"""The EVM driver: runs messages as a loop over frames, never recursing in Python.

A CALL or CREATE that needs a new frame raises ``Suspend`` inside its instruction; the driver
then runs the child frame and, when it halts, resumes the parent with the result. A chain of
1024 nested calls is therefore 1024 ``Frame`` objects, not 1024 Python stack frames.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from secant.evm.analysis import PLAIN, RECORDED, STEPPED, TRACED, CodeAnalysis, analyze
from secant.evm.crypto import EMPTY_CODE_HASH, keccak256
from secant.evm.errors import ExceptionalHalt, OutOfGas, Revert, StaticViolation, Stop, Suspend
from secant.evm.forks import DEFAULT_FORK, Fork
from secant.evm.frame import Frame
from secant.evm.instructions.system import create2_address, create_address
from secant.evm.intercept import DUMMY_CREATE_ADDRESS
from secant.evm.opcodes import CALL, CREATE, CREATE2, DELEGATECALL
from secant.evm.precompiles import PrecompileFailure, PrecompileFn, precompile_table

if TYPE_CHECKING:
    from secant.evm.env import BlockEnv
    from secant.evm.inspector import Inspector
    from secant.evm.intercept import Interceptor
    from secant.evm.state import WorldState
    from secant.types import BranchEvent

STACK_DEPTH_LIMIT = 1024
# EIP-3541: new code may not start with this byte (reserved for the EVM object format).
EOF_PREFIX = 0xEF
OK, REVERTED, FAILED, SUSPENDED = 0, 1, 2, 3


@dataclass
class MessageResult:
    """Outcome of a top-level message."""

    success: bool
    reverted: bool
    output: bytes
    gas_left: int
    error: str | None = None
    created_address: int | None = None


_PRECOMPILES: dict[str, dict[int, PrecompileFn]] = {}


def _precompiles(fork: str) -> dict[int, PrecompileFn]:
    """The precompiles of ``fork``, built once (every transaction makes an ``Evm``)."""
    table = _PRECOMPILES.get(fork)
    if table is None:
        table = _PRECOMPILES[fork] = precompile_table(fork)
    return table


def _loop_plain(f: Frame) -> None:
    """Run ``f``'s blocks until an exception ends or suspends it: the uninstrumented loop."""
    blocks = f.blocks
    stack = f.stack
    pc = f.pc
    while True:
        pc = blocks[pc](stack, f)  # type: ignore[misc]


def _loop_recorded(f: Frame) -> None:
    """Like ``_loop_plain``, keeping every block start in the frame's trail (no call)."""
    blocks = f.blocks
    stack = f.stack
    visit = f.trail.append
    pc = f.pc
    while True:
        visit(pc)
        pc = blocks[pc](stack, f)  # type: ignore[misc]


def _loop_traced(f: Frame) -> None:
    """Like ``_loop_plain``, reporting every block entry to the inspector."""
    blocks = f.blocks
    stack = f.stack
    on_block = f.evm.inspector.on_block  # type: ignore[union-attr]
    pc = f.pc
    while True:
        on_block(f, pc)
        pc = blocks[pc](stack, f)  # type: ignore[misc]


def _execute(f: Frame, loop: Callable[[Frame], None]) -> int:
    """Run a frame with ``loop`` and map how it stopped to a status."""
    try:
        loop(f)
    except Stop:
        return OK
    except Suspend:
        return SUSPENDED
    except Revert:
        return REVERTED
    except ExceptionalHalt as error:
        f.error = error.reason
        return FAILED
    raise AssertionError("the frame loop only ends by an exception")  # pragma: no cover


class Evm:
    """Executes messages against a ``WorldState`` in a block environment under a fork.

    Transaction-level values (origin, gas price, blob hashes) are set by the caller
    (``transaction.apply_transaction`` does it) before ``execute``. ``cheatcodes`` is an
    optional :class:`~secant.evm.intercept.Interceptor` (see that module); None costs one
    attribute check when a message starts and one when it ends.
    """

    def __init__(
        self,
        state: WorldState,
        env: BlockEnv,
        fork: Fork = DEFAULT_FORK,
        inspector: Inspector | None = None,
        cheatcodes: Interceptor[Evm] | None = None,
    ) -> None:
        self.state = state
        self.env = env
        self.fork = fork
        self.inspector = inspector
        self.cheatcodes = cheatcodes
        # With a branch log, JUMPIs append to it and frames keep their block trail
        # (secant.evm.inspector); the stepped tables always call the hooks.
        self.branch_append: Callable[[BranchEvent], None] | None = None
        self.block_hooks: Mapping[bytes, frozenset[int]] | None = None
        if inspector is None:
            self.variant = PLAIN
            self._loop = _loop_plain
        else:
            self.block_hooks = inspector.block_hooks
            log = inspector.branch_log
            if inspector.wants_steps:
                self.variant, self._loop = STEPPED, _loop_traced
            elif log is not None:
                self.variant, self._loop = RECORDED, _loop_recorded
                self.branch_append = log.append
            else:
                self.variant, self._loop = TRACED, _loop_traced
        self.precompiles: Mapping[int, PrecompileFn] = _precompiles(fork.name)
        self.origin = 0
        self.gas_price = 0
        self.blob_hashes: tuple[bytes, ...] = ()
        self.blob_base_fee = (
            env.blob_base_fee(fork.blob_base_fee_update_fraction)
            if fork.max_blobs_per_block
            else 0
        )
        self._next: Frame | None = None

    def analyze(self, code: bytes, code_hash: bytes) -> CodeAnalysis:
        """The cached analysis of ``code`` for this EVM's fork."""
        return analyze(code, code_hash, self.fork)

    # ------------------------------------------------------------------ top level
    def call(
        self,
        caller: int,
        to: int,
        data: bytes,
        gas: int,
        value: int = 0,
        code_address: int | None = None,
        is_static: bool = False,
    ) -> MessageResult:
        """Run a message call (what a transaction to ``to`` does after fees)."""
        state = self.state
        snapshot = state.snapshot()
        if value:
            state.transfer(caller, to, value)
        code_address = to if code_address is None else code_address
        cheats = self.cheatcodes
        if cheats is not None and code_address == cheats.address:
            ok, gas_left, output = self._answer(cheats, None, CALL, caller, to, value, is_static,
                                                gas, data, 0, snapshot)
            return MessageResult(ok, not ok, output, gas_left)
        started = self._enter(
            CALL, caller, to, code_address, value, is_static, gas, data, 0, snapshot, None
        )
        if isinstance(started, Frame):
            return self._drive(started)
        ok, gas_left, output = started
        return MessageResult(ok, False, output, gas_left, None if ok else "precompile failure")

    def create(self, caller: int, address: int, initcode: bytes, gas: int, value: int = 0,
               depth: int = 0) -> MessageResult:
        """Run a contract creation at ``address`` (collision checks are the caller's).

        ``depth`` is 0 for a transaction's creation; a cheatcode that deploys in the middle
        of one (``vm.deployCode``) runs it nested, below the frame that asked.
        """
        frame = self._create_frame(CREATE, caller, address, value, initcode, gas, depth, None)
        result = self._drive(frame)
        result.created_address = address if result.success else None
        return result

    # ------------------------------------------------------------------ message entry
    def _enter(
        self, kind: int, caller: int, address: int, code_address: int, value: int,
        is_static: bool, gas: int, data: bytes, depth: int, snapshot: int,
        parent: Frame | None,
    ) -> Frame | tuple[bool, int, bytes]:
        """Start a call whose value transfer is done: a frame to run, or an inline result."""
        inspector = self.inspector
        if inspector is not None:
            inspector.on_message_start(kind, caller, address, code_address, value, gas, data,
                                       depth, is_static)
        precompile = self.precompiles.get(code_address)
        if precompile is not None:
            try:
                used, output = precompile(data, gas)
                result = (True, gas - used, output)
            except PrecompileFailure:
                self.state.revert(snapshot)
                result = (False, 0, b"")
            if inspector is not None:
                inspector.on_message_end(kind, address, depth, result[0], False, result[2],
                                         result[1], None if result[0] else "precompile failure",
                                         None)
            return result
        account = self.state.accounts.get(code_address)
        if account is None or not account.code:
            if inspector is not None:
                inspector.on_message_end(kind, address, depth, True, False, b"", gas, None, None)
            return (True, gas, b"")
        return Frame(self, kind, caller, address, code_address, value, data, account.code,
                     account.code_hash, gas, depth, is_static, snapshot, parent)

    def _create_frame(
        self, kind: int, caller: int, address: int, value: int, initcode: bytes, gas: int,
        depth: int, parent: Frame | None,
    ) -> Frame:
        """Set up a creation: fresh account (nonce 1), value moved, initcode frame."""
        state = self.state
        snapshot = state.snapshot()
        state.destroy_storage(address)
        state.mark(state.tx.created, address)
        state.increment_nonce(address)
        if value:
            state.transfer(caller, address, value)
        if self.inspector is not None:
            self.inspector.on_message_start(kind, caller, address, address, value, gas, b"",
                                            depth, False)
        code_hash = keccak256(initcode) if initcode else EMPTY_CODE_HASH
        return Frame(self, kind, caller, address, address, value, b"", initcode, code_hash, gas,
                     depth, False, snapshot, parent)

    def begin_call(
        self, parent: Frame, kind: int, caller: int, address: int, code_address: int,
        value: int, transfer: bool, is_static: bool, gas: int, data: bytes,
    ) -> None:
        """Called by CALL-family instructions after gas is charged."""
        parent.return_data = b""
        if parent.depth >= STACK_DEPTH_LIMIT:
            parent.gas += gas
            parent.stack.append(0)
            return
        cheats = self.cheatcodes
        if cheats is not None:
            self._begin_call_cheated(cheats, parent, kind, caller, address, code_address,
                                     value, transfer, is_static, gas, data)
            return
        state = self.state
        snapshot = state.snapshot()
        if transfer and value:
            state.transfer(caller, address, value)
        started = self._enter(kind, caller, address, code_address, value, is_static, gas, data,
                              parent.depth + 1, snapshot, parent)
        if isinstance(started, Frame):
            self._next = started
            raise Suspend
        ok, gas_left, output = started
        self._return_inline(parent, ok, gas_left, output)

    def _return_inline(self, parent: Frame, ok: bool, gas_left: int, output: bytes) -> None:
        """Hand a message that ran no frame its result: gas, return data, status, memory."""
        parent.gas += gas_left
        parent.return_data = output
        parent.stack.append(1 if ok else 0)
        size = parent.ret_size
        if size and output:
            n = min(size, len(output))
            parent.memory[parent.ret_offset : parent.ret_offset + n] = output[:n]

    def _begin_call_cheated(
        self, cheats: Interceptor[Evm], parent: Frame, kind: int, caller: int, address: int,
        code_address: int, value: int, transfer: bool, is_static: bool, gas: int, data: bytes,
    ) -> None:
        """``begin_call`` with an interceptor: answered calls, pranked senders, reported ends.

        The CALL instruction left the balance check to here (the sender may be pranked).
        """
        state = self.state
        depth = parent.depth + 1
        if code_address == cheats.address:
            if transfer and value and state.balance(caller) < value:
                self._return_inline(parent, False, gas, b"")
                return
            snapshot = state.snapshot()
            if transfer and value:
                state.transfer(caller, address, value)
            ok, gas_left, output = self._answer(cheats, parent, kind, caller, address, value,
                                                is_static, gas, data, depth, snapshot)
            self._return_inline(parent, ok, gas_left, output)
            return
        watching = cheats.watching
        if watching and kind != DELEGATECALL:
            caller = cheats.sender_for(self, parent, kind, caller, address)
        if transfer and value and state.balance(caller) < value:
            ended = (cheats.message_end(self, kind, address, depth, False, b"") if watching
                     else None)
            ok, output = ended if ended is not None else (False, b"")
            self._return_inline(parent, ok, gas, output)
            return
        snapshot = state.snapshot()
        if transfer and value:
            state.transfer(caller, address, value)
        started = self._enter(kind, caller, address, code_address, value, is_static, gas, data,
                              depth, snapshot, parent)
        if isinstance(started, Frame):
            self._next = started
            raise Suspend
        ok, gas_left, output = started
        ended = cheats.message_end(self, kind, address, depth, ok, output) if watching else None
        if ended is not None:
            if ok and not ended[0]:
                state.revert(snapshot)
            ok, output = ended
        self._return_inline(parent, ok, gas_left, output)

    def _answer(
        self, cheats: Interceptor[Evm], parent: Frame | None, kind: int, caller: int, address: int,
        value: int, is_static: bool, gas: int, data: bytes, depth: int, snapshot: int,
    ) -> tuple[bool, int, bytes]:
        """Let the interceptor answer a message to its address (inspected like a precompile)."""
        inspector = self.inspector
        if inspector is not None:
            inspector.on_message_start(kind, caller, address, cheats.address, value, gas, data,
                                       depth, is_static)
        ok, gas_left, output = cheats.answer(self, parent, caller, data, gas, depth, is_static)
        if not ok:
            self.state.revert(snapshot)
        if inspector is not None:
            inspector.on_message_end(kind, address, depth, ok, not ok, output, gas_left, None,
                                     None)
        return ok, gas_left, output

    def begin_create(
        self, parent: Frame, kind: int, value: int, initcode: bytes, address: int,
        salt: int = 0,
    ) -> None:
        """Called by CREATE/CREATE2 after gas is charged (generic_create in the specs).

        ``salt`` is CREATE2's (an interceptor that changes the sender needs it).
        """
        fork = self.fork
        if fork.initcode_limit and len(initcode) > fork.max_initcode_size:
            raise OutOfGas
        child_gas = parent.gas - parent.gas // 64
        parent.gas -= child_gas
        if parent.is_static:
            raise StaticViolation
        parent.return_data = b""
        state = self.state
        creator = parent.address
        cheats = self.cheatcodes
        if cheats is not None and cheats.watching:
            creator = cheats.sender_for(self, parent, kind, creator, 0)
            if creator != parent.address:
                address = (create2_address(creator, salt, initcode) if kind == CREATE2
                           else create_address(creator, state.nonce(creator)))
        sender = state.accounts.get(creator)  # None only for a pranked sender
        if (
            (sender.balance if sender is not None else 0) < value
            or (sender is not None and sender.nonce == 2**64 - 1)
            or parent.depth >= STACK_DEPTH_LIMIT
        ):
            parent.gas += child_gas
            self._create_failed_early(cheats, parent, kind)
            return
        state.mark(state.tx.warm_addresses, address)
        target = state.accounts.get(address)
        if target is not None and (target.code or target.nonce or target.storage):
            state.increment_nonce(creator)
            self._create_failed_early(cheats, parent, kind)
            return
        state.increment_nonce(creator)
        self._next = self._create_frame(kind, creator, address, value, initcode,
                                        child_gas, parent.depth + 1, parent)
        raise Suspend

    def _create_failed_early(self, cheats: Interceptor[Evm] | None, parent: Frame,
                             kind: int) -> None:
        """A creation that never ran its initcode: 0 to the parent (the interceptor may differ)."""
        if cheats is not None and cheats.watching:
            ended = cheats.message_end(self, kind, 0, parent.depth + 1, False, b"")
            if ended is not None and ended[0]:
                parent.stack.append(DUMMY_CREATE_ADDRESS)
                return
            if ended is not None:
                parent.return_data = ended[1]
        parent.stack.append(0)

    # ------------------------------------------------------------------ driving
    def _drive(self, frame: Frame) -> MessageResult:
        loop = self._loop
        while True:
            status = _execute(frame, loop)
            if status == SUSPENDED:
                frame = self._next  # type: ignore[assignment]
                continue
            parent, status = self._finish(frame, status)
            if parent is None:
                return MessageResult(
                    status == OK, status == REVERTED, frame.output, frame.gas, frame.error
                )
            frame = parent

    def _finish(self, f: Frame, status: int) -> tuple[Frame | None, int]:
        """Settle a halted frame, hand its result to the parent; return (parent, status).

        The status can change here: a creation whose code fails the deposit checks fails.
        """
        state = self.state
        is_create = f.kind == CREATE or f.kind == CREATE2
        if status == OK and is_create:
            code = f.output
            deposit = 200 * len(code)
            if code and code[0] == EOF_PREFIX:
                f.error = "created code starts with 0xEF"
            elif f.gas < deposit:
                f.error = "out of gas (code deposit)"
            elif len(code) > self.fork.max_code_size:
                f.error = "created code exceeds the size limit"
            else:
                f.gas -= deposit
                state.set_code(f.address, code)
            if f.error is not None:
                status = FAILED
        if status != OK:
            state.revert(f.snapshot)
            if status == FAILED:
                f.gas = 0
                f.output = b""
        created = f.address
        cheats = self.cheatcodes
        if cheats is not None and cheats.watching:
            ended = cheats.message_end(self, f.kind, f.address, f.depth, status == OK, f.output)
            if ended is not None:
                ok, f.output = ended
                f.error = None
                if ok and status != OK:
                    status = OK
                    created = DUMMY_CREATE_ADDRESS  # the failed creation left no contract
                elif not ok:
                    if status == OK:
                        state.revert(f.snapshot)
                    status = REVERTED
        inspector = self.inspector
        if inspector is not None:
            inspector.on_message_end(f.kind, f.address, f.depth, status == OK,
                                     status == REVERTED, f.output, f.gas, f.error, f)
        parent = f.parent
        if parent is None:
            if is_create and status == OK:
                f.output = b""
            return None, status
        parent.gas += f.gas
        if is_create:
            parent.return_data = f.output if status == REVERTED else b""
            parent.stack.append(created if status == OK else 0)
        else:
            output = f.output
            parent.return_data = output
            parent.stack.append(1 if status == OK else 0)
            size = parent.ret_size
            if size and output:
                n = min(size, len(output))
                parent.memory[parent.ret_offset : parent.ret_offset + n] = output[:n]
        return parent, status
