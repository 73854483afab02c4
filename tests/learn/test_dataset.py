"""Dataset format 2: the solver's mask, argument columns, endings, and reading format 1."""

from __future__ import annotations

import json
from pathlib import Path

from secant.engine.values import VType
from secant.learn.dataset import (
    FORMAT,
    DatasetHeader,
    DatasetRecord,
    DatasetStep,
    DatasetWriter,
    address_arguments,
    integer_arguments,
    read_dataset,
)
from tests.compile.conftest import needs_node
from tests.learn.test_expert import campaign, expert


@needs_node
def test_the_mask_is_true_for_solved_inputs_and_false_for_defaults(tmp_path: Path) -> None:
    records: list[DatasetRecord] = []
    campaign(12, expert(records))
    header = records[0]
    assert isinstance(header, DatasetHeader) and header.view is not None
    steps = [r for r in records if isinstance(r, DatasetStep)]
    # setKey's key (k % 1000 == 777, k > 10**12) can only come from a model.
    set_key = next(s for s in steps if s.choice.tx.function == "setKey(uint256)"
                   and s.choice.tx.args[0] % 1000 == 777)
    assert set_key.solved.args == (True,)
    assert not set_key.solved.sender and not set_key.solved.value
    assert not set_key.solved.time and not set_key.solved.blocks
    # The open that pays exactly one ether: value and guess solved.
    paid = next(s for s in steps if s.choice.tx.function == "open(uint256)"
                and s.choice.tx.value == 10 ** 18)
    assert paid.solved.value and paid.solved.args == (True,)
    # A call at its defaults (zero arguments, first sender, no ether) solved nothing.
    default = [s for s in steps if s.choice.tx.args == (0,) * len(s.choice.tx.args)
               and s.choice.tx.value == 0 and s.choice.sender == 0]
    assert default
    for step in default:
        assert not any([step.solved.sender, step.solved.value, *step.solved.args])
    for step in steps:
        assert step.ended in ("return", "revert", "assert")
        assert step.int_args == tuple(str(a) for a in step.choice.tx.args)
        assert step.new_instructions >= 0
    assert sum(step.new_instructions for step in steps) > 0
    assert any(step.ended == "assert" for step in steps)

    path = tmp_path / "data.jsonl"
    writer = DatasetWriter(path, package="pkg", source="contracts/Lockbox.sol")
    for record in records:
        writer(record)
    writer.close()
    read_header, read_steps = read_dataset(path)
    assert read_header["format"] == FORMAT == 2
    assert read_header["package"] == "pkg" and read_header["source"] == "contracts/Lockbox.sol"
    assert len(read_header["addresses"]) == len(read_header["address_roles"])
    assert read_header["address_roles"][-1] == "zero"
    functions = {f["signature"]: f for f in read_header["functions"]}
    assert functions["setKey(uint256)"]["writes"] == ["0x0", "0x1", "0x2"]
    assert all(isinstance(value, str) and value.startswith("0x")
               for f in functions.values() for value in f["constants"])
    for line in read_steps:
        assert set(line["solved"]) == {"sender", "value", "blocks", "time", "args"}
        assert len(line["solved"]["args"]) == len(line["choice"]["args"])
        assert line["ended"] in ("return", "revert", "assert")


def test_argument_columns_index_addresses_and_write_integers_as_text() -> None:
    types = (VType("address", 160), VType("uint", 256), VType("array", elem=VType("address", 160)),
             VType("int", 8), VType("bool"), VType("array", elem=VType("uint", 8)))
    args = (7, 2 ** 200, (9, 5), -3, True, (1, 2))
    assert address_arguments(types, args, [5, 7]) == (1, None, [-1, 0], None, None, None)
    assert integer_arguments(types, args) == (None, str(2 ** 200), None, "-3", None, ["1", "2"])


def test_format_1_files_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    header = {"kind": "header", "format": 1, "contract": "C", "feature_names": [],
              "senders": ["deployer"], "functions": [{"signature": "f()"}]}
    step = {"kind": "step", "sequence": 1, "step": 0, "case": [], "features": [[]],
            "choice": {"function": 0}, "gain": 1, "candidates": 1, "queries": 0}
    path.write_text(json.dumps(header) + "\n" + json.dumps(step) + "\n\n")
    read_header, steps = read_dataset(path)
    assert read_header["format"] == 1 and "addresses" not in read_header
    assert len(steps) == 1 and "solved" not in steps[0]
