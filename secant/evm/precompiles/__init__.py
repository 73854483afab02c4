"""The precompiled contracts, by fork.

A precompile is a function ``(input data, gas available) -> (gas used, output)``. It raises
:class:`PrecompileFailure` for an exceptional halt (gas cost above the gas available, or an
input the specification rejects), after which the caller consumes all the gas it gave.
Everything else, including ECRECOVER's and P256VERIFY's "invalid signature" answers, is a
success with some output.

======= ==================== ======================================== =====================
address name                 specification                            forks
======= ==================== ======================================== =====================
0x01    ECRECOVER            yellow paper                             all
0x02    SHA2-256             yellow paper                             all
0x03    RIPEMD-160           yellow paper                             all
0x04    IDENTITY             yellow paper                             all
0x05    MODEXP               EIP-198, gas EIP-2565; Osaka: EIP-7823,  all
                             gas EIP-7883
0x06    ECADD (BN254)        EIP-196, gas EIP-1108                    all
0x07    ECMUL (BN254)        EIP-196, gas EIP-1108                    all
0x08    ECPAIRING (BN254)    EIP-197, gas EIP-1108                    all
0x09    BLAKE2F              EIP-152                                  all
0x0a    POINT EVALUATION     EIP-4844 (needs ``ckzg``)                Cancun and later
0x100   P256VERIFY           EIP-7951                                 Osaka
======= ==================== ======================================== =====================

Not implemented: the BLS12-381 precompiles of EIP-2537 (0x0b to 0x11, Prague and later).
Under ``prague`` and ``osaka`` those addresses are absent from the table, so a call to them
runs as a call to an account without code instead of the real operation.
"""

from __future__ import annotations

import functools

from secant.evm.precompiles import (
    blake2f,
    bn254,
    ecrecover,
    hashes,
    modexp,
    p256verify,
    point_evaluation,
)
from secant.evm.precompiles._base import PrecompileFailure, PrecompileFn

__all__ = ["FORKS", "PrecompileFailure", "PrecompileFn", "precompile_table"]

ECRECOVER_ADDRESS = 0x01
SHA256_ADDRESS = 0x02
RIPEMD160_ADDRESS = 0x03
IDENTITY_ADDRESS = 0x04
MODEXP_ADDRESS = 0x05
ECADD_ADDRESS = 0x06
ECMUL_ADDRESS = 0x07
ECPAIRING_ADDRESS = 0x08
BLAKE2F_ADDRESS = 0x09
POINT_EVALUATION_ADDRESS = 0x0A
P256VERIFY_ADDRESS = 0x100

FORKS = ("london", "paris", "shanghai", "cancun", "prague", "osaka")
"""The fork names :func:`precompile_table` accepts, oldest first."""


@functools.cache
def _table(fork: str) -> dict[int, PrecompileFn]:
    """Build the precompile table of ``fork`` (a name from :data:`FORKS`)."""
    table: dict[int, PrecompileFn] = {
        ECRECOVER_ADDRESS: ecrecover.ecrecover,
        SHA256_ADDRESS: hashes.sha256,
        RIPEMD160_ADDRESS: hashes.ripemd160,
        IDENTITY_ADDRESS: hashes.identity,
        MODEXP_ADDRESS: modexp.modexp,
        ECADD_ADDRESS: bn254.ecadd,
        ECMUL_ADDRESS: bn254.ecmul,
        ECPAIRING_ADDRESS: bn254.ecpairing,
        BLAKE2F_ADDRESS: blake2f.blake2f,
    }
    index = FORKS.index(fork)
    if index >= FORKS.index("cancun"):
        table[POINT_EVALUATION_ADDRESS] = point_evaluation.point_evaluation
    if index >= FORKS.index("osaka"):
        table[MODEXP_ADDRESS] = modexp.modexp_osaka
        table[P256VERIFY_ADDRESS] = p256verify.p256verify
    return table


def precompile_table(fork: str) -> dict[int, PrecompileFn]:
    """Return the precompiles of ``fork`` by address (a new dict the caller may keep).

    ``fork`` is one of :data:`FORKS` (case-insensitive); anything else raises ``ValueError``.
    """
    name = fork.lower()
    if name not in FORKS:
        raise ValueError(f"unknown fork {fork!r}; choose one of: {', '.join(FORKS)}")
    return dict(_table(name))
