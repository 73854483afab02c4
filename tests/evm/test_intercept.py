"""The interception hook: answered messages, changed senders, replaced outcomes, block changes.

Stub interceptors stand in for the cheatcodes (``tests/chain/test_cheatcodes.py`` tests the
real ones from Solidity).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from secant.evm.env import BlockEnv
from secant.evm.instructions.system import create_address
from secant.evm.intercept import HEVM_ADDRESS, Interceptor, set_block_env
from secant.evm.interpreter import Evm
from secant.evm.opcodes import CALL, CREATE
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, TxResult, apply_transaction
from tests.evm.asm import asm

if TYPE_CHECKING:
    from secant.evm.frame import Frame

SENDER = 0x5E17DE2
TARGET = 0xC0DE
OTHER = 0x0DD
PRANKED = 0xBEEF
GAS = "PUSH3 0xffffff"

RETURN_RETURNDATA = "RETURNDATASIZE PUSH1 0 PUSH1 0 RETURNDATACOPY RETURNDATASIZE PUSH1 0 RETURN"
RETURN_TOP = "PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN"


def static_call(address: int) -> str:
    return f"PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 PUSH20 {address} {GAS} STATICCALL POP"


def call(address: int, value: int = 0) -> str:
    return f"PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 {value} PUSH20 {address} {GAS} CALL"


def run(code: bytes, interceptor: Interceptor | None, others: dict[int, bytes] | None = None,
        rich: tuple[int, int] | None = None) -> tuple[TxResult, WorldState]:
    """One transaction to ``code`` at TARGET; ``rich`` is an extra (address, balance)."""
    state = WorldState()
    state.set_account(SENDER, balance=10**24)
    state.set_account(TARGET, code=code, balance=10**18)
    for address, other in (others or {}).items():
        state.set_account(address, code=other)
    if rich is not None:
        state.set_account(rich[0], balance=rich[1])
    env = BlockEnv(gas_limit=100_000_000, timestamp=1000)
    tx = Transaction(sender=SENDER, to=TARGET, gas_limit=1_000_000)
    return apply_transaction(state, env, tx, cheatcodes=interceptor), state


class Answering(Interceptor):
    """Answers every message to the HEVM address with its call data, reversed."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, bool]] = []

    def answer(self, evm: Evm, parent: Frame | None, caller: int, data: bytes, gas: int,
               depth: int, is_static: bool) -> tuple[bool, int, bytes]:
        self.seen.append((caller, depth, is_static))
        if data == b"fail":
            evm.state.set_storage(TARGET, 9, 9)  # undone with the answer's failure
            return False, gas, b"no"
        return True, gas - 5, (b"\x00" * 31 + b"\x2a")


def test_no_interceptor_is_the_default() -> None:
    assert Evm(WorldState(), BlockEnv()).cheatcodes is None
    # Without one, the HEVM address is an ordinary (here: empty) account.
    result, _ = run(asm(static_call(HEVM_ADDRESS) + " " + RETURN_RETURNDATA), None)
    assert result.success and result.output == b""


def test_messages_to_the_address_are_answered_not_run() -> None:
    stub = Answering()
    code = asm(static_call(HEVM_ADDRESS) + " " + RETURN_RETURNDATA)
    result, _ = run(code, stub, {HEVM_ADDRESS: b"\xfe"})  # its code would fail: never runs
    assert result.success and int.from_bytes(result.output, "big") == 42
    assert stub.seen == [(TARGET, 1, True)]


def test_a_failed_answer_reverts_what_it_changed() -> None:
    stub = Answering()
    store_fail = "PUSH4 0x6661696c PUSH1 0xe0 SHL PUSH1 0 MSTORE"  # b"fail" at memory 0
    code = asm(f"{store_fail} PUSH1 0 PUSH1 0 PUSH1 4 PUSH1 0 PUSH1 0 PUSH20 {HEVM_ADDRESS} "
               f"{GAS} CALL {RETURN_TOP}")
    result, state = run(code, stub)
    assert result.success and int.from_bytes(result.output, "big") == 0
    assert state.storage_at(TARGET, 9) == 0


class Pranking(Interceptor):
    """Every message TARGET starts comes from PRANKED."""

    def sender_for(self, evm: Evm, parent: Frame, kind: int, caller: int, address: int) -> int:
        return PRANKED if caller == TARGET else caller


def test_a_changed_sender_is_msg_sender_and_pays() -> None:
    returns_caller = asm(f"CALLER {RETURN_TOP}")
    code = asm(f"{call(OTHER, value=5)} PUSH1 0 MSTORE PUSH1 32 PUSH1 0 PUSH1 32 "
               "RETURNDATACOPY PUSH1 64 PUSH1 0 RETURN")
    # PRANKED has no ether (TARGET has plenty): the value transfer fails, the call with it.
    result, _ = run(code, Pranking(), {OTHER: returns_caller})
    assert int.from_bytes(result.output[:32], "big") == 0
    result, state = run(code, Pranking(), {OTHER: returns_caller}, rich=(PRANKED, 7))
    assert int.from_bytes(result.output[:32], "big") == 1
    assert int.from_bytes(result.output[32:], "big") == PRANKED
    assert state.balance(PRANKED) == 2 and state.balance(OTHER) == 5
    assert state.balance(TARGET) == 10**18  # the frame that made the call paid nothing


def test_a_changed_sender_creates_at_its_own_address() -> None:
    initcode = asm("PUSH1 0 PUSH1 0 RETURN")  # 5 bytes, empty runtime code
    code = asm(f"PUSH5 {int.from_bytes(initcode, 'big')} PUSH1 0 MSTORE "
               f"PUSH1 5 PUSH1 27 PUSH1 0 CREATE {RETURN_TOP}")
    result, state = run(code, Pranking())
    created = int.from_bytes(result.output, "big")
    assert created == create_address(PRANKED, 0)
    assert state.nonce(PRANKED) == 1 and state.nonce(TARGET) == 0
    assert state.nonce(created) == 1


class Forgiving(Interceptor):
    """Turns a failed message at depth 1 into a success with output "ok"."""

    def __init__(self) -> None:
        self.ends: list[tuple[int, int, bool]] = []

    def message_end(self, evm: Evm, kind: int, address: int, depth: int, success: bool,
                    output: bytes) -> tuple[bool, bytes] | None:
        self.ends.append((kind, depth, success))
        if depth == 1 and not success:
            return True, b"ok"
        if depth == 1 and output == b"":
            return False, b"strict"
        return None


def test_message_end_can_replace_an_outcome_and_state_stays_consistent() -> None:
    reverting = asm("PUSH1 1 PUSH1 0 SSTORE PUSH1 0 PUSH1 0 REVERT")
    code = asm(f"{call(OTHER)} PUSH1 0 MSTORE RETURNDATASIZE PUSH1 32 MSTORE "
               "PUSH1 64 PUSH1 0 RETURN")
    stub = Forgiving()
    result, state = run(code, stub, {OTHER: reverting})
    status, size = result.output[:32], result.output[32:]
    assert int.from_bytes(status, "big") == 1 and int.from_bytes(size, "big") == 2
    assert state.storage_at(OTHER, 0) == 0  # the forgiven call's write stays undone
    assert stub.ends == [(CALL, 1, False), (CALL, 0, True)]
    # A success turned into a failure has its changes undone too.
    storing = asm("PUSH1 1 PUSH1 0 SSTORE STOP")
    result, state = run(code, Forgiving(), {OTHER: storing})
    assert int.from_bytes(result.output[:32], "big") == 0
    assert state.storage_at(OTHER, 0) == 0
    # Messages that run no frame (an account without code) are reported as well.
    result, _ = run(code, stub, {})
    assert int.from_bytes(result.output[:32], "big") == 0 and stub.ends[-2] == (CALL, 1, True)


def test_a_forgiven_creation_reports_a_placeholder_address() -> None:
    initcode = asm("PUSH1 0 PUSH1 0 REVERT")
    code = asm(f"PUSH5 {int.from_bytes(initcode, 'big')} PUSH1 0 MSTORE "
               f"PUSH1 5 PUSH1 27 PUSH1 0 CREATE {RETURN_TOP}")
    stub = Forgiving()
    result, _ = run(code, stub)
    assert int.from_bytes(result.output, "big") == 1
    assert stub.ends[0] == (CREATE, 1, False)


class Warping(Interceptor):
    """Any answered message moves the clock to 77."""

    def answer(self, evm: Evm, parent: Frame | None, caller: int, data: bytes, gas: int,
               depth: int, is_static: bool) -> tuple[bool, int, bytes]:
        set_block_env(evm, parent, replace(evm.env, timestamp=77))
        return True, gas, b""


def test_a_block_change_reaches_running_frames_and_new_ones() -> None:
    # OTHER warps; then OTHER itself, TARGET (its caller, still running) and a callee that
    # starts afterwards read the clock.
    warps = asm(f"{static_call(HEVM_ADDRESS)} TIMESTAMP {RETURN_TOP}")
    reads = asm(f"TIMESTAMP {RETURN_TOP}")
    reader = 0x7EAD
    code = asm(f"{call(OTHER)} POP PUSH1 32 PUSH1 0 PUSH1 0 RETURNDATACOPY "
               f"TIMESTAMP PUSH1 32 MSTORE {call(reader)} POP "
               "PUSH1 32 PUSH1 0 PUSH1 64 RETURNDATACOPY PUSH1 96 PUSH1 0 RETURN")
    result, _ = run(code, Warping(), {OTHER: warps, reader: reads})
    words = [int.from_bytes(result.output[i:i + 32], "big") for i in range(0, 96, 32)]
    assert words == [77, 77, 77]
