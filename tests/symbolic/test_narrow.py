"""The narrow rewrite of a query against the query itself, on random conditions.

Random conditions are built with the symbolic semantics (the terms the shadow tracker
builds: checked products, guarded divisions, ABI cleanups of narrow argument types, masks,
shifts, signed comparisons) over a few 256-bit inputs. For random input values:

* exact, nothing narrowed: the rewrite holds exactly when the condition holds;
* exact, inputs narrowed: the same, for values the narrow inputs can take;
* guarded: whenever the rewrite holds, the condition holds (an under-approximation), and
  on enough of the samples the rewrite does hold (the check is not vacuous).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
import z3

from secant.evm.opcodes import (
    ADD,
    AND,
    DIV,
    EQ,
    GT,
    ISZERO,
    LT,
    MOD,
    MUL,
    NOT,
    OR,
    SAR,
    SDIV,
    SGT,
    SHL,
    SHR,
    SIGNEXTEND,
    SLT,
    SMOD,
    SUB,
    XOR,
)
from secant.symbolic import semantics
from secant.symbolic.narrow import Narrowing, narrowed

M = (1 << 256) - 1
NAMES = ("x", "y", "z")
ARITHMETIC = [ADD, SUB, MUL, MUL, DIV, SDIV, MOD, SMOD]
OTHER = [AND, OR, XOR, SHL, SHR, SAR, SIGNEXTEND]
COMPARISONS = [LT, GT, SLT, SGT, EQ]
CONDITIONS = 250
SAMPLES = 10


def small(rng: random.Random) -> int:
    """A constant of the kinds solc's code holds: small, a mask, a negative, any."""
    roll = rng.random()
    if roll < 0.5:
        return rng.randrange(1, 300)
    if roll < 0.65:
        return (1 << rng.choice((8, 32, 64, 128, 160))) - 1
    if roll < 0.8:
        return M - rng.randrange(300)
    return rng.getrandbits(rng.choice((16, 40, 70, 256)))


def argument(name: str, rng: random.Random) -> tuple[Any, bool]:
    """An input as solc's ABI decoder leaves it: uint256, a masked uintN, a sign-extended
    intN or int256; and whether it is signed."""
    word = z3.BitVec(name, 256)
    kind = rng.choice(("uint256", "uint64", "int64", "int256"))
    if kind == "uint64":
        return semantics.binary(AND, word, (1 << 64) - 1), False
    if kind == "int64":
        return semantics.binary(SIGNEXTEND, 7, word), True
    return word, kind == "int256"


def checked_product(a: Any, b: Any) -> tuple[Any, Any]:
    """solc >= 0.8's checked multiplication: the product and its no-overflow condition."""
    product = semantics.binary(MUL, a, b)
    quotient = semantics.binary(DIV, product, a)
    fits = semantics.binary(OR, semantics.unary(ISZERO, a), semantics.binary(EQ, b, quotient))
    return product, semantics.truth(fits)


def narrow_checked_product(a: Any, b: Any, bits: int, signed: bool) -> tuple[Any, Any]:
    """solc >= 0.8's checked multiplication of a narrow type: the product, cleaned, and the
    condition that cleaning left it unchanged."""
    product = semantics.binary(MUL, a, b)
    cleaned = semantics.binary(SIGNEXTEND, bits // 8 - 1, product) if signed else \
        semantics.binary(AND, product, (1 << bits) - 1)
    return cleaned, semantics.truth(semantics.binary(EQ, product, cleaned))


def condition(rng: random.Random, inputs: list[Any]) -> list[Any]:
    """A random path: a few facts and a final comparison, over the inputs."""
    values: list[Any] = list(inputs)
    facts: list[Any] = []
    products: list[Any] = []
    for _ in range(rng.randint(1, 5)):
        a = rng.choice(values)
        b = rng.choice(values) if rng.random() < 0.5 else small(rng)
        roll = rng.random()
        if roll < 0.15:
            product, fits = checked_product(a, b)
            facts.append(fits)
            result = product
            products.append(product)
        elif roll < 0.3:
            result, fits = narrow_checked_product(a, b, rng.choice((8, 64)),
                                                  rng.random() < 0.5)
            facts.append(fits)
            products.append(result)
        elif roll < 0.75:
            op = rng.choice(ARITHMETIC)
            result = semantics.binary(op, b, a) if rng.random() < 0.5 else \
                semantics.binary(op, a, b)
        elif roll < 0.85:
            result = semantics.unary(NOT, a)
        else:
            op = rng.choice(OTHER)
            if op in (SHL, SHR, SAR):
                result = semantics.binary(op, rng.randrange(0, 260), a)
            elif op == SIGNEXTEND:
                result = semantics.binary(op, rng.choice((0, 3, 7, 15, 31)), a)
            else:
                result = semantics.binary(op, a, b)
        if semantics.is_term(result):
            values.append(result)
    left = values[-1]
    right = rng.choice(values[:-1]) if len(values) > 1 and rng.random() < 0.4 else small(rng)
    if products and rng.random() < 0.5:  # a product equal to a constant it can take
        left = rng.choice(products)
        right = rng.randrange(1, 40) * rng.choice((1, 1, 3, 255, 65537))
        if rng.random() < 0.3:
            right = -right & M
    comparison = semantics.binary(rng.choice(COMPARISONS), left, right)
    goal = semantics.truth(comparison)
    if rng.random() < 0.5:
        goal = semantics.truth(semantics.unary(ISZERO, comparison))
    return [f for f in facts if not z3.is_true(f)] + [goal]


def holds(constraints: list[Any], values: dict[str, tuple[int, int]]) -> bool:
    pairs = [(z3.BitVec(name, width), z3.BitVecVal(value, width))
             for name, (value, width) in values.items()]
    result = z3.simplify(z3.substitute(z3.And(*constraints), *pairs))
    assert z3.is_true(result) or z3.is_false(result), result
    return bool(z3.is_true(result))


def sample(rng: random.Random, width: int, signed: bool) -> int:
    """A ``width``-bit value (two's complement), edges often."""
    edges = [0, 1, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1, 2, 3]
    value = rng.choice(edges) if rng.random() < 0.4 else rng.getrandbits(
        rng.choice((4, 8, width)))
    return value & ((1 << width) - 1)


def extended(value: int, width: int, signed: bool) -> int:
    if signed and value >> (width - 1):
        value -= 1 << width
    return value & M


def generated(seed: int) -> tuple[random.Random, list[tuple[list[Any], dict[str, bool]]]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(CONDITIONS):
        inputs, signs = [], {}
        for name in NAMES[:rng.randint(1, 3)]:
            word, signed = argument(name, rng)
            inputs.append(word)
            signs[name] = signed
        constraints = [c for c in condition(rng, inputs) if not z3.is_true(c)]
        if constraints and not any(z3.is_false(c) for c in constraints):
            cases.append((constraints, signs))
    return rng, cases


def all_widths(constraints: list[Any], operation: int) -> set[int]:
    """The widths of the terms of ``operation`` in ``constraints``."""
    widths = set()
    todo = list(constraints)
    while todo:
        term = todo.pop()
        if z3.is_app_of(term, operation):
            widths.add(term.size())
        todo.extend(term.children())
    return widths


def test_exact_rewrite_without_narrowing_is_equivalent() -> None:
    rng, cases = generated(1)
    compared = 0
    for constraints, signs in cases:
        rewritten = narrowed(constraints).constraints
        for _ in range(SAMPLES):
            values = {name: (extended(sample(rng, 256, s), 256, s), 256)
                      for name, s in signs.items()}
            assert holds(constraints, values) == holds(rewritten, values), constraints
            compared += 1
    assert compared > CONDITIONS * SAMPLES // 2


def narrow_samples(rng: random.Random, signs: dict[str, bool], narrowing: Narrowing,
                   width: int) -> Iterator[tuple[dict[str, tuple[int, int]],
                                                 dict[str, tuple[int, int]]]]:
    """Random values of the narrow inputs: for the query (extended) and for the rewrite."""
    for _ in range(SAMPLES):
        small_values = {name: sample(rng, width, s) for name, s in signs.items()}
        yield ({name: (extended(v, width, signs[name]), 256)
                for name, v in small_values.items()},
               {narrowing.variables[name][0]: (v, width) for name, v in small_values.items()})


@pytest.mark.parametrize("width", [8, 32])
def test_exact_rewrite_of_narrowed_inputs_is_equivalent(width: int) -> None:
    rng, cases = generated(2 + width)
    for constraints, signs in cases:
        narrowing = narrowed(constraints, variables=signs, width=width)
        for wide, narrow in narrow_samples(rng, signs, narrowing, width):
            assert holds(constraints, wide) == holds(narrowing.constraints, narrow), \
                constraints


@pytest.mark.parametrize(("width", "factor_bits"), [(8, None), (32, None), (32, 3)])
def test_guarded_rewrite_only_admits_models_of_the_query(width: int,
                                                         factor_bits: int | None) -> None:
    rng, cases = generated(3 + width + (factor_bits or 0))
    admitted = agreed = 0
    for constraints, signs in cases:
        narrowing = narrowed(constraints, variables=signs, width=width, exact=False,
                             factor_bits=factor_bits)
        for wide, narrow in narrow_samples(rng, signs, narrowing, width):
            original = holds(constraints, wide)
            if holds(narrowing.constraints, narrow):
                assert original, constraints
                admitted += 1
            if original:
                agreed += 1
    # Most samples the query admits, the guarded rewrite admits too.
    assert admitted > agreed // 2 > 0


def solved(constraints: list[Any], limit: int = 3_000_000) -> Any:
    """A model of ``constraints`` within ``limit`` resource units (a fresh context: the
    count starts from its creation)."""
    context = z3.Context()
    solver = z3.Solver(ctx=context)
    solver.set("rlimit", limit)
    solver.add(*[c.translate(context) for c in constraints])
    assert solver.check() == z3.sat
    return solver.model()


def test_a_checked_product_equal_to_a_constant_is_solved_at_the_constants_width() -> None:
    x, y = z3.BitVec("x", 256), z3.BitVec("y", 256)
    product, fits = checked_product(x, y)
    query = [fits, semantics.truth(semantics.binary(EQ, product, 1735044314))]
    narrowing = narrowed(query, variables={"x": False, "y": False}, width=32, exact=False)
    assert all_widths(narrowing.constraints, z3.Z3_OP_BMUL) == {31}
    assert not all_widths(narrowing.constraints, z3.Z3_OP_BUDIV)
    model = solved(narrowing.constraints)
    a, b = (model.eval(z3.BitVec(narrowing.variables[n][0], 32, model.ctx)).as_long()
            for n in "xy")
    assert a * b == 1735044314


def test_a_signed_checked_product_is_solved_at_the_constants_width_plus_its_sign() -> None:
    x, y = z3.BitVec("x", 256), z3.BitVec("y", 256)
    product, fits = checked_product(x, y)
    query = [fits, semantics.truth(semantics.binary(EQ, product, -30 & M)),
             semantics.truth(semantics.binary(SGT, x, 0))]
    narrowing = narrowed(query, variables={"x": True, "y": True}, width=32, exact=False)
    assert all_widths(narrowing.constraints, z3.Z3_OP_BMUL) == {6}
    model = solved(narrowing.constraints)
    a, b = (model.eval(z3.BitVec(narrowing.variables[n][0], 32, model.ctx)).as_long()
            for n in "xy")
    signed = [v - (1 << 32) if v >> 31 else v for v in (a, b)]
    assert signed[0] > 0 and signed[0] * signed[1] == -30


def test_a_narrow_types_overflow_check_lets_its_product_be_solved_at_the_constants_width(
        ) -> None:
    # uint64 low = uint64(w); uint64 high = uint64(w >> 64); low * high == 10403
    word = z3.BitVec("w", 256)
    low = semantics.binary(AND, word, (1 << 64) - 1)
    high = semantics.binary(AND, semantics.binary(SHR, 64, word), (1 << 64) - 1)
    product, fits = narrow_checked_product(low, high, 64, signed=False)
    query = [fits, semantics.truth(semantics.binary(EQ, product, 10403)),
             semantics.truth(semantics.binary(GT, low, 1)),
             semantics.truth(semantics.binary(GT, high, 1))]
    narrowing = narrowed(query)  # exact: nothing narrowed, the same models
    assert all_widths(narrowing.constraints[1:2], z3.Z3_OP_BMUL) == {14}
    model = solved(narrowing.constraints)
    value = model.eval(z3.BitVec("w", 256, model.ctx), model_completion=True).as_long()
    factors = value & ((1 << 64) - 1), (value >> 64) & ((1 << 64) - 1)
    assert factors[0] * factors[1] == 10403 and min(factors) > 1


def test_a_small_factor_is_asked_for_only_where_the_product_equals_the_constant() -> None:
    x, y = z3.BitVec("x", 256), z3.BitVec("y", 256)
    product, fits = checked_product(x, y)
    equal = semantics.truth(semantics.binary(EQ, product, 8302879164380133692))
    narrowing = narrowed([fits, equal], variables={"x": False, "y": False}, width=64,
                         exact=False, factor_bits=8)
    model = solved(narrowing.constraints)
    a, b = (model.eval(z3.BitVec(narrowing.variables[n][0], 64, model.ctx)).as_long()
            for n in "xy")
    assert a * b == 8302879164380133692 and min(a, b) < 256
    # A path that went the other way ("x * y != c") keeps its models with large factors.
    other = narrowed([fits, z3.Not(equal), z3.BitVec("x", 256) > 1000,
                      z3.BitVec("y", 256) > 1000],
                     variables={"x": False, "y": False}, width=64, exact=False,
                     factor_bits=8)
    solved(other.constraints)


def test_a_checked_uint256_product_equal_to_a_wide_constant_is_solved_with_a_small_factor(
        ) -> None:
    # uint64 x, uint256 y, x * y == c (checked): c has 256 bits and the factor 6.
    x = semantics.binary(AND, z3.BitVec("x", 256), (1 << 64) - 1)
    y = z3.BitVec("y", 256)
    constant = 6 * (0x9E3779B97F4A7C15 << 190 | 0x1234567)
    product, fits = checked_product(x, y)
    query = [fits, semantics.truth(semantics.binary(EQ, product, constant)),
             semantics.truth(semantics.binary(GT, x, 1))]
    narrowing = narrowed(query, exact=False, factor_bits=8)
    model = solved(narrowing.constraints, 5_000_000)
    a, b = (model.eval(z3.BitVec(n, 256, model.ctx), model_completion=True).as_long()
            for n in "xy")
    assert (a & ((1 << 64) - 1)) * b == constant and 1 < a < 256
