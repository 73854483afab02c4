"""The reports of a campaign's findings: ``findings.sarif`` and the Foundry reproducers.

:func:`write_finding_reports` writes ``OUT/reproducers/<Main>.t.sol``
(``secant.report.reproducer``), then ``OUT/findings.sarif`` (``secant.report.sarif``),
whose results name the reproducer test of each finding. It runs when a campaign
finishes, after its findings were shrunk (docs/reports.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from secant.chain.chain import TestChain
from secant.engine.oracle import Oracle
from secant.report.reproducer import write_reproducers
from secant.report.sarif import source_root, write_sarif
from secant.types import Finding

SARIF_FILE = "findings.sarif"
"""The SARIF log's name in the output folder."""


def write_finding_reports(out: Path, chain: TestChain, findings: Sequence[Finding],
                          oracles: Sequence[Oracle], test_contract: bool | None = None
                          ) -> dict[str, Any]:
    """Write the reproducers and the SARIF log of ``findings`` into ``out``.

    Returns what was written: ``{"sarif": "findings.sarif", "reproducers": {test: ...}}``
    with paths relative to ``out``. ``chain`` is the campaign's first chain; it is left
    in its sealed state. ``test_contract`` says whether the main contract ran as a Foundry
    test contract (None: guessed).
    """
    tests = write_reproducers(chain, findings, out, test_contract)
    write_sarif(out / SARIF_FILE, findings, oracles, source_root(chain), tests)
    return {"sarif": SARIF_FILE, "reproducers": sorted(set(tests.values()))}
