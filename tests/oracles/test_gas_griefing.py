"""The gas-griefing oracle (SWC-126) and the gas limits of variant runs it stands on.

A relayer that marks a request done and forwards it with a call whose failure it does not
revert lets whoever submits the transaction starve the call: the oracle runs the case
again with the last transaction's gas limit lowered (``PostState.run_variant``) and
reports a call that then runs out of gas while the transaction succeeds with the same
writes. Campaigns over the fixtures find the vulnerable relayers within a fixed seed and
budget and leave their look-alikes alone; hand-written cases pin the wording, the roles
(the attacker's own contract is no victim) and the variant seam itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from secant.chain.chain import TestChain
from secant.evm.crypto import keccak256
from secant.oracles import registry
from secant.oracles.flows import call_sites
from secant.oracles.gas_griefing import GasGriefingOracle, griefable_calls
from secant.oracles.rated import RatedOracle
from secant.targets.contract import ContractRun, ContractTarget
from secant.types import Finding, Tx, TxSeq
from tests.compile.conftest import needs_node
from tests.oracles.hand import hand_case
from tests.oracles.test_vulnerabilities import Case, campaign_of, chain_of, compiled, line_of

ORACLE = "gas-griefing"
Step = tuple[str, str, tuple[object, ...]]  # sender, function, args
NOTE = b"\x11" * 32

# Budgets are about ten times what seed 0 needs today (the comment: executions to find).
VULNERABLE = [
    Case("griefing/Courier.sol", "Courier", ORACLE, 0, 100, confidence="likely",
         marker="(bool delivered, ) = address(inbox).call("),  # 1
    Case("griefing/JobRunner.sol", "JobRunner", ORACLE, 0, 1500, confidence="likely",
         marker="(bool success, ) = address(ledger).call("),  # 158
    Case("griefing/Forwarder.sol", "NonceForwarder", ORACLE, 0, 100, confidence="likely",
         marker="address(registry).call(bytes4"),  # 1
]

SAFE = [
    Case("griefing/Courier.sol", "GasCheckedCourier", ORACLE),
    Case("griefing/Courier.sol", "StrictCourier", ORACLE),
    Case("griefing/Courier.sol", "RetryingCourier", ORACLE),
    Case("griefing/JobRunner.sol", "MeteredJobRunner", ORACLE),
    Case("griefing/Forwarder.sol", "CheckedNonceForwarder", ORACLE),
]

JUDGED = {"GasCheckedCourier", "RetryingCourier", "MeteredJobRunner"}
"""The look-alikes with a call whose failure does not revert: judged by variants."""

COURIER = VULNERABLE[0]


def steps_of(case: Case, steps: Sequence[Step], chain: TestChain | None = None
             ) -> tuple[TxSeq, ContractTarget, GasGriefingOracle]:
    """A hand-written case (sender, function, args) and a target and oracle for it."""
    txs, target, oracle = hand_case(chain or chain_of(case), ORACLE, steps)
    assert isinstance(oracle, GasGriefingOracle)
    return txs, target, oracle


def check(case: Case, steps: Sequence[Step], chain: TestChain | None = None
          ) -> tuple[list[Finding], ContractTarget, ContractRun]:
    txs, target, oracle = steps_of(case, steps, chain)
    result = target.run(txs)
    return oracle.check(result, target), target, result


@needs_node
@pytest.mark.parametrize("case", VULNERABLE, ids=[case.id for case in VULNERABLE])
def test_a_griefable_relay_is_found(case: Case) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, case.contract)
    campaign.run()
    [finding] = [f for f in campaign.findings.values() if f.contract == case.contract]
    oracle = campaign.oracles[0]
    assert isinstance(oracle, RatedOracle)
    assert finding.oracle == finding.kind == ORACLE and finding.swc == "SWC-126"
    assert finding.severity == "medium" and finding.confidence == "likely"
    assert finding.execs_to_find <= case.budget
    assert "Severity medium, confidence likely:" in finding.detail
    assert "ran out" in finding.detail and "the request is kept as done" in finding.detail
    assert finding.source is not None
    assert finding.source.endswith(f"{Path(case.file).name}:{line_of(case)}")
    code = chain.code_at(chain.contract(case.contract).address)
    assert finding.key == (ORACLE, keccak256(code), finding.pc)
    # The finding's case shows it again on a fresh chain, with a fresh oracle.
    fresh = chain_of(case)
    [again] = registry.build(fresh, [ORACLE])
    target = ContractTarget(fresh, again.needs | {"panics"})
    assert finding.case is not None
    assert finding.key in {f.key for f in again.check(target.run(finding.case), target)}
    assert target.replays >= 2  # the run as it was, then a gas limit that starves the call


@needs_node
@pytest.mark.parametrize("case", SAFE, ids=[case.id for case in SAFE])
def test_a_look_alike_is_not_reported(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    chain = chain_of(case)
    campaign = campaign_of(Case(case.file, case.contract, ORACLE, 2, 1500), chain, None)
    limits: list[object] = []
    real = ContractTarget.run_variant

    def counting(self: ContractTarget, case: TxSeq, *args: object,
                 **kwargs: object) -> ContractRun:
        limits.append(kwargs.get("gas"))
        return real(self, case, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ContractTarget, "run_variant", counting)
    summary = campaign.run()
    assert summary["findings"] == []
    [oracle] = campaign.oracles
    assert isinstance(oracle, GasGriefingOracle)
    if case.contract in JUDGED:
        # The verdict is the variants': lower gas limits were tried, within the budget
        # (a few runs per judgement, a few judgements per site).
        assert any(limit is not None for limit in limits)
        assert len(limits) <= 8 * 8
    else:
        # A call whose failure reverts: no site, no recording, no variant.
        assert oracle.needs == frozenset() and limits == []


@needs_node
def test_the_finding_names_the_gas_limit_that_starves_the_call() -> None:
    txs, target, oracle = steps_of(COURIER, [("user1", "relay(uint256,bytes32)", (1, NOTE))])
    result = target.run(txs)
    [finding] = oracle.check(result, target)
    assert ("transaction 1 of 1 (user1 calling relay(uint256,bytes32) on Courier) made "
            "Courier CALL Inbox at ") in finding.detail
    assert (f"with the 30000000 gas the transaction had (it used "
            f"{result.outcomes[0].gas_used})") in finding.detail
    assert "1 slot of Courier" in finding.detail
    assert finding.function == "relay" and finding.case == result.case
    # The run as it was (for its writes), then limits up and down to a starving one.
    assert 2 <= target.replays <= 8
    # The judged run's post-state is untouched by the variants: the request is done and
    # the inbox counted the delivery.
    courier = target.chain.contract("Courier").address
    inbox = target.chain.contract("Inbox").address
    done = target.call(courier, target.calldata("done(uint256)", [1], courier))
    assert int.from_bytes(done.output, "big") == 1
    assert target.storage_at(inbox, 1) == 1
    # Once reported, the site costs no variant any more.
    replays = target.replays
    again = (Tx("relay(uint256,bytes32)", (2, NOTE), txs[0].sender),)
    assert oracle.check(target.run(again), target) == [] and target.replays == replays


@needs_node
def test_a_failed_transaction_or_call_costs_no_variant() -> None:
    relay = ("user1", "relay(uint256,bytes32)", (1, NOTE))
    # The request was relayed already: the last transaction reverts.
    findings, target, _ = check(COURIER, [("user2", "relay(uint256,bytes32)", (1, NOTE)),
                                          relay])
    assert findings == [] and target.replays == 0
    # The requester named too little gas: the call fails whatever the submitter sends.
    checked = SAFE[0]
    findings, target, result = check(
        checked, [("user1", "relay(uint256,bytes32,uint256)", (1, NOTE, 1000))])
    assert result.outcomes[0].success and [call.success for call in result.calls] == [False]
    assert findings == [] and target.replays == 0
    # Named enough, the call succeeds, and lower limits fail the whole relay: judged clean.
    findings, target, result = check(
        checked, [("user1", "relay(uint256,bytes32,uint256)", (1, NOTE, 100000))])
    assert [call.success for call in result.calls] == [True]
    assert findings == [] and target.replays > 1


@needs_node
def test_the_attackers_own_contract_starved_is_no_finding() -> None:
    case = Case("griefing/Courier.sol", "OpenCourier", ORACLE)
    chain = TestChain.setup(compiled(case.file), contract="OpenCourier", also=["Inbox"])
    costly = next(c.address for c in chain.attacker_contracts if c.kind == "costly")
    # The costly attacker's fallback writes storage: less gas starves it too, but the
    # request starved is the attacker's own.
    findings, target, result = check(
        case, [("user1", "relay(address,uint256,bytes32)", (costly, 1, NOTE))], chain)
    assert [call.success for call in result.calls] == [True]
    assert findings == [] and target.replays == 0
    inbox = chain.contract("Inbox").address
    findings, target, _ = check(
        case, [("user1", "relay(address,uint256,bytes32)", (inbox, 1, NOTE))], chain)
    [finding] = findings
    assert finding.contract == "OpenCourier" and "CALL Inbox" in finding.detail


@needs_node
def test_only_calls_whose_failure_goes_on_near_a_store_are_sites() -> None:
    def sites(file: str, contract: str) -> tuple[int, int]:
        chain = chain_of(Case(file, contract, ORACLE))
        code = chain.code_at(chain.contract(contract).address)
        code_hash = keccak256(code)
        return (len(call_sites(chain, code, code_hash)),
                len(griefable_calls(chain, code, code_hash)))

    assert sites("griefing/Courier.sol", "Courier") == (1, 1)
    assert sites("griefing/Courier.sol", "StrictCourier") == (1, 0)  # require(ok)
    assert sites("griefing/Forwarder.sol", "CheckedNonceForwarder") == (1, 0)
    # A failure the code records still goes on: judged by the variants' writes.
    assert sites("griefing/Courier.sol", "RetryingCourier") == (1, 1)
    # An unchecked send gives the stipend: the gasless-send oracle's.
    assert sites("dataflow/EscrowRelease.sol", "Escrow") == (1, 0)
    # A relay that writes no storage marks nothing done.
    assert sites("dataflow/Relay.sol", "Relay") == (1, 0)


# ---------------------------------------------------------------------- the variant seam
@needs_node
def test_a_variant_takes_other_gas_limits_and_leaves_the_judged_run_as_it_was() -> None:
    first = ("user1", "relay(uint256,bytes32)", (1, NOTE))
    second = ("user2", "relay(uint256,bytes32)", (2, NOTE))
    txs, target, _ = steps_of(COURIER, [first, second])
    fresh = ContractTarget(chain_of(COURIER), frozenset({"calls"}))

    def outcomes(run: ContractRun) -> list[tuple[bool, int]]:
        return [(o.success, o.gas_used) for o in run.outcomes]

    target.run(txs)
    inbox = target.chain.contract("Inbox").address
    # Too little for the courier's own work: the first transaction fails, the second
    # then relays request 2 as it did.
    low = target.run_variant(txs, gas={0: 40000})
    assert [o.success for o in low.outcomes] == [False, True]
    assert low.outcomes[0].gas_used == 40000
    # Below the intrinsic gas, the transaction is rejected.
    rejected = target.run_variant(txs, gas={1: 20000})
    assert rejected.outcomes[1].invalid and rejected.outcomes[0].success
    # The chain holds the judged run's state again.
    assert target.storage_at(inbox, 1) == 2
    # The plain case after them: what a fresh target gives (the states after another gas
    # limit are never resumed from).
    assert outcomes(target.run_variant(txs)) == outcomes(fresh.run(txs))
    assert outcomes(target.run_variant(txs[:1])) == outcomes(fresh.run(txs[:1]))
    assert target.replays == 4
