"""The BN254 (alt_bn128) precompiles: ECADD (0x06), ECMUL (0x07), ECPAIRING (0x08).

EIP-196 and EIP-197 with the Istanbul gas of EIP-1108. Field elements are 32-byte big-endian
words and must be below the field modulus; ``(0, 0)`` encodes the point at infinity. A G2
point is ``x.imag || x.real || y.imag || y.real`` (imaginary part first).

- ECADD: input zero-padded to 128 bytes (two G1 points); output their sum. Gas 150.
- ECMUL: input zero-padded to 96 bytes (a G1 point and a 256-bit scalar); output the
  product. Gas 6000.
- ECPAIRING: input of ``k * 192`` bytes, pairs of a G1 and a G2 point; output the word 1 if
  the product of their pairings is 1, else 0 (1 for ``k = 0``). Gas ``45000 + 34000 k``.

Any coordinate not below the modulus, point off its curve, G2 point outside the order-r
subgroup, or pairing input whose length is not a multiple of 192 fails the call.
"""

from __future__ import annotations

from secant.evm.precompiles._base import PrecompileFailure, charge, read
from secant.evm.precompiles.bn254_curve import (
    G1Point,
    G2Point,
    g1_add,
    g1_is_on_curve,
    g1_mul,
    g2_in_subgroup,
    g2_is_on_curve,
)
from secant.evm.precompiles.bn254_field import P
from secant.evm.precompiles.bn254_pairing import pairing_check

ECADD_GAS = 150
ECMUL_GAS = 6000
ECPAIRING_BASE_GAS = 45000
ECPAIRING_PAIR_GAS = 34000
PAIR_LENGTH = 192

_ZERO_WORD = bytes(32)
_ONE_WORD = (1).to_bytes(32, "big")


def _words(data: bytes, count: int) -> list[int]:
    """Return ``count`` big-endian 32-byte words of ``data``, each checked to be below P."""
    words = [int.from_bytes(data[i : i + 32], "big") for i in range(0, 32 * count, 32)]
    if any(w >= P for w in words):
        raise PrecompileFailure("field element not below the BN254 modulus")
    return words


def decode_g1(data: bytes) -> G1Point | None:
    """Decode a 64-byte G1 point (``None`` for infinity); fail if it is not on the curve."""
    x, y = _words(data, 2)
    if x == 0 and y == 0:
        return None
    point = (x, y)
    if not g1_is_on_curve(point):
        raise PrecompileFailure("G1 point not on the curve")
    return point


def decode_g2(data: bytes) -> G2Point | None:
    """Decode a 128-byte G2 point (``None`` for infinity); fail unless it is in G2."""
    x_im, x_re, y_im, y_re = _words(data, 4)
    if x_im == x_re == y_im == y_re == 0:
        return None
    point = ((x_re, x_im), (y_re, y_im))
    if not g2_is_on_curve(point):
        raise PrecompileFailure("G2 point not on the twist curve")
    if not g2_in_subgroup(point):
        raise PrecompileFailure("G2 point not in the order-r subgroup")
    return point


def encode_g1(point: G1Point | None) -> bytes:
    """Encode a G1 point as 64 bytes (all zero for infinity)."""
    if point is None:
        return _ZERO_WORD + _ZERO_WORD
    return point[0].to_bytes(32, "big") + point[1].to_bytes(32, "big")


def ecadd(data: bytes, gas: int) -> tuple[int, bytes]:
    """ECADD precompile (0x06): the sum of two G1 points."""
    cost = charge(ECADD_GAS, gas)
    data = read(data, 0, 128)
    return cost, encode_g1(g1_add(decode_g1(data[:64]), decode_g1(data[64:])))


def ecmul(data: bytes, gas: int) -> tuple[int, bytes]:
    """ECMUL precompile (0x07): a G1 point times a scalar."""
    cost = charge(ECMUL_GAS, gas)
    data = read(data, 0, 96)
    return cost, encode_g1(g1_mul(decode_g1(data[:64]), int.from_bytes(data[64:], "big")))


def ecpairing(data: bytes, gas: int) -> tuple[int, bytes]:
    """ECPAIRING precompile (0x08): 1 if the product of the pairings is 1, else 0."""
    count, rest = divmod(len(data), PAIR_LENGTH)
    cost = charge(ECPAIRING_BASE_GAS + ECPAIRING_PAIR_GAS * count, gas)
    if rest:
        raise PrecompileFailure("pairing input length not a multiple of 192")
    pairs = []
    for offset in range(0, len(data), PAIR_LENGTH):
        p = decode_g1(data[offset : offset + 64])
        q = decode_g2(data[offset + 64 : offset + PAIR_LENGTH])
        pairs.append((p, q))
    return cost, _ONE_WORD if pairing_check(pairs) else _ZERO_WORD
