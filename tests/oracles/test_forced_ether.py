"""The forced-ether oracle (SWC-132) and the variant runs it stands on.

A strict comparison of a balance (``==``, ``!=``) that a require or an assert depends on
breaks when anyone forces one wei onto the account: the oracle runs the case again with
that wei (``PostState.run_variant``) and reports a transaction that succeeded and now
fails at the comparison. Campaigns over the fixtures find the vulnerable contracts within
a fixed seed and budget and leave their look-alikes alone; hand-written cases pin the
wording, the forcing of a contract's future address and the variant seam itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.opcodes import BALANCE, CREATE, SELFBALANCE
from secant.oracles import registry
from secant.oracles.forced_ether import ForcedEtherOracle, balance_sites
from secant.oracles.rated import RatedOracle
from secant.targets.contract import ContractRun, ContractTarget
from secant.types import Finding, Tx, TxSeq
from tests.compile.conftest import needs_node
from tests.oracles.hand import hand_case
from tests.oracles.test_vulnerabilities import Case, campaign_of, chain_of, line_of

ORACLE = "forced-ether"
Step = tuple[str, str, tuple[object, ...], int]  # sender, function, args, value

# Budgets are about ten times what seed 0 needs today (the comment: executions to find).
VULNERABLE = [
    Case("forced/Reserve.sol", "StrictReserve", ORACLE, 0, 300,
         marker="address(this).balance == total"),  # 33
    Case("forced/EscrowFactory.sol", "EscrowFactory", ORACLE, 0, 300,
         marker="assert(address(escrow).balance == msg.value)"),  # 6
    Case("forced/Pool.sol", "ExactPool", ORACLE, 0, 300,
         marker="assert(this.balance == saved)"),  # 1
]

SAFE = [
    Case("forced/Reserve.sol", "TolerantReserve", ORACLE),
    Case("forced/EscrowFactory.sol", "TolerantEscrowFactory", ORACLE),
    Case("forced/Pool.sol", "MeasuredPool", ORACLE),
]

RESERVE = SAFE[0]
STRICT = VULNERABLE[0]
FACTORY = VULNERABLE[1]


def steps_of(case: Case, steps: Sequence[Step]
             ) -> tuple[TxSeq, ContractTarget, ForcedEtherOracle]:
    """A hand-written case (sender, function, args, value) and a target and oracle for it."""
    txs, target, oracle = hand_case(chain_of(case), ORACLE, steps)
    assert isinstance(oracle, ForcedEtherOracle)
    return txs, target, oracle


def check(case: Case, steps: Sequence[Step]
          ) -> tuple[list[Finding], ContractTarget, ContractRun]:
    txs, target, oracle = steps_of(case, steps)
    result = target.run(txs)
    return oracle.check(result, target), target, result


@needs_node
@pytest.mark.parametrize("case", VULNERABLE, ids=[case.id for case in VULNERABLE])
def test_a_strict_balance_comparison_is_found(case: Case) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, case.contract)
    campaign.run()
    [finding] = [f for f in campaign.findings.values() if f.contract == case.contract]
    oracle = campaign.oracles[0]
    assert isinstance(oracle, RatedOracle)
    assert finding.oracle == finding.kind == ORACLE and finding.swc == "SWC-132"
    assert finding.severity == "medium" and finding.confidence == "certain"
    assert finding.execs_to_find <= case.budget
    assert "Severity medium, confidence certain:" in finding.detail
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
    assert target.replays >= 1


@needs_node
@pytest.mark.parametrize("case", SAFE, ids=[case.id for case in SAFE])
def test_a_tolerant_look_alike_is_not_reported(case: Case,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    chain = chain_of(case)
    campaign = campaign_of(Case(case.file, case.contract, ORACLE, 0, 1500), chain, None)
    variants: list[TxSeq] = []
    real = ContractTarget.run_variant

    def counting(self: ContractTarget, case: TxSeq, *args: object,
                 **kwargs: object) -> ContractRun:
        variants.append(case)
        return real(self, case, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ContractTarget, "run_variant", counting)
    summary = campaign.run()
    assert summary["findings"] == []
    # The balance reads ran (the first of the code: a factory's code holds its child's
    # code after its own): the verdict is the oracle's, not a lack of coverage.
    covered = campaign.fuzzer.coverage.blocks
    code = chain.code_at(chain.contract(case.contract).address)
    code_hash = keccak256(code)
    reads = [start for start, instructions in analyze(code, code_hash, chain.fork).blocks
             if any(op in (BALANCE, SELFBALANCE) for _, op, _ in instructions)]
    assert reads and (code_hash, reads[0]) in covered
    [oracle] = campaign.oracles
    assert isinstance(oracle, ForcedEtherOracle)
    if case.contract == "MeasuredPool":
        # Its comparison is a site: forced ether was tried, a few times, and held.
        assert 0 < len(variants) <= 8
    else:
        assert oracle.needs == frozenset() and variants == []


@needs_node
def test_only_comparisons_that_guard_a_failure_are_sites() -> None:
    def sites(file: str, contract: str) -> list[tuple[int, int | None]]:
        chain = chain_of(Case(file, contract, ORACLE))
        code = chain.code_at(chain.contract(contract).address)
        return [(site.eq, site.jumpi) for site in balance_sites(chain, code, keccak256(code))]

    [(eq, jumpi)] = sites("forced/Reserve.sol", "StrictReserve")
    assert jumpi is not None and jumpi > eq
    assert sites("forced/Reserve.sol", "TolerantReserve") == []  # >=: no EQ at all
    assert sites("forced/EscrowFactory.sol", "TolerantEscrowFactory") == []
    # MeasuredPool's noted flag is stored and its `if` fails nothing: only the assert.
    assert len(sites("forced/Pool.sol", "MeasuredPool")) == 1
    assert len(sites("forced/Pool.sol", "ExactPool")) == 1


@needs_node
def test_a_future_contract_address_is_paid_before_its_creation() -> None:
    findings, target, result = check(FACTORY, [("user1", "open(uint256)", (60,), 5)])
    [finding] = findings
    [created] = [call.target for call in result.calls if call.kind == CREATE]
    assert f"0x{created:040x}" in finding.detail
    assert "paid before the contract exists" in finding.detail
    assert "transaction 1 of 1 (user1 calling open(uint256) on EscrowFactory with 5 wei)" in (
        finding.detail)
    assert "now fails (an assertion or invalid opcode)" in finding.detail
    assert finding.function == "open" and finding.case == result.case
    # The forcing of the factory itself changes nothing; the created address alone does:
    # the variant with both, then each alone until one fails.
    assert target.replays == 3
    # The judged run's post-state is untouched by the variants.
    assert target.chain.state.balance(created) == 5
    factory = target.chain.contract("EscrowFactory").address
    assert target.storage_at(factory, 0) == 1


@needs_node
def test_a_reverted_comparison_a_known_key_and_a_held_one_cost_no_variant() -> None:
    # The withdrawal fails on its own (too much): nothing succeeded past the comparison.
    deposit = ("user1", "deposit()", (), 5)
    findings, target, _ = check(STRICT, [("user1", "withdraw(uint256)", (3,), 0)])
    assert findings == [] and target.replays == 0
    txs, target, oracle = steps_of(STRICT, [deposit, ("user1", "withdraw(uint256)", (3,), 0)])
    [finding] = oracle.check(target.run(txs), target)
    assert "transaction 2 of 2 (user1 calling withdraw(uint256) on StrictReserve)" in (
        finding.detail)
    assert "naming StrictReserve as a SELFDESTRUCT's beneficiary" in finding.detail
    assert "now reverts" in finding.detail
    replays = target.replays
    assert oracle.check(target.run(txs), target) == [] and target.replays == replays
    # A comparison that holds with the forced wei is tried a few times, then left alone.
    pool = SAFE[2]
    txs, target, oracle = steps_of(pool, [("user1", "save()", (), 5)])
    for value in range(1, 12):
        case = (Tx("save()", (), txs[0].sender, value),)
        assert oracle.check(target.run(case), target) == []
    assert target.replays == 8


# ---------------------------------------------------------------------- the variant seam
@needs_node
def test_a_variant_forces_wei_and_leaves_the_judged_run_as_it_was() -> None:
    txs, target, _ = steps_of(RESERVE, [("user1", "deposit()", (), 5),
                                        ("user2", "deposit()", (), 7)])
    reserve = target.chain.contract("TolerantReserve").address
    target.run(txs)
    variant = target.run_variant(txs, {1: {reserve: 100}}, frozenset({"balances"}))
    assert variant.balance_changes[reserve] == 112
    assert [o.success for o in variant.outcomes] == [True, True]
    assert target.replays == 1
    # The chain holds the judged run's state again: its balance, its storage.
    assert target.chain.state.balance(reserve) == 12
    assert target.storage_at(reserve, 1) == 12
    # Deterministic, and the forced state is never resumed from: the plain case and the
    # case forced before its first transaction give what a fresh target gives.
    again = target.run_variant(txs, {1: {reserve: 100}}, frozenset({"balances"}))
    assert again.balance_changes == variant.balance_changes
    plain = target.run_variant(txs, None, frozenset({"balances"}))
    assert plain.balance_changes[reserve] == 12
    first = target.run_variant(txs, {0: {reserve: 1}}, frozenset({"balances"}))
    assert first.balance_changes[reserve] == 13
    assert target.replays == 4


@needs_node
def test_a_variant_resumes_only_from_states_no_forcing_touched() -> None:
    steps = [("user1", "deposit()", (), 5), ("user1", "withdraw(uint256)", (2,), 0),
             ("user2", "deposit()", (), 3), ("user1", "withdraw(uint256)", (1,), 0)]
    txs, target, _ = steps_of(STRICT, steps)
    reserve = target.chain.contract("StrictReserve").address
    target.run(txs)
    fresh = ContractTarget(chain_of(STRICT), frozenset())

    def outcomes(run: ContractRun) -> list[tuple[bool, int]]:
        return [(o.success, o.gas_used) for o in run.outcomes]

    # Forced before the third transaction: the prefix runs plainly, the rest fails.
    forced = target.run_variant(txs, {2: {reserve: 1}})
    assert [o.success for o in forced.outcomes] == [True, True, True, False]
    # Then the plain case and its swaps, on the same replaying target (whose cache holds
    # the prefixes of the first run): what a fresh target gives from the start.
    for case in (txs, (txs[0], txs[2], txs[1], txs[3]), txs[:3]):
        assert outcomes(target.run_variant(case)) == outcomes(fresh.run(case))
    assert outcomes(target.run_variant(txs, {3: {reserve: 1}})) == [
        *outcomes(fresh.run(txs))[:3], (False, forced.outcomes[3].gas_used)]
