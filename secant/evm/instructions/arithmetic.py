"""Arithmetic: ADD .. SIGNEXTEND (the values of the pure ones are ``secant.evm.pure``'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.memory import charge
from secant.evm.opcodes import (
    ADD,
    ADDMOD,
    DIV,
    EXP,
    MOD,
    MUL,
    MULMOD,
    SDIV,
    SIGNEXTEND,
    SMOD,
    SUB,
)
from secant.evm.pure import MODULUS, M, addmod, mulmod, sdiv, signextend, smod

if TYPE_CHECKING:
    from secant.evm.frame import Frame

def exp(f: Frame, base: int, exponent: int) -> int:
    """EXP: 50 gas per byte of the exponent."""
    if exponent:
        charge(f, 50 * ((exponent.bit_length() + 7) >> 3))
    return pow(base, exponent, MODULUS)


def op_add(s: list[int], f: Frame, a: Any) -> None:
    """ADD."""
    x = s.pop()
    s[-1] = (x + s[-1]) & M


def op_mul(s: list[int], f: Frame, a: Any) -> None:
    """MUL."""
    x = s.pop()
    s[-1] = (x * s[-1]) & M


def op_sub(s: list[int], f: Frame, a: Any) -> None:
    """SUB."""
    x = s.pop()
    s[-1] = (x - s[-1]) & M


def op_div(s: list[int], f: Frame, a: Any) -> None:
    """DIV (x / 0 = 0)."""
    x = s.pop()
    y = s[-1]
    s[-1] = x // y if y else 0


def op_sdiv(s: list[int], f: Frame, a: Any) -> None:
    """SDIV."""
    x = s.pop()
    s[-1] = sdiv(x, s[-1])


def op_mod(s: list[int], f: Frame, a: Any) -> None:
    """MOD (x % 0 = 0)."""
    x = s.pop()
    y = s[-1]
    s[-1] = x % y if y else 0


def op_smod(s: list[int], f: Frame, a: Any) -> None:
    """SMOD."""
    x = s.pop()
    s[-1] = smod(x, s[-1])


def op_addmod(s: list[int], f: Frame, a: Any) -> None:
    """ADDMOD."""
    x = s.pop()
    y = s.pop()
    s[-1] = addmod(x, y, s[-1])


def op_mulmod(s: list[int], f: Frame, a: Any) -> None:
    """MULMOD."""
    x = s.pop()
    y = s.pop()
    s[-1] = mulmod(x, y, s[-1])


def op_exp(s: list[int], f: Frame, a: Any) -> None:
    """EXP."""
    base = s.pop()
    s[-1] = exp(f, base, s[-1])


def op_signextend(s: list[int], f: Frame, a: Any) -> None:
    """SIGNEXTEND."""
    b = s.pop()
    s[-1] = signextend(b, s[-1])


HANDLERS = {
    ADD: op_add, MUL: op_mul, SUB: op_sub, DIV: op_div, SDIV: op_sdiv, MOD: op_mod,
    SMOD: op_smod, ADDMOD: op_addmod, MULMOD: op_mulmod, EXP: op_exp, SIGNEXTEND: op_signextend,
}
