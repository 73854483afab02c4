"""A campaign's configuration: the engine's, its output, its oracles, its reports.

Apart from the campaign that runs it, so that what describes a campaign (the manifest, the
plans) does not import what runs one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from secant.chain.chain import TestChain
from secant.engine.config import DEFAULT_PREFIX_CACHE_MB, FuzzConfig
from secant.engine.oracle import Oracle
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT

OracleFactory = Callable[[TestChain], Oracle]
"""Makes an oracle for a worker's chain (an oracle class is one)."""


@dataclass
class CampaignConfig:
    """A campaign: the engine's configuration, an output directory, a directed target.

    ``oracles`` names the detectors to run (None: every registered one);
    ``sync_every`` is how many executions a worker runs between two exchanges of cases;
    ``shrink_limit`` bounds the executions ``finish`` spends shrinking each finding.
    """

    fuzz: FuzzConfig
    out: Path | None = None
    # A corpus folder kept across runs (--corpus): its entries run first, and every new
    # entry of this campaign is written there too, as in ``out``'s corpus/.
    shared_corpus: Path | None = None
    target_pcs: frozenset[int] = frozenset()
    # Resume from the cached state after an unchanged prefix instead of replaying it.
    prefix_cache: bool = True
    # The prefix cache's byte bound, in MB (a share of --memory-budget).
    prefix_cache_mb: float = DEFAULT_PREFIX_CACHE_MB
    oracles: Sequence[str] | None = None
    sync_every: int = 1000
    # Executions spent at most on shrinking each finding's case at the end (0: none).
    shrink_limit: int = DEFAULT_SHRINK_LIMIT
    # With ``out``: coverage.lcov, coverage/, coverage.png/.svg, frontier.json,
    # findings.sarif and reproducers/ at the end.
    reports: bool = True
    # Whether the main contract runs as a Foundry test contract, whose reproducer calls its
    # setUp() (None: guessed from its functions, as --harness auto guesses).
    test_contract: bool | None = None
