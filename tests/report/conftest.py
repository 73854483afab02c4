"""One campaign on the reports' fixture, shared by the coverage and frontier tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import load
from secant.engine.config import FuzzConfig

FRONTIER = Path(__file__).resolve().parents[1] / "fixtures" / "report" / "Frontier.sol"


def line_with(text: str) -> int:
    """The 1-based line of the fixture that holds ``text`` (the first one)."""
    for number, line in enumerate(FRONTIER.read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} is not in {FRONTIER.name}")


@dataclass
class Finished:
    """A finished campaign, its output folder and its summary."""

    campaign: Campaign
    out: Path
    summary: dict[str, Any]


@pytest.fixture(scope="session")
def frontier_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """300 executions (seed 0) on Frontier.sol: the magic branch and unlock stay closed."""
    out = tmp_path_factory.mktemp("frontier-report")
    chain = TestChain.setup(load([FRONTIER]), contract="Frontier")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=300), out=out))
    return Finished(campaign, out, campaign.run())
