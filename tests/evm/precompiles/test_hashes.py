"""SHA2-256, RIPEMD-160 and IDENTITY."""

from __future__ import annotations

import hashlib

import pytest

from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles.hashes import identity, ripemd160, sha256


@pytest.mark.parametrize(
    ("data", "digest"),
    [
        (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ],
)
def test_sha256_vectors(data: bytes, digest: str) -> None:
    assert sha256(data, 10**6)[1].hex() == digest


@pytest.mark.parametrize(
    ("data", "digest"),
    [
        (b"", "9c1185a5c5e9fc54612808977ee8f548b2258d31"),
        (b"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
        (b"message digest", "5d0689ef49d2fae572b881b123a85ffa21595f36"),
    ],
)
def test_ripemd160_vectors(data: bytes, digest: str) -> None:
    assert ripemd160(data, 10**6)[1] == bytes(12) + bytes.fromhex(digest)


@pytest.mark.parametrize(
    ("length", "sha_gas", "ripemd_gas", "identity_gas"),
    [(0, 60, 600, 15), (1, 72, 720, 18), (32, 72, 720, 18), (33, 84, 840, 21), (64, 84, 840, 21)],
)
def test_gas_per_word(length: int, sha_gas: int, ripemd_gas: int, identity_gas: int) -> None:
    data = bytes(range(256))[:length] if length <= 256 else bytes(length)
    assert sha256(data, 10**6) == (sha_gas, hashlib.sha256(data).digest())
    assert ripemd160(data, 10**6)[0] == ripemd_gas
    assert identity(data, 10**6) == (identity_gas, data)


def test_exact_gas_and_one_short() -> None:
    data = b"x" * 40
    for fn, cost in ((sha256, 84), (ripemd160, 840), (identity, 21)):
        assert fn(data, cost)[0] == cost
        with pytest.raises(PrecompileFailure):
            fn(data, cost - 1)


def test_identity_returns_bytes() -> None:
    assert identity(bytearray(b"ab"), 100) == (18, b"ab")
    assert type(identity(bytearray(b"ab"), 100)[1]) is bytes
