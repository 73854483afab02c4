"""Tests of the benchmark scripts in bench/, which are scripts, not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_bench(script: str) -> ModuleType:
    """``bench/<script>.py`` imported as the module ``secant_bench_<script>``."""
    spec = importlib.util.spec_from_file_location(f"secant_bench_{script}",
                                                  ROOT / "bench" / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
