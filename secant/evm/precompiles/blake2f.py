"""BLAKE2F (0x09, EIP-152): the BLAKE2b compression function F with a caller-chosen round count.

Input is exactly 213 bytes: ``rounds`` (4 bytes, big-endian), the state ``h`` (8 words), the
message block ``m`` (16 words), the offset counters ``t0, t1`` (2 words) and the final-block
flag ``f`` (1 byte, 0 or 1); words are 64-bit little-endian. The output is the new state
``h`` (64 bytes). Gas: one per round. A wrong length or flag fails the call.
"""

from __future__ import annotations

import struct

from secant.evm.precompiles._base import PrecompileFailure, charge

BLAKE2F_ROUND_GAS = 1
INPUT_LENGTH = 213

MASK64 = (1 << 64) - 1

IV = (
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
    0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
)  # fmt: skip

SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)
"""The message word schedule; round ``i`` uses ``SIGMA[i % 10]``."""

# The state is kept as four rows (v0..v3), (v4..v7), (v8..v11), (v12..v15), each packed in one
# int with its words in 64-bit lanes 128 bits apart, so that one int operation applies G's step
# to four columns (or diagonals) at once; the 64 spare bits of a lane absorb addition carries
# and shifted-out bits, cleared by masking with _LANES.
_LANE_BITS = 128
_LANES = sum(MASK64 << (_LANE_BITS * i) for i in range(4))


def _pack(words: tuple[int, ...] | list[int]) -> int:
    """Pack four 64-bit words into lanes."""
    return words[0] | words[1] << 128 | words[2] << 256 | words[3] << 384


def _unpack(row: int) -> tuple[int, int, int, int]:
    """Return the four 64-bit words of a packed row."""
    return row & MASK64, row >> 128 & MASK64, row >> 256 & MASK64, row >> 384 & MASK64


def compress(
    rounds: int, h: tuple[int, ...], m: tuple[int, ...], t0: int, t1: int, final: bool
) -> tuple[int, ...]:
    """Return the state after the BLAKE2b compression F of block ``m`` into state ``h``.

    Each round applies the mixing function G to the four columns of the 4x4 state, then to
    its four diagonals (rows rotated left by 1, 2 and 3 words), with message words taken in
    the round's ``SIGMA`` order.
    """
    lanes = _LANES
    a = _pack(h[:4])
    b = _pack(h[4:])
    c = _pack(IV[:4])
    d = _pack((IV[4] ^ t0, IV[5] ^ t1, IV[6] ^ (MASK64 if final else 0), IV[7]))
    # Per schedule: message words of the column step (first and second G input), then of the
    # diagonal step.
    packed = [
        (
            _pack([m[s[0]], m[s[2]], m[s[4]], m[s[6]]]),
            _pack([m[s[1]], m[s[3]], m[s[5]], m[s[7]]]),
            _pack([m[s[8]], m[s[10]], m[s[12]], m[s[14]]]),
            _pack([m[s[9]], m[s[11]], m[s[13]], m[s[15]]]),
        )
        for s in SIGMA
    ]
    for r in range(rounds):
        x0, y0, x1, y1 = packed[r % 10]
        # G on the columns.
        a = (a + b + x0) & lanes
        d ^= a
        d = ((d >> 32) | (d << 32)) & lanes
        c = (c + d) & lanes
        b ^= c
        b = ((b >> 24) | (b << 40)) & lanes
        a = (a + b + y0) & lanes
        d ^= a
        d = ((d >> 16) | (d << 48)) & lanes
        c = (c + d) & lanes
        b ^= c
        b = ((b >> 63) | (b << 1)) & lanes
        # Rotate rows b, c, d left by 1, 2, 3 words: the diagonals become columns.
        b = ((b | (b << 512)) >> 128) & lanes
        c = ((c | (c << 512)) >> 256) & lanes
        d = ((d | (d << 512)) >> 384) & lanes
        # G on the diagonals.
        a = (a + b + x1) & lanes
        d ^= a
        d = ((d >> 32) | (d << 32)) & lanes
        c = (c + d) & lanes
        b ^= c
        b = ((b >> 24) | (b << 40)) & lanes
        a = (a + b + y1) & lanes
        d ^= a
        d = ((d >> 16) | (d << 48)) & lanes
        c = (c + d) & lanes
        b ^= c
        b = ((b >> 63) | (b << 1)) & lanes
        # Rotate back.
        b = ((b | (b << 512)) >> 384) & lanes
        c = ((c | (c << 512)) >> 256) & lanes
        d = ((d | (d << 512)) >> 128) & lanes
    v = (*_unpack(a), *_unpack(b), *_unpack(c), *_unpack(d))
    return tuple(h[i] ^ v[i] ^ v[i + 8] for i in range(8))


def blake2f(data: bytes, gas: int) -> tuple[int, bytes]:
    """BLAKE2F precompile (0x09): the compressed state, 64 bytes."""
    if len(data) != INPUT_LENGTH:
        raise PrecompileFailure("BLAKE2F input must be 213 bytes")
    rounds = int.from_bytes(data[:4], "big")
    cost = charge(BLAKE2F_ROUND_GAS * rounds, gas)
    flag = data[212]
    if flag > 1:
        raise PrecompileFailure("BLAKE2F final-block flag must be 0 or 1")
    words = struct.unpack_from("<26Q", data, 4)
    state = compress(rounds, words[:8], words[8:24], words[24], words[25], flag == 1)
    return cost, struct.pack("<8Q", *state)
