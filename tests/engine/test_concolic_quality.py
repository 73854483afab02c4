"""The concolic stage on campaigns: conditions mutation and prediction miss are solved.

Each contract of tests/fixtures/symbolic/Solvable.sol guards an assertion behind a
condition of one kind (non-linear, several parameters, storage-mediated, signed, wrapping);
the same seed and execution budget find it with the stage and miss it without.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import CompileOptions, load
from secant.engine.config import FuzzConfig
from secant.engine.harvey.policy import HarveyPolicy
from secant.report.frontier import INFEASIBLE
from secant.types import Tx, TxSeq
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
                                      "WrapsExact", "PackedFactors"])
def test_the_stage_finds_what_the_same_campaign_misses_without_it(contract: str) -> None:
    without = campaign(contract, 0.0, 8000)
    assert not without.findings
    # The share is of the campaign's work, charged as time would be (docs/symbolic.md): a
    # query here costs as much as thousands of these one-transaction executions, so at the
    # default tenth 8,000 executions pay for one or two. What this tests is what the stage
    # solves, not how it is rationed: it gets half the work.
    found = campaign(contract, 0.5, 8000)
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


@needs_node
def test_a_condition_on_stored_state_alone_is_solved_through_a_writer_put_before() -> None:
    # One execution: the stage as the campaign wires it, before any case had a writer.
    made = campaign("PackedFactors", 0.1, 1)
    stage = made.fuzzer.policy.concolic  # type: ignore[attr-defined]
    sender = made.fuzzer.policy.space.senders[0]  # type: ignore[attr-defined]
    check: TxSeq = (Tx("check()", (), sender),)
    run = stage.trace(check)
    # The nest's first JUMPI, `low * high == 10403`, on the state before the case alone.
    record = next(r for r in run.branches if "10403" in str(r.condition))
    assert record.variables and all(name.startswith("s_") for name in record.variables)
    side = (record.code_hash, record.pc, not record.taken)
    stage.writers = None
    assert stage.solve(side, check) is None and stage.stats.needs_state == 1
    stash = Tx("stash(uint256)", (0,), sender)
    asked: list[tuple[TxSeq, int]] = []

    def writers(case: TxSeq, index: int, slots: set[tuple[int, int]]) -> list[Tx]:
        asked.append((case, index))
        assert len(slots) == 1
        return [stash]

    stage.writers = writers
    stage.solved_against.clear()
    # What follows the reader cannot matter to its branch: the solved case ends there.
    tail = (Tx("stash(uint256)", (5,), sender),) * 3
    solved = stage.solve(side, check + tail)
    assert asked == [(check + tail, 0)] and stage.stats.with_writer == 1
    assert solved is not None and [tx.function for tx in solved] == ["stash(uint256)", "check()"]
    packed = solved[0].args[0]
    low, high = packed % 2**64, (packed >> 64) % 2**64
    assert low * high == 10403  # the flipped conjunct (the next ones are the next queries)
    assert side in made.fuzzer.run_case(solved).edges
