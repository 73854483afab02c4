"""Comparisons and bitwise logic: LT .. SAR, CLZ."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from secant.evm.frame import Frame

M = (1 << 256) - 1
SIGN = 1 << 255


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


def byte(i: int, x: int) -> int:
    """BYTE ``i`` of ``x``, counted from the most significant."""
    return (x >> (248 - (i << 3))) & 0xFF if i < 32 else 0


def sar(shift: int, x: int) -> int:
    """SAR: arithmetic shift right."""
    if x & SIGN:
        return ((x - (1 << 256)) >> shift) & M if shift < 256 else M
    return x >> shift if shift < 256 else 0


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
    0x10: op_lt, 0x11: op_gt, 0x12: op_slt, 0x13: op_sgt, 0x14: op_eq, 0x15: op_iszero,
    0x16: op_and, 0x17: op_or, 0x18: op_xor, 0x19: op_not, 0x1A: op_byte, 0x1B: op_shl,
    0x1C: op_shr, 0x1D: op_sar, 0x1E: op_clz,
}
# The relation each comparison establishes between (top, second) when it yields 1.
RELATION = {0x10: "lt", 0x11: "gt", 0x12: "slt", 0x13: "sgt", 0x14: "eq", 0x15: "eq"}
