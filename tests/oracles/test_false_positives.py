"""Every oracle stays silent on correct contracts built on OpenZeppelin (from npm)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.worker import default_senders, target_codes
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.oracles.registry import available
from tests.compile.conftest import needs_node
from tests.packages import openzeppelin_modules

CLEAN = Path(__file__).resolve().parents[1] / "fixtures" / "vulnerabilities" / "oz" / "Clean.sol"


@functools.cache
def compiled(folder: Path) -> list[Compilation]:
    return load([folder])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("oz-clean")
    (folder / "node_modules").symlink_to(openzeppelin_modules(), target_is_directory=True)
    (folder / "remappings.txt").write_text("@openzeppelin/=node_modules/@openzeppelin/\n")
    (folder / "Clean.sol").write_text(CLEAN.read_text())
    return folder


@needs_node
@pytest.mark.parametrize("contract", ["Coin", "Collectibles", "Shares", "EtherSavings",
                                      "Items", "MinterToken", "Vesting", "VotesToken"])
def test_no_oracle_reports_a_correct_openzeppelin_contract(project: Path,
                                                            contract: str) -> None:
    chain = TestChain.setup(compiled(project), contract=contract)
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=1500)))
    summary = campaign.run()
    assert summary["oracles"] == list(available())  # every registered oracle judged it
    # A vesting wallet pays out an amount linear in block.timestamp once it holds ether and
    # time passed: the block-dependency oracle reports such a payout by design, as it
    # reports StakeReward's reward per second (docs/oracles.md). Nothing else may report.
    by_design = {"Vesting": {"block-dependency"}}.get(contract, set())
    assert {f["oracle"] for f in summary["findings"]} <= by_design, summary["findings"]
    assert summary["execs"] == 1500 and summary["branches_covered"] > 0


@needs_node
def test_the_guarded_payout_was_tried_by_the_reentrancy_attacker(project: Path) -> None:
    # sendValue forwards all the gas: the attacker contract is a sender, and its takeOut
    # calls ran, so the silence above is the oracle's verdict, not a lack of trying.
    chain = TestChain.setup(compiled(project), contract="EtherSavings")
    attacker = chain.names()["ReentrancyAttacker"]
    assert attacker in default_senders(chain, target_codes(chain))
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=1500)))
    campaign.run()
    tried = [tx for seed in campaign.fuzzer.corpus.seeds for tx in seed.case
             if tx.sender == attacker and tx.function == "takeOut(uint256)"]
    assert tried
