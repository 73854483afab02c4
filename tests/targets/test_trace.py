"""The recorder's optional recordings: calls, logs, accounts, balances, panics, transitions."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import pytest

from secant.abi import event_topic, function_selector
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.evm.opcodes import CALL, CREATE
from secant.targets.contract import ContractRun, ContractTarget
from secant.targets.trace import RECORDINGS, TraceRecorder, TransitionRecorder, make_recorder
from secant.types import Tx, callee_key, storage_slot
from tests.compile.conftest import needs_node

SEAMS = Path(__file__).resolve().parents[1] / "fixtures" / "campaign" / "Seams.sol"
ETHER = 10 ** 18


@functools.cache
def compiled() -> list[Compilation]:
    return load([SEAMS])


def recorded_chain() -> TestChain:
    return TestChain.setup(compiled(), contract="Recorded", value=ETHER)


def run(recordings: frozenset[str]) -> tuple[TestChain, ContractRun]:
    """pay 1000 wei to user2, spawn a child with 1 wei, kill it back to the sender."""
    chain = recorded_chain()
    target = ContractTarget(chain, recordings)
    user1, user2 = chain.sender("user1").address, chain.sender("user2").address
    case = (Tx("pay(address,uint256)", (user2, 1000), user1), Tx("spawn()", (), user1),
            Tx("kill()", (), user1))
    result = target.run(case)
    assert all(outcome.success for outcome in result.outcomes)
    return chain, result


@needs_node
def test_every_recording_holds_what_the_run_did() -> None:
    chain, result = run(frozenset(RECORDINGS) - {"transitions"})
    assert chain.main is not None
    main = chain.main.address
    user1, user2 = chain.sender("user1").address, chain.sender("user2").address
    # The transfer to user2, the creation of Child (1 wei) and the call to destroy().
    kinds = [(call.tx, call.kind, call.sender, call.value, call.success) for call in result.calls]
    assert kinds[0] == (0, CALL, main, 1000, True) and result.calls[0].target == user2
    assert kinds[1] == (1, CREATE, main, 1, True)
    child = result.calls[1].target
    assert result.created == [child]
    destroy = result.calls[2]
    assert (destroy.tx, destroy.target, destroy.depth) == (2, child, 1)
    assert destroy.data[:4] == function_selector("destroy(address)")
    [log] = result.logs
    assert (log.tx, log.address) == (0, main)
    assert log.topics[0] == int.from_bytes(event_topic("Paid(address,uint256)"), "big")
    assert log.topics[1] == user2 and int.from_bytes(log.data, "big") == 1000
    [gone] = result.selfdestructs
    assert (gone.tx, gone.address, gone.beneficiary, gone.balance) == (2, child, user1, 1)
    # The contract paid 1000 wei and 1 wei; user2 got 1000; user1 got 1 wei but paid gas.
    assert result.balance_changes[main] == -1001 and result.balance_changes[user2] == 1000
    assert user1 in result.balance_changes


@needs_node
def test_recordings_not_asked_for_stay_empty() -> None:
    _, result = run(frozenset())
    assert (result.calls, result.logs, result.created, result.selfdestructs, result.panics,
            result.balance_changes, result.transitions) == ([], [], [], [], [], {}, set())
    # What the engine reads is always there.
    assert result.blocks and result.branches and result.writes


def test_recorders_by_recording() -> None:
    assert type(make_recorder({"panics"})) is TraceRecorder
    assert type(make_recorder({"transitions", "calls"})) is TransitionRecorder
    with pytest.raises(ValueError, match="unknown recording"):
        TraceRecorder({"taint"})


@needs_node
def test_a_handler_s_reads_of_the_contracts_it_calls_are_recorded_and_overridable() -> None:
    # Harvey's aggressive mode sees (and fakes) what a handler reads through its calls.
    reads_fixture = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses"
    chain = TestChain.setup(load([reads_fixture / "PropertyReads.sol"]), contract="ReadSets")
    ledger = next(c.address for c in chain.contracts if c.name == "Ledger")
    target = ContractTarget(chain)
    user = chain.sender("user1").address
    deposit = Tx("deposit(uint256)", (5,), user)
    run = target.run((deposit,))
    keys = {key for _, _, key, _ in run.reads}
    assert 0 in keys  # the handler's own `ledger` (slot 0)
    assert callee_key(ledger, 0) in keys  # the ledger's `total`, read by the call
    assert storage_slot(callee_key(ledger, 0)) == 0
    target.run((replace(deposit, storage=((callee_key(ledger, 0), 1000),)),))
    assert chain.state.storage_at(ledger, 0) == 1005  # total += 5 on the faked 1000


@needs_node
def test_the_attacker_contracts_reads_are_not_probed() -> None:
    # Their storage is secant's own counters (the reentrancy depth): a probe faking it would
    # make every payout to an attacker look like a new path and grow sequences for nothing.
    banks = Path(__file__).resolve().parents[1] / "fixtures" / "vulnerabilities" / "reentrancy"
    chain = TestChain.setup(load([banks / "Banks.sol"]), contract="LateBookkeeping")
    target = ContractTarget(chain)
    attacker = chain.attacker("reentrancy").address
    case = (Tx("deposit()", (), attacker, value=10 ** 18), Tx("withdraw()", (), attacker))
    run = target.run(case)
    assert run.reads and all(address != attacker for _, address, _, _ in run.reads)
    # The payout did run the attacker's fallback, which reads its storage.
    target.recorder.unwatched = frozenset()
    unfiltered = target.run(case)
    assert any(address == attacker for _, address, _, _ in unfiltered.reads)
