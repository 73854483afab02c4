"""Fixed-seed campaigns on the bundled examples do exactly what they did when the stored
fingerprints were made (``bench/fingerprints.py``).

A change meant to alter what campaigns do regenerates ``fingerprints.json`` with
``.venv/bin/python bench/fingerprints.py --write tests/campaign/fingerprints.json`` and
says why in its commit; a refactoring must leave it alone.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.compile.conftest import needs_node

ROOT = Path(__file__).resolve().parents[2]
STORED = json.loads((Path(__file__).with_name("fingerprints.json")).read_text())


def bench_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("secant_bench_fingerprints",
                                                  ROOT / "bench" / "fingerprints.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


FINGERPRINTS = bench_module()


def test_every_campaign_has_a_stored_fingerprint() -> None:
    assert sorted(spec.name for spec in FINGERPRINTS.CAMPAIGNS) == sorted(STORED)


@needs_node
@pytest.mark.parametrize("spec", FINGERPRINTS.CAMPAIGNS, ids=lambda spec: spec.name)
def test_campaign_matches_its_fingerprint(spec: object) -> None:
    assert FINGERPRINTS.fingerprint(spec) == STORED[spec.name]  # type: ignore[attr-defined]
