"""ECRECOVER."""

from __future__ import annotations

import pytest
from coincurve import PrivateKey

from secant.evm.crypto import keccak256
from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles.ecrecover import SECP256K1_N, ecrecover

# The ethereum/tests sender key and its address.
KEY = PrivateKey(bytes.fromhex("45a915e4d060149eb4365960e6a7a45f334393093061116b197e3240065ff2d8"))
ADDRESS = bytes.fromhex("a94f5374fce5edbc8e2a8697c15331677e6ebf0b")
HASH = keccak256(b"secant")


def word(n: int) -> bytes:
    return n.to_bytes(32, "big")


def signed(msg_hash: bytes = HASH) -> tuple[int, int, int]:
    sig = KEY.sign_recoverable(msg_hash, hasher=None)
    return sig[64] + 27, int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:64], "big")


def call(msg_hash: bytes, v: int, r: int, s: int, gas: int = 3000) -> tuple[int, bytes]:
    return ecrecover(msg_hash + word(v) + word(r) + word(s), gas)


def test_recovers_the_signer() -> None:
    v, r, s = signed()
    assert call(HASH, v, r, s) == (3000, bytes(12) + ADDRESS)


def test_known_vector() -> None:
    msg_hash = bytes.fromhex("456e9aea5e197a1f1af7a3e85a3212fa4049a3ba34c2289b4c860fc0b0c64ef3")
    r = 0x9242685BF161793CC25603C231BC2F568EB630EA16AA137D2664AC8038825608
    s = 0x4F8AE3BD7535248D0BD448298CC2E2071E56992D0774DC340C368AE950852ADA
    expected = bytes.fromhex("7156526fbd7a3c72969b54f64e42c10fbb768c8a")
    assert call(msg_hash, 28, r, s)[1] == bytes(12) + expected


def test_high_s_is_accepted() -> None:
    v, r, s = signed()
    # (r, n - s) with the other parity is the same signature, still recoverable (no EIP-2 here).
    assert call(HASH, 55 - v, r, SECP256K1_N - s)[1] == bytes(12) + ADDRESS


def test_wrong_hash_gives_another_address() -> None:
    v, r, s = signed()
    output = call(keccak256(b"other"), v, r, s)[1]
    assert len(output) == 32 and output != bytes(12) + ADDRESS


@pytest.mark.parametrize(
    "tweak",
    [
        lambda v, r, s: (v + 256, r, s),  # high bits in v
        lambda v, r, s: (v - 27, r, s),  # v = 0 or 1
        lambda v, r, s: (29, r, s),
        lambda v, r, s: (v, 0, s),
        lambda v, r, s: (v, r, 0),
        lambda v, r, s: (v, SECP256K1_N, s),
        lambda v, r, s: (v, r, SECP256K1_N),
        lambda v, r, s: (v, 2**256 - 1, s),
    ],
)
def test_invalid_signatures_give_empty_output(tweak) -> None:  # type: ignore[no-untyped-def]
    v, r, s = tweak(*signed())
    assert call(HASH, v, r, s) == (3000, b"")


def test_unrecoverable_key_gives_empty_output() -> None:
    x_not_on_curve = 5  # 5^3 + 7 = 132 is not a square mod p, so no point R has x = r = 5
    assert call(HASH, 27, x_not_on_curve, 1) == (3000, b"")


def test_input_padding_and_truncation() -> None:
    v, r, s = signed()
    data = HASH + word(v) + word(r) + word(s)
    assert ecrecover(data + b"extra", 3000)[1] == bytes(12) + ADDRESS
    assert ecrecover(data[:-1], 3000)[1] != bytes(12) + ADDRESS  # s padded with a zero byte
    assert ecrecover(b"", 3000) == (3000, b"")


def test_gas() -> None:
    with pytest.raises(PrecompileFailure):
        ecrecover(b"", 2999)
    assert ecrecover(b"", 10**6)[0] == 3000
