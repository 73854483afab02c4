"""POINT EVALUATION (EIP-4844), through ckzg and the bundled mainnet trusted setup."""

from __future__ import annotations

import random
import sys

import pytest

from secant.errors import SecantError
from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles import point_evaluation as pe

ckzg = pytest.importorskip("ckzg")

BLS_MODULUS = pe.BLS_MODULUS
INFINITY = b"\xc0" + bytes(47)  # compressed G1 point at infinity
G1_GENERATOR = bytes.fromhex(
    "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"
)
# [tau] G2 of the mainnet KZG ceremony, as pinned by the consensus and execution specs.
TAU_G2 = (
    "b5bfd7dd8cdeb128843bc287230af38926187075cbfbefa81009a2ce615ac53d2914e5870cb452d2afaaab24f3499f72"
    "185cbfee53492714734429b7b38608e23926c911cceceac9a36851477ba4c60b087041de621000edc98edada20c1def2"
)
SUCCESS = (4096).to_bytes(32, "big") + BLS_MODULUS.to_bytes(32, "big")


def field(n: int) -> bytes:
    return n.to_bytes(32, "big")


def call_data(commitment: bytes, z: bytes, y: bytes, proof: bytes) -> bytes:
    return pe.kzg_to_versioned_hash(commitment) + z + y + commitment + proof


def setup_lines() -> list[str]:
    return pe.BUNDLED_TRUSTED_SETUP.read_text().split()


def test_bundled_setup_is_the_mainnet_one() -> None:
    lines = setup_lines()
    assert lines[:2] == ["4096", "65"]
    g2 = lines[2 + 4096 : 2 + 4096 + 65]
    g1_monomial = lines[2 + 4096 + 65 :]
    assert len(g1_monomial) == 4096
    assert g2[1] == TAU_G2
    assert bytes.fromhex(g1_monomial[0]) == G1_GENERATOR


def test_versioned_hash() -> None:
    digest = pe.kzg_to_versioned_hash(INFINITY)
    assert digest[0] == 1 and len(digest) == 32


def test_zero_polynomial() -> None:
    data = call_data(INFINITY, field(12345), field(0), INFINITY)
    assert pe.point_evaluation(data, 50000) == (50000, SUCCESS)


def test_identity_polynomial_uses_tau() -> None:
    # p(X) = X: commitment [tau] G1, quotient (X - z) / (X - z) = 1, proof = G1, p(z) = z.
    tau_g1 = bytes.fromhex(setup_lines()[2 + 4096 + 65 + 1])
    z = field(random.Random(1).randrange(BLS_MODULUS))
    assert pe.point_evaluation(call_data(tau_g1, z, z, G1_GENERATOR), 10**6)[1] == SUCCESS
    with pytest.raises(PrecompileFailure):
        pe.point_evaluation(call_data(tau_g1, z, field(1), G1_GENERATOR), 10**6)


def test_random_blob_proof() -> None:
    rng = random.Random(4844)
    blob = b"".join(field(rng.randrange(BLS_MODULUS)) for _ in range(4096))
    settings = pe.kzg_settings()
    commitment = ckzg.blob_to_kzg_commitment(blob, settings)
    z = field(rng.randrange(BLS_MODULUS))
    proof, y = ckzg.compute_kzg_proof(blob, z, settings)
    assert pe.point_evaluation(call_data(commitment, z, y, proof), 10**6) == (50000, SUCCESS)
    wrong_y = field((int.from_bytes(y, "big") + 1) % BLS_MODULUS)
    with pytest.raises(PrecompileFailure):
        pe.point_evaluation(call_data(commitment, z, wrong_y, proof), 10**6)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        call_data(INFINITY, field(0), field(0), INFINITY)[:-1],
        call_data(INFINITY, field(0), field(0), INFINITY) + b"\x00",
        b"\x02" + call_data(INFINITY, field(0), field(0), INFINITY)[1:],  # version byte
        bytes(32) + call_data(INFINITY, field(0), field(0), INFINITY)[32:],
        call_data(INFINITY, field(BLS_MODULUS), field(0), INFINITY),  # z not canonical
        call_data(INFINITY, field(0), field(BLS_MODULUS), INFINITY),  # y not canonical
        call_data(INFINITY, field(0), field(1), INFINITY),  # zero polynomial is not 1
        call_data(b"\xc1" + bytes(47), field(0), field(0), INFINITY),  # bad encoding
        call_data(bytes(48), field(0), field(0), INFINITY),  # uncompressed flag unset
        call_data(INFINITY, field(0), field(0), b"\xff" * 48),
    ],
)
def test_invalid_inputs_fail(data: bytes) -> None:
    with pytest.raises(PrecompileFailure):
        pe.point_evaluation(data, 10**6)


def test_gas() -> None:
    data = call_data(INFINITY, field(7), field(0), INFINITY)
    with pytest.raises(PrecompileFailure):
        pe.point_evaluation(data, 49999)


def test_missing_ckzg_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pe, "_settings", None)
    monkeypatch.setitem(sys.modules, "ckzg", None)  # makes "import ckzg" raise ImportError
    with pytest.raises(SecantError, match="ckzg") as info:
        pe.point_evaluation(call_data(INFINITY, field(0), field(0), INFINITY), 10**6)
    assert "pip install ckzg" in str(info.value)


def test_missing_trusted_setup_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pe, "_settings", None)
    monkeypatch.setenv(pe.TRUSTED_SETUP_ENV, "/nonexistent/trusted_setup.txt")
    with pytest.raises(SecantError, match="trusted setup"):
        pe.kzg_settings()
