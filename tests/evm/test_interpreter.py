"""Interpreter behaviour at the edges the EVM defines (issue 2, "done when")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from secant.evm.analysis import CodeAnalysis
from secant.evm.crypto import keccak256
from secant.evm.forks import CANCUN, LONDON, OSAKA, SHANGHAI
from secant.evm.inspector import Inspector
from tests.evm.asm import asm
from tests.evm.conftest import TARGET

Run = Callable[..., Any]
RETURN_TOP = "PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN"


def word(result: Any) -> int:
    return int.from_bytes(result.output, "big")


def test_arithmetic_and_return(run: Run) -> None:
    result, _ = run(asm(f"PUSH1 3 PUSH1 4 MUL PUSH1 2 ADD {RETURN_TOP}"))
    assert result.success and word(result) == 14


def test_infinite_loop_runs_out_of_gas(run: Run) -> None:
    result, _ = run(asm("JUMPDEST PUSH1 0 JUMP"), gas=200_000)
    assert not result.success and result.error == "out of gas"
    assert result.gas_used == 200_000


def test_bad_jump_is_exceptional(run: Run) -> None:
    # 0x05 is inside PUSH data, not a JUMPDEST.
    result, _ = run(asm("PUSH1 0x05 JUMP PUSH1 0x5b STOP"))
    assert not result.success and result.error == "invalid jump destination"


def test_jump_into_push_data_is_invalid_even_if_byte_is_jumpdest(run: Run) -> None:
    code = bytes.fromhex("600456" + "605b" + "00")  # PUSH1 4 JUMP PUSH1 0x5b STOP
    result, _ = run(code)
    assert result.error == "invalid jump destination"


def test_truncated_push_reads_zeros_and_stops(run: Run) -> None:
    # A PUSH2 with one byte left decodes as 0xAB00 and execution then runs off the end.
    code = bytes([0x61, 0xAB])
    analysis = CodeAnalysis(code, keccak256(code), CANCUN)
    assert analysis.instructions == [(0, 0x61, 0xAB00)]
    result, _ = run(code)
    assert result.success and result.output == b""


def test_stack_underflow_and_overflow(run: Run) -> None:
    result, _ = run(asm("ADD"))
    assert result.error == "stack underflow"
    result, _ = run(asm("JUMPDEST PUSH1 1 PUSH1 0 JUMP"), gas=10_000_000)
    assert result.error == "stack overflow"


def test_one_megabyte_of_memory(run: Run) -> None:
    result, _ = run(asm(f"PUSH1 7 PUSH3 0x100000 MSTORE8 MSIZE {RETURN_TOP}"), gas=30_000_000)
    assert result.success and word(result) == 0x100020


def test_memory_beyond_any_gas_is_out_of_gas(run: Run) -> None:
    result, _ = run(asm("PUSH1 1 PUSH8 0xffffffffffff MSTORE"))
    assert result.error == "out of gas"


def test_24kb_contract_runs(run: Run) -> None:
    body = asm("PUSH1 1 POP") * 8000  # 24,000 bytes of straight-line code
    result, _ = run(body + asm(f"PUSH1 42 {RETURN_TOP}"), gas=5_000_000)
    assert result.success and word(result) == 42


def test_1024_nested_calls_do_not_recurse_in_python(run: Run) -> None:
    # The contract calls itself with all gas until the depth limit stops it, then counts
    # its successful depth in storage slot 0 of each frame (same account: max depth).
    code = asm(
        "PUSH1 0 SLOAD PUSH1 1 ADD PUSH1 0 SSTORE "  # slot0 += 1
        "PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 ADDRESS GAS CALL "
        "STOP"
    )
    result, state = run(code, gas=100_000_000)
    assert result.success
    # Each level increments once; gas (1/64 rule) may stop the chain before 1025 frames.
    assert state.storage_at(TARGET, 0) > 200


def test_call_chain_reaches_depth_1024_then_fails_cleanly() -> None:
    from secant.evm.env import BlockEnv
    from secant.evm.state import WorldState
    from secant.evm.transaction import Transaction, apply_transaction

    class Depth(Inspector):
        def __init__(self) -> None:
            self.deepest = 0

        def on_message_start(self, kind: int, sender: int, target: int, code_address: int,
                             value: int, gas: int, data: bytes, depth: int,
                             is_static: bool) -> None:
            self.deepest = max(self.deepest, depth)

    # Each frame calls itself with all its gas; the 1025th CALL fails (pushes 0) and every
    # frame returns normally. 10**12 gas survives the 63/64 rule for 1024 levels.
    code = asm("PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 ADDRESS GAS CALL STOP")
    state = WorldState()
    state.set_account(0xA11CE, balance=10**30)
    state.set_account(TARGET, code=code)
    spy = Depth()
    result = apply_transaction(
        state, BlockEnv(gas_limit=10**13),
        Transaction(sender=0xA11CE, to=TARGET, gas_limit=10**12, gas_price=1), CANCUN, spy,
    )
    assert result.success
    assert spy.deepest == 1024  # depths 0..1024: 1025 frames, the limit exactly


def test_revert_keeps_gas_and_returns_data(run: Run) -> None:
    result, _ = run(asm("PUSH1 0xAA PUSH1 0 MSTORE PUSH1 32 PUSH1 0 REVERT"), gas=100_000)
    assert result.reverted and not result.success and word(result) == 0xAA
    assert result.gas_used < 30_000


def test_static_call_cannot_write(run: Run) -> None:
    callee = asm("PUSH1 1 PUSH1 0 SSTORE STOP")
    caller = asm(f"PUSH1 0 PUSH1 0 PUSH1 0 PUSH1 0 PUSH2 0xBEEF GAS STATICCALL {RETURN_TOP}")
    result, state = run(caller, others={0xBEEF: callee})
    assert result.success and word(result) == 0
    assert state.storage_at(0xBEEF, 0) == 0


def test_push0_and_clz_follow_the_fork(run: Run) -> None:
    result, _ = run(asm(f"PUSH0 {RETURN_TOP}"), fork=LONDON)
    assert result.error == "invalid opcode"
    result, _ = run(asm(f"PUSH0 {RETURN_TOP}"), fork=SHANGHAI)
    assert result.success
    result, _ = run(asm(f"PUSH1 1 CLZ {RETURN_TOP}"), fork=CANCUN)
    assert result.error == "invalid opcode"
    result, _ = run(asm(f"PUSH1 1 CLZ {RETURN_TOP}"), fork=OSAKA)
    assert result.success and word(result) == 255


def test_selfdestruct_before_and_after_eip6780(run: Run) -> None:
    code = asm("PUSH2 0xBEEF SELFDESTRUCT")
    _, state = run(code, fork=SHANGHAI)
    assert state.get(TARGET) is None and state.balance(0xBEEF) == 10**18
    _, state = run(code, fork=CANCUN)
    assert state.get(TARGET) is not None and state.balance(0xBEEF) == 10**18
    assert state.balance(TARGET) == 0


class Branches(Inspector):
    def __init__(self) -> None:
        self.seen: list[tuple[int, bool, str, int, int]] = []
        self.steps = 0

    def on_branch(self, frame: Any, pc: int, taken: bool, relation: str, lhs: int,
                  rhs: int) -> None:
        self.seen.append((pc, taken, relation, lhs, rhs))


@pytest.mark.parametrize(
    ("source", "relation", "lhs", "rhs", "taken"),
    [
        ("PUSH1 5 PUSH1 3 LT", "lt", 3, 5, True),                 # 3 < 5
        ("PUSH1 5 PUSH1 3 LT ISZERO", "ge", 3, 5, False),         # !(3 < 5)
        ("PUSH1 5 PUSH1 3 LT ISZERO ISZERO", "lt", 3, 5, True),
        ("PUSH1 7 PUSH1 7 EQ", "eq", 7, 7, True),
        ("PUSH1 7 PUSH1 9 EQ ISZERO", "ne", 9, 7, True),
        ("PUSH1 4 ISZERO", "eq", 4, 0, False),
        ("PUSH1 1 PUSH1 0 SUB PUSH1 1 SGT", "sgt", 1, 2**256 - 1, True),  # 1 > -1
        ("PUSH1 5 PUSH1 3 GT DUP1 POP", "gt", 3, 5, False),       # through DUP/POP
        ("PUSH1 9", "ne", 9, 0, True),                             # plain value
        ("PUSH1 0 CALLDATASIZE SUB", "ne", 0, 0, False),  # solc's a != b as SUB(a, b)
        ("PUSH1 85 PUSH1 85 CALLDATASIZE ADD XOR ISZERO", "eq", 85, 85, True),
    ],
)
def test_branch_comparison_operands(
    run: Run, source: str, relation: str, lhs: int, rhs: int, taken: bool
) -> None:
    spy = Branches()
    # the condition, then a jump over an INVALID to a JUMPDEST
    prefix = asm(source)
    dest = len(prefix) + 3 + 1
    code = prefix + asm(f"PUSH1 {dest} JUMPI INVALID JUMPDEST STOP")
    result, _ = run(code, inspector=spy)
    assert spy.seen == [(len(prefix) + 2, taken, relation, lhs, rhs)]
    assert result.success == taken


def test_branch_operands_from_calldata_are_reported(run: Run) -> None:
    spy = Branches()
    code = asm("PUSH1 0 CALLDATALOAD PUSH1 42 EQ PUSH1 10 JUMPI STOP JUMPDEST STOP")
    run(code, data=(41).to_bytes(32, "big"), inspector=spy)
    assert spy.seen == [(8, False, "eq", 42, 41)]


def test_traced_and_stepped_runs_match_plain(run: Run) -> None:
    class Stepper(Inspector):
        wants_steps = True

        def __init__(self) -> None:
            self.ops: list[int] = []

        def on_step(self, frame: Any, pc: int, opcode: int, stack: list[int]) -> None:
            self.ops.append(opcode)

    code = asm(
        "PUSH1 0 CALLDATALOAD DUP1 PUSH1 3 MUL SWAP1 PUSH1 1 ADD PUSH1 0 SSTORE "
        "PUSH1 0 SLOAD ADD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN"
    )
    data = (12345).to_bytes(32, "big")
    plain, _ = run(code, data=data)
    traced, _ = run(code, data=data, inspector=Branches())
    stepper = Stepper()
    stepped, _ = run(code, data=data, inspector=stepper)
    assert plain.output == traced.output == stepped.output
    assert plain.gas_used == traced.gas_used == stepped.gas_used
    assert len(stepper.ops) == 18 and stepper.ops[-1] == 0xF3


def test_not_of_a_runtime_value_leaves_one_item(run: Run) -> None:
    # NOT of a non-constant once pushed its result twice in the block compiler.
    code = asm(f"PUSH1 0 CALLDATALOAD NOT DEPTHMARK {RETURN_TOP}".replace(
        "DEPTHMARK", "PUSH1 0 MSTORE MSIZE"))
    result, _ = run(code, data=(0xFF).to_bytes(32, "big"))
    assert result.success and word(result) == 32  # MSIZE after one MSTORE: nothing left over
    result, _ = run(asm(f"PUSH1 0 CALLDATALOAD NOT {RETURN_TOP}"), data=(0xFF).to_bytes(32, "big"))
    assert word(result) == (2**256 - 1) ^ 0xFF


@pytest.mark.parametrize(
    ("runtime_hex", "error"),
    [("ef00", "created code starts with 0xEF"),
     ("00" * (0x6000 + 1), "created code exceeds the size limit")],
)
def test_creation_rejected_at_deposit_is_a_failure(runtime_hex: str, error: str) -> None:
    from secant.evm.env import BlockEnv
    from secant.evm.state import WorldState
    from secant.evm.transaction import Transaction, apply_transaction

    runtime = bytes.fromhex(runtime_hex)
    # initcode: CODECOPY the runtime appended after it, then RETURN it.
    head_len = 15
    initcode = asm(
        f"PUSH2 {len(runtime)} PUSH2 {head_len} PUSH1 0 CODECOPY PUSH2 {len(runtime)} "
        "PUSH1 0 RETURN"
    )
    assert len(initcode) == head_len
    state = WorldState()
    state.set_account(0xA11CE, balance=10**24)
    result = apply_transaction(
        state, BlockEnv(gas_limit=30_000_000),
        Transaction(sender=0xA11CE, to=None, gas_limit=10_000_000, gas_price=1,
                    data=initcode + runtime),
        CANCUN,
    )
    assert not result.success and result.error == error
    assert result.created_address is None
    assert result.gas_used == 10_000_000


@pytest.mark.parametrize(("join", "relation", "taken"),
                         [("", "eq", False), ("ISZERO", "ne", True)])
def test_branch_operands_survive_a_block_boundary(run: Run, join: str, relation: str,
                                                  taken: bool) -> None:
    # solc's `a && b`: the comparison is computed in one block and tested by a JUMPI in the
    # join block it jumps to; the branch still reports the comparison's operands.
    spy = Branches()
    dest = len(asm("PUSH1 0 CALLDATALOAD PUSH1 42 EQ PUSH1 0 JUMP"))
    code = asm(f"PUSH1 0 CALLDATALOAD PUSH1 42 EQ PUSH1 {dest} JUMP")
    join_block = asm(f"JUMPDEST {join} PUSH1 0 JUMPI STOP")
    run(code + join_block, data=(41).to_bytes(32, "big"), inspector=spy)
    assert [s[1:] for s in spy.seen] == [(taken, relation, 42, 41)]
    # A stale comparison does not describe an unrelated condition.
    spy = Branches()
    other = asm(f"PUSH1 0 CALLDATALOAD PUSH1 42 EQ PUSH1 {dest} JUMP")
    unrelated = asm("JUMPDEST POP PUSH1 7 CALLDATASIZE ADD PUSH1 0 JUMPI STOP")
    run(other + unrelated, data=(41).to_bytes(32, "big"), inspector=spy)
    assert [s[1:] for s in spy.seen] == [(True, "ne", 39, 0)]


class Recorded(Inspector):
    """The recorded tables' protocol: a branch log, the frames' trails, block hooks."""

    def __init__(self, hooks: dict[bytes, frozenset[int]] | None = None) -> None:
        self.branch_log: list[Any] = []
        self.block_hooks = hooks
        self.hooked: list[tuple[int, int]] = []  # (pc, stack height at the block's entry)
        self.trails: list[list[int]] = []

    def on_hooked_block(self, frame: Any, pc: int) -> None:
        self.hooked.append((pc, len(frame.stack)))

    def on_message_end(self, kind: int, target: int, depth: int, success: bool,
                       reverted: bool, output: bytes, gas_left: int, error: str | None,
                       frame: Any) -> None:
        if frame is not None:
            self.trails.append(list(frame.trail))


# Blocks at 0, 4 (a JUMPDEST the first falls into), 9 and 14 (jump targets): each exit is
# known when the code is generated, so the first block's function runs through them all.
STATIC_CHAIN = ("PUSH1 1 PUSH1 2 JUMPDEST PUSH1 0x09 JUMP INVALID JUMPDEST PUSH1 0x0e JUMP "
                "INVALID JUMPDEST ADD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN")


def test_recorded_runs_keep_every_block_in_the_trail_and_log_every_branch(run: Run) -> None:
    spy = Recorded()
    result, _ = run(asm(STATIC_CHAIN), inspector=spy)
    assert result.success and word(result) == 3
    assert spy.trails == [[0, 4, 9, 14]]
    spy = Recorded()
    result, _ = run(asm("PUSH1 1 PUSH1 6 JUMPI INVALID JUMPDEST PUSH1 0 PUSH1 0 RETURN"),
                    inspector=spy)
    assert result.success and [event[1:4] for event in spy.branch_log] == [(4, True, "ne")]
    assert spy.trails == [[0, 6]]


def test_a_hooked_block_is_hooked_when_its_predecessor_runs_on_into_it(run: Run) -> None:
    code = asm(STATIC_CHAIN)
    for start in (4, 9, 14):
        spy = Recorded({keccak256(code): frozenset({start})})
        result, _ = run(code, inspector=spy)
        assert result.success and word(result) == 3
        assert [pc for pc, _ in spy.hooked] == [start]
        assert spy.trails == [[0, 4, 9, 14]]
    # The hook sees the real stack as the block starts (the items the block inherits).
    spy = Recorded({keccak256(code): frozenset({14})})
    run(code, inspector=spy)
    assert spy.hooked == [(14, 2)]


def test_keccak256_of_remembered_and_new_inputs(run: Run, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    from secant.evm.instructions import stack

    # The hash of calldata's first word, twice in one run and again once the remembered
    # inputs were cleared (a limit of one): every answer is the input's own hash.
    monkeypatch.setattr(stack, "HASHED_LIMIT", 1)
    code = asm("PUSH1 0 CALLDATALOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 KECCAK256 "
               "PUSH1 32 PUSH1 0 KECCAK256 EQ PUSH1 32 MSTORE "
               "PUSH1 32 PUSH1 0 KECCAK256 PUSH1 0 MSTORE PUSH1 64 PUSH1 0 RETURN")
    for value in (7, 8, 7):
        data = value.to_bytes(32, "big")
        result, _ = run(code, data=data)
        assert result.success
        assert result.output[:32] == keccak256(data)
        assert int.from_bytes(result.output[32:], "big") == 1
