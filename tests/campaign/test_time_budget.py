"""A time budget is the whole campaign's: fuzzing, shrinking and the reports (issue 24).

Nothing here measures the machine: the campaigns run on a fake clock (``Clock``) the tests
move by executions or by readings, and the assertions are about the mechanism. Fuzzing
pauses at the budget's fuzz deadline while findings wait to be shrunk and goes on after
them; shrinking stops at the shrink deadline with the smallest case so far, and findings it
did not reach keep the case found and say so; an execution budget never reads the clock.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from secant.campaign.campaign import (
    MIN_CAMPAIGN_S,
    Campaign,
    TimeBudget,
    reports_reserve,
    run_share,
    shrink_reserve,
)
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.cli.fuzz_cmd import _print_summary
from secant.cli.main import app
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.events import FuzzListener
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT, Key, Shrinker
from secant.types import Tx, TxSeq
from tests.compile.conftest import needs_node

ROOT = Path(__file__).resolve().parents[2]
SHRINK_SOL = ROOT / "tests" / "fixtures" / "shrink" / "Shrink.sol"
CHECKS_SOL = ROOT / "tests" / "fixtures" / "oracles" / "Checks.sol"
BAZ_SOL = ROOT / "examples" / "contracts" / "Baz.sol"


@functools.cache
def compiled(path: Path) -> list[Compilation]:
    return load([path])


class Clock:
    """A fake clock: ``now`` seconds, moved by ``step`` at every reading."""

    def __init__(self, now: float = 0.0, step: float = 0.0) -> None:
        self.now = now
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        now = self.now
        self.now += self.step
        return now


class Ticks(FuzzListener):
    """Sets a fake clock to a hundredth of a second per execution of a campaign's fuzzer."""

    def __init__(self, clock: Clock, campaign: Campaign) -> None:
        self.clock = clock
        self.campaign = campaign

    def on_progress(self) -> None:
        self.clock.now = self.campaign.fuzzer.stats.execs / 100


# ---------------------------------------------------------------------- the reserves
def test_the_reserves_are_shares_of_the_budget_within_bounds() -> None:
    # The reports: 1 % of the budget, at least 1 s and at most 5 s.
    assert [reports_reserve(s) for s in (20, 60, 300, 600, 3600)] == [1, 1, 3, 5, 5]
    # Shrinking: a tenth, at least 1 s.
    assert [shrink_reserve(s) for s in (5, 20, 600)] == [1, 2, 60]
    # A very short budget keeps at most a quarter back for each.
    assert reports_reserve(2) == shrink_reserve(2) == 0.5
    budget = TimeBudget.of(600, start=100, reports=True, shrinking=True)
    assert (budget.end, budget.shrink_deadline) == (700, 695)
    assert (budget.fuzz_deadline(False), budget.fuzz_deadline(True)) == (695, 635)
    # No output folder and no shrinking: nothing is kept back.
    bare = TimeBudget.of(600, start=0, reports=False, shrinking=False)
    assert bare.fuzz_deadline(True) == bare.shrink_deadline == bare.end == 600


# ---------------------------------------------------------------------- the shrinker
def test_a_deadline_stops_the_shrinker_with_the_smallest_case_so_far() -> None:
    case = tuple(Tx("f(uint256)", (value,), 1) for value in range(10))

    def run(candidate: TxSeq) -> Collection[Key]:
        return {("bug",)} if any(tx.args == (2,) for tx in candidate) else set()

    clock = Clock(now=0.0, step=1.0)
    shrinker = Shrinker(run, ("bug",), DEFAULT_SHRINK_LIMIT, deadline=3.5, clock=clock)
    result = shrinker.shrink(case)
    # Readings 0 to 3 run the case and its prefixes of 1, 2 and 3 transactions (the last
    # fails: kept); reading 4 is past the deadline.
    assert result.execs == 4 and result.out_of_time and not result.complete
    assert result.reproduced and result.case == case[:3]
    assert result.stats()["out_of_time"] is True
    # Without a deadline the clock is never read, and nothing says out_of_time.
    unread = Clock()
    again = Shrinker(run, ("bug",), DEFAULT_SHRINK_LIMIT, clock=unread).shrink(case)
    assert again.complete and again.case == (Tx("f(uint256)", (2,), 1),)
    assert unread.readings == 0 and "out_of_time" not in again.stats()


# ---------------------------------------------------------------------- campaigns
@needs_node
def test_fuzzing_pauses_for_shrinking_and_goes_on_after_it() -> None:
    # 100 (fake) seconds, one per hundred executions: with a finding waiting, fuzzing pauses
    # 10 s (the shrinking reserve) before the end, at 9,000 executions; Baz's finding
    # shrinks in well under that, and fuzzing goes on to the end, 10,000 executions.
    chain = TestChain.setup(compiled(BAZ_SOL), contract="Baz")
    clock = Clock()
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=None,
                                                         max_time=100.0)), clock=clock)
    campaign.listen(Ticks(clock, campaign))
    campaign._slice = lambda seconds: 100  # type: ignore[method-assign]
    assert campaign.budget == TimeBudget(100.0, 0.0, 0.0, 10.0)  # no output: no reports
    paused_at: list[int] = []
    shrink = campaign.shrink_findings

    def shrink_findings() -> None:
        paused_at.append(campaign.fuzzer.stats.execs)
        shrink()

    campaign.shrink_findings = shrink_findings  # type: ignore[method-assign]
    summary = campaign.run()
    assert paused_at[0] == 9000
    [finding] = campaign.findings.values()
    assert finding.shrink is not None and finding.shrink["complete"]
    assert "out_of_time" not in finding.shrink
    assert summary["execs"] == 10_000  # fuzzing went on after shrinking, to the end
    # The engine's own limit is the end of fuzzing on its clock: far away on the real one.
    assert campaign.fuzzer.config.max_time == pytest.approx(100.0, abs=1.0)
    assert campaign.config.fuzz.max_time == 100.0  # the campaign's configuration is kept
    # Pausing and slicing do not change the search: an execution budget of as many runs
    # makes the same campaign.
    same = Campaign(TestChain.setup(compiled(BAZ_SOL), contract="Baz"),
                    CampaignConfig(FuzzConfig(seed=0, max_execs=10_000)))
    same.run()
    assert [s.case for s in same.fuzzer.corpus.seeds] == [
        s.case for s in campaign.fuzzer.corpus.seeds]
    [found] = same.findings.values()
    assert found.original_case == finding.original_case
    assert found.execs_to_find == finding.execs_to_find


def finished(path: Path, contract: str, execs: int, out: Path | None = None,
             seed: int = 0) -> Campaign:
    """A campaign run on an execution budget without shrinking (the findings as found)."""
    chain = TestChain.setup(compiled(path), contract=contract)
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=seed, max_execs=execs), out=out,
                                              shrink_limit=0))
    campaign.run()
    campaign.config.shrink_limit = DEFAULT_SHRINK_LIMIT
    return campaign


def with_deadline(campaign: Campaign, clock: Clock, seconds: float = 600.0) -> TimeBudget:
    """Give a finished campaign a time budget on ``clock`` (as if it had run with one)."""
    campaign.clock = clock
    campaign.budget = TimeBudget.of(seconds, 0.0, reports=True, shrinking=True)
    return campaign.budget


@needs_node
def test_shrinking_stops_at_the_deadline_keeping_the_smallest_case_so_far(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Seed 5's case (8 transactions) loses some within the first twelve replays.
    campaign = finished(SHRINK_SOL, "ThreeStep", 5000, tmp_path, seed=5)
    [finding] = campaign.findings.values()
    found = finding.case
    assert found is not None and len(found) > 3  # noise to shrink away
    # One second per reading of the clock: the campaign's reading, then one per replay.
    clock = Clock(step=1.0)
    clock.now = with_deadline(campaign, clock).shrink_deadline - 12.5
    summary = campaign.finish()
    assert finding.shrink is not None and finding.shrink["out_of_time"] is True
    assert finding.shrink["execs"] == 12 and not finding.shrink["complete"]
    assert finding.original_case == found and finding.case is not None
    assert len(finding.case) < len(found)
    assert finding.key in campaign.workers[0].replay(finding.case)  # it still fails
    assert summary["shrink"] | {"execs": 0, "tx_after": 0} == {
        "limit": DEFAULT_SHRINK_LIMIT, "findings": 1, "execs": 0, "tx_before": len(found),
        "tx_after": 0, "interrupted": False, "out_of_time": True, "cut_short": 1,
        "not_shrunk": 0}
    on_disk = json.loads(next((tmp_path / "findings").glob("*.json")).read_text())
    assert on_disk["shrink"] == finding.shrink and on_disk["original_sequence"]
    _print_summary(summary, tmp_path)
    assert (f"(shrunk from {len(found)} transactions in 12 execs, cut short by the time "
            "budget; the case found is in the finding's file)") in capsys.readouterr().out


@needs_node
def test_findings_the_deadline_left_keep_their_case_and_say_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    campaign = finished(CHECKS_SOL, "Checks", 3000, tmp_path)
    found = {key: f.case for key, f in campaign.findings.items()}
    assert len(found) >= 5
    clock = Clock()
    clock.now = with_deadline(campaign, clock).shrink_deadline  # the time is up
    summary = campaign.finish()
    assert {key: f.case for key, f in campaign.findings.items()} == found
    assert all(f.shrink is None for f in campaign.findings.values())
    assert summary["shrink"]["out_of_time"] is True
    assert summary["shrink"]["not_shrunk"] == len(found)
    assert summary["shrink"]["findings"] == summary["shrink"]["cut_short"] == 0
    assert all("shrink" not in f and "original_sequence" not in f
               for f in summary["findings"])
    _print_summary(summary, tmp_path)
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    notes = [line for line in lines if "not shrunk" in line]
    assert notes == ["(not shrunk: the time budget ran out first)"] * len(found)
    assert (f"shrinking stopped early (the time budget ran out): secant shrink {tmp_path} "
            "shrinks the findings further") in lines


@needs_node
def test_each_finding_gets_a_share_of_the_time_left() -> None:
    campaign = finished(CHECKS_SOL, "Checks", 3000)
    count = len(campaign.findings)
    # One second per reading, 50 s per finding: a finding that needs more than its share
    # stops at it, one that needs less leaves the rest to the next.
    clock = Clock(step=1.0)
    clock.now = with_deadline(campaign, clock).shrink_deadline - 50 * count
    summary = campaign.finish()
    shrunk = [f.shrink for f in campaign.findings.values()]
    # Every finding had its turn: none was left as found, as the first would leave the
    # others if it could take all the time.
    assert all(s is not None and s["execs"] > 0 for s in shrunk)
    assert summary["shrink"]["not_shrunk"] == 0
    assert summary["shrink"]["execs"] <= 50 * count


@needs_node
def test_an_execution_budget_never_reads_the_clock() -> None:
    def clock() -> float:
        raise AssertionError("an execution budget read the clock")

    chain = TestChain.setup(compiled(SHRINK_SOL), contract="TwoStep")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=3000)),
                        clock=clock)
    summary = campaign.run()
    assert campaign.budget is None and campaign.fuzzer.config.max_time is None
    assert summary["shrink"]["out_of_time"] is False and summary["shrink"]["findings"] == 1


@needs_node
def test_secant_fuzz_stops_fuzzing_before_its_time_is_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The engine's limit is the budget less the reports' reserve.
    limits: list[tuple[float | None, TimeBudget | None]] = []
    finish = Campaign.finish

    def recorded(self: Campaign) -> dict[str, Any]:
        limits.append((self.fuzzer.config.max_time, self.budget))
        return finish(self)

    monkeypatch.setattr(Campaign, "finish", recorded)
    result = CliRunner().invoke(app, ["fuzz", str(BAZ_SOL), "--time", "3s", "--quiet",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    [(limit, budget)] = limits
    assert budget is not None and budget.seconds == 3.0 and budget.reports == 0.75
    assert limit is not None and limit <= 3.0 - 0.75 + 0.1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["shrink"]["findings"] == 1 and summary["manifest"]["options"][
        "time_budget"] == "3s"


def test_a_run_shares_its_time_among_its_campaigns() -> None:
    # An equal part of what is left when each starts; never less than the floor.
    assert run_share(90.0, 3) == 30.0
    assert run_share(60.0, 1) == 60.0
    assert run_share(-5.0, 2) == MIN_CAMPAIGN_S


@needs_node
def test_secant_fuzz_gives_each_campaign_its_part_of_the_run_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A test contract with invariants and fuzz tests runs two campaigns. On a clock that
    # moves 10 s at each reading of the command: the deadline is 0 + 100; the invariants
    # start at 10 and get half of the 90 s left, the fuzz tests start at 20 and get all 80
    # left (the invariants, cut short by --execs, left their time to them).
    import secant.cli.fuzz_cmd as fuzz_cmd

    readings = iter(range(0, 1000, 10))
    monkeypatch.setattr(fuzz_cmd, "time", SimpleNamespace(
        monotonic=lambda: float(next(readings)), perf_counter=fuzz_cmd.time.perf_counter))
    budgets: list[float | None] = []
    start = Campaign.__init__

    def recorded(self: Campaign, chain: TestChain, config: CampaignConfig,
                 *args: Any, **kwargs: Any) -> None:
        budgets.append(config.fuzz.max_time)
        start(self, chain, config, *args, **kwargs)

    monkeypatch.setattr(Campaign, "__init__", recorded)
    test_file = ROOT / "tests" / "fixtures" / "foundry_style" / "VaultInvariants.t.sol"
    result = CliRunner().invoke(app, ["fuzz", str(test_file), "--time", "100", "--execs",
                                      "200", "--quiet", "--match-test", "skim|decoy",
                                      "--shrink-limit", "0", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert budgets == [45.0, 80.0]
    assert "== VaultInvariantTest invariants (45 s of --time)" in result.output
