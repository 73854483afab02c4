"""Comparisons and bitwise logic: LT .. SAR, CLZ."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.opcodes import (
    AND,
    BYTE,
    CLZ,
    EQ,
    GT,
    ISZERO,
    LT,
    NOT,
    OR,
    SAR,
    SGT,
    SHL,
    SHR,
    SLT,
    XOR,
)
from secant.evm.pure import SIGN, M, byte, sar

if TYPE_CHECKING:
    from secant.evm.frame import Frame


def op_lt(s: list[int], f: Frame, a: Any) -> None:
    """LT."""
    x = s.pop()
    s[-1] = 1 if x < s[-1] else 0


def op_gt(s: list[int], f: Frame, a: Any) -> None:
    """GT."""
    x = s.pop()
    s[-1] = 1 if x > s[-1] else 0


def op_slt(s: list[int], f: Frame, a: Any) -> None:
    """SLT (two's complement)."""
    x = s.pop() ^ SIGN
    s[-1] = 1 if x < (s[-1] ^ SIGN) else 0


def op_sgt(s: list[int], f: Frame, a: Any) -> None:
    """SGT (two's complement)."""
    x = s.pop() ^ SIGN
    s[-1] = 1 if x > (s[-1] ^ SIGN) else 0


def op_eq(s: list[int], f: Frame, a: Any) -> None:
    """EQ."""
    x = s.pop()
    s[-1] = 1 if x == s[-1] else 0


def op_iszero(s: list[int], f: Frame, a: Any) -> None:
    """ISZERO."""
    s[-1] = 0 if s[-1] else 1


def op_and(s: list[int], f: Frame, a: Any) -> None:
    """AND."""
    x = s.pop()
    s[-1] &= x


def op_or(s: list[int], f: Frame, a: Any) -> None:
    """OR."""
    x = s.pop()
    s[-1] |= x


def op_xor(s: list[int], f: Frame, a: Any) -> None:
    """XOR."""
    x = s.pop()
    s[-1] ^= x


def op_not(s: list[int], f: Frame, a: Any) -> None:
    """NOT."""
    s[-1] ^= M


def op_byte(s: list[int], f: Frame, a: Any) -> None:
    """BYTE."""
    i = s.pop()
    s[-1] = byte(i, s[-1])


def op_shl(s: list[int], f: Frame, a: Any) -> None:
    """SHL."""
    shift = s.pop()
    s[-1] = (s[-1] << shift) & M if shift < 256 else 0


def op_shr(s: list[int], f: Frame, a: Any) -> None:
    """SHR."""
    shift = s.pop()
    s[-1] = s[-1] >> shift if shift < 256 else 0


def op_sar(s: list[int], f: Frame, a: Any) -> None:
    """SAR."""
    shift = s.pop()
    s[-1] = sar(shift, s[-1])


def op_clz(s: list[int], f: Frame, a: Any) -> None:
    """CLZ (EIP-7939): leading zero bits, 256 for zero."""
    s[-1] = 256 - s[-1].bit_length()


HANDLERS = {
    LT: op_lt, GT: op_gt, SLT: op_slt, SGT: op_sgt, EQ: op_eq, ISZERO: op_iszero,
    AND: op_and, OR: op_or, XOR: op_xor, NOT: op_not, BYTE: op_byte, SHL: op_shl,
    SHR: op_shr, SAR: op_sar, CLZ: op_clz,
}
# The relation each comparison establishes between (top, second) when it yields 1.
RELATION = {LT: "lt", GT: "gt", SLT: "slt", SGT: "sgt", EQ: "eq", ISZERO: "eq"}
