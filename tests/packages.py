"""Packages from the npm registry that tests use as real systems under test.

Each is installed once into the user cache (``test-packages/``) at test time, never
committed; a test skips when npm cannot reach the registry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from secant.compile.cache import cache_root


def npm_modules(package: str, folder: str, marker: str) -> Path:
    """``node_modules`` holding ``package`` (``@openzeppelin/contracts@5``), installed once.

    ``folder`` names the cache entry; ``marker`` is a file inside ``node_modules`` whose
    presence means the install is complete.
    """
    home = cache_root() / "test-packages" / folder
    modules = home / "node_modules"
    if (modules / marker).is_file():
        return modules
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=home.parent, prefix=".install-"))
    command = ["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund",
               "--no-package-lock", "--loglevel=error", package]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              check=False)
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"npm install {package} timed out (offline?)")
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        if any(m in proc.stderr for m in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED",
                                          "ETIMEDOUT", "ENETUNREACH")):
            pytest.skip("npm cannot reach the package registry (offline)")
        raise AssertionError(proc.stderr)
    try:
        os.replace(staging, home)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return modules


def openzeppelin_modules() -> Path:
    """``node_modules`` holding ``@openzeppelin/contracts`` 5.x."""
    return npm_modules("@openzeppelin/contracts@5", "openzeppelin-contracts-5",
                       "@openzeppelin/contracts/token/ERC20/ERC20.sol")


def forge_std_root() -> Path:
    """forge-std 1.9.7's sources (``Test.sol`` at the top), from an npm package shipping it.

    The package named forge-std on npm is an old copy without the ds-test its Test.sol
    imports.
    """
    modules = npm_modules("@layerzerolabs/toolbox-foundry@0.1.13", "toolbox-foundry-0.1.13",
                          "@layerzerolabs/toolbox-foundry/lib/forge-std/Test.sol")
    return modules / "@layerzerolabs" / "toolbox-foundry" / "lib" / "forge-std"
