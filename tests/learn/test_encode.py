"""The learned policy's encoder: layout digest, rows, graph, seeds, labels and masks.

The datasets here are written by hand in format 2 (``secant.learn.dataset``); the toy
generator below is shared with the training and network tests.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from secant.learn.encode import (
    ARRAY_CAP,
    CONSTANT_COLUMNS,
    SLOT_COLUMNS,
    Encoder,
    Layout,
    build_layout,
    facts_from_header,
    parameter_kind,
    parameter_types,
)
from secant.learn.features import FEATURE_NAMES

WIDTH = len(FEATURE_NAMES)


def function(signature: str, *, payable: bool = False, reads: Sequence[int] = (),
             writes: Sequence[int] = (), constants: Sequence[int] = (),
             instructions: int = 40, params: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """A header's function entry (format 2; ``params``: the parameters' name sub-tokens)."""
    name = signature.partition("(")[0]
    tokens: list[str] = []
    word = ""
    for char in name:  # camelCase split, enough for the names used here
        if char.isupper() and word:
            tokens.append(word.lower())
            word = ""
        word += char
    if word:
        tokens.append(word.lower())
    types = parameter_types(signature)
    return {
        "signature": signature, "to": None, "arguments": len(types),
        "address_arguments": sum("address" in t for t in types), "payable": payable,
        "name_tokens": tokens, "opcodes": {}, "blocks": 3, "instructions": instructions,
        "fallback": "(" not in signature, "code_share": 0.25,
        "reads": [hex(s) for s in reads], "writes": [hex(s) for s in writes],
        "constants": [hex(c) for c in constants],
        "param_tokens": [list(p) for p in params],
    }


def header(functions: Sequence[dict[str, Any]], senders: int = 3,
           contract: str = "Toy") -> dict[str, Any]:
    """A format 2 header: the senders, a target and the zero address as candidates."""
    names = ["deployer", "user1", "attacker1", "user2", "attacker2"][:senders]
    return {"kind": "header", "format": 2, "contract": contract, "package": "", "source": "",
            "feature_names": list(FEATURE_NAMES), "senders": names,
            "addresses": [*names, "0x" + "11" * 20, "0x" + "00" * 20],
            "address_roles": ["sender"] * senders + ["target", "zero"],
            "functions": list(functions)}


def rows(functions: Sequence[dict[str, Any]], history: Sequence[tuple[int, str]]
         ) -> list[list[float]]:
    """Feature rows for a history of (function, ended), in FEATURE_NAMES order (the parts
    a toy contract has: endings, transaction share, argument counts)."""
    out = []
    for index, entry in enumerate(functions):
        mine = [ended for f, ended in history if f == index]
        row = [0.0] * WIDTH
        for k, ending in enumerate(("revert", "assert", "return")):
            row[2 * k] = float(bool(mine) and mine[-1] == ending)
            row[2 * k + 1] = mine.count(ending) / len(mine) if mine else 0.0
        row[6] = len(mine) / len(history) if history else 0.0
        row[11] = float(entry["arguments"])
        row[12] = float(entry["address_arguments"])
        row[FEATURE_NAMES.index("op_SLOAD")] = float(len(entry["reads"]) * 3)
        out.append(row)
    return out


def step(sequence: int, case: list[dict[str, Any]], features: list[list[float]], *,
         function: int, signature: str, sender: int = 0, value: int = 0,
         args: Sequence[Any] = (), solved: dict[str, Any] | None = None,
         int_args: Sequence[Any] = (), address_args: Sequence[Any] = (),
         ended: str = "return") -> dict[str, Any]:
    """A format 2 step (``case`` holds the history before it; the choice is appended)."""
    tx = {"function": signature, "args": list(args), "sender": f"s{sender}", "value": value}
    return {"kind": "step", "sequence": sequence, "step": len(case), "case": [*case, tx],
            "features": features,
            "choice": {"function": function, "signature": signature, "sender": sender,
                       "value": value, "blocks": 0, "time": 0, "args": list(args)},
            "gain": 1, "candidates": 1, "queries": 1,
            "solved": solved or {"sender": False, "value": False, "blocks": False,
                                 "time": False, "args": [False] * len(args)},
            "int_args": list(int_args), "address_args": list(address_args),
            "ended": ended, "new_instructions": 1}


def write(path: Path, head: dict[str, Any], steps: Sequence[dict[str, Any]]) -> Path:
    """A dataset file."""
    path.write_text("".join(json.dumps(line) + "\n" for line in [head, *steps]))
    return path


# The toy contract: the expert calls unlock after setKey (with the key it set), and
# follows a fixed cycle otherwise, so that a policy can learn all of it.
TOY = [
    function("setKey(uint256)", reads=[0], writes=[0], constants=[42]),
    function("unlock(uint256)", reads=[0, 1], writes=[1]),
    function("deposit()", payable=True, writes=[2]),
    function("transfer(address,uint256)", reads=[2], writes=[2]),
    function("ping()"),
]
NEXT = {"setKey": "unlock", "unlock": "transfer", "deposit": "setKey", "transfer": "ping",
        "ping": "deposit"}


def toy_dataset(order: Sequence[int], chains: int, length: int, seed: int,
                contract: str = "Toy", extra: Sequence[dict[str, Any]] = ()
                ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, steps) of the toy contract with its functions in ``order`` (and ``extra``
    functions the expert never calls)."""
    rng = random.Random(seed)
    functions = [TOY[i] for i in order] + list(extra)
    index = {f["signature"].partition("(")[0]: i for i, f in enumerate(functions)}
    steps: list[dict[str, Any]] = []
    for sequence in range(1, chains + 1):
        case: list[dict[str, Any]] = []
        history: list[tuple[int, str]] = []
        name = rng.choice(["setKey", "deposit", "ping"])
        for _ in range(length):
            chosen = index[name]
            signature = functions[chosen]["signature"]
            kw: dict[str, Any] = {}
            if name in ("setKey", "unlock"):
                kw = {"args": [42], "int_args": ["42"], "address_args": [None],
                      "solved": {"sender": False, "value": False, "blocks": False,
                                 "time": False, "args": [True]}}
            elif name == "deposit":
                kw = {"sender": 1, "value": 10 ** 18,
                      "solved": {"sender": True, "value": True, "blocks": False,
                                 "time": False, "args": []}}
            elif name == "ping":  # whoever: the expert left the default sender
                kw = {"sender": rng.randrange(3)}
            elif name == "transfer":
                kw = {"args": ["user1", 7], "int_args": [None, "7"], "address_args": [1, None],
                      "solved": {"sender": False, "value": False, "blocks": False,
                                 "time": False, "args": [True, True]}}
            record = step(sequence, case, rows(functions, history), function=chosen,
                          signature=signature, **kw)
            steps.append(record)
            case = record["case"]
            history.append((chosen, "return"))
            name = NEXT[name]
    return header(functions, contract=contract), steps


# --------------------------------------------------------------------------- tests


def test_parameter_types_and_kinds() -> None:
    assert parameter_types("f(uint256,(bool,address)[],address[3])") == (
        "uint256", "(bool,address)[]", "address[3]")
    assert parameter_types("fallback") == ()
    assert parameter_types("g()") == ()
    assert parameter_kind("uint8") == ("int", None)
    assert parameter_kind("int256") == ("int", None)
    assert parameter_kind("address") == ("address", None)
    assert parameter_kind("uint256[]") == ("ints", None)
    assert parameter_kind("address[2]") == ("addresses", 2)
    assert parameter_kind("uint256[][]") == ("other", None)
    assert parameter_kind("bytes32") == ("other", None)
    assert parameter_kind("(uint256,address)") == ("other", None)


def test_layout_digest_follows_every_part_of_the_layout() -> None:
    base = Layout(("<unk>", "set", "key"), (1, 42), (0, 10 ** 18))
    assert base.digest == Layout(("<unk>", "set", "key"), (1, 42), (0, 10 ** 18)).digest
    assert len(base.digest) == 64
    changed = [
        Layout(("<unk>", "set", "lock"), (1, 42), (0, 10 ** 18)),
        Layout(("<unk>", "set", "key"), (1, 43), (0, 10 ** 18)),
        Layout(("<unk>", "set", "key"), (1, 42), (0, 10 ** 17)),
        Layout(("<unk>", "set", "key"), (1, 42), (0, 10 ** 18),
               feature_names=(*FEATURE_NAMES[:-1], "op_SOMETHING")),
        Layout(("<unk>", "set", "key"), (1, 42), (0, 10 ** 18), array_cap=ARRAY_CAP + 1),
        Layout(("<unk>", "set", "key"), (1, 42), (0, 10 ** 18), version=999),
    ]
    assert len({base.digest, *(layout.digest for layout in changed)}) == len(changed) + 1
    # A layout survives its JSON, and current() keeps only vocabulary and seeds.
    assert Layout.from_json(json.loads(json.dumps(base.to_json()))).digest == base.digest
    old = changed[3]
    assert old.current().digest == base.digest


def test_build_layout_counts_solved_inputs_only() -> None:
    head, steps = toy_dataset(range(5), chains=4, length=5, seed=1)
    unsolved = step(9, [], rows(head["functions"], []), function=0,
                    signature="setKey(uint256)", args=[5], int_args=["5"], value=3)
    layout = build_layout([(head, [*steps, unsolved])], seeds=8, amounts=4)
    assert layout.vocabulary[0] == "<unk>"
    assert {"set", "key", "unlock", "deposit", "transfer", "ping"} <= set(layout.vocabulary)
    assert 5 not in layout.seed_ints and 42 in layout.seed_ints and 7 in layout.seed_ints
    assert layout.seed_ints[0] == 42  # the most frequent first
    assert layout.seed_amounts == (0, 10 ** 18)
    small = build_layout([(head, steps)], seeds=1, amounts=1)
    assert small.seed_ints == (42,) and small.seed_amounts == (0,)


def test_rows_scale_counts_and_the_graph_links_readers_and_writers() -> None:
    head, _ = toy_dataset(range(5), chains=1, length=1, seed=0)
    encoder = Encoder(Layout(("<unk>", "set", "key"), (42,), (0,)))
    arrays = encoder.contract(facts_from_header(head))
    # setKey writes 0 which unlock reads; deposit and transfer share slot 2; ping alone.
    linked = arrays.adjacency > 0
    assert linked[0, 1] and linked[1, 0] and linked[2, 3] and linked[3, 2]
    assert not linked[0, 2] and not linked[4, :4].any() and linked.diagonal().all()
    assert arrays.adjacency[4, 4] == pytest.approx(1.0)
    assert arrays.adjacency[0, 1] == pytest.approx(1 / np.sqrt(2 * 2))
    # Static columns: fallback, code share, payable, log1p(arguments, address args, size).
    assert arrays.static[2].tolist() == pytest.approx(
        [0.0, 0.25, 1.0, 0.0, 0.0, np.log1p(40)])
    assert arrays.static[3, 3] == pytest.approx(np.log1p(2))
    # Name tokens: known ones by index, the rest <unk>, weights averaging.
    assert arrays.tokens[0, :2].tolist() == [1, 2]
    assert arrays.tokens[1, 0] == 0  # "unlock" is not in this vocabulary
    assert arrays.token_weights[0, :3].tolist() == [0.5, 0.5, 0.0]
    row = [0.0] * WIDTH
    row[FEATURE_NAMES.index("op_SLOAD")] = 9.0
    row[FEATURE_NAMES.index("revert_fraction")] = 0.5
    scaled = encoder.features([row])
    assert scaled[0, FEATURE_NAMES.index("op_SLOAD")] == pytest.approx(np.log1p(9.0))
    assert scaled[0, FEATURE_NAMES.index("revert_fraction")] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="columns"):
        encoder.features([[0.0] * (WIDTH - 1)])


def test_labels_and_masks_of_a_hand_written_dataset() -> None:
    functions = [
        function("put(uint256,address,uint8[],address[2])", payable=True,
                 constants=[77, 1000]),
        function("get()"),
    ]
    head = header(functions)
    features = rows(functions, [])
    solved = {"sender": True, "value": True, "blocks": False, "time": False,
              "args": [True, True, True, False]}
    first = step(1, [], features, function=0, signature=functions[0]["signature"],
                 sender=2, value=5, args=[77, "attacker1", [42, 1000], ["user1", "0x0"]],
                 solved=solved, int_args=["77", None, ["42", "1000"], None],
                 address_args=[None, 2, None, [1, -1]], ended="revert")
    second = step(1, first["case"], features, function=0,
                  signature=functions[0]["signature"], sender=1, value=0,
                  args=[9, "0x0", [], []],
                  solved={"sender": False, "value": False, "blocks": False, "time": False,
                          "args": [True, True, True, True]},
                  int_args=["9", None, [], None], address_args=[None, -1, None, [0, 4]])
    third = step(1, second["case"], features, function=1, signature="get()")
    layout = Layout(("<unk>",), (42,), (0, 5))
    encoder = Encoder(layout)
    contract = encoder.encode_dataset(head, [first, second, third])
    assert len(contract.chains) == 1 and contract.steps == 3
    one, two, three = contract.chains[0]
    seed, constant, other = 0, layout.constant_class, layout.other_class
    # Which constant: 77 is put's first (sorted), 1000 its second; -1 for the rest.
    assert one.constants == (0, -1, 1, -1, -1) and two.constants == (-1,) * 5
    # put's integer slots: the scalar, then the dynamic array's ARRAY_CAP elements.
    assert len(contract.arrays.int_slots[0]) == 1 + ARRAY_CAP
    assert len(contract.arrays.address_slots[0]) == 1 + 2
    assert (one.function, one.sender, one.actual_sender, one.amount) == (0, 2, 2, 1)
    # 77 is a constant of put; the array: 42 a seed, 1000 a constant, then its end.
    assert one.ints == (constant, seed, constant, other, -1)
    # The address argument solved; the array of addresses not (masked).
    assert one.addresses == (2, -1, -1)
    assert (one.prev_function, one.prev_ended) == (-1, None)
    # Unsolved sender and value: masked; 9 is neither seed nor constant; an empty dynamic
    # array ends at once; an address that is no candidate (-1) is masked.
    assert (two.sender, two.actual_sender, two.amount) == (-1, 1, -1)
    assert two.ints == (other, other, -1, -1, -1)
    assert two.addresses == (-1, 0, 4)
    assert (two.prev_function, two.prev_ended) == (0, "revert")
    # A non-payable function's amount is masked even when solved; get has no slots.
    assert three.function == 1 and three.amount == -1 and three.ints == ()
    assert three.prev_function == 0 and three.prev_ended == "return"


def test_branches_of_a_sequence_become_chains_counted_once() -> None:
    functions = [function("a()"), function("b()")]
    head = header(functions)
    features = rows(functions, [])
    root = step(1, [], features, function=0, signature="a()")
    left = step(1, root["case"], features, function=0, signature="a()")
    right = step(1, root["case"], features, function=1, signature="b()")
    deeper = step(2, right["case"], features, function=0, signature="a()")
    contract = Encoder(Layout(("<unk>",), (), (0,))).encode_dataset(
        head, [root, left, right, deeper])
    chains = [[s.function for s in chain] for chain in contract.chains]
    assert chains == [[0, 0], [0, 1, 0]]
    assert [[s.active for s in chain] for chain in contract.chains] == [
        [True, True], [False, True, True]]
    assert contract.steps == 4


def test_format_1_steps_read_as_unsolved() -> None:
    functions = [function("put(uint256)", payable=True)]
    head = header(functions)
    for key in ("addresses", "address_roles"):
        del head[key]
    head["format"] = 1
    record = step(1, [], rows(functions, []), function=0, signature="put(uint256)",
                  sender=1, value=5, args=[42])
    for key in ("solved", "int_args", "address_args", "ended", "new_instructions"):
        del record[key]
    contract = Encoder(Layout(("<unk>",), (42,), (0, 5))).encode_dataset(head, [record])
    only = contract.chains[0][0]
    assert (only.function, only.sender, only.amount, only.ints) == (0, -1, -1, (-1,))
    assert contract.arrays.candidates.shape[0] == 3  # the senders


def test_other_feature_names_are_refused() -> None:
    head = header([function("a()")])
    head["feature_names"] = ["revert_last"]
    with pytest.raises(ValueError, match="feature names"):
        Encoder(Layout(("<unk>",), (), (0,))).encode_dataset(head, [])


def test_slots_carry_their_parameters_type_and_name() -> None:
    functions = [function("put(uint8,int64[],address,uint256[2])",
                          params=[["level"], ["deltas"], ["to"], []]),
                 function("get()")]
    head = header(functions)
    layout = build_layout([(head, [])])
    assert {"level", "deltas", "to"} <= set(layout.vocabulary)
    encoder = Encoder(layout)
    arrays = encoder.contract(facts_from_header(head))
    level, *deltas, first, second = arrays.int_slots[0]
    assert (level.bits, level.signed, level.element) == (8, False, None)
    assert len(deltas) == ARRAY_CAP
    assert all((d.bits, d.signed, d.dynamic) == (64, True, True) for d in deltas)
    assert (first.bits, first.element, first.dynamic, first.tokens) == (256, 0, False, ())
    [to] = arrays.address_slots[0]
    assert to.bits == 0 and to.tokens == (layout.vocabulary.index("to"),)

    def on(slot: Any) -> set[str]:
        return {n for n, v in zip(SLOT_COLUMNS, encoder.slot_columns(slot), strict=True) if v}

    assert on(level) == {"bits_8"}
    assert on(deltas[0]) == {"bits_64", "signed", "element", "dynamic"}
    assert on(first) == {"bits_256", "element"} and on(to) == set()
    # GRU_int's input: the previous class, the position, then the type columns.
    row = encoder.int_input(-1, deltas[1])
    assert row.shape == (layout.int_input_width,)
    assert row[layout.int_classes + 1] == 1.0
    assert list(row[layout.int_classes + layout.param_cap:]) == \
        list(encoder.slot_columns(deltas[1]))
    tokens, weights = encoder.name_weights(level)
    assert tokens[0] == layout.vocabulary.index("level") and weights.sum() == 1.0
    assert encoder.name_weights(first)[1].sum() == 0.0
    # What fits: uint8 takes 200 and not 300; int64 takes -1 as a 256-bit word.
    assert level.fits(200) and not level.fits(300)
    assert deltas[0].fits(2 ** 256 - 1) and not deltas[0].fits(2 ** 63)


def test_constants_are_described_for_the_pointer() -> None:
    values = [7, 1024, 5000, 10 ** 6, 1_700_000_000, 10 ** 18, 2 ** 200 + 1]
    encoder = Encoder(Layout(("<unk>",), (), (0,)))
    table = encoder.constant_features(values)
    assert table.shape == (len(values), len(CONSTANT_COLUMNS))

    def on(row: int) -> set[str]:
        return {n for n, v in zip(CONSTANT_COLUMNS, table[row], strict=True)
                if v and n != "rank"}

    assert on(0) == {"const_bits_8"}
    assert on(1) == {"const_bits_16", "power_of_two"}
    assert on(2) == {"const_bits_16", "round"}
    assert on(3) == {"const_bits_32", "power_of_ten"}
    assert on(4) == {"const_bits_32", "timestamp", "round"}
    assert on(5) == {"const_bits_64", "power_of_ten", "wei_unit"}
    assert on(6) == {"const_bits_256"}
    rank = table[:, CONSTANT_COLUMNS.index("rank")]
    assert rank[0] == 0.0 and rank[-1] == 1.0 and list(rank) == sorted(rank)
    # The pointer's label is the index among the function's sorted constants.
    head = header([function("f(uint256)", constants=[5000, 7])])
    arrays = encoder.contract(facts_from_header(head))
    assert arrays.constant_values[0] == (7, 5000)
    assert encoder.constant_index(arrays, 0, 5000) == 1
    assert encoder.constant_index(arrays, 0, 8) == -1
