"""The opcode table and the named constants that the rest of the code uses instead of numbers."""

from __future__ import annotations

import pytest

from secant.evm import opcodes
from secant.evm.opcodes import _TABLE, BY_NAME, OPS, immediate_size, stack_shape


def test_table_has_unique_codes_and_names() -> None:
    assert len(OPS) == len(BY_NAME) == len(_TABLE)


@pytest.mark.parametrize("info", _TABLE, ids=lambda info: info.name)
def test_every_opcode_has_a_constant_equal_to_its_table_entry(info: opcodes.OpInfo) -> None:
    assert getattr(opcodes, info.name) == BY_NAME[info.name] == info.code


def test_no_constant_names_an_opcode_the_table_lacks() -> None:
    # A stray or misspelt constant (e.g. a renamed opcode left behind) would not be checked
    # by the test above, which starts from the table.
    named = {
        name for name, value in vars(opcodes).items()
        if name.isupper() and type(value) is int
    }
    assert named == set(BY_NAME)


@pytest.mark.parametrize(("family", "first", "last"), [
    ("PUSH", 0, 32), ("DUP", 1, 16), ("SWAP", 1, 16), ("LOG", 0, 4),
])
def test_families_are_contiguous(family: str, first: int, last: int) -> None:
    # Code elsewhere relies on it: a PUSH's width is ``op - PUSH0``, DUPn is ``op - DUP1 + 1``.
    codes = [BY_NAME[f"{family}{n}"] for n in range(first, last + 1)]
    low = getattr(opcodes, f"{family}{first}")
    assert codes == list(range(low, low + last - first + 1))


def test_immediate_size() -> None:
    assert immediate_size(opcodes.PUSH0) == 0
    assert immediate_size(opcodes.PUSH1) == 1
    assert immediate_size(opcodes.PUSH20) == 20
    assert immediate_size(opcodes.PUSH32) == 32
    for op in (opcodes.STOP, opcodes.JUMPDEST, opcodes.DUP1, opcodes.SELFDESTRUCT, 0x0C, 0xEF):
        assert immediate_size(op) == 0



def test_immediate_size_agrees_with_the_table() -> None:
    for op in range(256):
        info = OPS.get(op)
        assert immediate_size(op) == (info.immediate if info else 0), hex(op)


@pytest.mark.parametrize(("op", "shape"), [
    (0x5F, "push"), (0x60, "push"), (0x7F, "push"), (0x80, "dup"), (0x8F, "dup"),
    (0x90, "swap"), (0x9F, "swap"), (0x50, "pop"), (0x5B, "jumpdest"),
    (0x01, None), (0x56, None), (0x57, None), (0x54, None), (0xFE, None),
])
def test_stack_shape_names_the_opcodes_that_only_move_the_stack(op: int,
                                                                shape: str | None) -> None:
    assert stack_shape(op) == shape
