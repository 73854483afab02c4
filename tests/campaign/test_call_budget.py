"""A budget in calls (``--calls``, Echidna's and Medusa's ``testLimit``): the transactions of
every case run, shared by the workers, deterministic for a seed, and what a project's forge
``runs`` becomes."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from typer.testing import CliRunner

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.cli.main import app
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from tests.compile.conftest import needs_node

ROOT = Path(__file__).resolve().parents[2]
BAZ_SOL = ROOT / "examples" / "contracts" / "Baz.sol"
LONGEST = 4


@functools.cache
def compiled() -> list[Compilation]:
    return load([BAZ_SOL])


def campaign(calls: int, workers: int = 1) -> Campaign:
    chains = [TestChain.setup(compiled(), contract="Baz") for _ in range(workers)]
    return Campaign(chains, CampaignConfig(FuzzConfig(seed=3, max_execs=None,
                                                      max_transactions=calls,
                                                      max_sequence_length=LONGEST,
                                                      sequences="eager")))


@needs_node
def test_the_campaign_stops_at_its_calls_and_each_worker_at_its_part() -> None:
    one = campaign(400)
    summary = one.run()
    # It stops at the first case that reaches the budget: at most one case beyond it.
    assert 400 <= summary["transactions"] < 400 + LONGEST
    assert summary["execs"] < 400  # eager sequences: fewer cases than calls
    assert summary["transactions"] == one.fuzzer.stats.transactions
    again = campaign(400).run()
    assert (again["execs"], again["transactions"]) == (summary["execs"],
                                                       summary["transactions"])
    two = campaign(401, workers=2)
    assert [w.fuzzer.config.max_transactions for w in two.workers] == [201, 200]
    both = two.run()
    assert both["transactions"] == sum(w.fuzzer.stats.transactions for w in two.workers)
    assert all(w.fuzzer.stats.transactions >= w.fuzzer.config.max_transactions
               for w in two.workers)


@needs_node
def test_a_command_line_budget_replaces_the_whole_budget_of_a_config_file(
        tmp_path: Path) -> None:
    config = tmp_path / "echidna.yaml"
    config.write_text("testLimit: 150\nseqLen: 4\n")
    out = tmp_path / "out"
    args = ["fuzz", str(BAZ_SOL), "--contract", "Baz", "--config", str(config), "--quiet",
            "--sequences", "eager",
            "--out", str(out), "--force"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert 150 <= summary["transactions"] < 150 + 4
    assert summary["manifest"]["config"]["fuzz"]["max_transactions"] == 150
    # --execs on the command line: testLimit's calls no longer end the run.
    result = CliRunner().invoke(app, [*args, "--execs", "300"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["execs"] == 300 and summary["transactions"] > 300
    fuzz = summary["manifest"]["config"]["fuzz"]
    assert (fuzz["max_execs"], fuzz["max_transactions"]) == (300, None)


def test_calls_must_be_positive(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fuzz", str(BAZ_SOL), "--calls", "0", "--out",
                                      str(tmp_path / "out")])
    assert result.exit_code != 0
    assert "--calls must be positive" in result.output
