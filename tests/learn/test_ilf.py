"""ILF's episodes (secant/learn/ilf.py): the uniform policy, the runner, the learned stage.

The learned chooser with a trained model is tested in tests/learn/test_learned_policy.py;
here the episodes' mechanics run under the uniform chooser or a scripted one.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.options import CampaignOptions
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import Compilation, CompileOptions, load
from secant.engine.config import FuzzConfig
from secant.engine.harvey.policy import harvey
from secant.engine.policy import Policy, PolicyContext, PolicyFactory, Proposal
from secant.engine.values import VType
from secant.errors import SecantError
from secant.learn.features import Step
from secant.learn.ilf import (
    EpisodePolicy,
    EpisodeRunner,
    LearnedStage,
    TxChooser,
    UniformChooser,
    candidate_addresses,
    episode_policy,
)
from secant.types import RunResult, Tx, TxOutcome
from tests.compile.conftest import needs_node

LOCKBOX = Path(__file__).resolve().parents[1] / "fixtures" / "learn" / "Lockbox.sol"


@functools.cache
def compiled() -> list[Compilation]:
    return load([LOCKBOX], CompileOptions())


def campaign(execs: int, policy: PolicyFactory, seed: int = 0, length: int = 16) -> Campaign:
    config = CampaignConfig(FuzzConfig(seed=seed, max_execs=execs, max_sequence_length=length),
                            shrink_limit=0)
    [chosen] = plan(compiled(), Selection(), ChainConfig(), config, project=False)
    made = Campaign(chosen.make_chain(), chosen.config, oracles=chosen.oracles,
                    functions=chosen.functions, senders=chosen.senders,
                    block_steps=chosen.block_steps, policy=policy)
    made.run()
    return made


class Recording(EpisodePolicy):
    """The uniform policy, keeping every case it proposed."""

    def __init__(self, context: PolicyContext) -> None:
        chooser = episode_policy(context, "uniform").chooser
        super().__init__(chooser)
        self.cases: list[tuple[Tx, ...]] = []
        self.context = context

    def propose(self) -> Proposal | None:
        proposal = super().propose()
        if proposal is not None:
            self.cases.append(proposal.case)
        return proposal


@needs_node
def test_uniform_episodes_restart_from_the_deployed_state_and_keep_only_what_succeeded(
) -> None:
    made: list[Recording] = []

    def factory(context: PolicyContext) -> Policy:
        made.append(Recording(context))
        return made[0]

    done = campaign(60, factory, length=5)
    policy = made[0]
    assert len(policy.cases) == 60
    assert policy.runner.episodes == 12  # 60 transactions, 5 per episode
    assert all(1 <= len(case) <= 5 for case in policy.cases)
    # Each case extends the episode's last case by one transaction, or starts again.
    for before, after in zip(policy.cases, policy.cases[1:]):
        assert after[:-1] == before[:len(after) - 1]
    assert done.fuzzer.stats.execs == 60
    # Lockbox's functions are not payable but for open(): only it carries ether.
    payable = {spec.signature for spec in policy.context.space.functions if spec.payable}
    assert all(tx.value == 0 for case in policy.cases for tx in case
               if tx.function not in payable)


@needs_node
def test_the_same_seed_gives_the_same_uniform_campaign() -> None:
    def corpus(seed: int) -> list[tuple[Tx, ...]]:
        done = campaign(80, lambda context: episode_policy(context, "uniform"), seed=seed)
        return sorted((seed.case for seed in done.fuzzer.corpus.seeds), key=repr)

    assert corpus(3) == corpus(3)
    assert corpus(3) != corpus(4)


@needs_node
def test_uniform_addresses_come_from_the_candidates() -> None:
    seen: list[PolicyContext] = []

    def factory(context: PolicyContext) -> Policy:
        seen.append(context)
        return episode_policy(context, "uniform")

    campaign(1, factory)
    context = seen[0]
    addresses = candidate_addresses(context)
    assert addresses[:len(context.space.senders)] == list(context.space.senders)
    assert addresses[-1] == 0 and context.targets and context.targets[0] in addresses
    uniform = episode_policy(context, "uniform").chooser
    assert isinstance(uniform, UniformChooser)
    chooser = UniformChooser(context.space, addresses, uniform.clock)
    address = VType("address")
    rng = random.Random(1)
    assert {chooser.value(address, rng) for _ in range(200)} <= set(addresses)
    wide = VType("uint", bits=256)
    assert max(chooser.value(wide, rng) for _ in range(50)) > 1 << 200


class Scripted(TxChooser):
    """Calls the same functions in turn, counting resets."""

    name = "scripted"

    def __init__(self, txs: Sequence[Tx]) -> None:
        self.txs = list(txs)
        self.resets = 0
        self.turn = 0
        self.ended: list[str] = []

    def reset(self) -> None:
        self.resets += 1

    def choose(self, history: Sequence[Step], rng: random.Random) -> Tx:
        tx = self.txs[self.turn % len(self.txs)]
        self.turn += 1
        return tx

    def ran(self, tx: Tx, ended: str) -> None:
        self.ended.append(ended)


def result(case: tuple[Tx, ...], *succeeded: bool) -> RunResult:
    outcomes = [TxOutcome(success=ok, reverted=not ok, output=b"", gas_used=21_000)
                for ok in succeeded]
    return RunResult(case=case, outcomes=outcomes, path_id=0)


def test_a_failed_transaction_joins_the_history_but_not_the_case() -> None:
    good, bad = Tx("a()", (), 1, 0), Tx("b()", (), 1, 0)
    chooser = Scripted([good, bad, good, bad])
    runner = EpisodeRunner(chooser, 3)
    rng = random.Random(0)
    first = runner.next_case(rng)
    runner.ran(first, result(first, True))
    second = runner.next_case(rng)
    assert second == (good, bad)
    runner.ran(second, result(second, True, False))
    third = runner.next_case(rng)
    assert third == (good, good)  # the failed b() left the state as it was
    assert [step.ended for step in runner.history] == ["return", "revert"]
    runner.ran(third, result(third, True, True))
    assert chooser.ended == ["return", "revert", "return"]
    assert runner.next_case(rng) == (bad,)  # three transactions: a new episode
    assert chooser.resets == 2


@needs_node
def test_the_learned_stage_keeps_to_its_share_of_harveys_executions() -> None:
    stages: list[LearnedStage] = []

    def factory(context: PolicyContext) -> Policy:
        policy = harvey(context)
        chooser = episode_policy(context, "uniform").chooser
        stage = LearnedStage(chooser, 0.2)
        stages.append(stage)
        policy.stages.append(stage)
        return policy

    done = campaign(400, factory)
    stage = stages[0]
    execs = done.fuzzer.stats.execs
    assert 0 < stage.runs <= 0.2 * execs + 2
    assert stage.runner.transactions == stage.runs
    assert stage.runner.episodes >= stage.runs // 16


@pytest.mark.parametrize(("changes", "message"), [
    ({"policy": "uniform", "learned_share": 0.1}, "--learned-share is a stage of Harvey's"),
    ({"policy": "mix", "workers": 2}, "the mix policy runs one worker"),
    ({"learned_share": 1.5}, "--learned-share must be between 0 and 1"),
    ({"policy": "imitation"}, "unknown policy 'imitation'"),
])
def test_bad_policy_options_are_one_line_errors(changes: dict[str, object],
                                                message: str) -> None:
    with pytest.raises(SecantError, match=message):
        CampaignOptions(LOCKBOX, **changes)  # type: ignore[arg-type]


def test_episode_policies_have_a_command_line() -> None:
    argv = CampaignOptions(LOCKBOX, policy="uniform", execs=10).command_line()
    assert argv[0] == str(LOCKBOX)
    assert argv[argv.index("--policy") + 1] == "uniform"
    assert argv[argv.index("--execs") + 1] == "10"
    with pytest.raises(ValueError, match="command line"):
        CampaignOptions(LOCKBOX, policy="expert").command_line()
