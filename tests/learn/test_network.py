"""The learned policy in numpy: loading and its checks, decisions, masks, determinism."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from secant.engine.mutators import FunctionSpec
from secant.engine.values import VType
from secant.errors import SecantError
from secant.learn.encode import ContractFacts, FunctionFacts, Layout, facts_from_header
from secant.learn.features import FEATURE_NAMES, FunctionInfo
from secant.learn.network import (
    DEFAULT_MODEL,
    ArgumentChoice,
    Decision,
    LearnedModel,
    ModelError,
)
from tests.learn.test_encode import rows, toy_dataset, write

FIX = "secant learn train"


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from secant.learn.train import train_model

    folder = tmp_path_factory.mktemp("model")
    files = [write(folder / f"d{i}.jsonl", *toy_dataset(order, chains=4, length=5, seed=i))
             for i, order in enumerate([[0, 1, 2, 3, 4], [3, 1, 4, 0, 2]])]
    train_model(files, [], folder / "m.npz", epochs=1, seed=0, hidden=16, embed=8)
    return folder / "m.npz"


def rewrite(source: Path, target: Path, *, meta: dict[str, Any] | None = None,
            drop: tuple[str, ...] = ()) -> Path:
    with np.load(source) as data:
        arrays = {name: np.array(data[name]) for name in data.files if name not in drop}
    if meta is not None:
        arrays["__meta__"] = np.array(json.dumps(meta))
    with target.open("wb") as handle:
        np.savez(handle, **arrays)
    return target


def meta_of(path: Path) -> dict[str, Any]:
    with np.load(path) as data:
        meta: dict[str, Any] = json.loads(str(data["__meta__"][()]))
    return meta


def toy_facts() -> tuple[ContractFacts, dict[str, Any]]:
    head, _ = toy_dataset(range(5), chains=1, length=1, seed=0)
    return facts_from_header(head), head


def test_a_model_loads_with_its_layout_checked(model_path: Path) -> None:
    model = LearnedModel.load(model_path)
    meta = meta_of(model_path)
    assert model.layout == meta["layout"] == Layout.from_json(meta["layout_data"]).digest
    assert meta["encoder_version"] == model.encoder.layout.version
    assert meta["training"]["epochs"] == 1 and meta["dims"]["hidden"] == 16
    facts, head = toy_facts()
    episode = model.start_facts(facts)
    decision = episode.decide(rows(head["functions"], []), random.Random(0))
    assert 0 <= decision.function < 5
    signature = head["functions"][decision.function]["signature"]
    assert len(decision.arguments) == signature.count(",") + (signature[-2] != "(")


def test_a_model_for_another_layout_is_refused_with_the_fix(model_path: Path,
                                                            tmp_path: Path) -> None:
    meta = meta_of(model_path)
    for change in ({"feature_names": [*FEATURE_NAMES[:-1], "op_NEW"]}, {"version": 999}):
        data = {**meta["layout_data"], **change}
        other = {**meta, "layout_data": data, "layout": Layout.from_json(data).digest}
        path = rewrite(model_path, tmp_path / "other.npz", meta=other)
        with pytest.raises(ModelError) as error:
            LearnedModel.load(path)
        text = str(error.value)
        assert "was trained for feature layout" in text and FIX in text
        assert "\n" not in text
        assert isinstance(error.value, SecantError)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "no meta", "bad meta",
                                    "missing weights", "digest", "missing"])
def test_a_missing_or_corrupt_file_is_one_line_naming_the_fix(
        model_path: Path, tmp_path: Path, damage: str) -> None:
    path = tmp_path / "model.npz"
    if damage == "garbage":
        path.write_bytes(b"not a model at all")
    elif damage == "truncated":
        path.write_bytes(model_path.read_bytes()[:200])
    elif damage == "no meta":
        rewrite(model_path, path, drop=("__meta__",))
    elif damage == "bad meta":
        rewrite(model_path, path, meta={"layout": "x"})
    elif damage == "missing weights":
        rewrite(model_path, path, drop=("func.0.weight",))
    elif damage == "digest":
        rewrite(model_path, path, meta={**meta_of(model_path), "layout": "0" * 64})
    with pytest.raises(ModelError) as error:
        LearnedModel.load(path)
    text = str(error.value)
    assert str(path) in text and FIX in text and "\n" not in text


def test_the_shipped_model_is_looked_for_in_the_package() -> None:
    assert DEFAULT_MODEL.parts[-3:] == ("learn", "models", "ilf.npz")
    if DEFAULT_MODEL.is_file():
        assert LearnedModel.load(None).layout
    else:
        with pytest.raises(ModelError, match=FIX):
            LearnedModel.load(None)


def run(model: LearnedModel, facts: ContractFacts, functions: list[dict[str, Any]],
        seed: int, count: int = 30, addresses: tuple[int, ...] = ()) -> list[Decision]:
    episode = model.start_facts(facts, addresses=addresses)
    rng = random.Random(seed)
    history: list[tuple[int, str]] = []
    out = []
    for index in range(count):
        if index % 10 == 0:
            episode.reset()
            history = []
        decision = episode.decide(rows(functions, history), rng)
        ended = "revert" if rng.random() < 0.3 else "return"
        episode.advance(decision, ended)
        history.append((decision.function, ended))
        out.append(decision)
    return out


def test_the_same_rng_seed_gives_the_same_decisions(model_path: Path) -> None:
    model = LearnedModel.load(model_path)
    facts, head = toy_facts()
    state = np.random.get_state()
    one = run(model, facts, head["functions"], seed=4)
    assert one == run(LearnedModel.load(model_path), facts, head["functions"], seed=4)
    assert one != run(model, facts, head["functions"], seed=5)
    # numpy's global generator is neither used nor moved.
    assert np.array_equal(np.random.get_state()[1], state[1])


def fact(signature: str, payable: bool, parameters: tuple[str, ...],
         constants: tuple[int, ...] = ()) -> FunctionFacts:
    return FunctionFacts(signature=signature, name_tokens=("set", "key"),
                         parameters=parameters, address_arguments=0, payable=payable,
                         instructions=30, fallback=False, code_share=0.5,
                         reads=frozenset(), writes=frozenset({1}), constants=constants)


def test_decisions_respect_payable_senders_candidates_and_constants(model_path: Path) -> None:
    model = LearnedModel.load(model_path)
    layout = model.encoder.layout
    functions = [
        fact("send(address,uint256[],address[2])", False,
             ("address", "uint256[]", "address[2]"), constants=(5, 6)),
        fact("fund(uint8)", True, ("uint8",), constants=(7, 300)),
        fact("other(bytes,bool)", False, ("bytes", "bool")),
    ]
    facts = ContractFacts(tuple(functions), senders=2, roles=("sender", "sender", "zero"))
    # The constant pointer never offers what does not fit the slot: 300 is no uint8.
    pointer = model.start_facts(facts).probabilities(
        rows([{"arguments": 1, "address_arguments": 0, "reads": []}] * 3, []), 1, 0)["constant"]
    assert pointer.shape == (1, 2) and pointer[0, 1] == 0.0 and pointer[0, 0] == 1.0
    entries = [{"arguments": len(f.parameters), "address_arguments": 0, "reads": []}
               for f in functions]
    addresses = (0xAA, 0xBB, 0)
    decisions = run(model, facts, entries, seed=1, count=300, addresses=addresses)
    seen = {d.function for d in decisions}
    assert seen == {0, 1, 2}
    for decision in decisions:
        assert decision.sender in (0, 1)
        assert len(decision.arguments) == len(functions[decision.function].parameters)
        if decision.function != 1:
            assert decision.amount == 0
        else:
            assert decision.amount in layout.seed_amounts
        for choice in decision.arguments:
            assert choice.kind in ("seed", "constant", "address", "other")
            if choice.kind == "address":
                assert {choice.value, *choice.values} - {None} <= set(addresses)
            if choice.kind == "constant":
                assert decision.function == 0 and choice.value in (5, 6) or \
                    decision.function == 1 and choice.value == 7 or \
                    set(choice.values) <= {5, 6, *layout.seed_ints}
            if choice.kind == "seed" and choice.value is not None:
                assert choice.value in layout.seed_ints
        if decision.function == 0:
            first, ints, pair = decision.arguments
            assert first.kind == "address" and first.value in addresses
            assert pair.kind == "address" and len(pair.values) == 2
            assert len(ints.values) <= 4 and (ints.kind == "other") == (not ints.values)
            assert set(ints.values) <= {5, 6, *layout.seed_ints}
        if decision.function == 2:
            assert decision.arguments == (ArgumentChoice("other", None),) * 2


def test_an_episode_starts_from_a_contract_view(model_path: Path) -> None:
    view_module = pytest.importorskip("secant.learn.view")
    model = LearnedModel.load(model_path)
    infos = tuple(
        FunctionInfo(signature=signature, to=None, arguments=len(types),
                     address_arguments=sum(t.kind == "address" for t in types),
                     payable=payable, name_tokens=tokens, opcodes=(0,) * 50,
                     blocks=frozenset(), instructions=20, code_hash=b"")
        for signature, types, payable, tokens in [
            ("setKey(uint256)", (VType("uint", 256),), False, ("set", "key")),
            ("give(address)", (VType("address", 160),), True, ("give",)),
        ])
    specs = [FunctionSpec(info.signature, None, types, info.payable)
             for info, types in zip(infos, [(VType("uint", 256),), (VType("address", 160),)])]
    view = view_module.ContractView(
        functions=infos, fallback=(False, False), code_share=(0.4, 0.6),
        reads=(frozenset({0}), frozenset()), writes=(frozenset({0}), frozenset({0})),
        constants=((42,), ()), senders=(0x10, 0x20, 0x30),
        addresses=(0x10, 0x20, 0x30, 0x99, 0), address_roles=(
            "sender", "sender", "sender", "target", "zero"))
    episode = model.start(view, specs)
    rng = random.Random(2)
    entries = [{"arguments": 1, "address_arguments": i, "reads": []} for i in range(2)]
    for _ in range(20):
        decision = episode.decide(rows(entries, []), rng)
        assert decision.sender < 3
        if decision.function == 1:
            (choice,) = decision.arguments
            assert choice.kind == "address" and choice.value in view.addresses
        episode.advance(decision, "return")
