"""No crash stops a campaign: an oracle that raises is switched off, recorded, and the
campaign goes on with the others (its earlier findings kept)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.cli.fuzz_cmd import Announce
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.oracle import Oracle, PostState
from secant.oracles.assertion import AssertionOracle
from secant.targets.contract import ContractTarget
from secant.types import Finding, RunResult, TxOutcome, TxSeq
from tests.compile.conftest import needs_node

pytestmark = needs_node

BAZ = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "Baz.sol"
EXECS = 600


@functools.cache
def compiled() -> list[Compilation]:
    return load([BAZ])


def baz_chain() -> TestChain:
    return TestChain.setup(compiled(), contract="Baz")


class Flaky(Oracle):
    """Reports one finding on its first run, then raises on run ``fail_at``."""

    name = "flaky"
    description = "fails on purpose"

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.runs = 0

    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        self.runs += 1
        if self.runs == self.fail_at:
            raise ValueError("the flaky oracle broke")
        if self.runs > 1:
            return []
        return [Finding(kind="flaky", swc="", contract="Baz", function="baz", pc=0,
                        source=None, detail="first run", key=(self.name,))]


class Watcher(Oracle):
    """Watches every transaction (as a property oracle does); raises at step ``fail_at``."""

    name = "watcher"
    description = "watches the steps, fails on purpose"

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.steps = 0
        self.checks = 0

    def start(self, case: TxSeq, target: ContractTarget) -> None:
        pass

    def after_step(self, index: int, case: TxSeq, outcome: TxOutcome,
                   target: ContractTarget) -> None:
        self.steps += 1
        if self.steps == self.fail_at:
            raise KeyError("the watcher broke")

    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        self.checks += 1
        return []


def campaign_of(tmp_path: Path, *oracles: Oracle, execs: int = EXECS) -> Campaign:
    chain = baz_chain()
    made = [AssertionOracle(chain), *oracles]
    return Campaign(chain, CampaignConfig(FuzzConfig(seed=1, max_execs=execs), out=tmp_path),
                    oracles=[lambda _, oracle=oracle: oracle for oracle in made])


def test_an_oracle_that_raises_is_switched_off_and_the_campaign_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flaky = Flaky(fail_at=40)
    campaign = campaign_of(tmp_path, flaky)
    campaign.listen(Announce())
    summary = campaign.run()
    assert summary["execs"] == EXECS  # the whole budget
    [record] = summary["internal_errors"]
    assert record["part"] == "oracle:flaky" and record["during"] == "fuzzing"
    assert record["error"] == "ValueError: the flaky oracle broke"
    # The run it judged counts; aggressive probes are not judged, so it is the 40th or later.
    assert 40 <= record["exec"] < EXECS
    assert "the flaky oracle broke" in record["traceback"]
    assert flaky.runs == 40 and flaky.switched_off  # never asked again
    kinds = {f["kind"] for f in summary["findings"]}
    assert kinds == {"flaky", "assertion"}  # its earlier finding kept, the others still found
    assert json.loads((tmp_path / "summary.json").read_text())["internal_errors"] == [record]
    assert len(list((tmp_path / "findings").glob("flaky-*.json"))) == 1
    # Switched off, it judges no replay either: its finding is left as found.
    [found] = [f for f in summary["findings"] if f["kind"] == "flaky"]
    assert found["shrink"]["reproduced"] is False
    assert summary["oracles"] == ["assertion", "flaky"]
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert lines == ["warning: internal error in oracle flaky (ValueError: the flaky oracle "
                     "broke): switched off for this run; details in summary.json"]


def test_an_oracle_that_raises_while_watching_the_steps_is_switched_off(
        tmp_path: Path) -> None:
    watcher = Watcher(fail_at=25)
    campaign = campaign_of(tmp_path, watcher)
    summary = campaign.run()
    assert summary["execs"] == EXECS
    [record] = summary["internal_errors"]
    assert record["part"] == "oracle:watcher" and record["error"].startswith("KeyError")
    assert watcher.steps == 25 and watcher.checks < 25  # the failing run is not checked
    assert campaign.workers[0].target.step_observers == []
    assert any(f["kind"] == "assertion" for f in summary["findings"])


def test_an_oracle_that_raises_judging_a_replay_is_switched_off_too(tmp_path: Path) -> None:
    class FailsInReplays(Oracle):
        """Raises when it judges a case replayed alone (shrinking), not while fuzzing."""

        name = "replays"
        fuzzing: ContractTarget | None = None

        def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
            if post is not self.fuzzing:
                raise RuntimeError("broke in a replay")
            return []

    campaign = campaign_of(tmp_path, FailsInReplays())
    FailsInReplays.fuzzing = campaign.workers[0].target
    summary = campaign.run()
    [record] = summary["internal_errors"]
    assert record["part"] == "oracle:replays" and record["during"] == "replay"
    assert record["exec"] == EXECS  # after fuzzing, while shrinking
    # The finding being shrunk is an assertion's: the same replays still judge it.
    [assertion] = [f for f in summary["findings"] if f["kind"] == "assertion"]
    assert assertion["shrink"]["reproduced"] is True
    assert campaign.fuzzer.oracles == campaign.oracles[:1]


def test_the_same_seed_switches_the_same_oracle_off_at_the_same_run(tmp_path: Path) -> None:
    runs = [campaign_of(tmp_path / str(i), Flaky(fail_at=40), execs=300).run()
            for i in range(2)]
    assert [r["internal_errors"][0]["exec"] for r in runs] == [runs[0]["internal_errors"][0]
                                                                ["exec"]] * 2
    assert runs[0]["paths"] == runs[1]["paths"] and runs[0]["corpus"] == runs[1]["corpus"]


def test_an_oracle_whose_summary_raises_is_recorded_once(tmp_path: Path) -> None:
    class BadSummary(Flaky):
        name = "bad-summary"

        def summary(self, findings: Mapping[tuple[Any, ...], Finding]) -> dict[str, Any]:
            raise TypeError("no summary")

    campaign = campaign_of(tmp_path, BadSummary(fail_at=0), execs=100)
    campaign.run()
    summary = campaign.summary()  # written again: the error stays recorded once
    [record] = summary["internal_errors"]
    assert record["part"] == "oracle:bad-summary" and record["during"] == "summary"
    assert record["error"] == "TypeError: no summary"
    assert any(f["kind"] == "flaky" for f in summary["findings"])
    assert json.loads((tmp_path / "summary.json").read_text())["internal_errors"] == [record]
