"""The engine's seams, used from outside the engine as a plugin author would.

Nothing here changes ``secant``: an oracle, a policy and a listener written in this file
plug into campaigns through their public constructors, and two workers exchange cases
through the import path.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from secant.abi import function_selector
from secant.campaign.campaign import Campaign, content_name
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.events import FuzzListener
from secant.engine.harvey.policy import HarveyPolicy, harvey
from secant.engine.mutators import Mutator
from secant.engine.oracle import Oracle, PostState
from secant.engine.policy import InputSpace, Novelty, Policy, PolicyContext, Proposal, Stage
from secant.types import Finding, RunResult, Tx, TxSeq
from tests.compile.conftest import needs_node

SEAMS = Path(__file__).resolve().parents[1] / "fixtures" / "campaign" / "Seams.sol"


@functools.cache
def compiled() -> list[Compilation]:
    return load([SEAMS])


def counter_chain() -> TestChain:
    return TestChain.setup(compiled(), contract="Counter")


class CountOracle(Oracle):
    """Sees every run; asks the post-state for ``count()`` and reports when it moved."""

    name = "count-moved"
    description = "the counter moved"

    def __init__(self, chain: TestChain) -> None:
        assert chain.main is not None
        self.address = chain.main.address
        self.runs = 0
        self.without_panic = 0
        self.counts: list[int] = []
        self.expected: list[int] = []

    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        self.runs += 1
        if not getattr(result, "panics", None):
            self.without_panic += 1
        assert post is not None
        outcome = post.call(self.address, function_selector("count()"))
        count = int.from_bytes(outcome.output, "big")
        # What the case itself did: the count starts from zero for every run.
        bumps = sum(1 for tx, done in zip(result.case, result.outcomes)
                    if tx.function == "bump(uint256)" and tx.args[0] > 1000 and done.success)
        self.counts.append(count)
        self.expected.append(bumps)
        if count < 1:
            return []
        return [Finding(kind="count", swc="", contract="Counter", function="bump", pc=0,
                        source=None, detail=f"count() is {count}", key=(self.name,))]


class Runs(FuzzListener):
    """Counts the runs the events announce."""

    def __init__(self) -> None:
        self.runs = 0

    def on_run(self, result: RunResult) -> None:
        self.runs += 1


@needs_node
def test_an_oracle_written_outside_the_engine_sees_every_run(tmp_path: Path) -> None:
    made: list[CountOracle] = []

    def make(chain: TestChain) -> CountOracle:
        made.append(CountOracle(chain))
        return made[-1]

    campaign = Campaign(counter_chain(), CampaignConfig(FuzzConfig(seed=3, max_execs=1500),
                                                        out=tmp_path), oracles=[make])
    runs = Runs()
    campaign.listen(runs)
    summary = campaign.run()
    [oracle] = made
    # Every run that is not an aggressive probe, and most of them end without a panic.
    assert oracle.runs == runs.runs == summary["execs"] - campaign.fuzzer.stats.probes
    assert oracle.without_panic > oracle.runs // 2
    # Each view call saw its own run's post-state, built from the deployed state alone.
    assert oracle.counts == oracle.expected and max(oracle.counts) >= 1
    [finding] = summary["findings"]
    assert finding["oracle"] == "count-moved" and finding["detail"].startswith("count() is ")
    assert summary["oracles"] == ["count-moved"]
    files = list((tmp_path / "findings").glob("*.json"))
    assert [f.name for f in files] == [f"count-moved-{content_name(repr(('count-moved',)))}.json"]
    assert json.loads(files[0].read_text())["sequence"] == finding["sequence"]
    # The finding's case is one that moves the counter.
    case = next(iter(campaign.findings.values())).case
    assert any(tx.function == "bump(uint256)" and tx.args[0] > 1000 for tx in case)


class UniformRandom(Policy):
    """A blackbox policy: one random call after another, nothing learned."""

    name = "uniform-random"

    def __init__(self, space: InputSpace) -> None:
        self.mutator = Mutator(space.functions, space.senders, space.dictionary)
        self.observed = 0

    def propose(self) -> Proposal | None:
        rng = self.fuzzer.rng
        spec = self.mutator.functions[rng.randrange(len(self.mutator.functions))]
        return Proposal((self.mutator.random_tx(spec, rng),), "random")

    def observe(self, proposal: Proposal, result: RunResult, novelty: Novelty) -> None:
        self.observed += 1

    def summary(self) -> dict[str, Any]:
        return {"random_calls": self.observed}


@needs_node
def test_another_policy_plugs_into_the_same_loop(tmp_path: Path) -> None:
    policies: list[UniformRandom] = []

    def make(context: PolicyContext) -> UniformRandom:
        policies.append(UniformRandom(context.space))
        return policies[-1]

    campaign = Campaign(counter_chain(), CampaignConfig(FuzzConfig(seed=1, max_execs=400),
                                                        out=tmp_path), policy=make)
    summary = campaign.run()
    assert summary["execs"] == 400 and summary["random_calls"] == 400
    assert "prediction" not in summary  # Harvey's counters are Harvey's
    assert set(summary["corpus_origins"]) == {"random"}
    assert any(f["kind"] == "assertion" and f["source"].endswith("Seams.sol:17")
               for f in summary["findings"])
    assert (tmp_path / "summary.json").exists()
    assert len(list((tmp_path / "corpus").glob("*.json"))) == summary["corpus"]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"


@functools.cache
def crowdsale() -> list[Compilation]:
    return load([EXAMPLES / "Crowdsale.sol"])


def two_worker_campaign(seed: int) -> Campaign:
    chains = [TestChain.setup(crowdsale(), contract="Crowdsale") for _ in range(2)]
    return Campaign(chains, CampaignConfig(FuzzConfig(seed=seed, max_execs=3000),
                                           sync_every=250))


def footprint(campaign: Campaign) -> list[list[tuple[Any, ...]]]:
    return [[(seed.origin, seed.found_at, seed.case) for seed in worker.fuzzer.corpus.seeds]
            for worker in campaign.workers]


@needs_node
def test_two_workers_share_cases_and_repeat_exactly() -> None:
    first = two_worker_campaign(7)
    summary = first.run()
    assert summary["execs"] == 3000 and len(summary["workers"]) == 2
    assert [w["execs"] for w in summary["workers"]] == [1500, 1500]
    # Each worker re-executed cases the other found.
    imported = [w.fuzzer.corpus.origins().get("import", 0) for w in first.workers]
    assert all(count > 0 for count in imported), imported
    # Workers fuzz with seeds of their own: their corpora differ.
    a, b = footprint(first)
    assert [case for *_, case in a] != [case for *_, case in b]
    # The same seed gives the same two-worker campaign.
    again = two_worker_campaign(7)
    again.run()
    assert footprint(again) == footprint(first)
    assert list(again.findings) == list(first.findings)


@needs_node
def test_import_adds_only_paths_new_to_the_worker() -> None:
    donor = Campaign(counter_chain(), CampaignConfig(FuzzConfig(seed=2, max_execs=600)))
    donor.run()
    cases = [seed.case for seed in donor.fuzzer.corpus.seeds]
    taker = Campaign(counter_chain(), CampaignConfig(FuzzConfig(seed=5, max_execs=10_000)))
    worker = taker.workers[0]
    added = worker.import_cases(cases)
    assert [seed.case for seed in added] == cases  # every donor seed is new to an empty one
    assert {seed.origin for seed in added} == {"import"}
    assert worker.import_cases(cases) == []  # the same paths again: nothing new
    assert worker.fuzzer.stats.execs == 2 * len(cases)


def test_harnesses_get_echidnas_block_delays_and_plain_contracts_any() -> None:
    from secant.campaign.worker import block_delays

    plain = block_delays(FuzzConfig(), harness=False)
    assert (plain.max_time_delay, plain.max_block_delay) == (None, None)  # unbounded
    harness = block_delays(FuzzConfig(), harness=True)
    assert (harness.max_time_delay, harness.max_block_delay) == (604_800, 60_480)
    chosen = block_delays(FuzzConfig(max_time_delay=5), harness=True)
    assert (chosen.max_time_delay, chosen.max_block_delay) == (5, 60_480)


class ReplayedFlows(Oracle):
    """Needs no recording of the campaign's runs: asks the post-state view for a run's
    ``dataflow`` records when the run calls ``bump`` with a large input, and reports the
    labelled JUMPIs the records hold."""

    name = "replayed-flows"
    description = "a large bump's branch, seen in a replay with the dataflow recording"

    def __init__(self, chain: TestChain) -> None:
        self.asked = 0
        self.records: list[object] = []

    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        if post is None or not any(tx.function == "bump(uint256)" and tx.args[0] > 1000
                                   for tx in result.case):
            return []
        self.asked += 1
        assert post.recording(result, "dataflow", replay=False) is None  # not recorded
        flow = post.recording(result, "dataflow")
        again = post.recording(result, "dataflow")  # a second ask is not a second replay
        assert again is flow
        self.records.append(flow)
        branches = getattr(flow, "branches", [])
        if not branches:
            return []
        return [Finding(kind="flow", swc="", contract="Counter", function="bump",
                        pc=branches[0].pc, source=None,
                        detail=f"{len(branches)} labelled branch(es)", key=(self.name,))]


@needs_node
def test_an_oracle_outside_the_engine_asks_for_a_replay_with_a_recording() -> None:
    made: list[ReplayedFlows] = []

    def make(chain: TestChain) -> ReplayedFlows:
        made.append(ReplayedFlows(chain))
        return made[-1]

    campaign = Campaign(counter_chain(), CampaignConfig(FuzzConfig(seed=3, max_execs=600)),
                        oracles=[make])
    summary = campaign.run()
    oracle = made[0]
    target = campaign.workers[0].target
    assert "dataflow" not in target.recordings
    # One replay per run the oracle asked about, each giving the dataflow records.
    assert oracle.asked > 0 and target.replays == oracle.asked
    assert all(type(flow).__name__ == "Dataflow" for flow in oracle.records)
    [finding] = summary["findings"]
    assert finding["oracle"] == "replayed-flows" and "labelled branch" in finding["detail"]


class Bumper(Stage):
    """A stage of a test's own: between Harvey's rounds, a few cases that bump the counter
    by a chosen amount (the last raises, to be switched off)."""

    name = "bumper"
    origin = "bumper"

    def __init__(self, amounts: list[int], fail_after: int | None = None) -> None:
        self.amounts = list(amounts)
        self.fail_after = fail_after
        self.given: list[TxSeq] = []
        self.seen: list[TxSeq] = []

    def next_case(self) -> TxSeq | None:
        if self.fail_after is not None and len(self.given) == self.fail_after:
            raise RuntimeError("the bumper broke")
        if not self.amounts or self.fuzzer.stats.execs < 50 * len(self.given):
            return None  # at most one case per 50 executions
        sender = self.fuzzer.rng.choice(list(self.policy_senders()))
        self.given.append((Tx("bump(uint256)", (self.amounts.pop(0),), sender),))
        return self.given[-1]

    def policy_senders(self) -> list[int]:
        policy = self.policy
        assert isinstance(policy, HarveyPolicy)
        return list(policy.space.senders)

    def ran(self, result: RunResult, novelty: Novelty) -> None:
        self.seen.append(result.case)

    def summary(self) -> dict[str, Any]:
        return {"bumper": {"given": len(self.given), "seen": len(self.seen)}}


@needs_node
@pytest.mark.parametrize("fail_after", [None, 2])
def test_a_stage_outside_the_engine_runs_between_harveys_rounds(fail_after: int | None
                                                                 ) -> None:
    stages: list[Bumper] = []

    def make(context: PolicyContext) -> HarveyPolicy:
        policy = harvey(context)
        stages.append(Bumper([1001, 5, 2000, 7], fail_after))
        policy.stages.append(stages[-1])
        return policy

    campaign = Campaign(counter_chain(), CampaignConfig(FuzzConfig(seed=4, max_execs=800)),
                        policy=make)
    summary = campaign.run()
    [stage] = stages
    # Every case it gave ran, in order, between rounds, and came back to it.
    assert stage.seen == stage.given and summary["bumper"]["seen"] == len(stage.given)
    if fail_after is None:
        assert [case[0].args[0] for case in stage.given] == [1001, 5, 2000, 7]
        assert "internal_errors" not in summary or not summary["internal_errors"]
    else:
        assert len(stage.given) == fail_after and stage.switched_off
        [record] = summary["internal_errors"]
        assert record["part"] == "stage:bumper" and "the bumper broke" in record["error"]
    assert summary["execs"] == 800  # the rounds went on
