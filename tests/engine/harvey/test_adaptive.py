"""sFuzz's adaptive seeds: the closest test case per just-missed branch."""

from __future__ import annotations

import random

from secant.engine.harvey.adaptive import AdaptiveSeeds
from secant.types import RunResult, Tx

H = b"\x01" * 32


def result(arg: int, branches: list[tuple[bytes, int, bool, str, int, int]]) -> RunResult:
    case = (Tx("f(uint256)", (arg,), 0x1000),)
    return RunResult(case, [], 0, set(), set(), branches, [0], [], [0], [])


def test_keeps_the_closest_case_per_just_missed_side() -> None:
    seeds = AdaptiveSeeds()
    edges = {(H, 10, False), (H, 20, True)}
    # JUMPI 10: x == 100 not taken (x = 90): wanted side True, distance |90 - 100| + 1.
    assert seeds.observe(result(90, [(H, 10, False, "eq", 90, 100)]), edges, 1)
    assert seeds.best[(H, 10, True)].distance == 11
    assert not seeds.observe(result(80, [(H, 10, False, "eq", 80, 100)]), edges, 2)
    assert seeds.observe(result(99, [(H, 10, False, "eq", 99, 100)]), edges, 3)
    assert seeds.best[(H, 10, True)].case[0].args == (99,)
    # A side already covered is not just-missed.
    seeds.observe(result(5, [(H, 20, False, "lt", 5, 3)]), edges | {(H, 20, False)}, 4)
    assert (H, 20, True) not in seeds.best
    assert len(seeds) == 1
    side, closest = seeds.pick(random.Random(0))  # type: ignore[misc]
    assert side == (H, 10, True) and closest.found_at == 3
    seeds.forget_covered(edges | {(H, 10, True)})
    assert len(seeds) == 0 and seeds.pick(random.Random(0)) is None
