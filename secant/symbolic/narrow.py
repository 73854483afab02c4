"""A query over 256-bit words rewritten at the widths its values need.

A flip query does its arithmetic on 256-bit words even when every input is a ``uint64`` or
a small number: bit-blasted, each 256-bit multiplication or division is tens of thousands
of gates, and solc's overflow checks add another. z3 does not shrink them by itself. Here a
term is rewritten bottom-up as an extension of a narrower term: a value ``V`` of width
``F`` is held as a ``w``-bit term ``n`` with ``V = ZeroExt(F - w, n)`` (*unsigned* form)
or ``V = SignExt(F - w, n)`` (*signed* form). Constants take the width of their value,
``Concat(0, x)`` and masks take the width of ``x``, comparisons and equalities compare the
narrow terms (zero and sign extension are injective and keep both orders once the forms
agree), and arithmetic happens at a narrow width in one of two modes:

* **exact**: at the width that always holds the result (a sum one bit wider than its
  operands, a product as wide as both together, a difference signed). The rewritten query
  has exactly the models of the original: its ``unsat`` is still a proof.
* **guarded** (an under-approximation): at the wider operand's width, under a guard that
  the operation does not overflow there (``bvumul_noovfl`` and its kin). Every model of the
  rewritten query is a model of the original; a model that needs a wrapped intermediate is
  lost. A product equal to a 31-bit constant behind solc's overflow check is solved this
  way in hundredths of a second where the 256-bit query runs out of six million resource
  units.

*Narrowed* variables are 256-bit inputs replaced by ``width``-bit ones (zero- or
sign-extended), as in the first tries of a query (:mod:`secant.symbolic.solve`).

A guard is kept with each term (``G`` implies that the term's value is the narrow form's)
and conjoined at the top of each constraint, under ``If`` where the term sits in one arm of
an ``If`` (``If(b == 0, 0, a / b)`` guards its division only when ``b`` is not 0).
An operation the rewrite does not know is rebuilt over its operands' full-width values,
so the result is never wrong, only less narrow.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import z3

from secant.symbolic.numerals import bv_const, bv_int

__all__ = ["Narrowing", "narrowed"]


@dataclass(frozen=True)
class _Form:
    """A bit-vector value of width ``full`` as the extension of ``term``.

    ``guard`` (None: true) implies that the value is ``term`` extended; ``signed`` says how
    it is extended (irrelevant when ``term`` is as wide as the value). ``factors``: the
    value is the product of these two forms (same signedness), which never wraps: their
    widths sum to at most ``full``, or a fact of the query says so (``_Rewriter.learn``).
    An equality with a constant is then solved at the constant's width.
    """

    term: Any
    signed: bool
    full: int
    guard: Any = None
    factors: tuple[_Form, _Form] | None = None

    @property
    def width(self) -> int:
        """The narrow term's width."""
        return int(self.term.size())

    def extended(self, width: int) -> Any:
        """The low ``width`` bits of the value (``width`` at least the narrow width)."""
        if width == self.width:
            return self.term
        extend = z3.SignExt if self.signed else z3.ZeroExt
        return extend(width - self.width, self.term)

    def low(self, width: int) -> Any:
        """The value's low ``width`` bits (any width up to ``full``)."""
        if width <= self.width:
            return self.term if width == self.width else z3.Extract(width - 1, 0, self.term)
        return self.extended(width)

    def widened(self, full: int, signed: bool | None = None, guard: Any = None) -> _Form:
        """The same narrow term as a value of width ``full``.

        ``signed`` and ``guard`` replace this form's when given; the factors stay while
        the product still cannot wrap at that width.
        """
        factors = self.factors
        if factors is not None and factors[0].width + factors[1].width > full:
            factors = None
        return replace(self, full=full, signed=self.signed if signed is None else signed,
                       guard=self.guard if guard is None else guard, factors=factors)

    def as_signed(self) -> _Form | None:
        """The same value in signed form, or None when that needs the full width."""
        if self.signed:
            return self
        if self.width + 1 > self.full:
            return None
        return _Form(z3.ZeroExt(1, self.term), True, self.full, self.guard)


@dataclass(frozen=True)
class _Truth:
    """A formula with its guard (None: true): ``guard`` implies ``formula`` == the original."""

    formula: Any
    guard: Any = None

    def constraint(self) -> Any:
        """The formula under its guard."""
        return self.formula if self.guard is None else z3.And(self.guard, self.formula)


@dataclass(frozen=True)
class Narrowing:
    """A rewritten query.

    ``constraints`` and ``guarded`` hold the rewrites of the given ones, in order;
    ``variables`` maps each narrowed variable to the narrow one's name and whether it is
    sign-extended.
    """

    constraints: list[Any]
    guarded: list[Any]
    variables: dict[str, tuple[str, bool]]


def narrowed(constraints: Sequence[Any], guarded: Sequence[Any] = (), *,
             variables: Mapping[str, bool] | None = None, width: int = 256,
             exact: bool = True, factor_bits: int | None = None) -> Narrowing:
    """``constraints`` and ``guarded`` rewritten at narrow widths (module docstring).

    ``variables`` maps the 256-bit variables to narrow to ``width`` bits to whether they are
    signed; ``exact`` chooses the mode. With no variables and ``exact`` the rewritten
    constraints are equivalent to the given ones. ``factor_bits`` (guarded mode only):
    a product equal to a constant, as a conjunct every model satisfies, is admitted only
    with a factor below ``2**factor_bits``, found by trial division (:meth:`_Rewriter.
    conjunct`): z3 finds no factorisation of a 63-bit constant at its width within six
    million units, but most numbers have a small divisor (a product of two large primes
    is left to the tries without it).
    """
    rewriter = _Rewriter(dict(variables or {}), width, exact, factor_bits)
    rewritten = []
    for constraint in constraints:
        parts = [rewriter.conjunct(part).constraint() for part in _conjuncts(constraint)]
        rewritten.append(parts[0] if len(parts) == 1 else z3.And(*parts))
        rewriter.learn(constraint)
    return Narrowing(rewritten,
                     [rewriter.truth(c).constraint() for c in guarded],
                     {name: (rewriter.narrow_name(name), signed)
                      for name, signed in sorted((variables or {}).items())})


def _and(*guards: Any) -> Any:
    present = [g for g in guards if g is not None and not z3.is_true(g)]
    if not present:
        return None
    return present[0] if len(present) == 1 else z3.And(*present)


def _constant(value: int, full: int) -> _Form:
    if value >> (full - 1) == 0:
        width = max(1, value.bit_length())
        return _Form(bv_const(value, width), False, full)
    negative = value - (1 << full)
    width = min(full, (~negative).bit_length() + 1)
    return _Form(bv_const(negative & ((1 << width) - 1), width), True, full)


_Operation = Callable[[Any, Any], Any]
_ARITHMETIC: dict[int, _Operation] = {z3.Z3_OP_BADD: operator.add, z3.Z3_OP_BSUB: operator.sub,
                                      z3.Z3_OP_BMUL: operator.mul}
_UNSIGNED_DIVISION = frozenset({z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I})
_UNSIGNED_REMAINDER = frozenset({z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I})
_SIGNED_DIVISION = frozenset({z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I})
# z3's ``%`` on bit-vectors is ``bvsmod``, and its comparison operators are signed.
_SIGNED_REMAINDER: dict[int, _Operation] = {
    z3.Z3_OP_BSREM: z3.SRem, z3.Z3_OP_BSREM_I: z3.SRem,
    z3.Z3_OP_BSMOD: operator.mod, z3.Z3_OP_BSMOD_I: operator.mod}
_BITWISE: dict[int, _Operation] = {z3.Z3_OP_BAND: operator.and_, z3.Z3_OP_BOR: operator.or_,
                                   z3.Z3_OP_BXOR: operator.xor}
_UNSIGNED_ORDER: dict[int, _Operation] = {z3.Z3_OP_ULEQ: z3.ULE, z3.Z3_OP_ULT: z3.ULT,
                                          z3.Z3_OP_UGEQ: z3.UGE, z3.Z3_OP_UGT: z3.UGT}
_SIGNED_ORDER: dict[int, _Operation] = {z3.Z3_OP_SLEQ: operator.le, z3.Z3_OP_SLT: operator.lt,
                                        z3.Z3_OP_SGEQ: operator.ge, z3.Z3_OP_SGT: operator.gt}
_CONNECTIVES = frozenset({z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_NOT, z3.Z3_OP_IMPLIES,
                          z3.Z3_OP_XOR})
_NO_OVERFLOW = frozenset({z3.Z3_OP_BUMUL_NO_OVFL, z3.Z3_OP_BSMUL_NO_OVFL,
                          z3.Z3_OP_BSMUL_NO_UDFL})


class _Rewriter:
    """One query's rewrite (memoised on z3's term ids: a query is a DAG)."""

    def __init__(self, variables: dict[str, bool], width: int, exact: bool,
                 factor_bits: int | None = None) -> None:
        self.variables = variables
        self.width = width
        self.exact = exact
        self.factor_bits = factor_bits
        self.forms: dict[int, _Form] = {}
        self.truths: dict[int, _Truth] = {}
        # Equalities found to be the overflow check of a narrow product: its extension,
        # the product and the factors of the wide one (see learn).
        self.truncations: dict[int, tuple[Any, Any, tuple[_Form, _Form]]] = {}
        # Products a top-level fact says do not wrap (solc's check of a uint256 product).
        self.no_wrap: set[int] = set()

    @staticmethod
    def narrow_name(name: str) -> str:
        """The narrow variable standing for ``name``."""
        return f"{name}__narrow"

    # -- traversal -----------------------------------------------------------------------

    def truth(self, term: Any) -> _Truth:
        """The rewrite of a boolean term."""
        self._visit(term)
        return self.truths[term.get_id()]

    def form(self, term: Any) -> _Form:
        """The rewrite of a bit-vector term."""
        self._visit(term)
        return self.forms[term.get_id()]

    def _visit(self, root: Any) -> None:
        # Iterative post-order: path conditions nest deeper than Python's recursion limit.
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            term, ready = stack.pop()
            key = term.get_id()
            if key in self.forms or key in self.truths:
                continue
            children = term.children() if z3.is_app(term) else []
            if not ready:
                stack.append((term, True))
                stack.extend((child, False) for child in children
                             if child.get_id() not in self.forms
                             and child.get_id() not in self.truths)
                continue
            if z3.is_bool(term):
                self.truths[key] = self._truth(term)
            else:
                self.forms[key] = self._form(term)

    def _child_form(self, term: Any) -> _Form:
        return self.forms[term.get_id()]

    def _child_truth(self, term: Any) -> _Truth:
        return self.truths[term.get_id()]

    def _full(self, term: Any) -> tuple[Any, Any]:
        """A child's value at its full width, and the guard of that."""
        if z3.is_bool(term):
            truth = self._child_truth(term)
            return truth.formula, truth.guard
        form = self._child_form(term)
        return form.extended(form.full), form.guard

    def _rebuilt(self, term: Any) -> tuple[Any, Any]:
        """``term``'s operation over its operands' full-width values (the fallback)."""
        values, guards = zip(*(self._full(child) for child in term.children()), strict=True)
        return term.decl()(*values), _and(*guards)

    # -- bit-vectors ---------------------------------------------------------------------

    def _form(self, term: Any) -> _Form:
        full = int(term.size())
        if z3.is_bv_value(term):
            return _constant(bv_int(term), full)
        kind = term.decl().kind()
        if kind == z3.Z3_OP_UNINTERPRETED and term.num_args() == 0:
            name = term.decl().name()
            if name in self.variables and full > self.width:
                return _Form(z3.BitVec(self.narrow_name(name), self.width),
                             self.variables[name], full)
            return _Form(term, False, full)
        children = term.children()
        result: _Form | None = None
        if kind in _ARITHMETIC:
            result = self._fold(children, full, lambda a, b: self._arithmetic(kind, a, b, full))
            if result is not None and result.factors is None \
                    and term.get_id() in self.no_wrap:
                result = self._unwrapped(term, result)
        elif kind in _BITWISE:
            result = self._fold(children, full, lambda a, b: self._bitwise(kind, a, b, full))
        elif kind == z3.Z3_OP_BNEG:
            result = self._arithmetic(z3.Z3_OP_BSUB, _constant(0, full),
                                      self._child_form(children[0]), full)
        elif kind == z3.Z3_OP_BNOT:
            result = self._not(self._child_form(children[0]))
        elif kind in _UNSIGNED_DIVISION or kind in _UNSIGNED_REMAINDER:
            result = self._unsigned_division(kind, *map(self._child_form, children))
        elif kind in _SIGNED_DIVISION:
            result = self._signed_division(*map(self._child_form, children))
        elif kind in _SIGNED_REMAINDER:
            result = self._signed_remainder(kind, *map(self._child_form, children))
        elif kind == z3.Z3_OP_EXTRACT:
            high, low = term.params()
            result = self._extract(self._child_form(children[0]), high, low)
        elif kind == z3.Z3_OP_CONCAT:
            result = self._fold(children, full, self._concat, right_to_left=True)
        elif kind in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT):
            result = self._extension(self._child_form(children[0]), full,
                                     kind == z3.Z3_OP_SIGN_EXT)
        elif kind in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR, z3.Z3_OP_BASHR) \
                and z3.is_bv_value(children[1]):
            result = self._shift(kind, self._child_form(children[0]), bv_int(children[1]))
        elif kind == z3.Z3_OP_ITE:
            result = self._ite(children)
        if result is not None:
            return result
        value, guard = self._rebuilt(term)
        return _Form(value, False, full, guard)

    def _fold(self, children: Sequence[Any], full: int, combine: Any,
              right_to_left: bool = False) -> _Form | None:
        forms = [self._child_form(child) for child in children]
        if right_to_left:
            forms.reverse()
        result: _Form | None = forms[0]
        for form in forms[1:]:
            if result is None:
                return None
            result = combine(form, result) if right_to_left else combine(result, form)
        return result

    def _unify(self, a: _Form, b: _Form, signed: bool = False
               ) -> tuple[_Form, _Form] | None:
        """``a`` and ``b`` in the same form (signed when asked), or None: full width."""
        if signed or a.signed != b.signed:
            left, right = a.as_signed(), b.as_signed()
            if left is None or right is None:
                return None
            return left, right
        return a, b

    def _whole(self, a: _Form, b: _Form, full: int, operation: Any) -> _Form:
        """``operation`` on the full-width values: exact, never narrow."""
        return _Form(operation(a.extended(full), b.extended(full)), False, full,
                     _and(a.guard, b.guard))

    def _arithmetic(self, kind: int, a: _Form, b: _Form, full: int) -> _Form:
        operation = _ARITHMETIC[kind]
        pair = self._unify(a, b, signed=kind == z3.Z3_OP_BSUB and self.exact)
        if pair is None:
            return self._whole(a, b, full, operation)
        a, b = pair
        signed = a.signed
        if self.exact:
            width = a.width + b.width if kind == z3.Z3_OP_BMUL else max(a.width, b.width) + 1
        else:
            width = max(a.width, b.width)
        if width >= full:
            return self._whole(a, b, full, operation)
        x, y = a.extended(width), b.extended(width)
        guard = _and(a.guard, b.guard)
        if not self.exact:
            guard = _and(guard, _no_overflow(kind, x, y, signed))
        factors = (a, b) if kind == z3.Z3_OP_BMUL and a.width + b.width <= full else None
        return _Form(operation(x, y), signed, full, guard, factors)

    def _bitwise(self, kind: int, a: _Form, b: _Form, full: int) -> _Form:
        operation = _BITWISE[kind]
        guard = _and(a.guard, b.guard)
        if kind == z3.Z3_OP_BAND and not (a.signed and b.signed):
            # The bits above an unsigned operand's width are 0 in the result.
            width = min(f.width for f in (a, b) if not f.signed)
            return _Form(a.low(width) & b.low(width), False, full, guard)
        pair = self._unify(a, b)
        if pair is None:
            return self._whole(a, b, full, operation)
        a, b = pair
        width = max(a.width, b.width)
        return _Form(operation(a.extended(width), b.extended(width)), a.signed, full, guard)

    def _not(self, a: _Form) -> _Form:
        if a.signed or a.width == a.full:
            return _Form(~a.term, a.signed, a.full, a.guard)
        # The high zeros become ones: a signed value one bit wider.
        return _Form(~z3.ZeroExt(1, a.term), True, a.full, a.guard)

    def _unsigned_division(self, kind: int, a: _Form, b: _Form) -> _Form:
        full = a.full
        division = kind in _UNSIGNED_DIVISION
        operation = z3.UDiv if division else z3.URem
        width = max(a.width, b.width)
        if a.signed or b.signed or width >= full:
            return self._whole(a, b, full, operation)
        x, y = a.extended(width), b.extended(width)
        guard = _and(a.guard, b.guard)
        if not division:  # a remainder by 0 is the dividend at any width
            return _Form(z3.URem(x, y), False, full, guard)
        if not self.exact:
            return _Form(z3.UDiv(x, y), False, full, _and(guard, y != 0))
        if width + 1 >= full:
            return self._whole(a, b, full, operation)
        # A quotient by 0 is all ones at any width: -1 in signed form.
        quotient = z3.If(y == 0, z3.BitVecVal(-1, width + 1), z3.ZeroExt(1, z3.UDiv(x, y)))
        return _Form(quotient, True, full, guard)

    def _signed_division(self, a: _Form, b: _Form) -> _Form:
        full = a.full
        pair = self._unify(a, b, signed=True)
        if pair is None:
            return self._whole(a, b, full, operator.truediv)
        a, b = pair
        width = max(a.width, b.width) + (1 if self.exact else 0)
        if width >= full:
            return self._whole(a, b, full, operator.truediv)
        x, y = a.extended(width), b.extended(width)
        guard = _and(a.guard, b.guard)
        if not self.exact:  # the narrow minimum over -1 wraps; the wide one does not
            minimum = bv_const(1 << (width - 1), width)
            guard = _and(guard, z3.Not(z3.And(x == minimum, y == -1)))
        return _Form(x / y, True, full, guard)

    def _signed_remainder(self, kind: int, a: _Form, b: _Form) -> _Form:
        operation = _SIGNED_REMAINDER[kind]
        full = a.full
        pair = self._unify(a, b, signed=True)
        width = 0 if pair is None else max(pair[0].width, pair[1].width)
        if pair is None or width >= full:
            return self._whole(a, b, full, operation)
        a, b = pair
        # |remainder| < |divisor| and by 0 it is the dividend: exact at the wider width.
        return _Form(operation(a.extended(width), b.extended(width)), True, full,
                     _and(a.guard, b.guard))

    def _extract(self, a: _Form, high: int, low: int) -> _Form:
        full = high - low + 1
        if low == 0 and high == a.width - 1:
            return a.widened(full)  # the narrow term itself
        if high < a.width:
            return _Form(z3.Extract(high, low, a.term), False, full, a.guard)
        if low >= a.width:
            if not a.signed:
                return _Form(z3.BitVecVal(0, 1), False, full, a.guard)
            top = a.width - 1
            return _Form(z3.Extract(top, top, a.term), True, full, a.guard)
        return _Form(z3.Extract(a.width - 1, low, a.term), a.signed, full, a.guard)

    def _concat(self, high: _Form, low: _Form) -> _Form:
        full = high.full + low.full
        guard = _and(high.guard, low.guard)
        if z3.is_bv_value(high.term) and bv_int(high.term) == 0 and not high.signed:
            if not low.signed or low.width == low.full:
                return low.widened(full, signed=False, guard=guard)
            return _Form(low.extended(low.full), False, full, guard)
        return _Form(z3.Concat(high.term, low.extended(low.full)), high.signed, full, guard)

    def _extension(self, a: _Form, full: int, signed: bool) -> _Form:
        if a.width < a.full:
            if a.signed == signed or not a.signed:  # unsigned: the top bit is 0
                return a.widened(full)
            return _Form(a.extended(a.full), False, full, a.guard)
        return _Form(a.term, signed, full, a.guard)

    def _shift(self, kind: int, a: _Form, amount: int) -> _Form | None:
        full = a.full
        if kind == z3.Z3_OP_BSHL:
            if amount >= full or a.width + amount >= full:
                return None
            if amount == 0:
                return a
            return _Form(z3.Concat(a.term, z3.BitVecVal(0, amount)), a.signed, full, a.guard)
        if kind == z3.Z3_OP_BLSHR and a.signed and a.width < full:
            return None  # the sign fill becomes ones in the middle of the value
        # Only an arithmetic shift fills with the sign: of a signed form, or of a term as
        # wide as the value (its top bit is the sign).
        signed = kind == z3.Z3_OP_BASHR and (a.signed or a.width == full)
        if amount >= a.width:
            if not signed:
                return _Form(z3.BitVecVal(0, 1), False, full, a.guard)
            top = a.width - 1
            return _Form(z3.Extract(top, top, a.term), True, full, a.guard)
        if amount == 0:
            return a
        return _Form(z3.Extract(a.width - 1, amount, a.term), signed, full, a.guard)

    def _ite(self, children: Sequence[Any]) -> _Form:
        condition = self._child_truth(children[0])
        a, b = self._child_form(children[1]), self._child_form(children[2])
        full = a.full
        pair = self._unify(a, b)
        if pair is None:
            x, y, signed, width = a.extended(full), b.extended(full), False, full
        else:
            a, b = pair
            width = max(a.width, b.width)
            x, y, signed = a.extended(width), b.extended(width), a.signed
        guard = _and(condition.guard, _branch_guard(condition.formula, a.guard, b.guard))
        return _Form(z3.If(condition.formula, x, y), signed, full, guard)

    # -- booleans ------------------------------------------------------------------------

    def _truth(self, term: Any) -> _Truth:
        if not z3.is_app(term) or term.num_args() == 0:
            return _Truth(term)
        kind = term.decl().kind()
        children = term.children()
        if kind in _CONNECTIVES:
            truths = [self._child_truth(child) for child in children]
            formula = term.decl()(*[t.formula for t in truths])
            return _Truth(formula, _and(*[t.guard for t in truths]))
        if kind == z3.Z3_OP_ITE and z3.is_bool(children[1]):
            condition, yes, no = (self._child_truth(child) for child in children)
            return _Truth(z3.If(condition.formula, yes.formula, no.formula),
                          _and(condition.guard,
                               _branch_guard(condition.formula, yes.guard, no.guard)))
        if kind in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(children) == 2 \
                and z3.is_bv(children[0]):
            a, b = self._child_form(children[0]), self._child_form(children[1])
            equal = None
            for form, other in ((a, children[1]), (b, children[0])):
                if form.factors is not None and z3.is_bv_value(other):
                    equal = _product_equal(form.factors, bv_int(other), form.full)
                elif form.factors is not None:
                    equal = self._fits_truncated(form.factors, other, term)
                if equal is not None:
                    break
            if equal is None:
                equal = self._compare(a, b, operator.eq, signed=False)
            return equal if kind == z3.Z3_OP_EQ else _Truth(z3.Not(equal.formula), equal.guard)
        if kind in _UNSIGNED_ORDER:
            a, b = self._child_form(children[0]), self._child_form(children[1])
            return self._compare(a, b, _UNSIGNED_ORDER[kind], signed=False)
        if kind in _SIGNED_ORDER:
            a, b = self._child_form(children[0]), self._child_form(children[1])
            return self._compare(a, b, _SIGNED_ORDER[kind], signed=True)
        if kind in _NO_OVERFLOW:
            a, b = self._child_form(children[0]), self._child_form(children[1])
            # A product of a w- and a v-bit operand fits w + v bits: unsigned when both
            # forms are unsigned (a signed form may stand for a huge unsigned value).
            signed = kind != z3.Z3_OP_BUMUL_NO_OVFL
            pair = self._unify(a, b, signed=True) if signed else \
                (None if a.signed or b.signed else (a, b))
            if pair is not None and pair[0].width + pair[1].width <= a.full:
                return _Truth(z3.BoolVal(True), _and(a.guard, b.guard))
        formula, guard = self._rebuilt(term)
        return _Truth(formula, guard)

    def _fits_truncated(self, factors: tuple[_Form, _Form], other: Any,
                        equality: Any) -> _Truth | None:
        """``x * y == Ext(low w bits of x * y)`` as "the product fits ``w`` bits".

        That equality is solc's overflow check of a product of a narrow type (``uint64``:
        the 256-bit product equals its masked value). None when ``other`` is no such
        extension of the same product.
        """
        truncated = _truncated_product(other)
        if truncated is None:
            return None
        product, signed = truncated
        x, y = factors
        width = int(product.size())
        if x.signed != signed or width >= x.full:
            return None
        left, right = (self._child_form(c) for c in product.children())
        wanted = [z3.simplify(f.low(width)) for f in (x, y)]
        got = [z3.simplify(f.low(width)) for f in (left, right)]
        if not (got[0].eq(wanted[0]) and got[1].eq(wanted[1])
                or got[0].eq(wanted[1]) and got[1].eq(wanted[0])):
            return None
        a, b = x.low(width), y.low(width)
        fits = [_fits(x, width), _fits(y, width), _no_overflow(z3.Z3_OP_BMUL, a, b, signed)]
        self.truncations[equality.get_id()] = (other, product, factors)
        return _Truth(z3.Or(x.term == 0, y.term == 0, z3.And(*fits)),
                      _and(x.guard, y.guard, self._child_form(product).guard))

    def _unwrapped(self, product: Any, form: _Form) -> _Form:
        """``form`` of ``product``, which a fact says does not wrap, with its factors."""
        a, b = (self._child_form(child) for child in product.children())
        if a.signed or b.signed:
            return form  # (the facts recognised are of unsigned products)
        return replace(form, factors=(a, b))

    def conjunct(self, term: Any) -> _Truth:
        """The rewrite of ``term``, a conjunct every model must satisfy.

        With ``factor_bits`` (guarded mode), a product equal to a constant here is admitted
        only with a factor of at most that many bits, multiplied as that narrow a number
        (:func:`_small_factor_equal`); anywhere else (under a negation, in a disjunction)
        the rewrite is the general one.
        """
        if self.factor_bits is not None and not self.exact and z3.is_eq(term) \
                and z3.is_bv(term.arg(0)):
            for side, other in ((term.arg(0), term.arg(1)), (term.arg(1), term.arg(0))):
                if not z3.is_bv_value(other):
                    continue
                form = self.form(side)
                if form.factors is not None:
                    small = _small_factor_equal(form.factors, bv_int(other), form.full,
                                                self.factor_bits)
                    if small is not None:
                        return small
        return self.truth(term)

    def learn(self, constraint: Any) -> None:
        """Give the products ``constraint`` proves not to wrap their factors.

        Called after ``constraint``, a top-level fact, was rewritten: a product it proves
        not to wrap at its own width (:meth:`_fits_truncated`) gets its factors, so that an
        equality of that product with a constant (``low * high == 10403``) is solved at
        the constant's width. Sound only for a fact every model satisfies.
        """
        todo = [constraint]
        while todo:
            term = todo.pop()
            if z3.is_and(term):
                todo.extend(term.children())
                continue
            checked = _checked_operands(term)
            if checked is not None:
                # solc's check of a 256-bit product (the semantics' no-overflow form):
                # the product of those operands, in either order, does not wrap.
                x, y = checked
                for product in (x * y, y * x):
                    key = product.get_id()
                    self.no_wrap.add(key)
                    known = self.forms.get(key)
                    if known is not None and known.factors is None:
                        self.forms[key] = self._unwrapped(product, known)
                continue
            found = self.truncations.get(term.get_id())
            if found is not None:
                # The product and its extension (``Concat(0, product)``), both already
                # rewritten: later constraints reach the product through either.
                extension, product, factors = found
                for known in (product, extension):
                    key = known.get_id()
                    self.forms[key] = replace(self.forms[key], factors=factors)

    def _compare(self, a: _Form, b: _Form, relation: Any, signed: bool) -> _Truth:
        """Sign and zero extension keep equality and both orders once the forms agree."""
        guard = _and(a.guard, b.guard)
        pair = self._unify(a, b, signed=signed)
        if pair is None:
            return _Truth(relation(a.extended(a.full), b.extended(b.full)), guard)
        a, b = pair
        width = max(a.width, b.width)
        return _Truth(relation(a.extended(width), b.extended(width)), guard)


def _product_equal(factors: tuple[_Form, _Form], value: int, full: int) -> _Truth | None:
    """``x * y == value`` at the width of ``value``, or None when that is no narrower.

    The product never wraps (``factors``), so for a value other than 0 each factor is at
    most the value in magnitude: both fit its width (one more bit when signed), and the
    product must not overflow there. A SAT solver factors a 31-bit constant this way in
    hundredths of a second, and often not at all through a 64-bit or wider multiplier.
    """
    x, y = factors
    signed = x.signed
    target = _product_value(value, full, signed)
    if target is None:
        return None
    value = target
    width = abs(value).bit_length() + (1 if signed else 0)
    if width >= x.width + y.width:
        return None
    conditions = [_fits(form, width) for form in factors]
    a, b = x.low(width), y.low(width)
    conditions += [a * b == bv_const(value, width),
                   _no_overflow(z3.Z3_OP_BMUL, a, b, signed)]
    return _Truth(z3.And(*[c for c in conditions if not z3.is_true(c)]),
                  _and(x.guard, y.guard))


def _product_value(value: int, full: int, signed: bool) -> int | None:
    """A ``full``-bit constant as the integer a product of that signedness would equal.

    None when no factor rewrite applies: 0, or a negative value for an unsigned product.
    """
    if signed and value >> (full - 1):
        value -= 1 << full
    if value == 0 or (value < 0 and not signed):
        return None
    return value


def _small_factor_equal(factors: tuple[_Form, _Form], value: int, full: int,
                        bits: int) -> _Truth | None:
    """``x * y == value`` with ``x`` or ``y`` below ``2**bits`` in magnitude, or None.

    An under-approximation of :func:`_product_equal`: the value's divisors that small are
    found by trial division here, and the query gets one pair of constants per divisor
    and order (a disjunction of equalities, no multiplier at all). None when the value is
    0, or no wider than ``bits`` (then :func:`_product_equal` is as cheap).
    """
    x, y = factors
    signed = x.signed
    target = _product_value(value, full, signed)
    if target is None or abs(target).bit_length() <= bits:
        return None
    value = target
    limit = 1 << (bits - 1) if signed else 1 << bits
    cases = []
    for divisor in range(1, limit):
        if abs(value) % divisor:
            continue
        for small in ((divisor, -divisor) if signed else (divisor,)):
            quotient = value // small
            for a, b in ((x, y), (y, x)):
                left, right = _equals(a, small), _equals(b, quotient)
                if not (z3.is_false(left) or z3.is_false(right)):
                    cases.append(z3.And(left, right))
    formula = z3.Or(*cases) if cases else z3.BoolVal(False)
    return _Truth(formula, _and(x.guard, y.guard))


def _equals(form: _Form, value: int) -> Any:
    """That ``form``'s value is the integer ``value`` (false when it cannot be)."""
    width = form.width
    if width == form.full:
        return form.term == bv_const(value % (1 << width), width)
    low, high = (-(1 << (width - 1)), 1 << (width - 1)) if form.signed else (0, 1 << width)
    if not low <= value < high:
        return z3.BoolVal(False)
    return form.term == bv_const(value % (1 << width), width)


def _conjuncts(term: Any) -> list[Any]:
    """``term`` split at its top-level ``And``s (through double negations)."""
    parts, todo = [], [term]
    while todo:
        part = todo.pop()
        if z3.is_and(part):
            todo.extend(reversed(part.children()))
        elif z3.is_not(part) and z3.is_not(part.arg(0)):
            todo.append(part.arg(0).arg(0))
        else:
            parts.append(part)
    return parts


def _fits(form: _Form, width: int) -> Any:
    """That ``form``'s value is its low ``width`` bits extended its own way."""
    if form.width <= width:
        return z3.BoolVal(True)
    high = z3.Extract(form.width - 1, width, form.term)
    if not form.signed:
        return high == 0
    sign = z3.Extract(width - 1, width - 1, form.term)
    return high == z3.SignExt(form.width - width - 1, sign)


def _checked_operands(term: Any) -> tuple[Any, Any] | None:
    """The operands ``(x, y)`` when ``term`` says their unsigned product does not wrap.

    That is ``bvumul_noovfl(x, y)``, or an ``Or``/``If`` of it with ``x == 0`` and
    ``y == 0`` (the semantics' form of solc's ``x == 0 || (x * y) / x == y``; a 64-bit
    argument's test may read ``low == 0`` for ``x = Concat(0, low)``). None otherwise.
    """
    atoms: list[Any] = []
    todo = [term]
    while todo:
        part = todo.pop()
        if z3.is_app_of(part, z3.Z3_OP_BUMUL_NO_OVFL):
            atoms.append(part)
        elif z3.is_or(part):
            todo.extend(part.children())
        elif z3.is_app_of(part, z3.Z3_OP_ITE):
            todo.extend(part.children()[1:])
    if len(atoms) != 1:
        return None
    x, y = atoms[0].children()
    zeros = [x, y] + [v.arg(v.num_args() - 1) for v in (x, y) if _zero_extension(v)]

    def allowed(part: Any) -> bool:
        if part.eq(atoms[0]):
            return True
        if z3.is_or(part):
            return all(allowed(child) for child in part.children())
        if z3.is_app_of(part, z3.Z3_OP_ITE):
            return all(allowed(child) for child in part.children()[1:])
        if z3.is_eq(part):
            left, right = part.children()
            for side, other in ((left, right), (right, left)):
                if z3.is_bv_value(other) and bv_int(other) == 0 \
                        and any(side.eq(zero) for zero in zeros):
                    return True
        return False

    return (x, y) if allowed(term) else None


def _zero_extension(term: Any) -> bool:
    """Whether ``term`` is ``ZeroExt(k, v)`` or ``Concat(0, v)``."""
    if z3.is_app_of(term, z3.Z3_OP_ZERO_EXT):
        return True
    return bool(z3.is_app_of(term, z3.Z3_OP_CONCAT) and term.num_args() == 2
                and z3.is_bv_value(term.arg(0)) and bv_int(term.arg(0)) == 0)


def _truncated_product(term: Any) -> tuple[Any, bool] | None:
    """``term`` as the extension of a narrower product.

    That product, and whether the extension is signed; None for any other term.
    """
    if not z3.is_app(term):
        return None
    kind = term.decl().kind()
    if kind in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT):
        inner, signed = term.arg(0), kind == z3.Z3_OP_SIGN_EXT
    elif kind == z3.Z3_OP_CONCAT and term.num_args() == 2 and z3.is_bv_value(term.arg(0)) \
            and bv_int(term.arg(0)) == 0:
        inner, signed = term.arg(1), False
    else:
        return None
    if not z3.is_app_of(inner, z3.Z3_OP_BMUL) or inner.num_args() != 2:
        return None
    return inner, signed


def _branch_guard(condition: Any, then_guard: Any, else_guard: Any) -> Any:
    if then_guard is None and else_guard is None:
        return None
    return z3.If(condition, z3.BoolVal(True) if then_guard is None else then_guard,
                 z3.BoolVal(True) if else_guard is None else else_guard)


def _no_overflow(kind: int, x: Any, y: Any, signed: bool) -> Any:
    """That ``x`` ``kind`` ``y`` does not leave its width."""
    if kind == z3.Z3_OP_BADD:
        return z3.And(z3.BVAddNoOverflow(x, y, True), z3.BVAddNoUnderflow(x, y)) if signed \
            else z3.BVAddNoOverflow(x, y, False)
    if kind == z3.Z3_OP_BSUB:
        return z3.And(z3.BVSubNoOverflow(x, y), z3.BVSubNoUnderflow(x, y, True)) if signed \
            else z3.BVSubNoUnderflow(x, y, False)
    return z3.And(z3.BVMulNoOverflow(x, y, True), z3.BVMulNoUnderflow(x, y)) if signed \
        else z3.BVMulNoOverflow(x, y, False)
