"""The corpus's cost vectors within a byte budget (``CostMemory``)."""

from __future__ import annotations

import sys
from typing import Any

from secant.engine.corpus import (
    COST_METRIC_BYTES,
    MATERIAL_ITEM_BYTES,
    CostMemory,
    Seed,
    material_bytes,
)
from secant.engine.feedback import CostKey
from secant.engine.schedulers import SeedStats
from tests.campaign.test_quality import campaign
from tests.compile.conftest import needs_node


def seed(path_id: int, metrics: int) -> Seed:
    costs: dict[CostKey, int] = {(0, b"h", pc, 0, True): pc for pc in range(metrics)}
    return Seed((), path_id, costs, SeedStats(path_id, None, 1, 1, 1), "init", 0,
                reads=((1, 2),))


def test_the_least_recently_fuzzed_vectors_are_dropped_past_the_budget() -> None:
    memory = CostMemory(max_bytes=25 * COST_METRIC_BYTES + 3 * MATERIAL_ITEM_BYTES)
    a, b, c = seed(1, 10), seed(2, 10), seed(3, 10)
    memory.admit(a)
    memory.admit(b)
    memory.touch(a)  # a is fuzzed: b is now the least recent
    memory.admit(c)
    assert b.costs is None and a.costs is not None and c.costs is not None
    assert b.comparisons == () and b.reads == () and a.reads
    assert memory.nbytes == 20 * COST_METRIC_BYTES + 2 * MATERIAL_ITEM_BYTES
    assert len(memory) == 2
    assert memory.summary()["dropped"] == 1


def test_the_seed_being_fuzzed_keeps_its_vector() -> None:
    memory = CostMemory(max_bytes=15 * COST_METRIC_BYTES)
    pinned, other = seed(1, 10), seed(2, 10)
    memory.admit(pinned)
    memory.touch(pinned)
    memory.admit(other)  # over the budget: the other goes although it is newer
    assert pinned.costs is not None and other.costs is None
    # A vector that alone exceeds the budget is still held while nothing else is.
    huge = seed(3, 100)
    memory.touch(huge)
    memory.admit(huge, restored=True)
    assert huge.costs is not None and pinned.costs is None
    assert memory.summary()["restored"] == 1


def test_no_budget_drops_nothing() -> None:
    memory = CostMemory()
    seeds = [seed(n, 50) for n in range(20)]
    for each in seeds:
        memory.admit(each)
    assert all(each.costs is not None for each in seeds) and memory.dropped == 0


def deep_size(root: object) -> int:
    """Bytes of every object ``root`` reaches (each counted once)."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        for name in getattr(type(item), "__slots__", ()):
            if hasattr(item, name):
                stack.append(getattr(item, name))
    return total


@needs_node
def test_a_tiny_budget_gives_the_same_bugs_and_stays_bounded() -> None:
    def run(**config: Any) -> dict[str, Any]:
        return campaign("Baz.sol", "Baz", seed=0, max_execs=3000, **config).run()

    free = run(cost_vectors_mb=None)
    tiny = run(cost_vectors_mb=0.004)
    again = run(cost_vectors_mb=0.004)
    held = tiny["cost_vectors"]
    assert free["cost_vectors"]["dropped"] == 0
    assert held["dropped"] > 0 and held["restored"] > 0
    # Within the budget, give or take the one vector being fuzzed.
    assert held["held"] == 1 or held["held_mb"] <= 0.004
    # Restoring a vector is an execution of its own: the bug is found all the same.
    assert [f["source"].rsplit("/", 1)[-1] for f in tiny["findings"]] == ["Baz.sol:18"]
    assert tiny["corpus_origins"].keys() <= free["corpus_origins"].keys() | {"costs"}
    # The order of drops depends on the campaign alone: same seed, same campaign.
    for key in ("execs", "paths", "corpus", "corpus_origins", "cost_vectors", "prediction"):
        assert again[key] == tiny[key]


@needs_node
def test_the_estimates_match_a_measurement() -> None:
    run = campaign("Baz.sol", "Baz", seed=0, max_execs=300)
    run.run()
    corpus = run.fuzzer.corpus
    vectors = [s.costs for s in corpus.seeds if s.costs]
    metrics = sum(len(v) for v in vectors)
    measured = deep_size(vectors) / metrics
    assert COST_METRIC_BYTES / 2 <= measured <= COST_METRIC_BYTES * 2
    # The memory holds the corpus's material and that of sFuzz's adaptive seeds.
    assert corpus.costs.nbytes >= sum(material_bytes(s) for s in corpus.seeds)
    items = [s.comparisons + s.reads for s in corpus.seeds]
    measured = deep_size(items) / sum(len(i) for i in items)
    assert MATERIAL_ITEM_BYTES / 2 <= measured <= MATERIAL_ITEM_BYTES * 2


