"""DAgger (secant/learn/dagger.py): the expert labels the states learned episodes reach.

A tiny corpus of our own (one contract, the expert's dataset in a second) and a model
trained on it in a second are enough: the labels' properties do not depend on how good
the model is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from secant.cli.main import app
from secant.engine.policy import LoopState, Novelty, Policy, PolicyContext, Proposal
from secant.learn.corpus import split_of
from secant.learn.dataset import DatasetHeader, DatasetRecord, DatasetStep, read_dataset
from secant.learn.ilf import EpisodePolicy, episode_policy
from secant.learn.network import LearnedModel
from secant.types import RunResult, TxSeq
from tests.compile.conftest import needs_node
from tests.learn.test_ilf import campaign

pytest.importorskip("torch")

from secant.learn.dagger import DaggerPolicy, dagger_policy  # noqa: E402
from secant.learn.train import train_model  # noqa: E402

GATE = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.19;

/// Two gates: the first needs a code, the second a code once the first is open.
contract Gate {
    uint256 public stage;

    function open(uint256 code) external {
        if (code == 4242) {
            stage = 1;
        }
    }

    function pass(uint256 code) external {
        if (stage == 1 && code == 77) {
            stage = 2;
        }
    }

    function reset() external {
        stage = 0;
    }
}
"""

PACKAGE = "tiny"  # a local package on the training side of the split
OPTIONS = ["--transactions", "16", "--epochs", "1", "--hidden", "8", "--quiet"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A `learn dataset` folder of one contract, its sources, and a model trained on it."""
    assert split_of(PACKAGE) == "train"
    root = tmp_path_factory.mktemp("dagger")
    source = root / PACKAGE
    source.mkdir()
    (source / "Gate.sol").write_text(GATE)
    folder = root / "corpus"
    result = CliRunner().invoke(app, ["learn", "dataset", str(folder), "--source", str(source),
                                      "--seconds", "10", "--transactions", "8", "--quiet"])
    assert result.exit_code == 0, result.output
    model = root / "model.npz"
    train_model(sorted((folder / "data").rglob("*.jsonl")), [], model, epochs=1, seed=0,
                hidden=8, embed=8)
    return folder, source, model


class Recorded(Policy):
    """A policy that keeps every case the policy it wraps proposed."""

    def __init__(self, inner: EpisodePolicy) -> None:
        self.inner = inner
        self.name = inner.name
        self.cases: list[TxSeq] = []

    def bind(self, fuzzer: LoopState) -> None:
        super().bind(fuzzer)
        self.inner.bind(fuzzer)

    def propose(self) -> Proposal | None:
        proposal = self.inner.propose()
        if proposal is not None:
            self.cases.append(proposal.case)
        return proposal

    def observe(self, proposal: Proposal, result: RunResult, novelty: Novelty) -> None:
        self.inner.observe(proposal, result, novelty)

    def summary(self) -> dict[str, Any]:
        return self.inner.summary()


@needs_node
def test_labels_are_the_experts_choices_at_the_states_learned_episodes_reach(
        corpus: tuple[Path, Path, Path]) -> None:
    model = LearnedModel.load(corpus[2])
    records: list[DatasetRecord] = []
    made: list[Recorded] = []

    def dagger(context: PolicyContext) -> Policy:
        made.append(Recorded(dagger_policy(context, model, records.append)))
        return made[-1]

    def learned(context: PolicyContext) -> Policy:
        made.append(Recorded(episode_policy(context, "learned", model)))
        return made[-1]

    campaign(40, dagger, seed=3)
    campaign(40, learned, seed=3)
    labelled, plain = made
    # Labelling runs nothing and draws nothing: the episodes are the learned policy's own.
    assert labelled.cases == plain.cases and len(plain.cases) == 40
    assert isinstance(labelled.inner, DaggerPolicy)
    headers = [r for r in records if isinstance(r, DatasetHeader)]
    steps = [r for r in records if isinstance(r, DatasetStep)]
    assert len(headers) == 1 and records[0] is headers[0]
    assert labelled.inner.stats.labelled == len(steps) >= 10
    # Every labelled state is the state a learned transaction extended at that point.
    extended = [case[:-1] for case in plain.cases]
    position = 0
    for step in steps:
        position = extended.index(step.state, position)
    # The label is the expert's: it differs from the learned choice somewhere, and every
    # argument that is not the expert's zero default is one its solver chose.
    assert any(step.choice.tx != plain.cases[extended.index(step.state)][-1] for step in steps)
    names = {f.signature: i for i, f in enumerate(headers[0].functions)}
    for step in steps:
        assert step.choice.function == names[step.choice.tx.function]
        for value, solved in zip(step.choice.tx.args, step.solved.args, strict=True):
            assert solved or value in (0, False, "", b"\0" * 32, (0,))
    # setKey's lock (k % 1000 == 777, k > 1e12) is open only to a solved key.
    keys = [s for s in steps if s.choice.tx.function == "setKey(uint256)" and s.gain > 0]
    assert keys and all(s.solved.args == (True,) and s.choice.tx.args[0] % 1000 == 777
                        for s in keys)


@needs_node
def test_a_round_writes_labels_an_ordinary_dataset_folder_and_a_model_then_resumes(
        corpus: tuple[Path, Path, Path], tmp_path: Path) -> None:
    folder, source, model = corpus
    out = tmp_path / "dagger.npz"
    args = ["learn", "dagger", str(folder), "--model", str(model), "--source", str(source),
            "--out", str(out), *OPTIONS]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    round_one = folder / "dagger-1"
    manifest = json.loads((round_one / "manifest.json").read_text())
    [entry] = manifest["contracts"]
    assert entry["dagger_status"] == "done" and entry["status"] == "done"
    key = f"{PACKAGE}/Gate-{entry['code_hash'][:8]}.jsonl"
    base_header, base_steps = read_dataset(folder / "data" / key)
    header, labels = read_dataset(round_one / "labels" / key)
    assert len(labels) == entry["dagger_labels"] >= 1
    assert header["functions"] == base_header["functions"]
    assert header["addresses"] == base_header["addresses"]
    # The union is an ordinary corpus file: the expert's steps, then the round's labels.
    union_header, union = read_dataset(round_one / "data" / key)
    assert union_header == base_header
    assert union == base_steps + labels and entry["steps"] == len(union)
    # Where the expert solved the gate's code, the mask says so.
    opened = [s for s in labels if s["choice"]["signature"] == "open(uint256)"
              and s["gain"] > 0]
    assert opened and all(s["solved"]["args"] == [True] and s["choice"]["args"] == [4242]
                          for s in opened)
    assert LearnedModel.load(out).layout == LearnedModel.load(round_one / "model.npz").layout
    assert manifest["trained"] == {"epochs": 1, "hidden": 8, "seed": 0}
    # A second call finds the labels and the model and does neither again.
    files = [round_one / "labels" / key, round_one / "data" / key, round_one / "model.npz"]
    stamps = [path.stat().st_mtime_ns for path in files]
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert [path.stat().st_mtime_ns for path in files] == stamps
    # Other settings for a written round are refused, in one line.
    other = CliRunner().invoke(app, [*args, "--seed", "1"])
    assert other.exit_code == 2 and "another seed" in other.output


@needs_node
def test_bad_input_is_a_one_line_error(corpus: tuple[Path, Path, Path],
                                       tmp_path: Path) -> None:
    folder, _, model = corpus
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a model")
    for args, words in [
        ([str(tmp_path / "none"), "--model", str(model)], "is not a folder"),
        ([str(tmp_path), "--model", str(model)], "holds no manifest.json"),
        ([str(folder), "--model", str(broken)], "is corrupt"),
        ([str(folder), "--model", str(tmp_path / "missing.npz")], "does not exist"),
        ([str(folder), "--model", str(model), "--rounds", "0"], "--rounds must be"),
    ]:
        result = CliRunner().invoke(app, ["learn", "dagger", *args, "--out",
                                          str(tmp_path / "o.npz")])
        assert result.exit_code == 2, result.output
        assert words in result.output and "Traceback" not in result.output


def test_the_union_maps_address_indices_to_the_corpus_header(tmp_path: Path) -> None:
    from secant.learn.dagger import _union_lines

    def write(path: Path, addresses: list[str], steps: list[dict[str, Any]],
              functions: list[str] = ["f(address,address[])"]) -> Path:  # noqa: B006
        header = {"kind": "header", "senders": ["deployer"], "addresses": addresses,
                  "functions": [{"signature": f, "to": None} for f in functions]}
        path.write_text("".join(json.dumps(r) + "\n" for r in [header, *steps]))
        return path

    base = write(tmp_path / "base.jsonl", ["deployer", "Target", "Attacker", "0x0"], [])
    step = {"kind": "step", "address_args": [2, [1, -1, 3]], "int_args": [None, None]}
    labels = write(tmp_path / "labels.jsonl", ["deployer", "Attacker", "Target", "Other"],
                   [step])
    [line] = _union_lines(base, labels) or []
    # Attacker and Target swap places; Other is not a candidate of the corpus's header.
    assert json.loads(line)["address_args"] == [1, [2, -1, -1]]
    other = write(tmp_path / "other.jsonl", ["deployer"], [step], ["g()"])
    assert _union_lines(base, other) is None
