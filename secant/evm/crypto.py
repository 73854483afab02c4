"""Hash functions used by the EVM and its tooling.

Keccak-256 sits on the EVM's hot path (KECCAK256, every mapping access), so it comes from
safe-pysha3's C binding (about 1 us per call); pycryptodome's ctypes wrapper is the fallback
(about 10x slower per call, same result).
"""

from collections.abc import Callable

try:
    from sha3 import keccak_256 as _keccak_256

    def keccak256(data: bytes) -> bytes:
        """Return the Keccak-256 digest of ``data`` (Ethereum's "sha3")."""
        digest: bytes = _keccak_256(data).digest()
        return digest

except ImportError:  # pragma: no cover - exercised only without safe-pysha3
    from Crypto.Hash import keccak as _keccak

    _new: Callable[..., object] = _keccak.new

    def keccak256(data: bytes) -> bytes:
        """Return the Keccak-256 digest of ``data`` (Ethereum's "sha3")."""
        digest: bytes = _keccak.new(digest_bits=256, data=data).digest()
        return digest


EMPTY_CODE_HASH = keccak256(b"")
