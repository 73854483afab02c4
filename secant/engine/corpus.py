"""The corpus: one test case per path id, with its cost vector and schedule statistics.

A seed's cost vector holds one metric per branch and SSTORE its case executed (about
110 KB for sixteen transactions through a maze, 1 MB through a DeFi harness), so over a
long campaign the vectors are what makes a corpus heavy, where the cases themselves take
about a kilobyte each. ``CostMemory`` keeps them, with the rest of a seed's prediction
material (its just-missed comparisons and storage reads), within a byte budget: the
material of the seeds fuzzed least recently is dropped first, and computed again by
running the seed's case once more when the policy next fuzzes it (docs/engine.md,
"Bounded memory").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from secant.engine.feedback import CostKey
from secant.engine.schedulers import SeedStats
from secant.types import TxSeq


@dataclass(slots=True)
class Seed:
    """A corpus entry (Harvey's PIDs store: path id -> input and cost vector).

    ``origin`` says what produced it: ``init`` (the initial population), ``mutation``,
    ``havoc``, ``prediction``; ``found_at`` is the execution count when it was added.
    """

    case: TxSeq
    path_id: int
    # None: dropped to stay within the memory budget (``CostMemory``) with
    # ``comparisons`` and ``reads``; running ``case`` again gives them back.
    costs: Mapping[CostKey, int] | None
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
    # (block number, timestamp) its last transaction began at (``RunResult.clock``).
    clock: tuple[int, int] = (0, 0)


COST_METRIC_BYTES = 180
"""The memory one metric of a cost vector takes: its key, its branch event and its slot in
the vector's dict. Measured with ``sys.getsizeof`` over every object the vectors reach:
174 bytes a metric on a maze campaign (62,269 metrics), 183 on a DeFi harness (1,076,249);
tests/engine/test_corpus.py checks the estimate against a fresh measurement."""
MATERIAL_ITEM_BYTES = 150
"""The memory of one just-missed comparison or first storage read (a tuple of two or three
256-bit integers): 2.3 KB for 16 comparisons, 4.2 KB for 28 reads, measured alike."""


def material_bytes(seed: Seed) -> int:
    """The estimated bytes of what ``CostMemory`` drops of ``seed`` (0 when dropped)."""
    if seed.costs is None:
        return 0
    return (len(seed.costs) * COST_METRIC_BYTES
            + (len(seed.comparisons) + len(seed.reads)) * MATERIAL_ITEM_BYTES)


class CostMemory:
    """The cost vectors a worker holds, within ``max_bytes`` (None: no bound).

    Seeds are held in the order they were last admitted or fuzzed (``touch``); past the
    budget, the vectors of the least recent are dropped (``seed.costs = None``, and the
    comparisons and reads with them), never that of the seed being fuzzed (``pinned``).
    The order depends only on the campaign's own sequence of events, so a campaign stays
    a function of its seed and budget.
    """

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.nbytes = 0
        self.dropped = 0
        self.restored = 0
        self.pinned: Seed | None = None
        # id(seed) -> (seed, its vector's estimated bytes), least recent first.
        self._held: OrderedDict[int, tuple[Seed, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def admit(self, seed: Seed, restored: bool = False) -> None:
        """Hold ``seed``'s vector (again, when ``restored``), dropping others past the budget."""
        if seed.costs is None:
            return
        key = id(seed)
        held = self._held.pop(key, None)
        if held is not None:
            self.nbytes -= held[1]
        nbytes = material_bytes(seed)
        self._held[key] = (seed, nbytes)
        self.nbytes += nbytes
        if restored:
            self.restored += 1
        self._shrink()

    def touch(self, seed: Seed) -> None:
        """``seed`` is being fuzzed: the most recent now, and kept while it is pinned."""
        self.pinned = seed
        key = id(seed)
        if key in self._held:
            self._held.move_to_end(key)

    def _shrink(self) -> None:
        limit = self.max_bytes
        if limit is None:
            return
        held = self._held
        while self.nbytes > limit and len(held) > 1:
            key, (seed, nbytes) = next(iter(held.items()))
            if seed is self.pinned:  # the seed being fuzzed keeps its vector
                held.move_to_end(key)
                continue
            del held[key]
            self.nbytes -= nbytes
            seed.costs = None
            seed.comparisons = seed.reads = ()
            self.dropped += 1

    def summary(self) -> dict[str, float | int | None]:
        """What ``summary.json`` says of the held vectors."""
        return {"held": len(self._held), "held_mb": round(self.nbytes / 1e6, 1),
                "budget_mb": None if self.max_bytes is None else round(self.max_bytes / 1e6),
                "dropped": self.dropped, "restored": self.restored}


class Corpus:
    """Seeds in the order they were found, plus the view schedules need.

    ``costs`` keeps the seeds' cost vectors within its budget (``CostMemory``).
    """

    def __init__(self, costs: CostMemory | None = None) -> None:
        self.seeds: list[Seed] = []
        self.stats: list[SeedStats] = []
        self.by_path: dict[int, int] = {}
        self.costs = costs if costs is not None else CostMemory()

    def __len__(self) -> int:
        return len(self.seeds)

    def __getitem__(self, index: int) -> Seed:
        return self.seeds[index]

    def add(self, seed: Seed) -> int:
        """Append a seed; return its index."""
        self.seeds.append(seed)
        self.stats.append(seed.stats)
        self.by_path[seed.path_id] = len(self.seeds) - 1
        self.costs.admit(seed)
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
