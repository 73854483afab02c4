"""Maze contracts for the maze benchmark (``bench/maze.py``), generated from a seed.

A maze is a ``size`` x ``size`` grid walked by ``moveNorth``, ``moveSouth``, ``moveEast`` and
``moveWest``, each taking the same eight integer arguments::

    p0, p1, p2: uint256    p3: int256    p4, p5, p6: uint64    p7: int256

A move goes through an open wall only (a closed one reverts with ``"wall"``); the walls
open along a random spanning tree of the grid, so every cell can be reached from the start
(cell 0, the north-west corner), plus a few random extra openings. A successful move
stores the new position, counts itself in ``moves``, and then, with the move's arguments,
evaluates the nest of the cell it entered: one to three nested ``if``s, each a random
comparison over the arguments. When every level holds, the cell's body runs::

    foundMask |= uint256(1) << ID;
    emit AssertionFailed(ID);   // on a line of its own: secant's finding names this line

The comparisons come in families (``FAMILIES``): linear equalities and inequalities over
one or two arguments (``p1 == 7 + p2``, ``p0 > 27 * p2``, ``3 * p3 + 5 == 1234567``),
products and squares (``p2 * p5 == 391``, ``p1 * p1 + 10 == 10010``), remainders,
arithmetic that wraps inside ``unchecked`` (``p4 > p4 * p6`` on uint64), truncating
conversions, signed arithmetic, and comparisons with storage: ``memo`` (which
``stash(uint256)`` sets) and the ``moves`` counter. Checked arithmetic that overflows
reverts the move, as Solidity 0.8 does.

Every nest is built around a witness: values of the arguments (and of ``memo`` and
``moves``) drawn first, each comparison chosen so that the witness satisfies it. A share of
the cells (``infeasible_share``) get a contradiction instead (``p3 > 100`` inside
``p3 < 50``, ``p * p == 4k + 2``, ``p % m == r`` with ``r >= m``, a product of two uint64
above ``(2**64 - 1)**2``, ``2 * p`` equal to an odd number, two arguments each larger than
the other). ``classify`` then writes the ground truth with two models of Solidity 0.8's
semantics (bit widths, checked overflow reverting, wrapping in ``unchecked``, truncation,
signed division): a Python evaluator (``evaluate``) and a z3 encoding (``to_z3``). A nest
built around a witness is feasible when the evaluator fires it with the witness and z3
agrees on the witness's values (z3 searching for a model of a 256-bit product such as
``p2 * p5 == 391`` often times out; the witness proves it in no time). Every other nest is
decided by z3's search: unsat is infeasible, a model (checked by the evaluator) feasible,
a timeout unknown. The ground truth also says whether the cell is reachable on the grid
and, for each feasible assertion, gives a transaction sequence that fires it (``stash``
when needed, a path of moves with arguments that pass the cells on the way, back-and-forth
moves until ``moves`` is large enough, the final move with the witness).
``tests/bench/test_maze.py`` checks the evaluator against the z3 encoding and both against
secant's EVM.

Everything is deterministic in the seed (``random.Random(seed)``); z3 is used only by
``classify``, never to choose what is generated.
"""

from __future__ import annotations

import json
import random
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 1
"""Bumped whenever the same seed would give a different maze."""

SOLC_VERSION = "0.8.26"
"""The compiler both tools build the maze with (secant's --solc-version, forge's --use)."""

DIRECTIONS = ("North", "South", "East", "West")
"""Move functions, in the order of the wall bits (bit 4 * cell + index: open)."""


# --- types and expressions ------------------------------------------------------------------


@dataclass(frozen=True)
class Type:
    """A Solidity integer type."""

    signed: bool
    bits: int

    @property
    def name(self) -> str:
        return f"{'int' if self.signed else 'uint'}{self.bits}"

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def fits(self, value: int) -> bool:
        return self.lo <= value <= self.hi

    def wrap(self, value: int) -> int:
        value &= (1 << self.bits) - 1
        if self.signed and value >> (self.bits - 1):
            value -= 1 << self.bits
        return value


U256 = Type(False, 256)
U64 = Type(False, 64)
S256 = Type(True, 256)

PARAMS: tuple[tuple[str, Type], ...] = (
    ("p0", U256), ("p1", U256), ("p2", U256), ("p3", S256),
    ("p4", U64), ("p5", U64), ("p6", U64), ("p7", S256),
)
"""The eight arguments of every move function."""

STORAGE: tuple[tuple[str, Type], ...] = (("memo", U256), ("moves", U256))
"""Storage the nests read: ``memo`` (set by ``stash``) and the count of successful moves."""

TYPES = dict(PARAMS + STORAGE)
MOVE_SIGNATURE = "(" + ",".join(t.name for _, t in PARAMS) + ")"


class Revert(Exception):
    """Checked arithmetic over- or underflowed, or a division by zero: the move reverts."""


@dataclass(frozen=True)
class Var:
    """An argument or a storage variable."""

    name: str

    @property
    def type(self) -> Type:
        return TYPES[self.name]

    def sol(self) -> str:
        return self.name

    def names(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True)
class Const:
    """A literal; Solidity gives it the type of the expression it sits in."""

    value: int
    type: Type

    def sol(self) -> str:
        return str(self.value)

    def names(self) -> set[str]:
        return set()


@dataclass(frozen=True)
class Cast:
    """An explicit conversion: ``uint64(x)`` truncates, ``int256(x)`` reinterprets."""

    type: Type
    inner: Expr

    def sol(self) -> str:
        return f"{self.type.name}({self.inner.sol()})"

    def names(self) -> set[str]:
        return self.inner.names()


_PRECEDENCE = {"*": 2, "/": 2, "%": 2, "+": 1, "-": 1}


@dataclass(frozen=True)
class Bin:
    """Arithmetic on two operands of the same signedness (the narrower one is widened)."""

    op: str
    left: Expr
    right: Expr

    @property
    def type(self) -> Type:
        a, b = self.left.type, self.right.type
        return a if a.bits >= b.bits else b

    def sol(self) -> str:
        mine = _PRECEDENCE[self.op]
        left, right = self.left.sol(), self.right.sol()
        if isinstance(self.left, Bin) and _PRECEDENCE[self.left.op] < mine:
            left = f"({left})"
        if (isinstance(self.right, Bin) and _PRECEDENCE[self.right.op] <= mine) or (
                isinstance(self.right, Const) and self.right.value < 0):
            right = f"({right})"
        if isinstance(self.left, Const) and self.left.value < 0:
            left = f"({left})"
        return f"{left} {self.op} {right}"

    def names(self) -> set[str]:
        return self.left.names() | self.right.names()


Expr = Var | Const | Cast | Bin


@dataclass(frozen=True)
class Cmp:
    """A comparison, the condition of one level of a nest."""

    op: str
    left: Expr
    right: Expr

    def sol(self) -> str:
        return f"{self.left.sol()} {self.op} {self.right.sol()}"

    def names(self) -> set[str]:
        return self.left.names() | self.right.names()


_COMPARE = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def _trunc_div(a: int, b: int) -> int:
    """Division rounding toward zero, as the EVM's SDIV."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trunc_mod(a: int, b: int) -> int:
    """The remainder with the dividend's sign, as the EVM's SMOD."""
    return a - _trunc_div(a, b) * b


def evaluate(expr: Expr | Cmp, env: dict[str, int], checked: bool) -> int | bool:
    """The value of ``expr`` under ``env`` with Solidity 0.8's semantics; raise Revert."""
    if isinstance(expr, Cmp):
        return _COMPARE[expr.op](evaluate(expr.left, env, checked),
                                 evaluate(expr.right, env, checked))
    if isinstance(expr, Var):
        return env.get(expr.name, 0)
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Cast):
        return expr.type.wrap(int(evaluate(expr.inner, env, checked)))
    a, b = int(evaluate(expr.left, env, checked)), int(evaluate(expr.right, env, checked))
    kind = expr.type
    if expr.op == "+":
        exact = a + b
    elif expr.op == "-":
        exact = a - b
    elif expr.op == "*":
        exact = a * b
    else:
        if b == 0:
            raise Revert("division by zero")
        exact = _trunc_div(a, b) if expr.op == "/" else _trunc_mod(a, b)
    if checked and not kind.fits(exact):
        raise Revert(f"{expr.sol()} overflows {kind.name}")
    return kind.wrap(exact)


# --- z3 -------------------------------------------------------------------------------------


def to_z3(expr: Expr | Cmp, env: dict[str, Any], checked: bool,
          safe: list[Any]) -> Any:
    """``expr`` as a z3 term over ``env`` (name -> bit-vector); appends to ``safe`` the
    conditions under which evaluating it does not revert (checked overflow, division by 0)."""
    import z3

    if isinstance(expr, Cmp):
        signed = expr.left.type.signed
        a, b = _same_width(to_z3(expr.left, env, checked, safe),
                           to_z3(expr.right, env, checked, safe), signed)
        if expr.op == "==":
            return a == b
        if expr.op == "!=":
            return a != b
        ops = {"<": (z3.ULT, lambda x, y: x < y), "<=": (z3.ULE, lambda x, y: x <= y),
               ">": (z3.UGT, lambda x, y: x > y), ">=": (z3.UGE, lambda x, y: x >= y)}
        unsigned_op, signed_op = ops[expr.op]
        return signed_op(a, b) if signed else unsigned_op(a, b)
    if isinstance(expr, Var):
        return env[expr.name]
    if isinstance(expr, Const):
        return z3.BitVecVal(expr.value % (1 << expr.type.bits), expr.type.bits)
    if isinstance(expr, Cast):
        inner = to_z3(expr.inner, env, checked, safe)
        source, target = expr.inner.type, expr.type
        if target.bits < source.bits:
            return z3.Extract(target.bits - 1, 0, inner)
        if target.bits > source.bits:
            return (z3.SignExt if source.signed else z3.ZeroExt)(target.bits - source.bits,
                                                                 inner)
        return inner
    kind = expr.type
    a = _extend(to_z3(expr.left, env, checked, safe), expr.left.type, kind)
    b = _extend(to_z3(expr.right, env, checked, safe), expr.right.type, kind)
    if expr.op in ("/", "%"):
        safe.append(b != 0)
        if kind.signed:
            if checked and expr.op == "/":
                safe.append(z3.BVSDivNoOverflow(a, b))
            return a / b if expr.op == "/" else z3.SRem(a, b)
        return z3.UDiv(a, b) if expr.op == "/" else z3.URem(a, b)
    if checked:
        if expr.op == "+":
            safe.append(z3.BVAddNoOverflow(a, b, kind.signed))
            if kind.signed:
                safe.append(z3.BVAddNoUnderflow(a, b))
        elif expr.op == "-":
            safe.append(z3.BVSubNoUnderflow(a, b, kind.signed))
            if kind.signed:
                safe.append(z3.BVSubNoOverflow(a, b))
        else:
            safe.append(z3.BVMulNoOverflow(a, b, kind.signed))
            if kind.signed:
                safe.append(z3.BVMulNoUnderflow(a, b))
    return a + b if expr.op == "+" else a - b if expr.op == "-" else a * b


def _extend(term: Any, source: Type, target: Type) -> Any:
    import z3

    if source.bits == target.bits:
        return term
    return (z3.SignExt if source.signed else z3.ZeroExt)(target.bits - source.bits, term)


def _same_width(a: Any, b: Any, signed: bool) -> tuple[Any, Any]:
    import z3

    ext = z3.SignExt if signed else z3.ZeroExt
    if a.size() < b.size():
        a = ext(b.size() - a.size(), a)
    elif b.size() < a.size():
        b = ext(a.size() - b.size(), b)
    return a, b


# --- nests ----------------------------------------------------------------------------------


@dataclass
class Level:
    """One ``if`` of a nest; ``unchecked`` opens an ``unchecked`` block around it (and so
    around every deeper level: Solidity does not nest unchecked blocks)."""

    cond: Cmp
    family: str
    unchecked: bool = False


@dataclass
class Cell:
    """A cell of the grid, its nest and what the generator meant it to be."""

    id: int
    levels: list[Level]
    intended: str  # "feasible" or "infeasible"
    witness: dict[str, int] = field(default_factory=dict)
    line: int = 0  # the line of its ``emit AssertionFailed``

    def contexts(self) -> list[bool]:
        """Per level: whether it is evaluated with checked arithmetic."""
        checked, out = True, []
        for level in self.levels:
            checked = checked and not level.unchecked
            out.append(checked)
        return out

    def fires(self, env: dict[str, int]) -> bool:
        """Whether entering the cell with ``env`` runs its body; raise Revert if it reverts."""
        for level, checked in zip(self.levels, self.contexts()):
            if not evaluate(level.cond, env, checked):
                return False
        return True

    def z3_terms(self, env: dict[str, Any]) -> tuple[Any, Any]:
        """(the body runs, entering does not revert) as z3 formulas over ``env``."""
        import z3

        fires: list[Any] = []
        passes_levels: list[Any] = []
        for level, checked in zip(self.levels, self.contexts()):
            safe: list[Any] = []
            cond = to_z3(level.cond, env, checked, safe)
            passes_levels.append((z3.And(*safe) if safe else z3.BoolVal(True), cond))
            fires += safe + [cond]
        # No revert: each level evaluated is safe, and a level is evaluated only when the
        # one above held.
        passes: Any = z3.BoolVal(True)
        for safe_term, cond in reversed(passes_levels):
            passes = z3.And(safe_term, z3.Implies(cond, passes))
        return z3.And(*fires), passes


# --- families -------------------------------------------------------------------------------


class Retry(Exception):
    """The family could not make a comparison the witness satisfies; try another."""


class NestBuilder:
    """Draws witness values and comparisons that hold for them (see the module docstring)."""

    def __init__(self, rng: random.Random, min_moves: int) -> None:
        self.rng = rng
        self.w: dict[str, int] = {}
        self.min_moves = min_moves
        self.checked = True

    # values

    def draw(self, kind: Type, size: str = "") -> int:
        size = size or self.rng.choice(("small", "medium", "medium", "large"))
        if size == "small":
            span = 1000
        elif size == "medium":
            span = 1 << self.rng.choice((16, 24, 32))
        else:
            span = 1 << kind.bits
        if kind.signed:
            value = self.rng.randrange(-(span // 2), span // 2) if span < (1 << kind.bits) \
                else self.rng.randrange(kind.lo, kind.hi + 1)
        else:
            value = self.rng.randrange(0, min(span, 1 << kind.bits))
        return value

    def value(self, name: str, size: str = "") -> int:
        if name not in self.w:
            if name == "moves":
                self.w[name] = self.min_moves + 2 * self.rng.randrange(0, 12)
            else:
                self.w[name] = self.draw(TYPES[name], size)
        return self.w[name]

    def param(self, signed: bool | None = None, bits: int | None = None,
              fresh: bool = False) -> str:
        names = [n for n, t in PARAMS if (signed is None or t.signed == signed)
                 and (bits is None or t.bits == bits) and not (fresh and n in self.w)]
        if not names:
            raise Retry("no such parameter")
        # Prefer arguments an earlier level already constrained: levels then interact.
        used = [n for n in names if n in self.w]
        if used and not fresh and self.rng.random() < 0.4:
            return self.rng.choice(used)
        return self.rng.choice(names)

    def eval(self, expr: Expr) -> int:
        try:
            return int(evaluate(expr, self.w, self.checked))
        except Revert as exc:
            raise Retry(str(exc)) from None

    def lit(self, value: int, kind: Type) -> Const:
        if not kind.fits(value):
            raise Retry("constant does not fit")
        return Const(value, kind)

    def true_cmp(self, left: Expr, right: Expr, ops: tuple[str, ...] = ()) -> Cmp:
        """A comparison of ``left`` and ``right`` the witness satisfies."""
        a, b = self.eval(left), self.eval(right)
        choices = [op for op in (ops or tuple(_COMPARE)) if _COMPARE[op](a, b)]
        if not choices:
            raise Retry("no comparison holds")
        return Cmp(self.rng.choice(choices), left, right)

    def bound(self, expr: Expr, strict_only: bool = False) -> Cmp:
        """``expr OP K`` with K a literal near the witness's value (the side that holds)."""
        kind, v = expr.type, self.eval(expr)
        gap = self.rng.choice((1, 7, 100, 1 << 20, 1 << 64))
        if self.rng.random() < 0.5 and kind.fits(v - gap):
            return Cmp(self.rng.choice((">", ">=") if not strict_only else (">",)),
                       expr, self.lit(v - gap, kind))
        if kind.fits(v + gap):
            return Cmp(self.rng.choice(("<", "<=") if not strict_only else ("<",)),
                       expr, self.lit(v + gap, kind))
        raise Retry("no room for a bound")


def fam_linear_magic(b: NestBuilder) -> Level:
    """``a * p + c == K``: one argument, a magic constant."""
    name = b.param()
    kind = TYPES[name]
    b.value(name)
    a = b.rng.choice((1, 2, 3, 5, 7, 13, 27, 1000))
    if kind.signed and b.rng.random() < 0.3:
        a = -a
    expr: Expr = Var(name) if a == 1 else Bin("*", b.lit(a, kind), Var(name))
    c = b.rng.choice((0, 5, 10, 77, 4096, 1 << 40))
    if c:
        expr = Bin(b.rng.choice(("+", "-")), expr, b.lit(c, kind))
    return Level(Cmp("==", expr, b.lit(b.eval(expr), expr.type)), "linear")


def fam_linear_pair(b: NestBuilder) -> Level:
    """``p == c + q``: two arguments tied by an offset."""
    signed = b.rng.random() < 0.25
    p, q = b.param(signed), b.param(signed)
    if p == q:
        raise Retry("same parameter")
    vp, vq = b.value(p, "medium"), b.value(q, "medium")
    diff = vp - vq
    if diff >= 0 or signed:
        right: Expr = Bin("+", b.lit(diff, TYPES[q]), Var(q)) if diff else Var(q)
        return Level(Cmp("==", Var(p), right), "linear")
    return Level(Cmp("==", Bin("+", Var(p), b.lit(-diff, TYPES[p])), Var(q)), "linear")


def fam_linear_ineq(b: NestBuilder) -> Level:
    """``p > k * q``, ``p + q < K``, ``p < K``: inequalities over one or two arguments."""
    shape = b.rng.randrange(3)
    if shape == 0:
        signed = b.rng.random() < 0.25
        p, q = b.param(signed), b.param(signed)
        b.value(p), b.value(q, "small")
        k = b.rng.choice((2, 3, 27, 100, 1000))
        return Level(b.true_cmp(Var(p), Bin("*", b.lit(k, TYPES[q]), Var(q)),
                                ("<", "<=", ">", ">=")), "linear")
    if shape == 1:
        signed = b.rng.random() < 0.25
        p, q = b.param(signed), b.param(signed)
        b.value(p, "medium"), b.value(q, "medium")
        return Level(b.bound(Bin("+", Var(p), Var(q))), "linear")
    p = b.param()
    b.value(p)
    return Level(b.bound(Var(p)), "linear")


def fam_product(b: NestBuilder) -> Level:
    """``p * q == K``: a product of two arguments."""
    signed = b.rng.random() < 0.2
    p, q = b.param(signed), b.param(signed)
    if p == q:
        raise Retry("same parameter")
    b.value(p, b.rng.choice(("small", "medium"))), b.value(q, b.rng.choice(("small", "medium")))
    expr = Bin("*", Var(p), Var(q))
    return Level(Cmp("==", expr, b.lit(b.eval(expr), expr.type)), "non-linear")


def fam_square(b: NestBuilder) -> Level:
    """``p * p + c == K``."""
    p = b.param()
    b.value(p, b.rng.choice(("small", "medium")))
    expr: Expr = Bin("*", Var(p), Var(p))
    c = b.rng.choice((0, 10, 12345))
    if c:
        expr = Bin("+", expr, b.lit(c, expr.type))
    return Level(Cmp("==", expr, b.lit(b.eval(expr), expr.type)), "non-linear")


def fam_remainder(b: NestBuilder) -> Level:
    """``p % m == r`` or ``(p + q) % m == r``."""
    p = b.param(signed=False)
    m = b.rng.choice((3, 17, 256, 1000, 65521, 1 << 32))
    expr: Expr = Var(p)
    b.value(p)
    if b.rng.random() < 0.4:
        q = b.param(signed=False)
        b.value(q, "medium")
        expr = Bin("+", Var(p), Var(q))
    expr = Bin("%", expr, b.lit(m, expr.type))
    return Level(Cmp("==", expr, b.lit(b.eval(expr), expr.type)), "non-linear")


def fam_wrapping(b: NestBuilder) -> Level:
    """Arithmetic that wraps, inside ``unchecked``: ``p4 > p4 * p6`` (uint64 products that
    overflow), ``p0 + p1 < p0``, a wrapped product equal to a constant."""
    b.checked = False
    shape = b.rng.randrange(3)
    if shape == 0:
        p, q = b.param(signed=False, bits=64), b.param(signed=False, bits=64)
        b.value(p, "large"), b.value(q, "large")
        return Level(b.true_cmp(Var(p), Bin("*", Var(p), Var(q)), (">", ">=", "<")),
                     "wrapping", unchecked=True)
    if shape == 1:
        p, q = b.param(signed=False, bits=256), b.param(signed=False, bits=256)
        b.value(p, "large"), b.value(q, "large")
        return Level(b.true_cmp(Bin("+", Var(p), Var(q)), Var(p), ("<", ">=")),
                     "wrapping", unchecked=True)
    p, q = b.param(signed=False, bits=64), b.param(signed=False)
    b.value(p, "large"), b.value(q, "large")
    expr = Bin("*", Var(p), Var(q))
    if expr.type.bits == 256 and b.rng.random() < 0.5:
        cast: Expr = Cast(U64, expr)
        return Level(Cmp("==", cast, b.lit(b.eval(cast), U64)), "wrapping", unchecked=True)
    return Level(Cmp("==", expr, b.lit(b.eval(expr), expr.type)), "wrapping", unchecked=True)


def fam_truncation(b: NestBuilder) -> Level:
    """Explicit conversions: ``uint64(p0) == K``, ``int256(p1) < 0``, ``uint256(p3) > K``."""
    shape = b.rng.randrange(3)
    if shape == 0:
        p = b.param(signed=False, bits=256)
        b.value(p, "large")
        cast: Expr = Cast(U64, Var(p))
        return Level(Cmp("==", cast, b.lit(b.eval(cast), U64)), "truncation")
    if shape == 1:
        p = b.param(signed=False, bits=256)
        b.value(p, "large")
        return Level(b.true_cmp(Cast(S256, Var(p)), b.lit(0, S256), ("<", ">=")),
                     "truncation")
    p = b.param(signed=True)
    b.value(p)
    return Level(b.bound(Cast(U256, Var(p))), "truncation")


def fam_signed(b: NestBuilder) -> Level:
    """Signed arithmetic: ``p3 * -7 == K``, ``p3 - p7 < K``, ``p7 / 3 == K``."""
    p, q = "p3", "p7"
    if b.rng.random() < 0.5:
        p, q = q, p
    shape = b.rng.randrange(3)
    if shape == 0:
        b.value(p)
        expr: Expr = Bin("*", Var(p), b.lit(b.rng.choice((-7, -3, 5, -1000)), S256))
        return Level(Cmp("==", expr, b.lit(b.eval(expr), S256)), "signed")
    if shape == 1:
        b.value(p, "medium"), b.value(q, "medium")
        return Level(b.bound(Bin("-", Var(p), Var(q))), "signed")
    b.value(p)
    expr = Bin("/", Var(p), b.lit(b.rng.choice((3, -5, 1000)), S256))
    return Level(Cmp("==", expr, b.lit(b.eval(expr), S256)), "signed")


def fam_storage(b: NestBuilder) -> Level:
    """Storage in the comparison: ``p == memo + c``, ``memo % m == r``, ``moves >= k``."""
    shape = b.rng.randrange(3)
    if shape == 0:
        p = b.param(signed=False)
        b.value("memo", "medium"), b.value(p, "medium")
        diff = b.w[p] - b.w["memo"]
        if diff >= 0:
            right: Expr = Bin("+", Var("memo"), b.lit(diff, U256)) if diff else Var("memo")
            return Level(Cmp("==", Var(p), right), "storage")
        return Level(Cmp("==", Bin("+", Var(p), b.lit(-diff, TYPES[p])), Var("memo")),
                     "storage")
    if shape == 1:
        b.value("memo")
        expr = Bin("%", Var("memo"), b.lit(b.rng.choice((97, 1000, 1 << 20)), U256))
        return Level(Cmp("==", expr, b.lit(b.eval(expr), U256)), "storage")
    moves = b.value("moves")
    k = b.rng.randrange(1, moves + 1)
    return Level(Cmp(">=", Var("moves"), b.lit(k, U256)), "storage")


FAMILIES = (
    (fam_linear_magic, 3), (fam_linear_pair, 2), (fam_linear_ineq, 2), (fam_product, 2),
    (fam_square, 1), (fam_remainder, 1), (fam_wrapping, 2), (fam_truncation, 1),
    (fam_signed, 2), (fam_storage, 2),
)
"""Feasible comparison families and their weights."""


def infeasible_levels(b: NestBuilder, room: int) -> list[Level]:
    """One contradiction, as one level or (``room`` >= 2) two."""
    shapes = ["square", "remainder", "range", "parity"] + (["between", "cycle"] * 2
                                                           if room >= 2 else [])
    shape = b.rng.choice(shapes)
    if shape == "between":  # p > K inside p < K' with K' <= K + 1
        p = b.param(fresh=True)
        kind = TYPES[p]
        k = b.draw(kind, "small") + (0 if kind.signed else 2)
        low = Level(Cmp(">", Var(p), b.lit(k, kind)), "contradiction")
        high = Level(Cmp("<", Var(p), b.lit(k - b.rng.randrange(0, 60), kind)), "contradiction")
        return [low, high] if b.rng.random() < 0.5 else [high, low]
    if shape == "cycle":  # p == q + c and q == p + d, c, d > 0
        p, q = b.param(signed=False, fresh=True), b.param(signed=False, fresh=True)
        if p == q or TYPES[p] != TYPES[q]:
            raise Retry("need two parameters of one type")
        kind = TYPES[p]
        c, d = b.rng.randrange(1, 1000), b.rng.randrange(1, 1000)
        return [Level(Cmp("==", Var(p), Bin("+", Var(q), b.lit(c, kind))), "contradiction"),
                Level(Cmp("==", Var(q), Bin("+", Var(p), b.lit(d, kind))), "contradiction")]
    if shape == "square":  # squares are 0 or 1 mod 4, wrapped or not
        p = b.param(signed=False, bits=256, fresh=True)
        n = 4 * b.rng.randrange(1, 10**6) + b.rng.choice((2, 3))
        level = Level(Cmp("==", Bin("*", Var(p), Var(p)), b.lit(n, U256)), "contradiction")
        level.unchecked = b.rng.random() < 0.3
        return [level]
    if shape == "remainder":
        p = b.param(signed=False, fresh=True)
        m = b.rng.choice((7, 100, 4096))
        kind = TYPES[p]
        return [Level(Cmp("==", Bin("%", Var(p), b.lit(m, kind)),
                          b.lit(m + b.rng.randrange(0, 50), kind)), "contradiction")]
    if shape == "range":  # a product of two uint64 above (2**64 - 1)**2
        p, q = b.param(bits=64, fresh=True), b.param(bits=64, fresh=True)
        if p == q:
            raise Retry("same parameter")
        return [Level(Cmp(">", Bin("*", Cast(U256, Var(p)), Var(q)),
                          b.lit(((1 << 64) - 1) ** 2, U256)), "contradiction")]
    p = b.param(signed=False, fresh=True)  # parity: 2 * p is even, wrapped or not
    kind = TYPES[p]
    level = Level(Cmp("==", Bin("*", b.lit(2, kind), Var(p)),
                      b.lit(2 * b.rng.randrange(0, 10**9) + 1, kind)), "contradiction")
    level.unchecked = b.rng.random() < 0.3
    return [level]


def make_nest(rng: random.Random, min_moves: int, infeasible: bool) -> tuple[list[Level],
                                                                               dict[str, int]]:
    """A nest of one to three levels (see the module docstring) and its witness."""
    for _ in range(200):
        builder = NestBuilder(rng, min_moves)
        depth = rng.choice((1, 2, 2, 3, 3))
        try:
            bad: list[Level] = []
            if infeasible:
                bad = infeasible_levels(builder, depth)
                depth = max(depth, len(bad))
            levels: list[Level] = []
            for _ in range(depth - len(bad)):
                family = rng.choices([f for f, _ in FAMILIES], [w for _, w in FAMILIES])[0]
                before = dict(builder.w)
                saved = builder.checked
                try:
                    levels.append(family(builder))
                except Retry:
                    builder.w, builder.checked = before, saved
                    raise
            if bad:
                at = rng.randrange(0, len(levels) + 1)
                levels[at:at] = bad
            # A level evaluated inside an earlier level's unchecked block is unchecked too;
            # the witness must satisfy the nest as Solidity evaluates it.
            cell = Cell(0, levels, "infeasible" if infeasible else "feasible")
            if not infeasible and not cell.fires(builder.w):
                continue
            return levels, dict(sorted(builder.w.items()))
        except (Retry, Revert):
            continue
    raise RuntimeError("no nest after 200 attempts")


# --- the grid -------------------------------------------------------------------------------


@dataclass
class Maze:
    """A generated maze: its walls, cells and Solidity source."""

    seed: int
    size: int
    open: list[int]  # per cell: bit d set when the move in DIRECTIONS[d] is open
    cells: list[Cell]
    source: str = ""

    def neighbour(self, cell: int, direction: int) -> int | None:
        x, y = cell % self.size, cell // self.size
        dx, dy = ((0, -1), (0, 1), (1, 0), (-1, 0))[direction]
        nx, ny = x + dx, y + dy
        if 0 <= nx < self.size and 0 <= ny < self.size:
            return ny * self.size + nx
        return None

    def exits(self, cell: int) -> list[tuple[int, int]]:
        """(direction, next cell) of the open walls of ``cell``."""
        out = []
        for d in range(4):
            nxt = self.neighbour(cell, d)
            if nxt is not None and self.open[cell] >> d & 1:
                out.append((d, nxt))
        return out

    def paths(self) -> dict[int, list[tuple[int, int]]]:
        """Shortest path (list of (direction, cell entered)) from the start to every cell."""
        best: dict[int, list[tuple[int, int]]] = {0: []}
        queue = deque([0])
        while queue:
            here = queue.popleft()
            for d, nxt in self.exits(here):
                if nxt not in best:
                    best[nxt] = best[here] + [(d, nxt)]
                    queue.append(nxt)
        return best

    def entry_moves(self, cell: int) -> int:
        """The fewest successful moves before (and including) one that enters ``cell``."""
        path = self.paths().get(cell)
        if path is None:
            return -1
        return len(path) if cell != 0 else 2


def carve(rng: random.Random, size: int, extra: float) -> list[int]:
    """Open walls along a random spanning tree (randomised depth-first search from the
    start), then open a share ``extra`` of the walls left closed."""
    cells = size * size
    opened = [0] * cells
    maze = Maze(0, size, opened, [])
    seen, stack = {0}, [0]
    while stack:
        here = stack[-1]
        choices = [(d, n) for d in range(4) if (n := maze.neighbour(here, d)) is not None
                   and n not in seen]
        if not choices:
            stack.pop()
            continue
        d, nxt = rng.choice(choices)
        opened[here] |= 1 << d
        opened[nxt] |= 1 << (d ^ 1)  # North<->South, East<->West
        seen.add(nxt)
        stack.append(nxt)
    closed = [(c, d) for c in range(cells) for d in (1, 2)
              if maze.neighbour(c, d) is not None and not opened[c] >> d & 1]
    for c, d in rng.sample(closed, round(extra * len(closed))):
        nxt = maze.neighbour(c, d)
        assert nxt is not None
        opened[c] |= 1 << d
        opened[nxt] |= 1 << (d ^ 1)
    return opened


def generate(seed: int, size: int = 5, infeasible_share: float = 0.2,
             extra_openings: float = 0.15) -> Maze:
    """The maze of ``seed`` (deterministic), its source included."""
    if not 2 <= size <= 16:
        raise ValueError("size must be between 2 and 16 (at most 256 assertions)")
    rng = random.Random(f"secant-maze-{GENERATOR_VERSION}-{seed}-{size}")
    opened = carve(rng, size, extra_openings)
    maze = Maze(seed, size, opened, [])
    count = size * size
    bad = set(rng.sample(range(count), round(infeasible_share * count)))
    for cell in range(count):
        levels, witness = make_nest(rng, maze.entry_moves(cell), cell in bad)
        maze.cells.append(Cell(cell, levels, "infeasible" if cell in bad else "feasible",
                               witness if cell not in bad else {}))
    maze.source = render(maze)
    return maze


# --- Solidity -------------------------------------------------------------------------------


def render(maze: Maze) -> str:
    """The maze contract; sets each cell's ``line``."""
    args = ", ".join(f"{t.name} {n}" for n, t in PARAMS)
    names = ", ".join(n for n, _ in PARAMS)
    walls = sum(bits << (4 * c) for c, bits in enumerate(maze.open))
    lines = [
        "// SPDX-License-Identifier: MIT",
        f"// A maze of the maze benchmark, generated by bench/maze_gen.py (version "
        f"{GENERATOR_VERSION}, seed {maze.seed}, size {maze.size}): do not edit.",
        "pragma solidity ^0.8.20;",
        "",
        "contract Maze {",
        "    event AssertionFailed(uint256 id);",
        "",
        f"    uint256 public constant SIZE = {maze.size};",
        "    /// 4 bits per cell: north, south, east, west (set: open).",
        f"    uint256 internal constant OPEN = 0x{walls:x};",
        "",
        "    uint256 public pos;",
        "    uint256 public moves;",
        "    uint256 public memo;",
        "    uint256 public foundMask;",
        "",
        "    function stash(uint256 value) external {",
        "        memo = value;",
        "    }",
        "",
    ]
    for d, name in enumerate(DIRECTIONS):
        lines += [
            f"    function move{name}({args}) external {{",
            f"        _enter(_step({d}), {names});",
            "    }",
            "",
        ]
    lines += [
        "    function _step(uint256 dir) internal returns (uint256 next) {",
        "        uint256 here = pos;",
        '        require((OPEN >> (4 * here + dir)) & 1 == 1, "wall");',
        "        if (dir == 0) next = here - SIZE;",
        "        else if (dir == 1) next = here + SIZE;",
        "        else if (dir == 2) next = here + 1;",
        "        else next = here - 1;",
        "        pos = next;",
        "        moves += 1;",
        "    }",
        "",
        f"    function _enter(uint256 cell, {args}) internal {{",
    ]
    for cell in maze.cells:
        head = "if" if cell.id == 0 else "} else if"
        lines.append(f"        {head} (cell == {cell.id}) {{")
        indent = 3
        closers = []
        opened = False
        for level in cell.levels:
            pad = "    " * indent
            if level.unchecked and not opened:
                opened = True
                lines.append(f"{pad}unchecked {{")
                closers.append(pad + "}")
                indent += 1
                pad = "    " * indent
            lines.append(f"{pad}if ({level.cond.sol()}) {{")
            closers.append(pad + "}")
            indent += 1
        pad = "    " * indent
        lines.append(f"{pad}foundMask |= uint256(1) << {cell.id};")
        lines.append(f"{pad}emit AssertionFailed({cell.id});")
        cell.line = len(lines)
        lines += list(reversed(closers))
    lines += ["        }", "    }", "}", ""]
    return "\n".join(lines)


# --- ground truth ---------------------------------------------------------------------------


def z3_env() -> dict[str, Any]:
    import z3

    return {name: z3.BitVec(name, kind.bits) for name, kind in TYPES.items()}


def _model_values(model: Any, env: dict[str, Any]) -> dict[str, int]:
    out = {}
    for name, term in env.items():
        value = model.eval(term, model_completion=True).as_long()
        out[name] = TYPES[name].wrap(value)
    return out


def pass_args(cell: Cell, memo: int, moves: int, timeout_ms: int = 20_000) -> dict[str, int]:
    """Arguments with which entering ``cell`` does not revert, given ``memo`` and ``moves``."""
    env = {"memo": memo, "moves": moves}
    for candidate in ({}, {n: 1 for n, _ in PARAMS}, cell.witness):
        trial = {**{n: 0 for n, _ in PARAMS}, **candidate, **env}
        try:
            cell.fires(trial)
            return {n: trial[n] for n, _ in PARAMS}
        except Revert:
            continue
    import z3

    terms = z3_env()
    _, passes = cell.z3_terms(terms)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(passes, terms["memo"] == memo, terms["moves"] == moves)
    if solver.check() != z3.sat:
        raise RuntimeError(f"cell {cell.id}: no arguments pass it")
    values = _model_values(solver.model(), terms)
    return {n: values[n] for n, _ in PARAMS}


def abi_args(values: dict[str, int]) -> list[int]:
    """The eight arguments of a move, in order."""
    return [values.get(n, 0) for n, _ in PARAMS]


def witness_sequence(maze: Maze, cell: Cell, witness: dict[str, int]) -> list[dict[str, Any]]:
    """Transactions from the deployed maze that fire ``cell``'s assertion with ``witness``."""
    path = maze.paths()[cell.id]
    if cell.id == 0:
        d, nxt = maze.exits(0)[0]
        path = [(d, nxt), (d ^ 1, 0)]
    final = path[-1]
    approach = path[:-1]
    prev = approach[-1][1] if approach else 0
    bounces, odd = divmod(witness.get("moves", len(path)) - len(path), 2)
    if bounces < 0 or odd:
        raise RuntimeError(f"cell {cell.id}: no walk makes moves {witness.get('moves')}")
    others = [e for e in maze.exits(prev) if e[1] != cell.id] or maze.exits(prev)
    out_d, out_cell = others[0]
    route = list(approach) + [(out_d, out_cell), (out_d ^ 1, prev)] * bounces + [final]
    memo = witness.get("memo", 0)
    txs: list[dict[str, Any]] = []
    if memo:
        txs.append({"function": "stash(uint256)", "args": [memo]})
    for count, (d, entered) in enumerate(route, 1):
        fn = f"move{DIRECTIONS[d]}{MOVE_SIGNATURE}"
        if count == len(route):
            values = witness
        else:
            values = pass_args(maze.cells[entered], memo, count)
        txs.append({"function": fn, "args": abi_args(values)})
    return txs


def decide(maze: Maze, cell: Cell, timeout_ms: int = 60_000,
           witness: dict[str, int] | None = None) -> tuple[str, dict[str, int] | None, float]:
    """z3's verdict on ``cell``'s assertion: ``sat``, ``unsat`` or ``unknown``, a model
    (values of every argument, ``memo`` and ``moves``) when sat, and the seconds it took.

    With ``witness``, z3 checks the nest with the witness's values fixed (a check of the
    encoding against the evaluator, instant); without, it searches for a model.
    """
    import z3

    env = z3_env()
    fires, _ = cell.z3_terms(env)
    entry = maze.entry_moves(cell.id)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    # A walk from the start to a cell has the parity of its distance (the grid is
    # bipartite) and can be lengthened two moves at a time, back and forth.
    bounces = z3.BitVec("bounces", 256)
    solver.add(fires, env["moves"] == entry + 2 * bounces, z3.ULE(bounces, 1 << 31))
    if witness is not None:
        solver.add(*[env[name] == z3.BitVecVal(value % (1 << TYPES[name].bits),
                                               TYPES[name].bits)
                     for name, value in witness.items()])
    started = time.perf_counter()
    verdict = str(solver.check())
    seconds = time.perf_counter() - started
    model = _model_values(solver.model(), env) if verdict == "sat" else None
    return verdict, model, seconds


def classify(maze: Maze, timeout_ms: int = 60_000) -> dict[str, Any]:
    """The ground truth of every assertion (see the module docstring), JSON-ready.

    A nest the generator built around a witness is feasible when the evaluator says the
    witness fires it, and z3 must agree on that witness (``z3: sat`` on the witness's
    values). Every other nest is decided by z3 alone: ``unsat`` is infeasible, a model
    (checked by the evaluator) feasible, a timeout unknown.
    """
    paths = maze.paths()
    out = []
    for cell in maze.cells:
        entry = maze.entry_moves(cell.id)
        witness: dict[str, int] | None = None
        if cell.witness:
            full = {**{n: 0 for n in TYPES}, "moves": entry, **cell.witness}
            try:
                witness = full if cell.fires(full) else None
            except Revert:
                witness = None
        if witness is not None:
            verdict, _, seconds = decide(maze, cell, timeout_ms, witness)
            if verdict != "sat":
                raise RuntimeError(f"maze {maze.seed} cell {cell.id}: the witness fires it but "
                                   f"z3 says {verdict} on it: the z3 encoding is wrong")
            source = "generator"
        else:
            verdict, model, seconds = decide(maze, cell, timeout_ms)
            source = "z3"
            if model is not None:
                if not cell.fires(model):
                    raise RuntimeError(f"maze {maze.seed} cell {cell.id}: z3's model does "
                                       f"not fire it: the z3 encoding is wrong")
                witness = model
        feasible = True if witness is not None else False if verdict == "unsat" else None
        reachable = cell.id in paths
        entry_json: dict[str, Any] = {
            "id": cell.id, "cell": [cell.id % maze.size, cell.id // maze.size],
            "line": cell.line, "intended": cell.intended,
            "levels": [{"condition": lv.cond.sol(), "family": lv.family,
                        "unchecked": checked is False}
                       for lv, checked in zip(cell.levels, cell.contexts())],
            "z3": verdict, "z3_on": "witness" if source == "generator" else "search",
            "z3_seconds": round(seconds, 3),
            "feasible": feasible, "reachable": reachable, "entry_moves": entry,
        }
        if witness is not None and reachable:
            entry_json["witness"] = {k: str(v) for k, v in witness.items()}
            entry_json["witness_from"] = source
            entry_json["sequence"] = [
                {"function": tx["function"], "args": [str(a) for a in tx["args"]]}
                for tx in witness_sequence(maze, cell, witness)]
        out.append(entry_json)
    feasible = sum(1 for a in out if a["feasible"] and a["reachable"])
    infeasible = sum(1 for a in out if a["feasible"] is False or not a["reachable"])
    return {
        "generator_version": GENERATOR_VERSION, "seed": maze.seed, "size": maze.size,
        "contract": "Maze", "solc": SOLC_VERSION,
        "move_functions": [f"move{d}{MOVE_SIGNATURE}" for d in DIRECTIONS],
        "open": maze.open, "start": 0,
        "assertions": out, "feasible": feasible, "infeasible": infeasible,
        "unknown": len(out) - feasible - infeasible,
    }


def write(maze: Maze, folder: Path, timeout_ms: int = 60_000) -> tuple[Path, Path]:
    """``folder/Maze.sol`` and its ground truth ``folder/Maze.json`` (reused when present for
    the same generator version, seed and source)."""
    folder.mkdir(parents=True, exist_ok=True)
    sol, truth = folder / "Maze.sol", folder / "Maze.json"
    if sol.is_file() and truth.is_file() and sol.read_text(encoding="utf-8") == maze.source:
        try:
            data = json.loads(truth.read_text(encoding="utf-8"))
            if data.get("generator_version") == GENERATOR_VERSION:
                return sol, truth
        except ValueError:
            pass
    sol.write_text(maze.source, encoding="utf-8")
    truth.write_text(json.dumps(classify(maze, timeout_ms), indent=1) + "\n", encoding="utf-8")
    return sol, truth
