"""The EVM versions solc targets (``evmVersion``) and the first solc release that supports each.

Projects often name one EVM version for every file while some files pin an older compiler;
like Foundry, secant then asks that compiler for the newest EVM version it knows instead of
letting it fail on a name it does not know.
"""

from __future__ import annotations

from secant.compile.errors import InputError
from secant.compile.semver import Version

_FIRST_SOLC: tuple[tuple[str, Version], ...] = (
    ("homestead", (0, 4, 21)),
    ("tangerineWhistle", (0, 4, 21)),
    ("spuriousDragon", (0, 4, 21)),
    ("byzantium", (0, 4, 21)),
    ("constantinople", (0, 4, 21)),
    ("petersburg", (0, 5, 5)),
    ("istanbul", (0, 5, 14)),
    ("berlin", (0, 8, 5)),
    ("london", (0, 8, 7)),
    ("paris", (0, 8, 18)),
    ("shanghai", (0, 8, 20)),
    ("cancun", (0, 8, 24)),
    ("prague", (0, 8, 27)),
    ("osaka", (0, 8, 29)),
)
"""Oldest to newest, each with the first solc release that supports it, the releases Foundry
uses too (some older releases already accept ``berlin`` as a name)."""

EVM_VERSIONS: tuple[str, ...] = tuple(name for name, _ in _FIRST_SOLC)
"""The names solc accepts, oldest first."""


def canonical_evm_version(name: str, where: str = "") -> str:
    """Return solc's spelling of ``name`` (case is ignored); InputError when unknown.

    ``where`` says where the name was read, e.g. ``"in foundry.toml"`` or ``"(--evm-version)"``.
    """
    lookup = {known.lower(): known for known in EVM_VERSIONS}
    found = lookup.get(name.strip().lower())
    if found is None:
        place = f" {where}" if where else ""
        raise InputError(f"unknown EVM version {name!r}{place}",
                         f"use one of {', '.join(EVM_VERSIONS)}")
    return found


def evm_version_for(name: str, solc: Version) -> str | None:
    """``name``, or the newest EVM version older than it that ``solc`` supports.

    None when ``solc`` predates the ``evmVersion`` setting (before 0.4.21).
    """
    index = EVM_VERSIONS.index(canonical_evm_version(name))
    for known, first in reversed(_FIRST_SOLC[:index + 1]):
        if solc >= first:
            return known
    return None
