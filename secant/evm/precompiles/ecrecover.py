"""ECRECOVER (0x01): recover the signer address of a secp256k1 signature.

Input (zero-padded to 128 bytes): ``hash || v || r || s`` as four 32-byte words. The output
is the 20-byte address left-padded to 32 bytes, or empty output (not a failure) when ``v``
is not 27 or 28, ``r`` or ``s`` is out of ``[1, n)``, or no public key matches.
"""

from __future__ import annotations

from coincurve import PublicKey

from secant.evm.crypto import keccak256
from secant.evm.precompiles._base import charge, read

ECRECOVER_GAS = 3000
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def ecrecover(data: bytes, gas: int) -> tuple[int, bytes]:
    """ECRECOVER precompile (0x01): the signer's address, or empty output if invalid."""
    cost = charge(ECRECOVER_GAS, gas)
    data = read(data, 0, 128)
    v = int.from_bytes(data[32:64], "big")
    r = int.from_bytes(data[64:96], "big")
    s = int.from_bytes(data[96:128], "big")
    if v not in (27, 28) or not 0 < r < SECP256K1_N or not 0 < s < SECP256K1_N:
        return cost, b""
    signature = data[64:128] + bytes((v - 27,))
    try:
        key = PublicKey.from_signature_and_message(signature, data[:32], hasher=None)
    except ValueError:  # no public key recovers from this signature
        return cost, b""
    return cost, bytes(12) + keccak256(key.format(compressed=False)[1:])[12:]
