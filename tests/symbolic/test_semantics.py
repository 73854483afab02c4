"""Every symbolic operation on every pair of edge values equals the interpreter's result."""

from __future__ import annotations

import itertools
from typing import Any

import z3

from secant.evm.opcodes import ADDMOD, DIV, EQ, ISZERO, LT, MUL, MULMOD, NOT, SDIV, SLT
from secant.symbolic.semantics import (
    BINARY,
    binary,
    exp_concrete_exponent,
    exp_power_of_two,
    ternary,
    truth,
    unary,
)

M = (1 << 256) - 1
EDGES = [0, 1, 2, 7, 31, 32, 255, 256, 300, (1 << 160) - 1, (1 << 255) - 1, 1 << 255,
         M - 1, M]
X = z3.BitVec("x", 256)
Y = z3.BitVec("y", 256)


def evaluate(word: Any, **values: int) -> int:
    if isinstance(word, int):
        return word
    pairs = [(z3.BitVec(name, 256), z3.BitVecVal(v, 256)) for name, v in values.items()]
    done = z3.simplify(z3.substitute(word, *pairs))
    assert z3.is_bv_value(done), done
    return int(done.as_long())


def test_binary_operations_match_on_edge_values_with_either_side_symbolic() -> None:
    for op in sorted(BINARY):
        for a, b in itertools.product(EDGES, EDGES):
            want = binary(op, a, b)
            assert isinstance(want, int)
            assert evaluate(binary(op, X, b), x=a) == want, (hex(op), a, b)
            assert evaluate(binary(op, a, Y), y=b) == want, (hex(op), a, b)
            assert evaluate(binary(op, X, Y), x=a, y=b) == want, (hex(op), a, b)


def test_unary_and_ternary_operations_match() -> None:
    for op in (ISZERO, NOT):
        for a in EDGES:
            assert evaluate(unary(op, X), x=a) == unary(op, a)
    small = [0, 1, 2, 255, 1 << 255, M]
    for op in (ADDMOD, MULMOD):
        for a, b, n in itertools.product(small, small, small):
            want = ternary(op, a, b, n)
            assert evaluate(ternary(op, X, b, n), x=a) == want
            assert evaluate(ternary(op, a, b, Y), y=n) == want


def test_exp_by_squaring_and_powers_of_two() -> None:
    for base in EDGES:
        for exponent in (0, 1, 2, 3, 10, 255):
            want = pow(base, exponent, 1 << 256)
            assert evaluate(exp_concrete_exponent(X, exponent), x=base) == want
    for base in (0, 1, 2, 4, 16, 256, 1 << 128):
        for exponent in (0, 1, 2, 3, 63, 64, 127, 128, 255, 256, 1000, M):
            found = exp_power_of_two(base, X)
            assert found is not None
            assert evaluate(found, x=exponent) == pow(base, exponent, 1 << 256)
    assert exp_power_of_two(3, X) is None


def test_comparisons_stay_conditions() -> None:
    word = binary(LT, X, 5)
    assert z3.eq(truth(word), z3.ULT(X, 5))
    # ISZERO of a comparison is its negation, and EQ with 0 or 1 keeps it visible.
    assert z3.eq(truth(unary(ISZERO, word)), z3.Not(z3.ULT(X, 5)))
    assert z3.eq(truth(unary(ISZERO, unary(ISZERO, word))), z3.ULT(X, 5))
    assert z3.eq(truth(binary(EQ, word, 0)), z3.Not(z3.ULT(X, 5)))
    signed = binary(SLT, X, Y)
    assert z3.eq(truth(signed), X < Y)
    # A constant result is an int: no term is kept for it.
    assert binary(0x16, X, 0) == 0  # AND with 0


def test_solc_multiplication_checks_become_overflow_tests() -> None:
    # solc >= 0.8: ``iszero(or(iszero(x), eq(y, div(mul(x, y), x))))`` panics on overflow.
    for division in (DIV, SDIV):
        quotient = binary(division, binary(MUL, X, Y), X)
        check = binary(EQ, Y, quotient)
        assert "div" not in check.sexpr()  # the overflow predicate, not the division
        for a, b in itertools.product(EDGES, EDGES):
            want = binary(EQ, b, binary(division, binary(MUL, a, b), a))
            assert evaluate(check, x=a, y=b) == want, (division, a, b)


def test_multiplication_checks_with_a_constant_factor() -> None:
    for division in (DIV, SDIV):
        for factor in (3, M - 2):
            for quotient, other in ((binary(division, binary(MUL, X, factor), X), factor),
                                    (binary(division, binary(MUL, factor, X), factor), X)):
                check = binary(EQ, other, quotient)
                assert "div" not in check.sexpr()
                for a in EDGES:
                    want = binary(EQ, factor if other is not X else a, binary(
                        division, binary(MUL, a, factor), a if other is not X else factor))
                    assert evaluate(check, x=a) == want, (division, factor, a)
