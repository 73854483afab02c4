"""The table of pure operations: its functions, its templates and the interpreter agree."""

from __future__ import annotations

import itertools
import random

import pytest

from secant.evm.blockgen import HANDLERS
from secant.evm.opcodes import (
    ADDMOD,
    BYTE,
    CLZ,
    EXP,
    MULMOD,
    NOT,
    OPS,
    SAR,
    SDIV,
    SHL,
    SIGNEXTEND,
    SMOD,
)
from secant.evm.pure import NAMESPACE, PURE, SIGN, M

EDGES = [0, 1, 2, 3, 7, 31, 32, 33, 255, 256, 257, 300, 1 << 64, SIGN - 1, SIGN, SIGN + 1,
         M - 1, M]
"""Words where the operations change behaviour: zero and one, byte indices and shift
amounts on either side of 32 and 256, the sign boundary, minus one."""


def _words(arity: int) -> list[tuple[int, ...]]:
    if arity < 3:
        return list(itertools.product(EDGES, repeat=arity))
    rng = random.Random(arity)
    return [tuple(rng.choice(EDGES) for _ in range(arity)) for _ in range(2000)]


class _Frame:
    """As much of a frame as a pure handler (and EXP's gas) touches."""

    gas = 1 << 40


def _handler(op: int, words: tuple[int, ...]) -> int:
    stack = list(reversed(words))  # words[0] is the top of the stack
    HANDLERS[op](stack, _Frame(), None)
    assert len(stack) == 1
    return stack[0]


@pytest.mark.parametrize("op", sorted(PURE), ids=lambda op: OPS[op].name)
def test_every_template_computes_its_function(op: int) -> None:
    entry = PURE[op]
    for words in _words(entry.arity):
        expected = entry.compute(*words)
        names = dict(zip("abc", words, strict=False))
        for spell in (hex, str):  # the block compiler's constants, the wrap recording's
            source = entry.template.format(**{k: spell(v) for k, v in names.items()})
            assert eval(source, dict(NAMESPACE)) == expected, (source, expected)


@pytest.mark.parametrize("op", sorted(PURE), ids=lambda op: OPS[op].name)
def test_every_function_is_the_interpreters(op: int) -> None:
    entry = PURE[op]
    assert entry.arity == OPS[op].pops and OPS[op].pushes == 1
    for words in _words(entry.arity):
        result = entry.compute(*words)
        assert 0 <= result <= M
        assert result == _handler(op, words), words


def test_known_values() -> None:
    minus = lambda x: (-x) & M  # noqa: E731
    assert PURE[SDIV].compute(minus(6), 4) == minus(1)  # truncates toward zero
    assert PURE[SDIV].compute(SIGN, M) == SIGN  # -2**255 / -1 wraps
    assert PURE[SMOD].compute(minus(7), 3) == minus(1)  # the dividend's sign
    assert PURE[SAR].compute(1, minus(2)) == minus(1)
    assert PURE[SAR].compute(256, minus(2)) == M
    assert PURE[SHL].compute(256, 1) == 0
    assert PURE[SIGNEXTEND].compute(0, 0xFF) == M
    assert PURE[SIGNEXTEND].compute(0, 0x17F) == 0x7F
    assert PURE[BYTE].compute(31, 0x1234) == 0x34
    assert PURE[BYTE].compute(32, M) == 0
    assert PURE[ADDMOD].compute(M, 2, M) == 2  # no wrap before the modulus
    assert PURE[MULMOD].compute(M, M, 12) == (M * M) % 12
    assert PURE[EXP].compute(2, 256) == 0
    assert PURE[NOT].compute(0) == M


def test_the_table_holds_what_only_a_value_needs() -> None:
    # CLZ is left to the interpreter and the block compiler; every entry pushes one word.
    assert CLZ not in PURE
    assert {entry.arity for entry in PURE.values()} == {1, 2, 3}
