"""Shared setup for compiler tests: solc-js versions are installed once into the cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from secant.compile.semver import format_version
from secant.compile.solc import install, remote_versions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SOLIDITY = FIXTURES / "solidity"

needs_node = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js/npm are not installed: solc-js compiler tests need them "
    "(install nodejs and npm to run these tests)",
)
"""Mark for tests that run solc-js; they skip only when node or npm is absent."""

TEST_VERSIONS = ["0.4.26", "0.5.17", "0.6.12", "0.7.6"]
"""The pinned solc versions the tests compile with (plus the newest 0.8.x)."""


def newest_08() -> str:
    """The newest known 0.8.x release."""
    return format_version(max(v for v in remote_versions() if v[:2] == (0, 8)))


@pytest.fixture(scope="session")
def solc_installed() -> list[str]:
    """Install the test compilers into the user cache (reused between runs)."""
    # index 4 is the newest 0.8.x; 0.8.37 pins the source-map pcs, 0.8.19 the fixtures.
    versions = list(dict.fromkeys([*TEST_VERSIONS, newest_08(), "0.8.19", "0.8.37"]))
    for text in versions:
        install(tuple(int(p) for p in text.split(".")))  # type: ignore[arg-type]
    return versions


def run_cli(*args: str, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``secant`` in a subprocess (exit code and stderr as a user sees them)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    command = [sys.executable, "-c", "from secant.cli.main import app; app(prog_name='secant')"]
    return subprocess.run([*command, *args], capture_output=True,
                          text=True, env=full_env, cwd=cwd, timeout=600, check=False)
