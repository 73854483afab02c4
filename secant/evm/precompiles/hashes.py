"""SHA2-256 (0x02), RIPEMD-160 (0x03) and IDENTITY (0x04): hashing and copying input data.

Each costs a base fee plus a fee per 32-byte word of input and never fails except for lack
of gas. Input of any length is used as is (no padding).
"""

from __future__ import annotations

from Crypto.Hash import RIPEMD160, SHA256

from secant.evm.precompiles._base import charge, word_count

SHA256_GAS = 60
SHA256_WORD_GAS = 12
RIPEMD160_GAS = 600
RIPEMD160_WORD_GAS = 120
IDENTITY_GAS = 15
IDENTITY_WORD_GAS = 3


def sha256(data: bytes, gas: int) -> tuple[int, bytes]:
    """SHA2-256 precompile (0x02): the 32-byte digest of the input."""
    cost = charge(SHA256_GAS + SHA256_WORD_GAS * word_count(len(data)), gas)
    return cost, SHA256.new(data).digest()


def ripemd160(data: bytes, gas: int) -> tuple[int, bytes]:
    """RIPEMD-160 precompile (0x03): the 20-byte digest, left-padded to 32 bytes."""
    cost = charge(RIPEMD160_GAS + RIPEMD160_WORD_GAS * word_count(len(data)), gas)
    return cost, bytes(12) + RIPEMD160.new(data).digest()


def identity(data: bytes, gas: int) -> tuple[int, bytes]:
    """IDENTITY precompile (0x04): the input, unchanged."""
    cost = charge(IDENTITY_GAS + IDENTITY_WORD_GAS * word_count(len(data)), gas)
    return cost, bytes(data)
