"""The gas-limit oracle (SWC-128): a function that state anyone grows pushes past a block.

The oracle repeats an earlier transaction of a run as an attacker (``PostState.run_variant``)
and measures the last one's gas; when it grows linearly it runs the extrapolated number of
repetitions and reports only when the last transaction then fails for lack of gas.
Campaigns over the fixtures find the vulnerable contracts within a fixed seed and budget
and leave the look-alikes alone (a capped list, pull payments, pages, a ring); hand-written
cases pin a growth that stops, the caller's own argument, a threshold only more entries
open, the extrapolated rating and what the shrinker's replays cost.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from secant.engine.events import FuzzListener
from secant.evm.crypto import keccak256
from secant.oracles import gas_limit, registry
from secant.oracles.gas_limit import GasLimitOracle, has_loop, transaction_gas
from secant.targets.contract import ContractRun, ContractTarget
from secant.types import Finding, RunResult, Tx, TxSeq
from tests.compile.conftest import needs_node
from tests.oracles.test_vulnerabilities import Case, campaign_of, chain_of, line_of

ORACLE = "dos-gas-limit"

# Budgets are about three times what seed 0 needs today (the comment: executions to find).
VULNERABLE = [
    Case("gaslimit/OpenRefunds.sol", "OpenRefunds", ORACLE, 0, 400,
         marker="// the refund loop"),  # 115
    Case("gaslimit/Waitlist.sol", "Waitlist", ORACLE, 0, 450,
         marker="// walks the whole list"),  # 142
    Case("gaslimit/PriceHistory.sol", "PriceHistory", ORACLE, 0, 300,
         marker="delete history;"),  # 13
]

# (the case, the function whose loop the campaign must have run)
SAFE = [
    (Case("gaslimit/OpenRefunds.sol", "CappedRefunds", ORACLE, 0, 1500), "cancel()"),
    (Case("gaslimit/OpenRefunds.sol", "PullRefunds", ORACLE, 0, 1500), "withdraw()"),
    (Case("gaslimit/Waitlist.sol", "PagedWaitlist", ORACLE, 0, 1500), "admitPage(uint256)"),
    (Case("gaslimit/PriceHistory.sol", "RingHistory", ORACLE, 0, 1500), "restart()"),
]

REFUNDS, WAITLIST, HISTORY = VULNERABLE
CAPPED = SAFE[0][0]
TOMBOLA = Case("gaslimit/Tombola.sol", "Tombola", ORACLE)
BATCHES = Case("gaslimit/Tombola.sol", "BatchLog", ORACLE)

Step = tuple[str, str, tuple[object, ...]]  # sender, function, args


class Variants:
    """The variant cases the oracle ran (``ContractTarget.run_variant``), in order."""

    def __init__(self) -> None:
        self.cases: list[TxSeq] = []


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Variants]:
    """Count the variants run while the block is active."""
    seen = Variants()
    real = ContractTarget.run_variant

    def counting(self: ContractTarget, case: TxSeq, *args: object,
                 **kwargs: object) -> ContractRun:
        seen.cases.append(case)
        return real(self, case, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(ContractTarget, "run_variant", counting)
        yield seen


def oracle_for(case: Case) -> GasLimitOracle:
    """A new oracle on the case's chain."""
    [built] = registry.build(chain_of(case), [ORACLE])
    assert isinstance(built, GasLimitOracle)
    return built


def check(case: Case, steps: Sequence[Step], oracle: GasLimitOracle | None = None
          ) -> tuple[list[Finding], GasLimitOracle, ContractRun]:
    """The oracle's findings on a hand-written case (a fresh chain; ``oracle`` or a new one).

    Deployment is deterministic: an oracle built on another chain of the same case knows
    the same addresses and code.
    """
    chain = chain_of(case)
    oracle = oracle or oracle_for(case)
    target = ContractTarget(chain, oracle.needs | {"panics"})
    txs = tuple(Tx(function, args, chain.sender(sender).address)
                for sender, function, args in steps)
    result = target.run(txs)
    return oracle.check(result, target), oracle, result


@needs_node
@pytest.mark.parametrize("case", VULNERABLE, ids=[case.id for case in VULNERABLE])
def test_a_function_anyone_can_starve_is_found(case: Case) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, case.contract)
    campaign.run()
    [finding] = [f for f in campaign.findings.values() if f.contract == case.contract]
    assert finding.oracle == finding.kind == ORACLE and finding.swc == "SWC-128"
    assert finding.severity == "medium" and finding.confidence == "certain"
    assert finding.execs_to_find <= case.budget
    assert "Severity medium, confidence certain:" in finding.detail
    assert "fails for lack of gas" in finding.detail and "30,000,000 gas" in finding.detail
    assert finding.source is not None
    assert finding.source.endswith(f"{Path(case.file).name}:{line_of(case)}")
    # The finding's case is short (the victim last) and shows it again on a fresh chain.
    assert finding.case is not None and 2 <= len(finding.case) <= 6
    fresh = chain_of(case)
    [again] = registry.build(fresh, [ORACLE])
    target = ContractTarget(fresh, again.needs | {"panics"})
    assert finding.key in {f.key for f in again.check(target.run(finding.case), target)}
    # Shrinking it took a handful of replays, not thousands.
    assert finding.shrink is not None and finding.shrink["execs"] < 50


class Succeeded(FuzzListener):
    """The functions whose call, last in a run, succeeded."""

    def __init__(self) -> None:
        self.functions: set[str] = set()

    def on_run(self, result: RunResult) -> None:
        if result.outcomes and result.outcomes[-1].success:
            self.functions.add(result.case[-1].function)


@needs_node
@pytest.mark.parametrize(("case", "victim"), SAFE, ids=[case.id for case, _ in SAFE])
def test_a_function_whose_worst_case_fits_is_not_reported(
        case: Case, victim: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, None)
    ran = Succeeded()
    campaign.listen(ran)
    with counted(monkeypatch) as variants:
        summary = campaign.run()
    assert summary["findings"] == []
    # The function that walks the list did run: the verdict is the oracle's.
    assert victim in ran.functions
    # Few runs are worth probing: a handful of judgements over the campaign.
    assert len(variants.cases) < 150


@needs_node
def test_a_growth_that_stops_is_not_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[Step] = [("attacker1", "enter()", ()), ("deployer", "cancel()", ())]
    with counted(monkeypatch) as variants:
        findings, _, _ = check(CAPPED, steps)
    assert findings == []
    # Doubled while the gas grew linearly (64 entries of the 100 seats), until the repeated
    # entry failed once the round was full (128): no verifying run of thousands.
    assert [len(case) - 2 for case in variants.cases] == [1, 2, 4, 8, 16, 32, 64, 128]
    # Probes that stop at 64 repetitions do not reach the cap; the verifying run does:
    # the round is full long before cancelling stops fitting.
    monkeypatch.setattr(gas_limit, "PROBE_LIMIT", 64)
    with counted(monkeypatch) as variants:
        assert check(CAPPED, steps)[0] == []
    assert max(map(len, variants.cases)) > 1000
    # The same round without the cap: reported, with the measurements.
    [finding], _, _ = check(REFUNDS, steps)
    assert finding.function == "cancel" and "calls of enter() by attacker1" in finding.detail
    assert "deployer calling cancel()" in finding.detail
    assert "4,639 more per call" in finding.detail


@needs_node
def test_the_victim_is_someone_else_than_the_attacker() -> None:
    # The attacker restarting the history itself: the victim is a user.
    [finding], _, _ = check(HISTORY, [("attacker2", "report(uint256)", (7,)),
                                      ("attacker1", "restart()", ())])
    assert "by attacker2" in finding.detail and "user1 calling restart()" in finding.detail
    assert finding.source is not None and finding.source.endswith(
        f"PriceHistory.sol:{line_of(HISTORY)}")


@needs_node
def test_the_caller_hurting_itself_is_not_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    # A batch whose size the caller names: its gas grows with its own argument, never
    # with the entries others added before it.
    with counted(monkeypatch) as variants:
        findings, _, _ = check(BATCHES, [("attacker1", "add(uint256,uint256)", (1, 3)),
                                         ("user1", "add(uint256,uint256)", (2, 40))])
    assert findings == [] and len(variants.cases) == 3  # flat at 1, 2 and 4 repetitions
    # A batch too large for a block fails by itself: not a run the oracle looks at.
    with counted(monkeypatch) as variants:
        findings, _, result = check(BATCHES, [("attacker1", "add(uint256,uint256)", (1, 3)),
                                              ("user1", "add(uint256,uint256)", (2, 10**4))])
    assert not result.outcomes[-1].success and findings == [] and variants.cases == []


@needs_node
def test_a_threshold_more_entries_open_is_judged_from_the_revert() -> None:
    # One ticket: the draw reverts ("ten tickets first"); repeating the ticket opens it,
    # then its deletion grows until it no longer fits.
    [finding], _, result = check(TOMBOLA, [("attacker1", "take()", ()),
                                           ("user1", "draw()", ())])
    assert result.outcomes[-1].reverted
    assert finding.function == "draw" and finding.confidence == "certain"
    assert "the loop the compiler made for" in finding.detail
    assert finding.source is not None and finding.source.endswith("Tombola.sol:24")


@needs_node
def test_beyond_what_a_verification_runs_the_finding_is_extrapolated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gas_limit, "VERIFY_WORK", 20_000)
    [finding], _, _ = check(REFUNDS, [("attacker1", "enter()", ()),
                                      ("deployer", "cancel()", ())])
    assert finding.confidence == "likely" and "extrapolated" in finding.detail
    assert "Severity medium, confidence likely:" in finding.detail
    # A growth that stops within the longest run made is still not reported.
    monkeypatch.setattr(gas_limit, "PROBE_LIMIT", 64)
    assert check(CAPPED, [("attacker1", "enter()", ()), ("deployer", "cancel()", ())])[0] == []


@needs_node
def test_the_replays_of_shrinking_share_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[Step] = [("user1", "join()", ()), ("deployer", "admitAll()", ())]
    oracle = oracle_for(WAITLIST)
    pristine = oracle.fresh()  # as the campaign keeps it, before any run
    with counted(monkeypatch) as first:
        [finding], _, _ = check(WAITLIST, steps, oracle)
    # A fresh copy (what judges the shrinker's replays) probes again but does not run the
    # thousands of repetitions again: the verdict is shared.
    with counted(monkeypatch) as again:
        [repeated], _, _ = check(WAITLIST, steps, pristine.fresh())  # type: ignore[arg-type]
    assert repeated.key == finding.key and repeated.detail == finding.detail
    assert max(map(len, first.cases)) > 1000 > max(map(len, again.cases))
    assert len(again.cases) == len(first.cases) - 1


@needs_node
def test_the_oracle_is_off_without_a_loop_and_once_reported() -> None:
    chain = chain_of(Case("leaking/OpenSweep.sol", "OpenTipJar", ORACLE))
    [oracle] = registry.build(chain, [ORACLE])
    assert isinstance(oracle, GasLimitOracle) and not oracle.active
    assert oracle.needs == frozenset()
    assert transaction_gas(chain) == 30_000_000
    refunds = chain_of(REFUNDS)
    assert refunds.main is not None
    code = refunds.code_at(refunds.main.address)
    assert has_loop(code, keccak256(code), refunds)
    # Reported once: the same run again is not judged.
    steps: list[Step] = [("attacker1", "enter()", ()), ("deployer", "cancel()", ())]
    [_], oracle, _ = check(REFUNDS, steps)
    assert check(REFUNDS, steps, oracle)[0] == []
