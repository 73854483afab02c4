"""Campaign fingerprints: a digest of what fixed-seed campaigns on the bundled examples do.

Usage: ``.venv/bin/python bench/fingerprints.py [--write FILE] [--check FILE]``

A refactoring of the engine must not change what a campaign does. For each entry of
``CAMPAIGNS`` (an example contract, an engine configuration, a seed and an execution
budget) this runs the campaign and digests the corpus (every case in the order it was
found, with its origin), the findings (kind, site, sequence, when) and the counters of
the summary that do not depend on time. The digest is independent of ``PYTHONHASHSEED``
(path ids, which hash with it, are left out; their number is kept).

``--write FILE`` stores the digests as JSON; ``--check FILE`` compares with stored ones and
exits 1 on a difference. ``tests/campaign/test_fingerprints.py`` checks a subset on every
test run; when a change is *meant* to alter campaigns, regenerate the file with ``--write``
and say why in the commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.directed import resolve_target
from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.engine.config import FuzzConfig
from secant.types import Finding, case_to_json

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "contracts"


@dataclass(frozen=True)
class Spec:
    """One fingerprinted campaign."""

    name: str
    file: str
    contract: str
    execs: int
    seed: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    target: str | None = None  # FILE:LINE for a directed campaign (marker text below)


def _line_of(file: str, marker: str) -> int:
    lines = (EXAMPLES / file).read_text().splitlines()
    return next(i + 1 for i, text in enumerate(lines) if marker in text)


CAMPAIGNS: list[Spec] = [
    Spec("baz", "Baz.sol", "Baz", 3000),
    Spec("baz-off-uniform", "Baz.sol", "Baz", 2000, 3,
         {"sequences": "off", "schedule": "uniform"}),
    Spec("baz-no-predict-afl", "Baz.sol", "Baz", 2000, 1,
         {"predict": False, "schedule": "afl"}),
    Spec("derived", "DerivedConstant.sol", "DerivedConstant", 1500, 2),
    Spec("crashme", "FuzzingBook.sol", "CrashMe", 2500),
    Spec("foo", "HarveyFoo.sol", "Foo", 2500),
    Spec("foo-eager", "HarveyFoo.sol", "Foo", 2000, 1, {"sequences": "eager"}),
    Spec("foo-no-adaptive", "HarveyFoo.sol", "Foo", 2000, 2, {"adaptive": False}),
    Spec("crowdsale", "Crowdsale.sol", "Crowdsale", 3000),
    Spec("callerbank", "CallerBank.sol", "CallerBank", 2500, 4),
    Spec("grants", "Grants.sol", "Grants", 2000),
    Spec("allowances", "Allowances.sol", "Allowances", 2500, 1),
    Spec("maze", "StatefulMaze.sol", "StatefulMaze", 3000),
    Spec("opposite", "SFuzzExamples.sol", "OppositeGame", 2000),
    Spec("directed", "DirectedMaze.sol", "DirectedMaze", 3000, 0, {"schedule": "aflgo"},
         target="assert(false)"),
]


FINDING_FIELDS = ("kind", "swc", "contract", "function", "pc", "source", "sequence",
                  "execs_to_find", "detail")
"""What a finding contributes (not its wall-clock time)."""


def run(spec: Spec) -> dict[str, Any]:
    """Run one campaign and return what its fingerprint is made of."""
    chain = TestChain.setup(load([EXAMPLES / spec.file]), contract=spec.contract)
    targets = frozenset[int]()
    if spec.target is not None:
        targets = resolve_target(f"{spec.file}:{_line_of(spec.file, spec.target)}", chain)
    config = FuzzConfig(seed=spec.seed, max_execs=spec.execs, **spec.config)
    campaign = Campaign(chain, CampaignConfig(config, target_pcs=targets))
    summary = campaign.run()
    names = chain.names()
    corpus = [[seed.origin, seed.found_at, case_to_json(seed.case, names)]
              for seed in campaign.fuzzer.corpus.seeds]
    findings = [_as_found(finding) for finding in campaign.findings.values()]
    counters = {k: summary[k] for k in ("execs", "paths", "corpus", "branches_covered",
                                        "instructions_covered", "prediction",
                                        "corpus_origins", "sequences", "adaptive")}
    return {"corpus": corpus, "findings": findings, "counters": counters}


def _as_found(finding: Finding) -> dict[str, Any]:
    """A finding's fields as the search found it.

    The campaign shrinks findings after the search (``secant.engine.shrink``); the
    digest keeps the case and detail found, so it measures the search alone, and a
    shrinking that changed the search (its corpus, counters or findings) would still show.
    """
    data = finding.to_json()
    if finding.shrink is not None:
        data["sequence"] = finding.original_sequence
        data["detail"] = finding.original_detail or finding.detail
    return {k: data[k] for k in FINDING_FIELDS}


def fingerprint(spec: Spec) -> str:
    """The digest of one campaign."""
    material = json.dumps(run(spec), sort_keys=True, default=str)
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", type=Path, help="store the digests in this JSON file")
    parser.add_argument("--check", type=Path, help="compare with the digests in this file")
    parser.add_argument("--only", help="comma-separated campaign names")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    expected = json.loads(args.check.read_text()) if args.check else {}
    digests: dict[str, str] = {}
    differ = 0
    for spec in CAMPAIGNS:
        if wanted is not None and spec.name not in wanted:
            continue
        digest = fingerprint(spec)
        digests[spec.name] = digest
        verdict = ""
        if args.check:
            same = expected.get(spec.name) == digest
            differ += not same
            verdict = "  same" if same else f"  DIFFERS (stored {expected.get(spec.name)})"
        print(f"{spec.name:20} {digest}{verdict}", flush=True)
    if args.write:
        args.write.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
