"""The concolic stage on campaigns: conditions mutation and prediction miss are solved.

Each contract of tests/fixtures/symbolic/Solvable.sol guards an assertion behind a
condition of one kind (non-linear, several parameters, storage-mediated, signed, wrapping);
the same seed and execution budget find it with the stage and miss it without.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign, CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import CompileOptions, load
from secant.engine.fuzzer import FuzzConfig
from secant.engine.harvey.policy import HarveyPolicy
from secant.report.frontier import INFEASIBLE
from tests.compile.conftest import needs_node

SOLVABLE = Path(__file__).resolve().parents[1] / "fixtures" / "symbolic" / "Solvable.sol"


def campaign(contract: str, share: float, execs: int, seed: int = 0,
             out: Path | None = None) -> Campaign:
    compilations = load([SOLVABLE], CompileOptions())
    config = CampaignConfig(FuzzConfig(seed=seed, max_execs=execs, symbolic_share=share),
                            out=out, shrink_limit=0)
    [chosen] = plan(compilations, Selection(contract=contract), ChainConfig(), config,
                    project=False)
    made = Campaign(chosen.make_chain(), chosen.config, oracles=chosen.oracles,
                    functions=chosen.functions, senders=chosen.senders,
                    block_steps=chosen.block_steps)
    made.run()
    return made


@needs_node
@pytest.mark.parametrize("contract", ["Factors", "Tied", "StoredProduct", "SignedWindow",
                                      "WrapsExact"])
def test_the_stage_finds_what_the_same_campaign_misses_without_it(contract: str) -> None:
    without = campaign(contract, 0.0, 6000)
    assert not without.findings
    found = campaign(contract, 0.1, 6000)
    assert [f.oracle for f in found.findings.values()] == ["assertion"]
    policy = found.fuzzer.policy
    assert isinstance(policy, HarveyPolicy) and policy.concolic is not None
    assert policy.concolic.stats.success >= 1


@needs_node
def test_an_infeasible_side_is_shown_as_proved_unreachable(tmp_path: Path) -> None:
    done = campaign("Contradiction", 0.1, 3000, out=tmp_path / "out")
    assert not done.findings
    stage = done.fuzzer.policy.concolic  # type: ignore[attr-defined]
    assert stage.stats.proved >= 1 and stage.infeasible
    entries = done.frontier or []
    proved = [e for e in entries if any(reason == INFEASIBLE for reason, _ in e.reasons)]
    assert proved and all("x < 5" in e.snippet for e in proved)


@needs_node
def test_the_stage_keeps_a_campaign_a_function_of_its_seed_and_budget() -> None:
    # Queries are bounded and charged by z3's resource count, not by seconds.
    runs = [campaign("StoredProduct", 0.1, 3000) for _ in range(2)]
    stats = [run.fuzzer.policy.concolic.stats for run in runs]  # type: ignore[attr-defined]
    assert stats[0].attempts >= 1
    assert [s.to_json() | {"seconds": 0} for s in stats] == \
        [stats[0].to_json() | {"seconds": 0}] * 2
    corpora = [[run.fuzzer.corpus[i].case for i in range(len(run.fuzzer.corpus))]
               for run in runs]
    assert corpora[0] == corpora[1]
    assert [sorted(map(repr, run.findings)) for run in runs] == \
        [sorted(map(repr, runs[0].findings))] * 2
