"""The corpus: one test case per path id, with its cost vector and schedule statistics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from secant.engine.feedback import CostKey
from secant.engine.schedulers import SeedStats
from secant.types import TxSeq


@dataclass
class Seed:
    """A corpus entry (Harvey's PIDs store: path id -> input and cost vector).

    ``origin`` says what produced it: ``init`` (the initial population), ``mutation``,
    ``havoc``, ``prediction``; ``found_at`` is the execution count when it was added.
    """

    case: TxSeq
    path_id: int
    costs: Mapping[CostKey, int]
    stats: SeedStats
    origin: str
    found_at: int
    # Operands and relation (lhs, rhs, relation) of comparisons in its last transaction
    # whose other side was still uncovered when it was added: input-to-state's material.
    comparisons: tuple[tuple[int, int, str], ...] = ()
    # (slot, value) the last transaction read from its contract's storage, first read of
    # each slot: aggressive mode turns them into inputs.
    reads: tuple[tuple[int, int], ...] = ()
    # Found while fuzzing a seed of sFuzz's adaptive strategy (sFuzz Fig. 9 counts these).
    adaptive: bool = False


class Corpus:
    """Seeds in the order they were found, plus the view schedules need."""

    def __init__(self) -> None:
        self.seeds: list[Seed] = []
        self.stats: list[SeedStats] = []
        self.by_path: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.seeds)

    def __getitem__(self, index: int) -> Seed:
        return self.seeds[index]

    def add(self, seed: Seed) -> int:
        """Append a seed; return its index."""
        self.seeds.append(seed)
        self.stats.append(seed.stats)
        self.by_path[seed.path_id] = len(self.seeds) - 1
        return len(self.seeds) - 1

    def origins(self) -> dict[str, int]:
        """How many seeds each origin contributed."""
        counts: dict[str, int] = {}
        for seed in self.seeds:
            counts[seed.origin] = counts.get(seed.origin, 0) + 1
        return counts

    def lengths(self) -> dict[int, int]:
        """How many seeds have each sequence length."""
        counts: dict[int, int] = {}
        for seed in self.seeds:
            counts[len(seed.case)] = counts.get(len(seed.case), 0) + 1
        return dict(sorted(counts.items()))
