"""POINT EVALUATION (0x0a, EIP-4844, Cancun and later): verify a KZG proof of a blob's value.

The proof claims that the polynomial behind a blob commitment evaluates to ``y`` at ``z``.

Input is exactly 192 bytes: ``versioned_hash || z || y || commitment || proof`` (32, 32, 32, 48
and 48 bytes). The call fails on a wrong length, a versioned hash that is not
``0x01 || sha256(commitment)[1:]``, malformed field elements or points, or a proof that does
not verify. On success the output is ``FIELD_ELEMENTS_PER_BLOB`` and ``BLS_MODULUS`` as two
32-byte words. Gas: 50000.

The pairing check runs in ``ckzg`` (the optional ``kzg`` extra: ``pip install ckzg``), imported
on first use. ckzg ships no trusted setup, so the mainnet one (the KZG ceremony output, 4096 G1
points in Lagrange and monomial form and 65 G2 points) is bundled next to this module as
``kzg_trusted_setup.txt``; the environment variable ``SECANT_KZG_TRUSTED_SETUP`` may name
another file in the same format. Loading it takes a few seconds, once per process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from Crypto.Hash import SHA256

from secant.errors import SecantError
from secant.evm.precompiles._base import PrecompileFailure, charge

POINT_EVALUATION_GAS = 50000
INPUT_LENGTH = 192
VERSIONED_HASH_VERSION_KZG = 0x01
FIELD_ELEMENTS_PER_BLOB = 4096
BLS_MODULUS = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
SUCCESS_OUTPUT = FIELD_ELEMENTS_PER_BLOB.to_bytes(32, "big") + BLS_MODULUS.to_bytes(32, "big")

TRUSTED_SETUP_ENV = "SECANT_KZG_TRUSTED_SETUP"
BUNDLED_TRUSTED_SETUP = Path(__file__).with_name("kzg_trusted_setup.txt")


def kzg_to_versioned_hash(commitment: bytes) -> bytes:
    """Return the EIP-4844 versioned hash of a KZG commitment."""
    return bytes((VERSIONED_HASH_VERSION_KZG,)) + SHA256.new(commitment).digest()[1:]


def trusted_setup_path() -> Path:
    """Return the trusted-setup file to load: ``$SECANT_KZG_TRUSTED_SETUP`` or the bundled one."""
    configured = os.environ.get(TRUSTED_SETUP_ENV)
    path = Path(configured) if configured else BUNDLED_TRUSTED_SETUP
    if not path.is_file():
        raise SecantError(
            f"KZG trusted setup file not found: {path}",
            f"set {TRUSTED_SETUP_ENV} to the mainnet trusted_setup.txt of c-kzg-4844",
        )
    return path


_settings: Any = None  # ckzg's KZGSettings once loaded


def kzg_settings() -> Any:
    """Return ckzg's settings for the trusted setup, loading ckzg and the file on first use."""
    global _settings
    if _settings is None:
        try:
            import ckzg
        except ImportError:
            raise SecantError(
                "the point-evaluation precompile (0x0a) needs the ckzg package",
                "pip install ckzg (or install secant with the 'kzg' extra)",
            ) from None
        _settings = ckzg.load_trusted_setup(str(trusted_setup_path()), 0)
    return _settings


def verify_kzg_proof(commitment: bytes, z: bytes, y: bytes, proof: bytes) -> bool:
    """Return whether ``proof`` shows the committed polynomial is ``y`` at ``z``.

    Malformed inputs (a field element not below ``BLS_MODULUS``, an invalid point encoding)
    count as an invalid proof.
    """
    settings = kzg_settings()
    import ckzg

    try:
        return bool(ckzg.verify_kzg_proof(commitment, z, y, proof, settings))
    except (RuntimeError, ValueError):
        return False


def point_evaluation(data: bytes, gas: int) -> tuple[int, bytes]:
    """POINT EVALUATION precompile (0x0a): the blob constants if the KZG proof verifies."""
    if len(data) != INPUT_LENGTH:
        raise PrecompileFailure("point evaluation input must be 192 bytes")
    cost = charge(POINT_EVALUATION_GAS, gas)
    commitment = data[96:144]
    if kzg_to_versioned_hash(commitment) != data[:32]:
        raise PrecompileFailure("versioned hash does not match the commitment")
    if not verify_kzg_proof(commitment, data[32:64], data[64:96], data[144:192]):
        raise PrecompileFailure("invalid KZG proof")
    return cost, SUCCESS_OUTPUT
