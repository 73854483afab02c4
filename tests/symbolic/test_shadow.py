"""The shadow tracker on hand-assembled code: storage across transactions and reverts, child
frames, concretisations, and the recorder's wiring."""

from __future__ import annotations

import z3

from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, TxResult, apply_transaction
from secant.symbolic.narrow import narrowed
from secant.symbolic.numerals import bv_int
from secant.symbolic.records import SymbolicRun
from secant.targets.trace import TraceRecorder, symbolic_of
from secant.types import RunResult
from tests.evm.asm import asm
from tests.targets.test_taint import assemble

SENDER = 0x5E17DE2
TARGET = 0xC0DE
OTHER = 0x07E4


def run(code: bytes, *datas: bytes, others: dict[int, bytes] | None = None,
        recorder: TraceRecorder | None = None, value: int = 0,
        storage: dict[int, int] | None = None) -> tuple[SymbolicRun, list[TxResult]]:
    """One transaction to ``code`` per calldata in ``datas``, as one test case."""
    state = WorldState()
    state.set_account(SENDER, balance=10**24)
    state.set_account(TARGET, code=code, balance=1000, storage=storage)
    for address, other in (others or {}).items():
        state.set_account(address, code=other)
    env = BlockEnv(coinbase=0xC01B, gas_limit=30_000_000, number=10, timestamp=1000,
                   prev_randao=77)
    recorder = recorder or TraceRecorder(("symbolic",))
    results = []
    for index, data in enumerate(datas or (b"",)):
        recorder.begin_tx(index)
        tx = Transaction(sender=SENDER, to=TARGET, nonce=index, gas_limit=1_000_000,
                         gas_price=10, data=data, value=value)
        results.append(apply_transaction(state, env, tx, CANCUN, recorder))
    return recorder.symbolic, results


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def call(selector: int, *args: int) -> bytes:
    return selector.to_bytes(4, "big") + b"".join(word(a) for a in args)


def names(run: SymbolicRun) -> list[set[str]]:
    return [set(record.variables) for record in run.branches]


def test_stored_arguments_reach_later_transactions() -> None:
    # tx0 stores its argument; tx1 branches on the slot (its calldata is empty).
    code = assemble("CALLDATASIZE ISZERO :read JUMPI PUSH1 4 CALLDATALOAD PUSH0 SSTORE STOP "
                    "@read PUSH0 SLOAD PUSH1 42 EQ :hit JUMPI STOP @hit STOP")
    flow, results = run(code, call(1, 7), b"")
    assert all(r.success for r in results)
    [record] = [r for r in flow.branches if r.tx == 1]
    assert record.variables == {"tx0_w0"} and not record.taken
    assert flow.bindings["tx0_w0"] == 7
    assert str(flow.storage[(TARGET, 0)]) == "tx0_w0"


def test_a_reverted_transaction_leaves_no_shadow_storage() -> None:
    # tx0 stores then reverts: tx1 reads the slot's value from before the case.
    code = assemble("CALLDATASIZE ISZERO :read JUMPI PUSH1 4 CALLDATALOAD PUSH0 SSTORE PUSH0 "
                    "PUSH0 "
                    "REVERT @read PUSH0 SLOAD PUSH1 42 EQ :hit JUMPI STOP @hit STOP")
    flow, results = run(code, call(1, 7), b"", storage={0: 5})
    assert not results[0].success and results[1].success
    [record] = [r for r in flow.branches if r.tx == 1]
    slot = f"s_{TARGET:x}_0"
    assert record.variables == {slot} and flow.bindings[slot] == 5
    assert (TARGET, 0) not in flow.storage


def test_a_reverted_child_frame_restores_the_parent_term() -> None:
    # The parent stores its argument in slot 0, a DELEGATECALL'd frame overwrites slot 0
    # with a constant and reverts: the slot's term is the argument again.
    child = asm("PUSH1 9 PUSH0 SSTORE PUSH0 PUSH0 REVERT")
    code = assemble(f"PUSH1 4 CALLDATALOAD PUSH0 SSTORE "
                    f"PUSH0 PUSH0 PUSH0 PUSH0 PUSH2 {OTHER} GAS DELEGATECALL POP "
                    f"PUSH0 SLOAD PUSH1 42 EQ :hit JUMPI STOP @hit STOP")
    flow, results = run(code, call(1, 7), others={OTHER: child})
    assert results[0].success
    assert names(flow) == [{"tx0_w0"}]
    # A child that succeeds leaves its constant: no symbolic branch at all.
    child = asm("PUSH1 9 PUSH0 SSTORE STOP")
    flow, _ = run(code, call(1, 7), others={OTHER: child})
    assert flow.branches == [] and flow.storage[(TARGET, 0)] is None


def test_child_frames_see_block_values_but_concrete_calldata() -> None:
    # The callee branches on TIMESTAMP (symbolic at every depth) and on its calldata
    # (concrete: the call input is concretised, with a pin).
    child = assemble("TIMESTAMP PUSH2 2000 LT :late JUMPI @late "
                     "PUSH0 CALLDATALOAD :go JUMPI @go STOP")
    code = asm(f"PUSH1 4 CALLDATALOAD PUSH0 MSTORE PUSH0 PUSH0 PUSH1 32 PUSH0 PUSH0 "
               f"PUSH2 {OTHER} GAS CALL STOP")
    flow, results = run(code, call(1, 7), others={OTHER: child})
    assert results[0].success
    [record] = flow.branches
    assert record.depth == 1 and record.address == OTHER
    assert record.variables == {"tx0_time"}
    [pin] = flow.pins
    assert pin.reason == "call input" and pin.value == 7 and pin.variables == {"tx0_w0"}
    assert not record.exact  # recorded after a concretisation


def test_senders_values_and_unaligned_calldata() -> None:
    code = assemble("CALLER PUSH1 1 EQ :a JUMPI @a CALLVALUE PUSH1 5 GT :b JUMPI @b "
                    "PUSH1 6 CALLDATALOAD PUSH1 1 EQ :c JUMPI @c STOP")
    flow, results = run(code, call(1, 2, 3), value=9)
    assert results[0].success
    assert names(flow) == [{"tx0_sender"}, {"tx0_value"}, {"tx0_w0", "tx0_w1"}]
    assert flow.bindings["tx0_sender"] == SENDER and flow.bindings["tx0_value"] == 9
    assert flow.txs[0].balance is not None and flow.txs[0].balance > 9


def test_symbolic_offsets_and_hashes_are_pinned() -> None:
    code = asm("PUSH1 4 CALLDATALOAD PUSH0 MSTORE PUSH1 32 PUSH0 KECCAK256 POP "
               "PUSH1 1 PUSH1 36 CALLDATALOAD MSTORE PUSH1 36 CALLDATALOAD SLOAD POP STOP")
    flow, results = run(code, call(1, 7, 64))
    assert results[0].success
    # The storage key is the same term with the same value as the memory offset: the
    # constraint is recorded once.
    assert [pin.reason for pin in flow.pins] == ["hashed bytes", "memory offset"]
    assert [pin.value for pin in flow.pins] == [7, 64]


def test_the_recorder_routes_steps_to_both_stepped_recordings() -> None:
    recorder = TraceRecorder(("symbolic", "dataflow"))
    code = assemble("PUSH1 4 CALLDATALOAD PUSH1 3 LT :a JUMPI @a STOP")
    flow, _ = run(code, call(1, 9), recorder=recorder)
    assert names(flow) == [{"tx0_w0"}] and recorder.dataflow.branches
    result = RunResult((), [], 0, branches=recorder.branches)
    assert symbolic_of(result, recorder) is not None
    found = symbolic_of(result, recorder)
    assert found is not None and found.branches == flow.branches
    recorder.reset()
    assert symbolic_of(result, recorder) is None
    assert symbolic_of(result, TraceRecorder()) is None


def test_conditions_read_as_comparisons() -> None:
    code = assemble("PUSH1 4 CALLDATALOAD PUSH1 3 LT ISZERO :a JUMPI @a STOP")
    flow, _ = run(code, call(1, 9))
    [record] = flow.branches
    x = z3.BitVec("tx0_w0", 256)
    assert record.condition.eq(z3.Not(z3.ULT(3, x))) and not record.taken  # 3 < 9


def test_kilobytes_of_concrete_memory_beside_a_term_build_and_read_back() -> None:
    # Memory holds a symbolic word followed by 6 KB of code (nonzero bytes): the hashed
    # range's constant part is far past the 4300 decimal digits Python converts.
    payload = bytes(range(1, 256)) * 24
    size = len(payload)

    def program(start: int) -> bytes:
        return asm(f"PUSH2 {size} PUSH2 {start} PUSH1 32 CODECOPY PUSH1 4 CALLDATALOAD "
                   f"PUSH0 MSTORE PUSH2 {32 + size} PUSH0 KECCAK256 POP STOP")

    code = program(len(program(0))) + payload
    flow, results = run(code, call(1, 7))
    assert results[0].success
    [pin] = flow.pins
    assert pin.reason == "hashed bytes" and pin.term.size() == 8 * (32 + size)
    memory = word(7) + payload
    assert pin.value == int.from_bytes(memory, "big")
    bound = z3.simplify(z3.substitute(pin.term, (z3.BitVec("tx0_w0", 256),
                                                 z3.BitVecVal(7, 256))))
    assert z3.is_bv_value(bound) and bv_int(bound) == pin.value
    # The pin's constraint, and the solver's rewrite of it, take the same path.
    assert z3.is_true(z3.simplify(z3.substitute(pin.constraint, (z3.BitVec("tx0_w0", 256),
                                                                 z3.BitVecVal(7, 256)))))
    [rewritten] = narrowed([z3.simplify(pin.constraint)]).constraints
    solver = z3.Solver()
    solver.add(rewritten)
    assert solver.check() == z3.sat
    assert solver.model().eval(z3.BitVec("tx0_w0", 256)).as_long() == 7
