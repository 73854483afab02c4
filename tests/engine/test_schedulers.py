"""Power schedules: the Fuzzing Book's formulas, determinism, energy bounds."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from secant.engine.schedulers import (
    AflFastSchedule,
    AflGoSchedule,
    AflSchedule,
    PowerSchedule,
    SeedStats,
    make_schedule,
)


def test_uniform_weights_and_choice_spread() -> None:
    schedule = PowerSchedule()
    seeds = [SeedStats(p) for p in "abcd"]
    assert schedule.weights(seeds) == [1.0] * 4
    rng = random.Random(1)
    picks = Counter(schedule.choose(seeds, rng) for _ in range(4000))
    assert set(picks) == {0, 1, 2, 3} and min(picks.values()) > 800


def test_aflfast_is_inverse_power_of_path_frequency() -> None:
    schedule = AflFastSchedule(exponent=2)
    for path, times in (("hot", 10), ("warm", 2), ("cold", 1)):
        for _ in range(times):
            schedule.on_execution(path)
    seeds = [SeedStats("hot"), SeedStats("warm"), SeedStats("cold"), SeedStats("new")]
    assert schedule.weights(seeds) == [1 / 100, 1 / 4, 1.0, 1.0]
    rng = random.Random(2)
    picks = Counter(schedule.choose(seeds, rng) for _ in range(3000))
    assert picks[2] > 10 * picks[0]
    assert schedule.energy(seeds, 2) > schedule.energy(seeds, 0) >= 1


def test_aflgo_normalisation_matches_the_book() -> None:
    schedule = AflGoSchedule()
    seeds = [SeedStats("a", 2.0), SeedStats("b", 4.0), SeedStats("c", 10.0), SeedStats("d")]
    # minD = 2, maxD = 10: closest gets 8, others 8 / (d - 2); unknown counts as farthest.
    assert schedule.weights(seeds) == [8.0, 4.0, 1.0, 1.0]
    assert schedule.weights([SeedStats("x", 3.0), SeedStats("y", 3.0)]) == [1.0, 1.0]


def test_afl_score_favours_fast_large_deep() -> None:
    schedule = AflSchedule()
    seeds = [SeedStats("slow", exec_cost=100, coverage=10, depth=0),
             SeedStats("fast", exec_cost=10, coverage=10, depth=0),
             SeedStats("deep", exec_cost=55, coverage=40, depth=10)]
    w = schedule.weights(seeds)
    assert w[1] > w[0] and w[2] > w[0]


def test_choice_is_deterministic_for_a_seed() -> None:
    seeds = [SeedStats(i, float(i + 1)) for i in range(10)]
    runs = [[AflGoSchedule().choose(seeds, rng) for _ in range(20)]
            for rng in (random.Random(5), random.Random(5))]
    assert runs[0] == runs[1]


def test_energy_is_bounded() -> None:
    schedule = AflFastSchedule(exponent=5, base_energy=16, max_energy=64)
    for _ in range(1000):
        schedule.on_execution("hot")
    seeds = [SeedStats("hot"), SeedStats("cold")]
    assert 1 <= schedule.energy(seeds, 0) <= 64
    assert schedule.energy(seeds, 1) == 32  # twice the base: it holds all the weight


def test_make_schedule_names_the_choices() -> None:
    assert isinstance(make_schedule("aflfast"), AflFastSchedule)
    with pytest.raises(ValueError, match="uniform, afl, aflfast, aflgo"):
        make_schedule("fastest")
