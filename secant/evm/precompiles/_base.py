"""Shared definitions of the precompiled contracts: the failure signal and input helpers."""

from __future__ import annotations

from collections.abc import Callable

PrecompileFn = Callable[[bytes, int], tuple[int, bytes]]
"""A precompile: ``(input data, gas available) -> (gas used, output)``."""


class PrecompileFailure(Exception):
    """Exceptional halt of a precompile: the caller consumes all gas given to it."""


def read(data: bytes, start: int, size: int) -> bytes:
    """Return ``size`` bytes of ``data`` from ``start``, zero-padded past its end."""
    chunk = data[start : start + size]
    if len(chunk) < size:
        return chunk + bytes(size - len(chunk))
    return chunk


def read_int(data: bytes, start: int, size: int = 32) -> int:
    """Return the big-endian integer in ``size`` bytes of ``data`` from ``start`` (zero-padded)."""
    return int.from_bytes(read(data, start, size), "big")


def charge(cost: int, gas: int) -> int:
    """Return ``cost`` if ``gas`` covers it; raise :class:`PrecompileFailure` otherwise."""
    if cost > gas:
        raise PrecompileFailure("out of gas")
    return cost


def word_count(length: int) -> int:
    """Return the number of 32-byte words needed to hold ``length`` bytes."""
    return (length + 31) // 32
