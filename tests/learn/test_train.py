"""Training ILF's networks: a toy pattern is learnt, numpy agrees with torch, seeds repeat.

The toy expert (tests/learn/test_encode.py) calls ``unlock`` right after ``setKey`` and
follows a fixed cycle otherwise; the held-out contract lists the same functions in another
order, so the networks must tell functions apart by their names and rows, not positions.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from secant.learn.dataset import read_dataset
from secant.learn.encode import Layout, facts_from_header
from secant.learn.network import Decision, LearnedModel, weight_shapes
from tests.learn.test_encode import function, header, rows, toy_dataset, write
from tests.learn.test_encode import step as make_step

torch = pytest.importorskip("torch")

from secant.learn.train import (  # noqa: E402
    NetworkDims,
    build_network,
    forward,
    make_batch,
    train_model,
)

ORDERS = [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]]
HELD_OUT = [1, 3, 0, 4, 2]
EXTRA = [function("getOwner()"), function("setFee(uint256)", writes=[5])]
OPTIONS = {"hidden": 32, "embed": 8, "batch_size": 2, "learning_rate": 0.005}


def corpus(folder: Path) -> tuple[list[Path], list[Path]]:
    train = [write(folder / f"train{i}.jsonl",
                   *toy_dataset(order, chains=6, length=6, seed=i, contract=f"Toy{i}",
                                extra=EXTRA[:i]))
             for i, order in enumerate(ORDERS)]
    held = [write(folder / "held.jsonl",
                  *toy_dataset(HELD_OUT, chains=6, length=6, seed=99, contract="Held"))]
    return train, held


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], object]:
    folder = tmp_path_factory.mktemp("train")
    train, held = corpus(folder)
    report = train_model(train, held, folder / "model.npz", epochs=12, seed=3,
                         plot=folder / "loss.png", **OPTIONS)
    return folder / "model.npz", held, report


def test_the_toy_pattern_is_learnt(trained: tuple[Path, list[Path], object]) -> None:
    path, held, report = trained
    epochs = report.epochs  # type: ignore[attr-defined]
    assert len(epochs) == 12
    first, last = epochs[0], epochs[-1]
    assert set(last.train_loss) >= {"function", "sender", "amount", "int", "address", "total"}
    # Chance is 1/5 for the function; the first step of a chain (one in six) is a coin
    # among three, every other step follows from the previous one.
    assert first.held_out_accuracy["function"] < 0.4
    assert last.held_out_accuracy["function"] >= 0.6
    assert last.held_out_loss["total"] < first.held_out_loss["total"]
    assert last.held_out_accuracy["int"] == 1.0 and last.held_out_accuracy["address"] == 1.0
    # In numpy, on the held-out contract: after setKey, unlock is the likely function.
    model = LearnedModel.load(path)
    header, steps = read_dataset(held[0])
    names = [f["signature"].partition("(")[0] for f in header["functions"]]
    episode = model.start_facts(facts_from_header(header))
    set_key = names.index("setKey")
    episode.probabilities(rows(header["functions"], []), set_key, 0)
    episode.advance(Decision(set_key, 0, 0, ()), "return")
    after = episode.probabilities(rows(header["functions"], [(set_key, "return")]),
                                  names.index("unlock"), 0)
    assert after["function"].argmax() == names.index("unlock")
    assert after["function"][names.index("unlock")] > 0.5
    # The report and the plot are beside the weights.
    written = json.loads(path.with_suffix(".json").read_text())
    assert written["layout"] == model.layout and len(written["epochs"]) == 12
    assert (path.parent / "loss.png").read_bytes()[:4] == b"\x89PNG"


def test_numpy_gives_the_probabilities_torch_gives(
        trained: tuple[Path, list[Path], object]) -> None:
    path, held, _ = trained
    model = LearnedModel.load(path)
    encoder = model.encoder
    net = build_network(encoder.layout, _dims(model))
    with np.load(path) as data:
        state = {name: torch.from_numpy(np.array(data[name])) for name in data.files
                 if name != "__meta__"}
    net.load_state_dict(state)
    net.eval()
    header, steps = read_dataset(held[0])
    contract = encoder.encode_dataset(header, steps)
    chain = contract.chains[0]
    batch = {name: torch.from_numpy(array)
             for name, array in make_batch(encoder, [(contract, chain)]).items()}
    with torch.no_grad():
        logits = forward(net, batch)
    expected = {head: torch.softmax(value, dim=-1)[0].numpy() for head, value in logits.items()}
    episode = model.start_facts(facts_from_header(header))
    # The first chain of the file is its first sequence, steps 0 to 5.
    assert [s.function for s in chain] == [s["choice"]["function"] for s in steps[:6]]
    for t, step in enumerate(chain):
        got = episode.probabilities(steps[t]["features"], step.function,
                                    step.actual_sender, step.ints, step.addresses)
        np.testing.assert_allclose(got["function"], expected["function"][t], atol=1e-5)
        np.testing.assert_allclose(got["sender"], expected["sender"][t], atol=1e-5)
        np.testing.assert_allclose(got["amount"], expected["amount"][t], atol=1e-5)
        if len(step.ints):
            np.testing.assert_allclose(got["int"], expected["int"][t, :len(step.ints)],
                                       atol=1e-5)
            pointer = got["constant"]
            fits = pointer.sum(axis=1) > 0  # torch's rows where nothing fits are padding
            np.testing.assert_allclose(
                pointer[fits], expected["constant"][t, :len(step.ints), :pointer.shape[1]][fits],
                atol=1e-5)
        if len(step.addresses):
            np.testing.assert_allclose(got["address"],
                                       expected["address"][t, :len(step.addresses)],
                                       atol=1e-5)
        episode.advance(Decision(step.function, step.actual_sender, 0, ()), "return")


def test_the_same_seed_gives_the_same_weights(tmp_path: Path) -> None:
    train, held = corpus(tmp_path)
    one = train_model(train, held, tmp_path / "a.npz", epochs=2, seed=5, **OPTIONS)
    two = train_model(train, held, tmp_path / "b.npz", epochs=2, seed=5, **OPTIONS)
    other = train_model(train, held, tmp_path / "c.npz", epochs=2, seed=6, **OPTIONS)
    assert [e.to_json() for e in one.epochs] == [e.to_json() for e in two.epochs]
    with np.load(one.weights) as a, np.load(two.weights) as b, np.load(other.weights) as c:
        assert a.files == b.files
        for name in a.files:
            assert np.array_equal(a[name], b[name]), name
        assert any(not np.array_equal(a[n], c[n]) for n in a.files if n != "__meta__")


def test_the_numpy_side_knows_every_array_torch_exports() -> None:
    layout = Layout(("<unk>", "a"), (1, 2, 3), (0, 5))
    dims = NetworkDims(hidden=8, embed=4)
    net = build_network(layout, dims)
    shapes = {name: tuple(value.shape) for name, value in net.state_dict().items()}
    assert shapes == weight_shapes(layout, dims)


def _dims(model: LearnedModel) -> NetworkDims:
    return NetworkDims(**model.meta["dims"])


def test_the_constant_pointer_learns_what_a_slot_takes_and_generalises(tmp_path: Path) -> None:
    """The expert passes a round amount first and a timestamp second: with no seed
    integers every solved value is a constant, and the pointer has to tell them apart by
    the slot and the constants' features, on a contract with constants it never saw."""
    def dataset(name: str, signature: str, constants: list[int], amount: int, when: int,
                params: list[list[str]]) -> Path:
        functions = [function(signature, constants=constants, params=params)]
        head = header(functions, contract=name)
        steps = []
        for sequence in range(1, 7):
            steps.append(make_step(sequence, [], rows(functions, []), function=0,
                              signature=signature, args=[amount, when],
                              int_args=[str(amount), str(when)],
                              solved={"sender": False, "value": False, "blocks": False,
                                      "time": False, "args": [True, True]}))
        return write(tmp_path / f"{name}.jsonl", head, steps)

    train = [dataset("A", "lock(uint256,uint64)", [3, 5000, 1_600_000_000, 2 ** 40], 5000,
                     1_600_000_000, [["amount"], ["deadline"]]),
             dataset("B", "stake(uint256,uint256)", [9, 2_000_000_000, 10 ** 6 + 7, 70_000],
                     70_000, 2_000_000_000, [["value"], ["until"]])]
    held = [dataset("C", "bond(uint128,uint256)", [1, 5, 1_800_000_000, 12_000, 2 ** 70],
                    12_000, 1_800_000_000, [["size"], ["expiry"]])]
    report = train_model(train, held, tmp_path / "m.npz", epochs=30, seed=1, seeds=0,
                         hidden=16, embed=8, batch_size=2, learning_rate=0.01)
    last = report.epochs[-1]
    assert last.held_out_accuracy["constant"] == 1.0
    assert last.held_out_loss["constant"] < report.epochs[0].held_out_loss["constant"]
    # The same in numpy, drawing: the held-out contract's round amount, then its timestamp.
    model = LearnedModel.load(tmp_path / "m.npz")
    header_c, _ = read_dataset(held[0])
    episode = model.start_facts(facts_from_header(header_c))
    rng = random.Random(0)
    chosen = [episode.decide(rows(header_c["functions"], []), rng).arguments
              for _ in range(20)]
    assert sum(a[0].value == 12_000 and a[1].value == 1_800_000_000
               for a in chosen if a[0].kind == a[1].kind == "constant") >= 15
