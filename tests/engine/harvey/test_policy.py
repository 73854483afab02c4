"""Harvey's policy keeps going when its optional concolic stage fails."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.harvey.adaptive import BranchSide
from secant.engine.harvey.concolic import ConcolicStage
from secant.engine.harvey.policy import HarveyPolicy
from secant.oracles.assertion import AssertionOracle
from secant.types import TxSeq
from tests.compile.conftest import needs_node

pytestmark = needs_node

BAZ = Path(__file__).resolve().parents[3] / "examples" / "contracts" / "Baz.sol"
EXECS = 500


@functools.cache
def compiled() -> list[Compilation]:
    return load([BAZ])


def run_campaign(tmp_path: Path) -> tuple[Campaign, dict[str, Any]]:
    chain = TestChain.setup(compiled(), contract="Baz")
    campaign = Campaign(chain, CampaignConfig(
        FuzzConfig(seed=2, max_execs=EXECS, symbolic_share=0.5), out=tmp_path))
    policy = campaign.fuzzer.policy
    assert isinstance(policy, HarveyPolicy) and policy.concolic is not None
    policy.concolic.patience = 0  # the stage takes up sides at once
    return campaign, campaign.run()


def test_a_concolic_stage_that_raises_is_switched_off_and_the_rounds_go_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    solved: list[BranchSide] = []

    def solve(self: ConcolicStage, side: BranchSide, case: TxSeq,
              allowance: int | None = None) -> TxSeq | None:
        solved.append(side)
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(ConcolicStage, "solve", solve)
    campaign, summary = run_campaign(tmp_path / "a")
    assert summary["execs"] == EXECS
    [record] = summary["internal_errors"]
    assert record["part"] == "stage:concolic" and record["during"] == "fuzzing"
    assert record["error"].startswith("ValueError: Exceeds the limit")
    assert 0 < record["exec"] < EXECS
    assert len(solved) == 1  # never asked again
    policy = campaign.fuzzer.policy
    assert isinstance(policy, HarveyPolicy) and not policy.concolic_on
    assert "symbolic" in summary  # its counters stay
    assert any(f["kind"] == "assertion" for f in summary["findings"])
    # The same seed and budget: the same campaign, switched off at the same execution.
    again, repeated = run_campaign(tmp_path / "b")
    assert repeated["internal_errors"][0]["exec"] == record["exec"]
    assert ([s.case for s in again.fuzzer.corpus.seeds]
            == [s.case for s in campaign.fuzzer.corpus.seeds])


TICKETS = (Path(__file__).resolve().parents[2] / "fixtures" / "vulnerabilities" / "assertion"
           / "TicketDesk.sol")


def test_what_a_call_returns_reaches_a_later_call() -> None:
    # The ticket is a hash no code constant or comparison names: only ``issue``'s return
    # value does, and the dictionary keeps it (seed 2 takes 2,724 executions).
    chain = TestChain.setup(load([TICKETS]), contract="TicketDesk")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=2, max_execs=8000)),
                        oracles=[AssertionOracle])
    campaign.run()
    [finding] = campaign.findings.values()
    assert finding.function == "redeem" and finding.oracle == "assertion"
    policy = campaign.fuzzer.policy
    assert isinstance(policy, HarveyPolicy)
    issued = [tx for seed in campaign.fuzzer.corpus.seeds for tx in seed.case
              if tx.function == "issue()"]
    assert issued and len(policy.dictionary) > 0
