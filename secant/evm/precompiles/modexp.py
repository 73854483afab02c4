"""MODEXP (0x05): ``base ** exp % mod`` on big-endian integers of declared lengths.

Input: three 32-byte lengths ``Bsize, Esize, Msize``, then ``base`` (Bsize bytes), ``exp``
(Esize bytes) and ``mod`` (Msize bytes), all zero-padded past the end of the data. The
output has exactly ``Msize`` bytes (all zero when ``mod`` is 0).

Gas (EIP-198 with the EIP-2565 repricing, London to Prague)::

    words = ceil(max(Bsize, Msize) / 8)
    cost  = max(200, words**2 * iterations(8) // 3)

Osaka (EIP-7883, with the EIP-7823 rule that a length above 1024 bytes fails the call)::

    complexity = 16 if max(Bsize, Msize) <= 32 else 2 * words**2
    cost       = max(500, complexity * iterations(16))

where ``iterations(k)`` counts exponent bits: ``bitlen(head) - 1`` for ``Esize <= 32``, plus
``k * (Esize - 32)`` beyond, at least 1; ``head`` is the first ``min(Esize, 32)`` bytes of
``exp``.
"""

from __future__ import annotations

from secant.evm.precompiles._base import PrecompileFailure, charge, read_int

OSAKA_MAX_LENGTH = 1024
"""EIP-7823: the largest ``Bsize``, ``Esize`` or ``Msize`` a call may declare (Osaka)."""


def _lengths(data: bytes) -> tuple[int, int, int, int]:
    """Return ``(Bsize, Esize, Msize, exponent head)`` of a MODEXP input."""
    base_len = read_int(data, 0)
    exp_len = read_int(data, 32)
    mod_len = read_int(data, 64)
    exp_head = read_int(data, 96 + base_len, min(exp_len, 32))
    return base_len, exp_len, mod_len, exp_head


def iterations(exp_len: int, exp_head: int, multiplier: int) -> int:
    """Return the iteration count of the gas formula (``multiplier`` per byte past 32)."""
    head_bits = max(exp_head.bit_length() - 1, 0)
    if exp_len <= 32:
        return max(head_bits, 1)
    return max(multiplier * (exp_len - 32) + head_bits, 1)


def gas_eip2565(base_len: int, exp_len: int, mod_len: int, exp_head: int) -> int:
    """Return the MODEXP cost under EIP-2565 (Berlin to Prague)."""
    words = (max(base_len, mod_len) + 7) // 8
    return max(200, words * words * iterations(exp_len, exp_head, 8) // 3)


def gas_eip7883(base_len: int, exp_len: int, mod_len: int, exp_head: int) -> int:
    """Return the MODEXP cost under EIP-7883 (Osaka)."""
    max_len = max(base_len, mod_len)
    words = (max_len + 7) // 8
    complexity = 16 if max_len <= 32 else 2 * words * words
    return max(500, complexity * iterations(exp_len, exp_head, 16))


def _compute(data: bytes, base_len: int, exp_len: int, mod_len: int) -> bytes:
    """Return the MODEXP output once the gas is paid."""
    if base_len == 0 and mod_len == 0:
        return b""
    modulus = read_int(data, 96 + base_len + exp_len, mod_len)
    if modulus == 0:
        return bytes(mod_len)
    base = read_int(data, 96, base_len)
    exponent = read_int(data, 96 + base_len, exp_len)
    return pow(base, exponent, modulus).to_bytes(mod_len, "big")


def modexp(data: bytes, gas: int) -> tuple[int, bytes]:
    """MODEXP precompile (0x05) with EIP-2565 gas (London to Prague)."""
    base_len, exp_len, mod_len, exp_head = _lengths(data)
    cost = charge(gas_eip2565(base_len, exp_len, mod_len, exp_head), gas)
    return cost, _compute(data, base_len, exp_len, mod_len)


def modexp_osaka(data: bytes, gas: int) -> tuple[int, bytes]:
    """MODEXP precompile (0x05) from Osaka: EIP-7823 length bounds and EIP-7883 gas."""
    base_len, exp_len, mod_len, exp_head = _lengths(data)
    if max(base_len, exp_len, mod_len) > OSAKA_MAX_LENGTH:
        raise PrecompileFailure("MODEXP input length above 1024 bytes")
    cost = charge(gas_eip7883(base_len, exp_len, mod_len, exp_head), gas)
    return cost, _compute(data, base_len, exp_len, mod_len)
