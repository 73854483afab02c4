"""The pure stack operations, in one table: what each computes, and how code writes it.

A *pure* operation takes words off the stack and pushes one word computed from them alone:
no gas beyond its static cost, no frame, no memory, no state. For each one ``PURE`` holds

* its arity (the words it pops; ``a`` is the top of the stack, then ``b``, then ``c``);
* ``compute``: its value as a Python function of those words, the EVM's semantics;
* ``template``: the same value as a Python expression over ``{a}``, ``{b}`` and ``{c}``,
  for the code generators (the block compiler, ``secant.evm.blockgen``, and the recording
  of wrapped arithmetic, ``secant.targets.wraps``). A template is written to be the whole
  right-hand side of an assignment; its names are those of ``NAMESPACE``.

The interpreter's handlers (``secant.evm.instructions``) use the functions defined here;
the shadow executions read the table for concrete values (``secant.symbolic.semantics``,
``secant.targets.taint``). EXP is pure in value only: it charges gas per byte of its
exponent, so the block compiler calls the interpreter's ``exp`` for it, not its template.
CLZ (Osaka) is not in the table: only the interpreter and the block compiler know it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
    MULMOD,
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

__all__ = ["M", "MODULUS", "NAMESPACE", "PURE", "SIGN", "Pure"]

M = (1 << 256) - 1
SIGN = 1 << 255
MODULUS = 1 << 256  # named so as not to shadow the MOD opcode


def sdiv(x: int, y: int) -> int:
    """SDIV: signed division truncating toward zero (x / 0 = 0)."""
    if y == 0:
        return 0
    if x & SIGN:
        x -= MODULUS
    if y & SIGN:
        y -= MODULUS
    q = abs(x) // abs(y)
    return (-q if (x < 0) != (y < 0) else q) & M


def smod(x: int, y: int) -> int:
    """SMOD: the result takes the dividend's sign (x % 0 = 0)."""
    if y == 0:
        return 0
    if x & SIGN:
        x -= MODULUS
    if y & SIGN:
        y -= MODULUS
    r = abs(x) % abs(y)
    return (-r if x < 0 else r) & M


def addmod(x: int, y: int, n: int) -> int:
    """ADDMOD with an unbounded intermediate."""
    return (x + y) % n if n else 0


def mulmod(x: int, y: int, n: int) -> int:
    """MULMOD with an unbounded intermediate."""
    return (x * y) % n if n else 0


def signextend(b: int, x: int) -> int:
    """SIGNEXTEND ``x`` from byte ``b`` (counted from the least significant)."""
    if b >= 31:
        return x
    bit = (b << 3) + 7
    if (x >> bit) & 1:
        return x | (M ^ ((1 << (bit + 1)) - 1))
    return x & ((1 << (bit + 1)) - 1)


def byte(i: int, x: int) -> int:
    """BYTE ``i`` of ``x``, counted from the most significant."""
    return (x >> (248 - (i << 3))) & 0xFF if i < 32 else 0


def sar(shift: int, x: int) -> int:
    """SAR: arithmetic shift right."""
    if x & SIGN:
        return ((x - (1 << 256)) >> shift) & M if shift < 256 else M
    return x >> shift if shift < 256 else 0


@dataclass(frozen=True, slots=True)
class Pure:
    """One pure operation: its arity, its value as a function, its value as an expression."""

    arity: int
    compute: Callable[..., int]
    template: str


PURE: dict[int, Pure] = {
    ADD: Pure(2, lambda a, b: (a + b) & M, "({a} + {b}) & M"),
    MUL: Pure(2, lambda a, b: (a * b) & M, "({a} * {b}) & M"),
    SUB: Pure(2, lambda a, b: (a - b) & M, "({a} - {b}) & M"),
    DIV: Pure(2, lambda a, b: a // b if b else 0, "({a} // {b} if {b} else 0)"),
    SDIV: Pure(2, sdiv, "sdiv({a}, {b})"),
    MOD: Pure(2, lambda a, b: a % b if b else 0, "({a} % {b} if {b} else 0)"),
    SMOD: Pure(2, smod, "smod({a}, {b})"),
    ADDMOD: Pure(3, addmod, "addmod({a}, {b}, {c})"),
    MULMOD: Pure(3, mulmod, "mulmod({a}, {b}, {c})"),
    EXP: Pure(2, lambda a, b: pow(a, b, MODULUS), "pow({a}, {b}, MODULUS)"),
    SIGNEXTEND: Pure(2, signextend, "signextend({a}, {b})"),
    LT: Pure(2, lambda a, b: 1 if a < b else 0, "(1 if {a} < {b} else 0)"),
    GT: Pure(2, lambda a, b: 1 if a > b else 0, "(1 if {a} > {b} else 0)"),
    SLT: Pure(2, lambda a, b: 1 if (a ^ SIGN) < (b ^ SIGN) else 0,
              "(1 if ({a} ^ SIGN) < ({b} ^ SIGN) else 0)"),
    SGT: Pure(2, lambda a, b: 1 if (a ^ SIGN) > (b ^ SIGN) else 0,
              "(1 if ({a} ^ SIGN) > ({b} ^ SIGN) else 0)"),
    EQ: Pure(2, lambda a, b: 1 if a == b else 0, "(1 if {a} == {b} else 0)"),
    ISZERO: Pure(1, lambda a: 0 if a else 1, "(0 if {a} else 1)"),
    AND: Pure(2, lambda a, b: a & b, "{a} & {b}"),
    OR: Pure(2, lambda a, b: a | b, "{a} | {b}"),
    XOR: Pure(2, lambda a, b: a ^ b, "{a} ^ {b}"),
    NOT: Pure(1, lambda a: a ^ M, "{a} ^ M"),
    BYTE: Pure(2, byte, "byte({a}, {b})"),
    SHL: Pure(2, lambda a, b: (b << a) & M if a < 256 else 0,
              "(({b} << {a}) & M if {a} < 256 else 0)"),
    SHR: Pure(2, lambda a, b: b >> a if a < 256 else 0, "({b} >> {a} if {a} < 256 else 0)"),
    SAR: Pure(2, sar, "sar({a}, {b})"),
}
"""Opcode -> its pure operation."""

NAMESPACE: dict[str, object] = {
    "M": M, "SIGN": SIGN, "MODULUS": MODULUS, "sdiv": sdiv, "smod": smod,
    "addmod": addmod, "mulmod": mulmod, "signextend": signextend, "byte": byte, "sar": sar,
}
"""The names the templates use; code that runs them starts its globals from a copy."""
