"""The learned policy in campaigns: ILF's episodes and Harvey's learned stage, on a model
trained here in seconds, and the `secant learn train` / `secant fuzz --policy` commands.

The model is trained on the toy datasets of tests/learn/test_encode.py (no expert run
needed); the campaigns run on tests/fixtures/learn/Lockbox.sol, a contract the model never
saw: its layout is the features', not a contract's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from secant.cli.main import app
from secant.engine.harvey.policy import harvey
from secant.engine.policy import Policy, PolicyContext
from secant.learn.ilf import (
    EpisodePolicy,
    LearnedChooser,
    LearnedStage,
    episode_policy,
    learned_stage,
)
from secant.learn.network import LearnedModel
from secant.types import Tx
from tests.compile.conftest import needs_node
from tests.learn.test_encode import toy_dataset, write
from tests.learn.test_ilf import LOCKBOX, campaign

pytest.importorskip("torch")

from secant.learn.train import train_model  # noqa: E402


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    train = [write(folder / f"toy{i}.jsonl", *toy_dataset(order, chains=4, length=5, seed=i,
                                                          contract=f"Toy{i}"))
             for i, order in enumerate([[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])]
    train_model(train, [], folder / "model.npz", epochs=2, seed=0, hidden=16, embed=8,
                batch_size=2)
    return folder / "model.npz"


@needs_node
def test_learned_episodes_decide_every_transaction_and_repeat_with_the_seed(
        model_file: Path) -> None:
    model = LearnedModel.load(model_file)
    made: list[EpisodePolicy] = []

    def factory(context: PolicyContext) -> Policy:
        made.append(episode_policy(context, "learned", model))
        return made[-1]

    done = campaign(120, factory, seed=5)
    policy = made[-1]
    chooser = policy.chooser
    assert isinstance(chooser, LearnedChooser)
    # Each step is the networks' decision or, a fifth of the time, a random transaction.
    stats = chooser.stats
    assert stats.decisions + stats.explored == done.fuzzer.stats.execs == 120
    assert 0 < stats.explored < 45
    assert policy.runner.transactions == 120
    assert sum(chooser.stats.arguments.values()) > 0
    summary = done.fuzzer.policy.summary()
    assert summary["episodes"]["learned"]["decisions"] == stats.decisions
    functions = {spec.signature for spec in chooser.space.functions}
    senders = set(chooser.view.senders)
    cases: list[tuple[Tx, ...]] = [seed.case for seed in done.fuzzer.corpus.seeds]
    assert cases and all(tx.function in functions and tx.sender in senders
                         for case in cases for tx in case)

    def corpus(seed: int) -> list[tuple[Tx, ...]]:
        again = campaign(120, lambda context: episode_policy(context, "learned", model),
                         seed=seed)
        return sorted((s.case for s in again.fuzzer.corpus.seeds), key=repr)

    assert corpus(5) == sorted(cases, key=repr)


@needs_node
def test_the_learned_stage_feeds_harveys_corpus(model_file: Path) -> None:
    model = LearnedModel.load(model_file)
    stages: list[LearnedStage] = []

    def factory(context: PolicyContext) -> Policy:
        policy = harvey(context)
        stage = learned_stage(context, model, 0.25)
        stages.append(stage)
        policy.stages.append(stage)
        return policy

    # On 6 of seeds 0-9 a case of the stage took a new path first (Harvey's prediction
    # reaches the others' paths before it); any of those seeds will do.
    done = campaign(400, factory, seed=2)
    stage = stages[0]
    assert 0 < stage.runs <= 0.25 * done.fuzzer.stats.execs + 2
    chooser = stage.chooser
    assert isinstance(chooser, LearnedChooser)
    assert chooser.stats.decisions + chooser.stats.explored == stage.runs
    origins = {seed.origin for seed in done.fuzzer.corpus.seeds}
    assert "learned" in origins


@needs_node
def test_mix_lets_the_expert_choose_some_steps_and_feeds_them_to_the_networks(
        model_file: Path) -> None:
    from secant.learn.expert import ExpertPolicy

    model = LearnedModel.load(model_file)
    made: list[EpisodePolicy] = []

    def factory(context: PolicyContext) -> Policy:
        made.append(episode_policy(context, "mix", model, ExpertPolicy.from_context(context),
                                   expert_share=0.5))
        return made[-1]

    done = campaign(60, factory)
    policy = made[-1]
    chooser = policy.chooser
    assert isinstance(chooser, LearnedChooser)
    # Every step is either the networks' decision or the expert's choice, never both.
    assert policy.expert_choices > 0
    assert policy.expert_choices + chooser.stats.decisions + chooser.stats.explored == \
        done.fuzzer.stats.execs == 60
    # The expert solves what opens Lockbox's locks: its choices reach the assertion.
    assert any(f.oracle == "assertion" for f in done.findings.values())


@needs_node
def test_fuzz_runs_the_learned_policy_and_refuses_a_broken_model(
        model_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(app, ["fuzz", str(LOCKBOX), "--policy", "learned", "--model",
                                 str(model_file), "--execs", "60", "--workers", "1",
                                 "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    learned = summary["episodes"]["learned"]
    assert summary["execs"] == 60 == learned["decisions"] + learned["explored"]
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a model")
    result = runner.invoke(app, ["fuzz", str(LOCKBOX), "--policy", "learned", "--model",
                                 str(broken), "--execs", "10", "--out", str(tmp_path / "b"),
                                 "--quiet"])
    assert result.exit_code == 2
    assert "secant learn train" in result.output and "Traceback" not in result.output


@needs_node
def test_learn_train_trains_on_a_dataset_folder(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    entries = []
    for i, (order, split) in enumerate([([0, 1, 2, 3, 4], "train"),
                                        ([2, 0, 4, 1, 3], "train"),
                                        ([4, 3, 2, 1, 0], "held-out")]):
        package = f"toys{i}"
        data = folder / "data" / package
        data.mkdir(parents=True)
        write(data / f"Toy-{i:08x}.jsonl",
              *toy_dataset(order, chains=3, length=4, seed=i, contract="Toy"))
        entries.append({"package": package, "version": "1", "source": "Toy.sol",
                        "contract": "Toy", "code_hash": f"{i:08x}" + "0" * 56,
                        "split": split, "status": "done", "steps": 12})
    (folder / "manifest.json").write_text(json.dumps({"contracts": entries}))
    weights = tmp_path / "model.npz"
    result = CliRunner().invoke(app, ["learn", "train", str(folder), "--out", str(weights),
                                      "--epochs", "2", "--hidden", "8", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "trained on 2 contracts, held out 1, 2 epochs" in result.output
    assert LearnedModel.load(weights).layout
    report = json.loads(weights.with_suffix(".json").read_text())
    assert len(report["epochs"]) == 2
    result = CliRunner().invoke(app, ["learn", "train", str(tmp_path / "none")])
    assert result.exit_code == 2 and "holds no manifest.json" in result.output


def test_the_shipped_model_loads_with_its_layout_checked() -> None:
    from secant.learn.encode import Layout

    model = LearnedModel.load(None)
    stored = Layout.from_json(model.meta["layout_data"])
    assert model.layout == model.meta["layout"] == stored.digest == stored.current().digest
    assert model.meta["training"]["train"]["contracts"] >= 100  # the pinned corpus
