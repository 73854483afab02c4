"""Workers in processes: the same campaign as workers taking turns, and surviving deaths."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.processes import ProcessWorker, processes_available
from secant.campaign.remote import MAX_RESTARTS
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.events import FuzzListener
from secant.engine.harvey.policy import harvey
from secant.engine.policy import Policy, PolicyContext
from tests.compile.conftest import needs_node

pytestmark = [needs_node, pytest.mark.skipif(not processes_available(),
                                             reason="this platform cannot fork")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"
ROOT = Path(__file__).resolve().parents[2]
SECANT = [sys.executable, "-c", "from secant.cli.main import app; app(prog_name='secant')"]


@functools.cache
def crowdsale() -> list[Compilation]:
    return load([EXAMPLES / "Crowdsale.sol"])


def chain() -> TestChain:
    return TestChain.setup(crowdsale(), contract="Crowdsale")


def config(out: Path | None = None, execs: int = 3000) -> CampaignConfig:
    return CampaignConfig(FuzzConfig(seed=7, max_execs=execs), out=out, sync_every=250)


def footprint(campaign: Campaign) -> list[list[tuple[Any, ...]]]:
    return [[(seed.origin, seed.found_at, seed.case) for seed in worker.fuzzer.corpus.seeds]
            for worker in campaign.workers]


def without_time(summary: dict[str, Any]) -> dict[str, Any]:
    """A worker's summary without what depends on the machine's speed (its seconds)."""
    return {key: without_time(value) if isinstance(value, dict) else value
            for key, value in summary.items()
            if key not in ("elapsed_s", "seconds", "exchange", "where")}


def test_workers_in_processes_make_the_campaign_that_taking_turns_makes(
        tmp_path: Path) -> None:
    turns = Campaign([chain(), chain(), chain()], config(tmp_path / "turns"))
    by_turns = turns.run()
    spread = Campaign(chain(), config(tmp_path / "spread"), processes=2, make_chain=chain)
    assert [type(w) for w in spread.workers[1:]] == [ProcessWorker, ProcessWorker]
    by_processes = spread.run()
    assert footprint(spread) == footprint(turns)
    assert list(spread.findings) == list(turns.findings) and spread.findings
    for key in ("execs", "transactions", "paths", "corpus", "branches_covered",
                "instructions_covered"):
        assert by_processes[key] == by_turns[key], key
    assert ([without_time(w) for w in by_processes["workers"]]
            == [without_time(w) for w in by_turns["workers"]])
    # Every worker's corpus entries are on disk, named alike by both campaigns.
    assert (sorted(p.name for p in (tmp_path / "spread" / "corpus").iterdir())
            == sorted(p.name for p in (tmp_path / "turns" / "corpus").iterdir()))
    # The children are gone once the campaign is over.
    assert all(isinstance(w, ProcessWorker) and w.process is None
               for w in spread.workers[1:])


class KillsAChild(FuzzListener):
    """SIGKILLs worker 1's process once worker 0 has run ``after`` executions."""

    def __init__(self, campaign: Campaign, after: int) -> None:
        self.campaign, self.after, self.killed = campaign, after, False

    def on_progress(self) -> None:
        child = self.campaign.workers[1]
        if (not self.killed and self.campaign.fuzzer.stats.execs >= self.after
                and isinstance(child, ProcessWorker) and child.pid is not None):
            self.killed = True
            os.kill(child.pid, signal.SIGKILL)


def test_a_worker_killed_mid_campaign_is_started_again_from_the_campaign_corpus() -> None:
    campaign = Campaign(chain(), config(), processes=1, make_chain=chain)
    child = campaign.workers[1]
    assert isinstance(child, ProcessWorker)
    killer = KillsAChild(campaign, after=600)  # in worker 0's third epoch
    campaign.first.events.add(killer)
    summary = campaign.run()
    assert killer.killed
    errors = summary["internal_errors"]
    assert [(e["part"], e["worker"], e.get("restarted")) for e in errors] == [
        ("worker:1", 1, True)]
    # The budget is still the campaign's: the new child ran the dead one's part.
    assert summary["execs"] == 3000
    assert [w["execs"] for w in summary["workers"]] == [1500, 1500]
    assert child.restarts == 1 and not child.off


def _fails_in_a_child(parent: int) -> Any:
    def policy(context: PolicyContext) -> Policy:
        if os.getpid() != parent:
            raise RuntimeError("a bug of this worker")
        return harvey(context)

    return policy


def test_a_worker_that_keeps_failing_is_left_off_and_the_campaign_goes_on() -> None:
    # Worker 0 runs its 1,000 executions in four epochs; worker 1 fails in each.
    campaign = Campaign(chain(), config(execs=2000), processes=1, make_chain=chain,
                        policy=_fails_in_a_child(os.getpid()))
    summary = campaign.run()
    errors = summary["internal_errors"]
    assert len(errors) == MAX_RESTARTS + 1
    assert {e["part"] for e in errors} == {"worker:1"}
    assert errors[0]["error"] == "RuntimeError: a bug of this worker"
    assert "in policy" in errors[0]["traceback"]  # where the child raised
    assert [e.get("restarted", False) for e in errors] == [True] * MAX_RESTARTS + [False]
    assert summary["workers"][0]["execs"] == 1000 and summary["workers"][1]["execs"] == 0


def test_the_command_runs_workers_and_sigterm_keeps_what_they_found(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [*SECANT, "fuzz", str(EXAMPLES / "StatefulMaze.sol"),
               "--workers", "2", "--time", "10m", "--quiet", "--out", str(out)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        # Wait until both workers have fuzzed (the corpus grows from both).
        while time.monotonic() < deadline:
            summary = out / "summary.json"
            if summary.exists() and len(list((out / "corpus").glob("*.json"))) > 10:
                break
            time.sleep(0.5)
        time.sleep(2)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["manifest"]["status"] == "interrupted"
    assert len(summary["workers"]) == 2
    assert all(w["execs"] > 0 for w in summary["workers"])
    assert summary["execs"] == sum(w["execs"] for w in summary["workers"])
    assert (len(list((out / "findings").glob("*.json"))) == len(summary["findings"]))


def test_workers_below_one_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run([*SECANT, "fuzz",
                             str(EXAMPLES / "Crowdsale.sol"), "--workers", "0"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "--workers must be at least 1" in result.stderr
    assert "Traceback" not in result.stderr


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SECANT, *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)


def _names(folder: Path) -> set[str]:
    """The records in ``folder``; not a file still being written (``.tmp-*``, renamed when
    whole), which a kill may catch half-written and the next run never reads."""
    return {path.name for path in folder.glob("*.json") if not path.name.startswith(".tmp-")}


def test_the_command_with_two_workers_repeats_exactly(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        done = _cli("fuzz", str(EXAMPLES / "Crowdsale.sol"), "--workers", "2", "--execs",
                    "3000", "--seed", "4", "--quiet", "--out", str(out))
        assert done.returncode == 0, done.stderr
        runs.append((out, json.loads((out / "summary.json").read_text())))
    (a, first), (b, second) = runs
    assert _names(a / "corpus") == _names(b / "corpus") and _names(a / "corpus")
    assert _names(a / "findings") == _names(b / "findings") and _names(a / "findings")
    counters = ("execs", "transactions", "paths", "corpus", "branches_covered")
    assert [first[k] for k in counters] == [second[k] for k in counters]
    assert ([without_time(w) for w in first["workers"]]
            == [without_time(w) for w in second["workers"]])
    assert [f["sequence"] for f in first["findings"]] == [
        f["sequence"] for f in second["findings"]]


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(part) for part in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_a_campaign_killed_outright_resumes_with_nothing_lost(tmp_path: Path) -> None:
    out = tmp_path / "out"
    process = subprocess.Popen([*SECANT, "fuzz", str(EXAMPLES / "StatefulMaze.sol"),
                                "--workers", "2", "--time", "10m", "--quiet", "--out",
                                str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (
                len(_names(out / "corpus")) > 10 and _names(out / "findings")):
            time.sleep(0.5)
        children = _children(process.pid)
        assert children
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        process.kill()
    # The workers notice that the campaign is gone, and go.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in children)
    corpus, findings = _names(out / "corpus"), _names(out / "findings")
    assert corpus and findings
    # Resumed with another number of workers.
    done = _cli("fuzz", "--resume", str(out), "--execs", "600", "--workers", "3", "--quiet")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert corpus <= _names(out / "corpus") and findings <= _names(out / "findings")
    assert len(summary["workers"]) == 3
    # Every entry (and every finding's case) was run again by each worker.
    assert summary["resume"]["cases_imported"] >= 3 * len(corpus)
    assert summary["manifest"]["status"] == "completed"
