"""Shared setup for test-chain tests: compiled fixtures and the compile tests' solc cache."""

from __future__ import annotations

import functools
from pathlib import Path

from secant.compile import Compilation, CompileOptions, load

from ..compile.conftest import (  # noqa: F401  (solc_installed is a fixture used here)
    FIXTURES,
    SOLIDITY,
    TEST_VERSIONS,
    needs_node,
    newest_08,
    run_cli,
    solc_installed,
)

CHAIN_FIXTURES = Path(__file__).resolve().parent / "fixtures"
"""Solidity contracts written for these tests (0.8.x unless a test pins another version)."""

ETHER = 10**18


@functools.cache
def compiled(path: Path, version: str | None = None) -> list[Compilation]:
    """Compile or load ``path`` once per test session (solc-js outputs are cached on disk)."""
    return load([path], CompileOptions(solc_version=version))


def chain_fixture(name: str) -> list[Compilation]:
    """Compile one of the contracts in ``tests/chain/fixtures``."""
    return compiled(CHAIN_FIXTURES / name)
