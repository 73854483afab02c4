"""Flipping branches of small Solidity contracts: the conditions issue 15 names.

Each test runs a case with the ``symbolic`` recording, flips the deepest open side of the
last transaction (a branch side the run did not cover), re-runs the solved case and checks
that the flipped side is now covered; it repeats until the function returns 1 (its guarded
side) within a few flips.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import z3

from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.symbolic.records import SymbolicRun
from secant.symbolic.solve import FlipResult, flip_branch
from secant.targets.contract import ContractRun, ContractTarget
from secant.targets.prefix_cache import PrefixCache
from secant.targets.trace import TraceRecorder, symbolic_of
from secant.types import Tx, TxSeq
from tests.compile.conftest import needs_node

SOURCE = Path(__file__).with_name("Concolic.sol")
pytestmark = needs_node


@functools.cache
def compiled() -> list[Compilation]:
    return load([SOURCE])


def target_of(contract: str, cache: PrefixCache | None = None) -> ContractTarget:
    chain = TestChain.setup(compiled(), contract=contract)
    return ContractTarget(chain, frozenset({"symbolic"}), prefix_cache=cache)


def senders(target: ContractTarget) -> list[int]:
    return [sender.address for sender in target.chain.senders]


def returned(result: ContractRun) -> int:
    output = result.outcomes[-1].output
    return int.from_bytes(output[:32], "big") if output else -1


def records(target: ContractTarget, result: ContractRun) -> SymbolicRun:
    run = symbolic_of(result, target)
    assert run is not None
    return run


def solve(target: ContractTarget, case: TxSeq, flips: int = 8) -> tuple[TxSeq, int]:
    """Flip open sides of the last transaction until the function returns 1."""
    for done in range(flips + 1):
        result = target.run(case)
        if returned(result) == 1:
            return case, done
        run = records(target, result)
        last = len(case) - 1
        for index in reversed(run.open_sides(result.edges, tx=last)):
            answer = flip_branch(case, run, index, senders=senders(target), timeout_ms=20_000)
            if not answer.sat:
                continue
            assert answer.case is not None and answer.seconds >= 0
            again = target.run(answer.case)
            # The solved case takes the side the record did not.
            assert run.branches[index].other_edge in again.edges
            case = answer.case
            break
        else:
            pytest.fail(f"no open side of {case} could be flipped")
    pytest.fail(f"not solved in {flips} flips: {case}")


def test_non_linear_product() -> None:
    target = target_of("NonLinear")
    user = target.chain.sender("user1").address
    case, flips = solve(target, (Tx("f(uint256,uint256)", (0, 0), user),))
    a, b = case[0].args
    assert a * b == 391 and a > 1 and b > 1 and flips >= 1


def test_several_parameters_tied_together() -> None:
    target = target_of("MultiParam")
    user = target.chain.sender("user1").address
    signature = "g(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)"
    case, _ = solve(target, (Tx(signature, (0,) * 7 + (100,), user),))
    p = case[0].args
    assert p[1] == 7 + p[2] and p[0] > 27 * p[2] and p[7] < 49


def test_wrapping_multiplication() -> None:
    target = target_of("Wrapping")
    user = target.chain.sender("user1").address
    case, _ = solve(target, (Tx("w(uint64,uint64)", (0, 0), user),))
    p4, p6 = case[0].args
    assert p6 > 1 and p4 > (p4 * p6) % 2**64 and p4 < 2**64 and p6 < 2**64


def test_signed_arguments() -> None:
    target = target_of("Signed")
    user = target.chain.sender("user1").address
    case, _ = solve(target, (Tx("s(int256)", (0,), user),))
    [x] = case[0].args
    assert -4000 < 3 * x and x < -1000  # the solved argument is a negative int


def test_a_condition_on_what_an_earlier_transaction_stored() -> None:
    target = target_of("Stored")
    user = target.chain.sender("user1").address
    start = (Tx("set(uint256)", (5,), user), Tx("check()", (), user))
    case, _ = solve(target, start)
    assert case[0].args == (41152263,) and case[1] == start[1]


def test_an_infeasible_nest_is_proved_unsat() -> None:
    target = target_of("Infeasible")
    user = target.chain.sender("user1").address
    case = (Tx("h(uint256)", (20,), user),)
    result = target.run(case)
    assert returned(result) == 2
    run = records(target, result)
    # The records that test x: x > 10 (taken), then x < 5 (not taken), in that order.
    tests = [i for i, record in enumerate(run.branches) if "tx0_w0" in record.variables]
    inner = tests[-1]
    answer = flip_branch(case, run, inner, senders=senders(target))
    assert answer.status == "unsat" and answer.proved and answer.case is None
    # The outer test can go the other way: x <= 10.
    outer = next(i for i in tests if run.branches[i].other_edge not in result.edges)
    flipped = flip_branch(case, run, outer, senders=senders(target))
    assert flipped.sat and flipped.case is not None and flipped.case[0].args[0] <= 10
    assert returned(target.run(flipped.case)) == 0


def test_storage_before_the_case_is_pinned_unless_asked() -> None:
    target = target_of("Stored")
    user = target.chain.sender("user1").address
    case = (Tx("check()", (), user),)
    result = target.run(case)
    run = records(target, result)
    index = run.open_sides(result.edges)[-1]
    assert any(name.startswith("s_") for name in run.branches[index].variables)
    pinned = flip_branch(case, run, index, senders=senders(target))
    assert pinned.status == "unsat" and pinned.proved  # the slot holds 0 before every case
    free = flip_branch(case, run, index, senders=senders(target), pin_storage=False)
    assert free.sat and free.case == case
    assert list(free.storage.values()) == [41152263]


def test_sender_value_and_time_are_solved() -> None:
    target = target_of("Environment")
    user = target.chain.sender("user1").address
    deployer = target.chain.senders[0].address
    case, _ = solve(target, (Tx("owned()", (), user),))
    assert case[0].sender == deployer
    case, _ = solve(target, (Tx("later()", (), user),))
    assert case[0].value > 10**18 and case[0].time > 30 * 86400
    # Only the senders given are allowed: without the deployer the flip is infeasible.
    result = target.run((Tx("owned()", (), user),))
    run = records(target, result)
    index = next(i for i, r in enumerate(run.branches) if "tx0_sender" in r.variables)
    answer = flip_branch((Tx("owned()", (), user),), run, index, senders=[user])
    assert answer.status == "unsat"


def test_concretised_hashes_keep_their_keys_and_dynamic_lengths_stay() -> None:
    target = target_of("Mapped")
    user = target.chain.sender("user1").address
    start = (Tx("deposit(uint256)", (5000,), user),
             Tx("spend(uint256,bytes)", (0, b"note"), user))
    case, _ = solve(target, start)
    # The deposit may have changed too: the amount is what it left above 1000.
    assert case[1].args[0] == case[0].args[0] - 1000 and case[1].args[1] == b"note"
    result = target.run(case)
    run = records(target, result)
    reasons = {pin.reason for pin in run.pins}
    assert "hashed bytes" in reasons  # balances[msg.sender] and keccak256(note)


def test_vary_keeps_other_transactions() -> None:
    target = target_of("Stored")
    user = target.chain.sender("user1").address
    case = (Tx("set(uint256)", (5,), user), Tx("check()", (), user))
    result = target.run(case)
    run = records(target, result)
    index = run.open_sides(result.edges, tx=1)[-1]
    kept = flip_branch(case, run, index, senders=senders(target), vary={1})
    assert kept.status == "unsat" and not kept.proved  # only tx 1 may change: it cannot
    assert flip_branch(case, run, index, senders=senders(target)).sat


def test_a_prefix_restored_from_the_cache_keeps_the_symbolic_state() -> None:
    plain = target_of("Stored")
    cached = target_of("Stored", PrefixCache(admit_after=1))
    user = plain.chain.sender("user1").address
    prefix = (Tx("set(uint256)", (5,), user), Tx("set(uint256)", (7,), user))
    for last in (Tx("check()", (), user), Tx("set(uint256)", (9,), user),
                 Tx("check()", (), user, time=3)):
        a = plain.run(prefix + (last,))
        b = cached.run(prefix + (last,))
        run_a, run_b = records(plain, a), records(cached, b)
        assert [describe(r) for r in run_a.branches] == [describe(r) for r in run_b.branches]
        assert run_a.bindings == run_b.bindings
        assert {k: str(v) for k, v in run_a.storage.items()} == {
            k: str(v) for k, v in run_b.storage.items()}
    assert cached.prefix_cache is not None and cached.prefix_cache.hits >= 2
    # The last check still reads tx1's argument through storage.
    assert "tx1_w0" in records(cached, b).branches[-1].variables


def describe(record: object) -> tuple[object, ...]:
    from secant.symbolic.records import SymBranch

    assert isinstance(record, SymBranch)
    return (record.tx, record.depth, record.pc, record.taken, record.branch,
            record.condition.sexpr())


def test_the_recording_is_off_unless_asked() -> None:
    plain = TraceRecorder(("panics",))
    assert not plain.wants_steps and plain._symbolic is None
    recorder = TraceRecorder(("symbolic", "dataflow"))
    assert recorder.wants_steps
    with recorder.side_call():
        assert not recorder.wants_steps
    assert recorder.wants_steps


def test_results_report_their_solve_time() -> None:
    answer = FlipResult("unknown", seconds=0.5, reason="timeout")
    assert not answer.sat and answer.reason == "timeout"
    assert z3.is_true(z3.BoolVal(True))


def test_the_same_query_gives_the_same_case_whatever_was_built_before() -> None:
    target = target_of("MultiParam")
    user = target.chain.sender("user1").address
    signature = "g(uint256,uint256,uint256,uint256,uint256,uint256,uint256,uint256)"
    case = (Tx(signature, (0, 0, 0, 0, 0, 0, 0, 100), user),)
    result = target.run(case)
    run = records(target, result)
    index = run.open_sides(result.edges)[-3]
    first = flip_branch(case, run, index, senders=senders(target), narrow_share=0)
    # Terms built in between change z3's internal order in the main context; each query
    # is solved in a fresh one.
    junk = [z3.BitVec(f"junk{i}", 256) * i for i in range(2000)]
    again = flip_branch(case, run, index, senders=senders(target), narrow_share=0)
    assert junk and first.sat and first.case == again.case


def test_a_relayed_transaction_keeps_its_inputs() -> None:
    from dataclasses import replace

    target = target_of("NonLinear")
    user = target.chain.sender("user1").address
    case = (Tx("f(uint256,uint256)", (0, 0), user),)
    result = target.run(case)
    run = records(target, result)
    index = run.open_sides(result.edges)[0]
    assert flip_branch(case, run, index, senders=senders(target)).sat
    # As if an attacker contract had relayed it: the message is not the case's own.
    run.txs[0] = replace(run.txs[0], sender=0xA77AC4)
    answer = flip_branch(case, run, index, senders=senders(target))
    assert answer.status == "unsat" and not answer.proved


def test_a_query_spends_no_more_than_it_is_allowed() -> None:
    target = target_of("Infeasible")
    user = target.chain.sender("user1").address
    case = (Tx("h(uint256)", (20,), user),)
    result = target.run(case)
    run = records(target, result)
    outer = next(i for i, record in enumerate(run.branches)
                 if "tx0_w0" in record.variables and record.other_edge not in result.edges)
    whole = flip_branch(case, run, outer, senders=senders(target), rlimit=6_000_000)
    assert whole.sat and whole.resources > 1
    # The narrowed tries keep their share of the limit, the spend caps them all together.
    capped = flip_branch(case, run, outer, senders=senders(target), rlimit=6_000_000,
                         spend=1)
    assert capped.status == "unknown" and capped.resources >= 1 and capped.case is None
    ample = flip_branch(case, run, outer, senders=senders(target), rlimit=6_000_000,
                        spend=whole.resources * 4)
    assert ample.sat and ample.case == whole.case and ample.resources == whole.resources
