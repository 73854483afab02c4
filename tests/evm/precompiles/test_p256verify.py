"""P256VERIFY (EIP-7951)."""

from __future__ import annotations

import pytest
from Crypto.Hash import SHA256
from Crypto.PublicKey import ECC
from Crypto.Signature import DSS

from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles.p256verify import P256_GX, P256_GY, P256_N, P256_P, p256verify

KEY = ECC.construct(curve="P-256", d=0x1234567890ABCDEF1234567890ABCDEF1234567890ABCDEF12345678)
QX, QY = int(KEY.pointQ.x), int(KEY.pointQ.y)
ONE = (1).to_bytes(32, "big")


def word(n: int) -> bytes:
    return n.to_bytes(32, "big")


def sign(message: bytes) -> tuple[bytes, int, int]:
    digest = SHA256.new(message)
    signature = DSS.new(KEY, "fips-186-3").sign(digest)
    r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    return digest.digest(), r, s


def sign_raw(h: int, d: int, k: int) -> tuple[int, int]:
    """Textbook ECDSA with a chosen nonce, for hashes DSS would not take as is."""
    point = ECC.EccPoint(P256_GX, P256_GY, "p256") * k
    r = int(point.x) % P256_N
    return r, pow(k, -1, P256_N) * (h + r * d) % P256_N


def call(
    h: bytes, r: int, s: int, qx: int = QX, qy: int = QY, gas: int = 6900
) -> tuple[int, bytes]:
    return p256verify(h + word(r) + word(s) + word(qx) + word(qy), gas)


def test_valid_signature() -> None:
    h, r, s = sign(b"secant")
    assert call(h, r, s) == (6900, ONE)


def test_high_s_is_accepted() -> None:
    h, r, s = sign(b"secant")
    assert call(h, r, P256_N - s) == (6900, ONE)


def test_hash_above_the_group_order() -> None:
    d = 0xC0FFEE
    public = ECC.EccPoint(P256_GX, P256_GY, "p256") * d
    h = 2**256 - 1  # reduced modulo n in the verification
    r, s = sign_raw(h % P256_N, d, 0xABCDEF)
    assert call(word(h), r, s, int(public.x), int(public.y))[1] == ONE


@pytest.mark.parametrize(
    "tweak",
    [
        lambda h, r, s: (bytes(32), r, s, QX, QY),  # another hash
        lambda h, r, s: (h, r, s, QY, QX),  # another (invalid) key
        lambda h, r, s: (h, s, r, QX, QY),
        lambda h, r, s: (h, 0, s, QX, QY),
        lambda h, r, s: (h, r, 0, QX, QY),
        lambda h, r, s: (h, P256_N + 1, s, QX, QY),
        lambda h, r, s: (h, 2**256 - 1, s, QX, QY),
        lambda h, r, s: (h, P256_N, s, QX, QY),
        lambda h, r, s: (h, r, P256_N, QX, QY),
        lambda h, r, s: (h, r, s, P256_P, QY),  # coordinates not below p
        lambda h, r, s: (h, r, s, QX, 2**256 - 1),
        lambda h, r, s: (h, r, s, QX, QY + 1),  # not on the curve
        lambda h, r, s: (h, r, s, 0, 0),  # the point at infinity encoding
        lambda h, r, s: (h, r, s, P256_GX, P256_GY),  # a valid key, but not the signer's
    ],
)
def test_invalid_signatures_give_empty_output(tweak) -> None:  # type: ignore[no-untyped-def]
    h, r, s = sign(b"secant")
    assert call(*tweak(h, r, s)) == (6900, b"")


@pytest.mark.parametrize("length", [0, 159, 161, 192])
def test_wrong_length_gives_empty_output(length: int) -> None:
    h, r, s = sign(b"secant")
    data = (h + word(r) + word(s) + word(QX) + word(QY) + bytes(32))[:length]
    assert p256verify(data, 10**6) == (6900, b"")


def test_gas() -> None:
    h, r, s = sign(b"secant")
    with pytest.raises(PrecompileFailure):
        call(h, r, s, gas=6899)
    with pytest.raises(PrecompileFailure):
        p256verify(b"", 0)
