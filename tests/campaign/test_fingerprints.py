"""Fixed-seed campaigns on the bundled examples do exactly what they did when the stored
fingerprints were made (``bench/fingerprints.py``).

A change meant to alter what campaigns do regenerates ``fingerprints.json`` with
``.venv/bin/python bench/fingerprints.py --write tests/campaign/fingerprints.json`` and
says why in its commit; a refactoring must leave it alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import load_bench
from tests.compile.conftest import needs_node

STORED = json.loads((Path(__file__).with_name("fingerprints.json")).read_text())


FINGERPRINTS = load_bench("fingerprints")


def test_every_campaign_has_a_stored_fingerprint() -> None:
    assert sorted(spec.name for spec in FINGERPRINTS.CAMPAIGNS) == sorted(STORED)


@needs_node
@pytest.mark.parametrize("spec", FINGERPRINTS.CAMPAIGNS, ids=lambda spec: spec.name)
def test_campaign_matches_its_fingerprint(spec: object) -> None:
    assert FINGERPRINTS.fingerprint(spec) == STORED[spec.name]  # type: ignore[attr-defined]
