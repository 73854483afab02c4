"""Power schedules (the Fuzzing Book's greybox chapter; AFLFast; AFLGo).

A schedule answers two questions about the corpus: which seed to fuzz next (``choose``,
weighted by ``weights``, the book's ``assignEnergy`` + ``normalizedEnergy``) and how many
mutations it gets (``energy``, Harvey's line 5). Schedules keep their own bookkeeping: the
path frequencies of AFLFast live in the schedule, fed by ``on_execution``.

Seeds are described by ``SeedStats`` so that a schedule depends on nothing else of the
corpus. Every random choice takes the caller's ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(slots=True)
class SeedStats:
    """What schedules know about one corpus entry."""

    path_id: Hashable
    # AFLGo: the seed's average distance to the target (smaller is closer); None = unknown.
    distance: float | None = None
    # AFL-style scoring inputs. The execution cost is in the target's units (gas for a
    # contract): AFL scores by execution time, and a deterministic stand-in keeps the
    # campaign a function of its seed.
    exec_cost: float = 1.0
    coverage: int = 1
    depth: int = 0


class PowerSchedule:
    """The Fuzzing Book's ``PowerSchedule``: every seed the same weight (uniform)."""

    name = "uniform"

    def __init__(self, base_energy: int = 16, max_energy: int = 256) -> None:
        self.base_energy = base_energy
        self.max_energy = max_energy
        self.path_frequency: dict[Hashable, int] = {}

    def on_execution(self, path_id: Hashable) -> None:
        """Count one execution of ``path_id`` (whether or not it was new)."""
        self.path_frequency[path_id] = self.path_frequency.get(path_id, 0) + 1

    def weights(self, seeds: Sequence[SeedStats]) -> list[float]:
        """Unnormalised energy of every seed (the book's ``assignEnergy``)."""
        return [1.0] * len(seeds)

    def choose(self, seeds: Sequence[SeedStats], rng: random.Random) -> int:
        """Index of the next seed, drawn with probability proportional to its weight."""
        if not seeds:
            raise ValueError("cannot choose from an empty corpus")
        weights = self.weights(seeds)
        total = sum(weights)
        if total <= 0:
            return rng.randrange(len(seeds))
        return rng.choices(range(len(seeds)), weights=weights)[0]

    def energy(self, seeds: Sequence[SeedStats], index: int) -> int:
        """Mutations for ``seeds[index]``: the base energy scaled by its relative weight."""
        weights = self.weights(seeds)
        mean = sum(weights) / len(weights)
        scale = weights[index] / mean if mean > 0 else 1.0
        return max(1, min(self.max_energy, round(self.base_energy * scale)))


class AflSchedule(PowerSchedule):
    """AFL-style score: faster, larger-coverage and deeper seeds get more (AFL's perf score).

    Relative to the corpus means: execution cost 0.25x-3x (cheap is favoured), coverage
    0.25x-3x (large is favoured), and a depth bonus of up to 5x, as in AFL's
    ``calculate_score``.
    """

    name = "afl"

    def weights(self, seeds: Sequence[SeedStats]) -> list[float]:
        """AFL's performance score per seed."""
        if not seeds:
            return []
        mean_cost = sum(s.exec_cost for s in seeds) / len(seeds)
        mean_cov = sum(s.coverage for s in seeds) / len(seeds)
        out = []
        for s in seeds:
            score = 100.0
            ratio = s.exec_cost / mean_cost if mean_cost else 1.0
            score *= 3.0 if ratio < 0.25 else 2.0 if ratio < 0.5 else 1.5 if ratio < 0.75 \
                else 0.25 if ratio > 4 else 0.5 if ratio > 2 else 0.75 if ratio > 1.33 else 1.0
            cov = s.coverage / mean_cov if mean_cov else 1.0
            score *= 3.0 if cov > 3.3 else 2.0 if cov > 2 else 1.5 if cov > 1.33 \
                else 0.25 if cov < 0.33 else 0.5 if cov < 0.5 else 0.75 if cov < 0.75 else 1.0
            score *= 1 if s.depth <= 3 else 2 if s.depth <= 7 else 3 if s.depth <= 13 \
                else 4 if s.depth <= 25 else 5
            out.append(score)
        return out


class AflFastSchedule(PowerSchedule):
    """AFLFast's exponential schedule: weight ``1 / f(p) ** a`` for path frequency f(p).

    Harvey's default. Seeds on rarely exercised paths get most of the energy.
    """

    name = "aflfast"

    def __init__(self, exponent: float = 5.0, base_energy: int = 16,
                 max_energy: int = 256) -> None:
        super().__init__(base_energy, max_energy)
        self.exponent = exponent

    def weights(self, seeds: Sequence[SeedStats]) -> list[float]:
        """``1 / f(p)^a``; a path not yet counted counts as executed once."""
        freq = self.path_frequency
        return [1.0 / (max(1, freq.get(s.path_id, 1)) ** self.exponent) for s in seeds]


class AflGoSchedule(PowerSchedule):
    """AFLGo's directed schedule with the Fuzzing Book's min-max normalisation.

    With minD/maxD the smallest and largest known seed distances: a seed at minD gets
    ``maxD - minD`` (or 1 when all are equal), any other ``(maxD - minD) / (d - minD)``.
    Seeds whose distance is unknown (they reach no instruction with a distance) get the
    weight of the farthest seed.
    """

    name = "aflgo"

    def weights(self, seeds: Sequence[SeedStats]) -> list[float]:
        """Normalised inverse distance to the target."""
        known = [s.distance for s in seeds if s.distance is not None]
        if not known:
            return [1.0] * len(seeds)
        low, high = min(known), max(known)
        out = []
        for s in seeds:
            d = high if s.distance is None else s.distance
            if d == low:
                out.append(1.0 if low == high else high - low)
            else:
                out.append((high - low) / (d - low))
        return out


SCHEDULES: dict[str, type[PowerSchedule]] = {
    s.name: s for s in (PowerSchedule, AflSchedule, AflFastSchedule, AflGoSchedule)
}


def make_schedule(name: str) -> PowerSchedule:
    """A schedule by its CLI name; ``ValueError`` lists the choices."""
    try:
        return SCHEDULES[name]()
    except KeyError:
        raise ValueError(
            f"unknown schedule {name!r}; choose one of: {', '.join(SCHEDULES)}"
        ) from None
