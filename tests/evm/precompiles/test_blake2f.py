"""BLAKE2F: the EIP-152 test vectors and a cross-check with hashlib's BLAKE2b."""

from __future__ import annotations

import hashlib
import os
import random
import struct

import pytest

from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles.blake2f import IV, SIGMA, blake2f, compress

# EIP-152 test vector 5: the single block of BLAKE2b-512("abc"), 12 rounds, final.
VECTOR5 = bytes.fromhex(
    "0000000c48c9bdf267e6096a3ba7ca8485ae67bb2bf894fe72f36e3cf1361d5f3af54fa5d182e6ad7f520e51"
    "1f6c3e2b8c68059b6bbd41fbabd9831f79217e1319cde05b616263" + "00" * 125 + "03" + "00" * 15 + "01"
)


def with_rounds(rounds: int) -> bytes:
    return rounds.to_bytes(4, "big") + VECTOR5[4:]


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("vector 4", with_rounds(0),
         "08c9bcf367e6096a3ba7ca8485ae67bb2bf894fe72f36e3cf1361d5f3af54fa5"
         "d282e6ad7f520e511f6c3e2b8c68059b9442be0454267ce079217e1319cde05b"),
        ("vector 5", VECTOR5,
         "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
         "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"),
        ("vector 6", VECTOR5[:-1] + b"\x00",
         "75ab69d3190a562c51aef8d88f1c2775876944407270c42c9844252c26d28752"
         "98743e7f6d5ea2f2d3e8d226039cd31b4e426ac4f2d3d666a610c2116fde4735"),
        ("vector 7", with_rounds(1),
         "b63a380cb2897d521994a85234ee2c181b5f844d2c624c002677e9703449d2fb"
         "a551b3a8333bcdf5f2f7e08993d53923de3d64fcc68c034e717b9293fed7a421"),
    ],
)  # fmt: skip
def test_eip152_vectors(name: str, data: bytes, expected: str) -> None:
    rounds = int.from_bytes(data[:4], "big")
    assert blake2f(data, 100) == (rounds, bytes.fromhex(expected)), name


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SECANT_SLOW") != "1", reason="slow: set SECANT_SLOW=1")
def test_eip152_vector8_eight_million_rounds() -> None:
    expected = (
        "6d2ce9e534d50e18ff866ae92d70cceba79bbcd14c63819fe48752c8aca87a4b"
        "b7dcc230d22a4047f0486cfcfb50a17b24b2899eb8fca370f22240adb5170189"
    )
    assert blake2f(with_rounds(8_000_000), 8_000_000) == (8_000_000, bytes.fromhex(expected))


@pytest.mark.parametrize(
    "data",
    [
        b"",  # EIP-152 vector 0
        VECTOR5[1:],  # vector 1: 212 bytes
        b"\x00" + VECTOR5,  # vector 2: 214 bytes
        VECTOR5[:-1] + b"\x02",  # vector 3: final-block flag 2
        VECTOR5[:-1] + b"\xff",
    ],
)
def test_eip152_invalid_inputs(data: bytes) -> None:
    with pytest.raises(PrecompileFailure):
        blake2f(data, 10**6)


def test_gas_is_one_per_round() -> None:
    assert blake2f(VECTOR5, 12)[0] == 12
    with pytest.raises(PrecompileFailure):
        blake2f(VECTOR5, 11)
    assert blake2f(with_rounds(0), 0)[0] == 0


def blake2b_with_f(message: bytes) -> bytes:
    """BLAKE2b-512 of ``message`` built from the compression function."""
    h = (IV[0] ^ 0x01010040, *IV[1:])  # parameter block: digest length 64, no key, fanout 1
    blocks = [message[i : i + 128] for i in range(0, max(len(message), 1), 128)]
    for index, block in enumerate(blocks):
        last = index == len(blocks) - 1
        counter = len(message) if last else 128 * (index + 1)
        m = struct.unpack("<16Q", block.ljust(128, b"\x00"))
        h = compress(12, h, m, counter & (2**64 - 1), counter >> 64, last)
    return struct.pack("<8Q", *h)


def test_compression_matches_hashlib() -> None:
    rng = random.Random(152)
    for length in (0, 1, 3, 127, 128, 129, 255, 256, 300):
        message = bytes(rng.randrange(256) for _ in range(length))
        assert blake2b_with_f(message) == hashlib.blake2b(message).digest()


def reference_compress(
    rounds: int, h: tuple[int, ...], m: tuple[int, ...], t0: int, t1: int, final: bool
) -> tuple[int, ...]:
    """RFC 7693's F, word by word."""
    mask = 2**64 - 1

    def rotr(x: int, n: int) -> int:
        return ((x >> n) | (x << (64 - n))) & mask

    v = [*h, *IV]
    v[12] ^= t0
    v[13] ^= t1
    if final:
        v[14] ^= mask
    for r in range(rounds):
        s = SIGMA[r % 10]
        for i, (a, b, c, d) in enumerate(
            [(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
             (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)]
        ):  # fmt: skip
            v[a] = (v[a] + v[b] + m[s[2 * i]]) & mask
            v[d] = rotr(v[d] ^ v[a], 32)
            v[c] = (v[c] + v[d]) & mask
            v[b] = rotr(v[b] ^ v[c], 24)
            v[a] = (v[a] + v[b] + m[s[2 * i + 1]]) & mask
            v[d] = rotr(v[d] ^ v[a], 16)
            v[c] = (v[c] + v[d]) & mask
            v[b] = rotr(v[b] ^ v[c], 63)
    return tuple(h[i] ^ v[i] ^ v[i + 8] for i in range(8))


def test_matches_word_by_word_reference() -> None:
    rng = random.Random(7)
    for rounds in (0, 1, 2, 9, 10, 11, 20, 25):
        h = tuple(rng.getrandbits(64) for _ in range(8))
        m = tuple(rng.getrandbits(64) for _ in range(16))
        t0, t1 = rng.choice([0, 2**64 - 1, rng.getrandbits(64)]), rng.getrandbits(64)
        final = rng.random() < 0.5
        data = struct.pack(">I", rounds) + struct.pack("<8Q", *h) + struct.pack("<16Q", *m)
        data += struct.pack("<2Q", t0, t1) + bytes((final,))
        expected = struct.pack("<8Q", *reference_compress(rounds, h, m, t0, t1, final))
        assert blake2f(data, rounds) == (rounds, expected)
