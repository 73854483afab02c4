"""P256VERIFY (0x100, EIP-7951, Osaka): verify an ECDSA signature over secp256r1 (NIST P-256).

Input is exactly 160 bytes: ``hash || r || s || qx || qy``. A valid signature gives the
32-byte word 1; anything else (wrong length, ``r`` or ``s`` outside ``[1, n)``, a public key
off the curve or at infinity, a signature that does not verify) gives empty output. The call
never fails for its input: the gas (6900) is charged either way.

The verification is the one the EIP spells out, on pycryptodome's P-256 point arithmetic:
``R = (h * s^-1) G + (r * s^-1) Q`` must not be the point at infinity, and ``R.x mod n == r``.
"""

from __future__ import annotations

from Crypto.PublicKey import ECC

from secant.evm.precompiles._base import charge

P256VERIFY_GAS = 6900
INPUT_LENGTH = 160

P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
P256_GX = 0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296
P256_GY = 0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5

_GENERATOR = ECC.EccPoint(P256_GX, P256_GY, "p256")
_ONE = (1).to_bytes(32, "big")


def verify(message_hash: int, r: int, s: int, qx: int, qy: int) -> bool:
    """Return whether ``(r, s)`` is a valid P-256 signature of ``message_hash`` by ``(qx, qy)``."""
    if not (0 < r < P256_N and 0 < s < P256_N and 0 <= qx < P256_P and 0 <= qy < P256_P):
        return False
    if qx == 0 and qy == 0:
        return False
    if (qy * qy - qx * qx * qx + 3 * qx - P256_B) % P256_P:
        return False  # not on y^2 = x^3 - 3x + b
    public_key = ECC.EccPoint(qx, qy, "p256")
    s_inv = pow(s, -1, P256_N)
    u1 = message_hash * s_inv % P256_N
    u2 = r * s_inv % P256_N
    point = _GENERATOR * u1 + public_key * u2
    if point.is_point_at_infinity():
        return False
    return int(point.x) % P256_N == r


def p256verify(data: bytes, gas: int) -> tuple[int, bytes]:
    """P256VERIFY precompile (0x100): the word 1 for a valid signature, else empty output."""
    cost = charge(P256VERIFY_GAS, gas)
    if len(data) != INPUT_LENGTH:
        return cost, b""
    fields = [int.from_bytes(data[i : i + 32], "big") for i in range(0, INPUT_LENGTH, 32)]
    return cost, _ONE if verify(*fields) else b""
