"""The EVM's stack operations on 256-bit z3 bit-vectors, with the interpreter's semantics.

A *word* is either a Python int (a concrete value) or a z3 ``BitVecRef`` of width 256 (a
term over the symbolic inputs). Every function here takes words in the order the EVM pops
them (``a`` is the top of the stack) and returns a word; it returns an int whenever the
result does not depend on any symbolic input, so the shadow tracker stores nothing for it
and later operations on it cost nothing. With only ints in, the EVM's own table of the pure
operations (``secant.evm.pure``, which the interpreter uses too) computes the result: the
two can never disagree on concrete values, and the differential test (``tests/symbolic``)
checks the terms against them.

Where z3's bit-vector operations differ from the EVM's, the difference is spelled out:

* division and remainder by zero are 0 in the EVM, while SMT-LIB's ``bvudiv`` gives all
  ones and ``bvurem``/``bvsrem`` give the dividend, so DIV, SDIV, MOD, SMOD guard the
  divisor; SDIV's overflow case (-2**255 / -1 = -2**255) is ``bvsdiv``'s own wrap;
* SMOD takes the dividend's sign: ``bvsrem`` (not ``bvsmod``, which takes the divisor's);
* ADDMOD and MULMOD compute in 512 bits, as the EVM's unbounded intermediate;
* SHL, SHR, SAR by 256 or more: ``bvshl``/``bvlshr`` give 0 and ``bvashr`` the sign fill,
  exactly the EVM's results, so no guard is needed;
* EXP is symbolic when the exponent is concrete (square and multiply, unrolled) or the base
  is a concrete power of two (a shift); otherwise the caller concretises the exponent;
* comparisons give the 0/1 words ``If(c, 1, 0)``; ISZERO, EQ with 0 or 1, AND, OR and XOR
  of such words stay in that form, so a JUMPI condition reads as the comparison itself
  (``truth``) instead of a nest of ``If`` terms.

Operations that shuffle bits by a concrete amount (shifts, masks, BYTE, SIGNEXTEND) pass
their result through ``z3.simplify``: solc's dispatcher and ABI decoder apply them to
calldata words whose selector bytes are concrete, and simplifying turns the selector test
back into a constant (no branch record) instead of a term the solver has to refute.
"""

from __future__ import annotations

from typing import Any

import z3

from secant.evm.opcodes import (
    ADD,
    ADDMOD,
    AND,
    BYTE,
    DIV,
    EQ,
    EXP,
    GT,
    ISZERO,
    LT,
    MOD,
    MUL,
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
from secant.evm.pure import PURE, SIGN, M

__all__ = [
    "BINARY",
    "ONE",
    "TERNARY",
    "UNARY",
    "WIDTH",
    "ZERO",
    "Word",
    "binary",
    "bool_word",
    "const",
    "exp_concrete_exponent",
    "exp_power_of_two",
    "is_term",
    "ternary",
    "truth",
    "unary",
]

WIDTH = 256

Word = Any
"""An int (concrete) or a 256-bit z3 ``BitVecRef`` (z3 has no type stubs: both are Any)."""

ZERO = z3.BitVecVal(0, WIDTH)
ONE = z3.BitVecVal(1, WIDTH)
_ZERO_AST = ZERO.as_ast()
_ONE_AST = ONE.as_ast()

UNARY = frozenset(op for op, pure in PURE.items() if pure.arity == 1)
BINARY = frozenset(op for op, pure in PURE.items() if pure.arity == 2 and op != EXP)
TERNARY = frozenset(op for op, pure in PURE.items() if pure.arity == 3)
"""The opcodes ``unary``, ``binary`` and ``ternary`` implement: the EVM's pure operations
(``secant.evm.pure``) by their arity, but EXP, which is the caller's."""
_CONCRETE = {op: PURE[op].compute for op in UNARY | BINARY | TERNARY}


def is_term(word: Word) -> bool:
    """Whether ``word`` is symbolic (a z3 term) rather than an int."""
    return not isinstance(word, int)


def const(value: int, width: int = WIDTH) -> Any:
    """The z3 constant ``value`` of ``width`` bits."""
    return z3.BitVecVal(value, width)


def _tidy(term: Any) -> Word:
    """``term`` as an int when it is a constant, else itself."""
    if z3.is_bv_value(term):
        return int(term.as_long())
    return term


def _simplified(term: Any) -> Word:
    return _tidy(z3.simplify(term))


# ---------------------------------------------------------------------- 0/1 words
# Every z3 call goes through ctypes (microseconds each), and comparisons, ISZERO and the
# logic operations ask of each operand whether it is a 0/1 word: the answer is kept per
# term object (with the term, so that its id stays its own), bounded.
_CONDITIONS: dict[int, tuple[Any, Any]] = {}
_CONDITIONS_LIMIT = 20_000


def _remember(word: Any, condition: Any | None) -> None:
    if len(_CONDITIONS) >= _CONDITIONS_LIMIT:
        _CONDITIONS.clear()
    _CONDITIONS[id(word)] = (word, condition)


def _kind(term: Any) -> int:
    """The z3 operation of an application term (every bit-vector term here is one)."""
    return int(z3.Z3_get_decl_kind(term.ctx_ref(), z3.Z3_get_app_decl(term.ctx_ref(),
                                                                       term.as_ast())))


def _bool_of(word: Any) -> Any | None:
    """The condition ``c`` when ``word`` is ``If(c, 1, 0)``, ``Not(c)`` for ``If(c, 0, 1)``."""
    entry = _CONDITIONS.get(id(word))
    if entry is not None and entry[0] is word:
        return entry[1]
    condition = None
    if z3.is_app(word) and _kind(word) == z3.Z3_OP_ITE:
        test, then, other = word.children()
        if z3.is_bv_value(then) and z3.is_bv_value(other):
            high, low = then.as_long(), other.as_long()
            if high == 1 and low == 0:
                condition = test
            elif high == 0 and low == 1:
                condition = _negate(test)
    _remember(word, condition)
    return condition


def _negate(condition: Any) -> Any:
    """``Not(condition)`` without stacking negations."""
    if z3.is_not(condition):
        return condition.arg(0)
    return z3.Not(condition)


def bool_word(condition: Any) -> Word:
    """The 0/1 word of a z3 Bool (an int when the Bool is a constant)."""
    if z3.is_true(condition):
        return 1
    if z3.is_false(condition):
        return 0
    # z3.If's argument coercion costs more than the term: build it directly.
    context = ONE.ctx
    word = z3.BitVecRef(z3.Z3_mk_ite(context.ref(), condition.as_ast(), _ONE_AST, _ZERO_AST),
                        context)
    _remember(word, condition)
    return word


def truth(word: Word) -> Any:
    """The z3 Bool "``word`` is non-zero" (a JUMPI's condition), as plain as it gets."""
    if isinstance(word, int):
        return z3.BoolVal(word != 0)
    condition = _bool_of(word)
    if condition is not None:
        return condition
    return word != ZERO


# ---------------------------------------------------------------------- operations
def unary(op: int, a: Word) -> Word:
    """ISZERO or NOT of ``a``."""
    if isinstance(a, int):
        return _CONCRETE[op](a)
    if op == ISZERO:
        condition = _bool_of(a)
        if condition is not None:
            return bool_word(_negate(condition))
        return bool_word(a == ZERO)
    return ~a


def binary(op: int, a: Word, b: Word) -> Word:
    """The binary operation ``op`` with ``a`` the top of the stack and ``b`` the next."""
    if isinstance(a, int) and isinstance(b, int):
        if op not in BINARY:
            raise ValueError(f"no semantics for opcode {op:#x}")
        return _CONCRETE[op](a, b)
    if op == ADD:
        return a + b
    if op == SUB:
        return a - b
    if op == MUL:
        if (isinstance(a, int) and a == 0) or (isinstance(b, int) and b == 0):
            return 0
        if isinstance(a, int) and a == 1:
            return b
        if isinstance(b, int) and b == 1:
            return a
        return a * b
    if op == DIV:
        if isinstance(b, int):
            if b == 0:
                return 0
            if b & (b - 1) == 0:
                return _simplified(z3.LShR(a, b.bit_length() - 1))
            return z3.UDiv(a, b)
        return z3.If(b == ZERO, ZERO, z3.UDiv(a, b))
    if op == SDIV:
        if isinstance(b, int):
            return 0 if b == 0 else a / const(b)
        return z3.If(b == ZERO, ZERO, _lift(a) / b)
    if op == MOD:
        if isinstance(b, int):
            return 0 if b == 0 else z3.URem(a, b)
        return z3.If(b == ZERO, ZERO, z3.URem(a, b))
    if op == SMOD:
        if isinstance(b, int):
            return 0 if b == 0 else z3.SRem(a, b)
        return z3.If(b == ZERO, ZERO, z3.SRem(_lift(a), b))
    if op == SIGNEXTEND:
        return _signextend(a, b)
    if op == LT:
        return bool_word(z3.ULT(a, b))
    if op == GT:
        return bool_word(z3.UGT(a, b))
    if op == SLT:
        return bool_word(_lift(a) < b)
    if op == SGT:
        return bool_word(_lift(a) > b)
    if op == EQ:
        return _equal(a, b)
    if op == AND or op == OR or op == XOR:
        return _logic(op, a, b)
    if op == BYTE:
        return _byte(a, b)
    if op == SHL:
        if isinstance(a, int):
            return 0 if a >= WIDTH else _simplified(b << a)
        return _lift(b) << a
    if op == SHR:
        if isinstance(a, int):
            return 0 if a >= WIDTH else _simplified(z3.LShR(b, a))
        return z3.LShR(_lift(b), a)
    if op == SAR:
        if isinstance(a, int):
            return _simplified(b >> min(a, WIDTH))
        return _lift(b) >> a
    raise ValueError(f"no symbolic semantics for opcode {op:#x}")


def ternary(op: int, a: Word, b: Word, n: Word) -> Word:
    """ADDMOD or MULMOD of ``a`` and ``b`` modulo ``n`` (0 when ``n`` is 0)."""
    if isinstance(a, int) and isinstance(b, int) and isinstance(n, int):
        return _CONCRETE[op](a, b, n)
    if isinstance(n, int) and n == 0:
        return 0
    wide_a, wide_b, wide_n = (z3.ZeroExt(WIDTH, _lift(x)) for x in (a, b, n))
    joined = wide_a + wide_b if op == ADDMOD else wide_a * wide_b
    result = z3.Extract(WIDTH - 1, 0, z3.URem(joined, wide_n))
    if isinstance(n, int):
        return result
    return z3.If(n == ZERO, ZERO, result)


def exp_concrete_exponent(base: Any, exponent: int) -> Word:
    """``base ** exponent`` mod 2**256 for a symbolic base: square and multiply, unrolled.

    The term has at most two multiplications per bit of the exponent (shared as a DAG).
    """
    result: Word = 1
    square: Word = base
    while exponent:
        if exponent & 1:
            result = square if isinstance(result, int) else result * square
        exponent >>= 1
        if exponent:
            square = square * square
    return result


def exp_power_of_two(base: int, exponent: Any) -> Word | None:
    """``base ** exponent`` for a concrete base 0, 1 or 2**k and a symbolic exponent.

    ``(2**k) ** e`` is ``1 << k*e`` while ``k*e < 256`` and 0 beyond; 0**e is 1 only for
    e = 0. None for any other base (the caller concretises the exponent).
    """
    if base == 1:
        return 1
    if base == 0:
        return bool_word(exponent == ZERO)
    if base & (base - 1):
        return None
    k = base.bit_length() - 1
    limit = (WIDTH - 1) // k  # the largest e with k * e < 256
    shifted = ONE << (exponent * k if k > 1 else exponent)
    return z3.If(z3.ULE(exponent, limit), shifted, ZERO)


# ---------------------------------------------------------------------- helpers
def _lift(word: Word) -> Any:
    """A z3 term for ``word`` (Python operators need one side to be a term)."""
    return const(word) if isinstance(word, int) else word


def _equal(a: Word, b: Word) -> Word:
    # A 0/1 word compared with 0 or 1 is its condition (or the negation): solc's
    # ``eq(x, 0)`` and the optimizer's ``eq(cond, 1)`` keep the comparison visible.
    for word, other in ((a, b), (b, a)):
        if isinstance(other, int) and other in (0, 1):
            condition = _bool_of(word)
            if condition is not None:
                return bool_word(condition if other else _negate(condition))
    if a is b or (not isinstance(a, int) and not isinstance(b, int) and a.eq(b)):
        return 1  # solc's ABI decoder tests ``x == cleanup(x)``, the same term for uint256
    for word, other in ((a, b), (b, a)):
        if not isinstance(word, int) and _bool_of(word) is None:
            check = _overflow_check(word, other)
            if check is not None:
                return bool_word(check)
    return bool_word(_lift(a) == b)


def _overflow_check(quotient: Any, y: Word) -> Any | None:
    """``y == (x * y) / x`` (DIV or SDIV, 0 when x is 0) as an overflow test, or None.

    solc >= 0.8 checks every multiplication this way (``x`` or ``y`` may be a constant).
    Bit-blasted, the 256-bit division makes the query slow (seconds per solve); the
    equivalent overflow predicates are cheap. For x != 0 the quotient gives y back exactly
    when the product did not wrap: a wrapped product is off by a multiple of 2**256, more
    than |x| can hide, except for x = -1, y = -2**255 in the signed case, where both
    wrap to -2**255.
    """
    if not z3.is_app(quotient):
        return None
    division = quotient
    kind = _kind(quotient)
    guarded = kind == z3.Z3_OP_ITE
    if guarded:  # If(x == 0, 0, division): a symbolic divisor
        guard, zero, division = quotient.children()
        if not (z3.is_bv_value(zero) and zero.as_long() == 0 and z3.is_eq(guard)):
            return None
        kind = _kind(division)
    signed = kind == z3.Z3_OP_BSDIV
    if not (signed or kind == z3.Z3_OP_BUDIV):
        return None
    product, x = division.children()
    if guarded and not any(side.eq(x) for side in guard.children()):
        return None
    if not guarded and not z3.is_bv_value(x):
        return None
    if not z3.is_app_of(product, z3.Z3_OP_BMUL) or product.num_args() != 2:
        return None
    left, right = product.children()
    y = _lift(y)
    if not ((left.eq(x) and right.eq(y)) or (left.eq(y) and right.eq(x))):
        return None
    if signed:
        fits = z3.Or(z3.And(z3.BVMulNoOverflow(x, y, True), z3.BVMulNoUnderflow(x, y)),
                     z3.And(x == const(M), y == const(SIGN)))
    else:
        fits = z3.BVMulNoOverflow(x, y, False)
    return z3.If(x == ZERO, y == ZERO, fits)


def _logic(op: int, a: Word, b: Word) -> Word:
    left = _bool_of(a) if not isinstance(a, int) else None
    right = _bool_of(b) if not isinstance(b, int) else None
    if left is not None and right is not None:
        # Both are 0/1 words: combine the conditions (solc's ``and(lt(..), gt(..))``).
        if op == AND:
            return bool_word(z3.And(left, right))
        if op == OR:
            return bool_word(z3.Or(left, right))
        return bool_word(z3.Xor(left, right))
    for word, other in ((a, b), (b, a)):
        if isinstance(other, int):
            if op == AND:
                if other == 0:
                    return 0
                if other == M:
                    return word
            elif other == 0:
                return word  # x | 0 and x ^ 0
            term = word & other if op == AND else word | other if op == OR else word ^ other
            return _simplified(term)
    if op == AND:
        return a & b
    if op == OR:
        return a | b
    return a ^ b


def _byte(i: Word, x: Word) -> Word:
    if isinstance(i, int):
        if i >= 32:
            return 0
        top = WIDTH - 1 - 8 * i
        return _simplified(z3.ZeroExt(WIDTH - 8, z3.Extract(top, top - 7, _lift(x))))
    shifted = z3.LShR(_lift(x), const(248) - i * 8)
    return z3.If(z3.ULT(i, 32), shifted & 0xFF, ZERO)


def _signextend(b: Word, x: Word) -> Word:
    if isinstance(b, int):
        if b >= 31:
            return x
        bits = 8 * (b + 1)
        return _simplified(z3.SignExt(WIDTH - bits, z3.Extract(bits - 1, 0, _lift(x))))
    # A symbolic byte index (solc never emits one): a chain over the 31 that change x.
    term = _lift(x)
    result = term
    for k in range(30, -1, -1):
        bits = 8 * (k + 1)
        result = z3.If(b == k, z3.SignExt(WIDTH - bits, z3.Extract(bits - 1, 0, term)), result)
    return result
