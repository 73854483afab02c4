"""z3 constants of any width, to and from Python ints, without decimal strings.

z3's Python API passes numerals through decimal strings: ``z3.BitVecVal`` calls
``str(value)`` and ``as_long`` calls ``int(string)``. Python refuses either conversion
past 4300 digits (about 1,790 bytes) unless the process raises its limit, which would
weaken a guard against slow conversions everywhere. The shadow tracker builds constants
as wide as the memory a transaction hashes, calls with or creates a contract from (a
creation code of a few KB), so a wide constant is built from chunks of at most
:data:`CHUNK_BITS` bits, concatenated, and read back through its binary string, which
Python converts without a limit.
"""

from __future__ import annotations

from typing import Any

import z3

CHUNK_BITS = 2048
"""The widest constant built in one piece: 256 bytes, 617 decimal digits."""


def bv_const(value: int, width: int) -> Any:
    """The z3 bit-vector constant ``value`` (modulo ``2**width``) of ``width`` bits."""
    if width <= CHUNK_BITS:
        return z3.BitVecVal(value, width)
    value &= (1 << width) - 1
    pieces = []
    for high in range(width, 0, -CHUNK_BITS):
        low = max(high - CHUNK_BITS, 0)
        pieces.append(z3.BitVecVal((value >> low) & ((1 << (high - low)) - 1), high - low))
    return z3.Concat(*pieces)


def bytes_const(data: bytes) -> Any:
    """The z3 constant of ``data``'s bytes, big-endian (``8 * len(data)`` bits)."""
    return bv_const(int.from_bytes(data, "big"), 8 * len(data))


def bv_int(term: Any) -> int:
    """The unsigned value of a z3 bit-vector numeral, however wide."""
    if term.size() <= CHUNK_BITS:
        return int(term.as_long())
    return int(term.as_binary_string(), 2)
