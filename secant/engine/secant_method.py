"""Input prediction with the secant method (Harvey §4.2; learning paper §3.2).

Given two inputs that differ in one integer parameter (values ``i0``, ``i1``) and their cost
vectors, pick a cost metric both runs evaluated, fit the line through ``(i0, c0)`` and
``(i1, c1)`` and solve it for cost 0. Everything is integer arithmetic: when the root is not
an integer, the prediction steps *past* it in the direction in which the cost decreases, so
a linear cost really reaches zero (the branch flips). Predictions are clamped to the
parameter's type range.

Metric choice: a metric present in both vectors, non-zero in at least one and different
between them (a metric that is zero in one run yields that run's own input as the root,
which is discarded, so this is the paper's "non-zero in both" rule in effect). Metrics whose
branch side is still uncovered are preferred.

When a predicted input does not minimise its metric, ``Secant.next`` applies the step again
(Harvey's configuration B iterates; C stops after one step). The iteration is a safeguarded
secant: it steps from the two *lowest-cost* points seen so far, and when that step would
repeat an input it bisects between the best point and the newest one. Costs are absolute
distances (V-shaped around the target), so the plain two-newest-points step overshoots and
stalls on a non-linear condition such as ``x*x + 10 == 10010``; the safeguard converges.
``PredictionStats`` counts successful and failed minimisations (the papers' S, F, R).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Container, Hashable, Mapping
from dataclasses import dataclass, field

from secant.engine.feedback import RunCosts

CostVector = Mapping[Hashable, int]
"""Cost metric key (e.g. (code hash, pc, occurrence, wanted side)) -> cost >= 0."""


@dataclass(frozen=True)
class Domain:
    """The integer range a parameter can take (inclusive)."""

    low: int
    high: int

    @staticmethod
    def unsigned(bits: int = 256) -> Domain:
        """Range of uint<bits>."""
        return Domain(0, (1 << bits) - 1)

    @staticmethod
    def signed(bits: int = 256) -> Domain:
        """Range of int<bits> (two's complement)."""
        return Domain(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)

    def clamp(self, value: int) -> int:
        """``value`` pushed into the range."""
        return min(max(value, self.low), self.high)


def secant_root(i0: int, c0: int, i1: int, c1: int) -> int | None:
    """The integer where the line through (i0, c0), (i1, c1) reaches cost 0.

    None when the line is flat or the inputs are equal. A non-integer root is rounded past
    the root, toward decreasing cost: up when the cost falls as the input grows, else down.
    """
    if i0 == i1 or c0 == c1:
        return None
    # i = i0 - c0 * (i1 - i0) / (c1 - c0), exactly, as a fraction num / den with den > 0.
    num = c0 * (i1 - i0)
    den = c1 - c0
    if den < 0:
        num, den = -num, -den
    falling = (c1 - c0) * (i1 - i0) < 0  # slope m < 0: cost falls as the input grows
    if falling:
        step = -(num // den)  # ceil(-num/den)
    else:
        step = -((num + den - 1) // den)  # floor(-num/den)
    return i0 + step


def choose_metric(
    cost0: CostVector,
    cost1: CostVector,
    rng: random.Random,
    prefer: Container[Hashable] = (),
    keep: Callable[[Hashable], bool] | None = None,
) -> Hashable | None:
    """A metric to learn from, or None; ``prefer`` holds metrics of uncovered branch sides.

    ``keep`` (asked once per metric of the pool, in order) may leave a metric out; when it
    leaves out every one, there is nothing to learn from.
    """
    if isinstance(cost0, RunCosts) and isinstance(cost1, RunCosts):
        candidates = cost0.differing(cost1)
    else:
        candidates = [
            key for key, c0 in cost0.items()
            if (c1 := cost1.get(key)) is not None and c0 != c1 and (c0 or c1)
        ]
    if not candidates:
        return None
    preferred = [key for key in candidates if key in prefer]
    pool = preferred or candidates
    # Sort by repr so the choice depends only on the seed, not on dict/set order.
    pool.sort(key=repr)
    if keep is not None:
        pool = [key for key in pool if keep(key)]
        if not pool:
            return None
    return pool[rng.randrange(len(pool))]


@dataclass(frozen=True)
class Prediction:
    """A predicted value for one parameter, and the metric it aims to minimise."""

    value: int
    metric: Hashable


def predict(
    i0: int,
    cost0: CostVector,
    i1: int,
    cost1: CostVector,
    domain: Domain,
    rng: random.Random,
    prefer: Container[Hashable] = (),
    keep: Callable[[Hashable], bool] | None = None,
) -> Prediction | None:
    """PREDICT(input, cost, input', cost') for inputs that differ in one parameter.

    ``keep``: as :func:`choose_metric`'s.
    """
    metric = choose_metric(cost0, cost1, rng, prefer, keep)
    if metric is None:
        return None
    c0, c1 = cost0[metric], cost1[metric]
    root = secant_root(i0, c0, i1, c1)
    value = domain.clamp(root) if root is not None else None
    if value is None or value in (i0, i1):
        # The line's root is useless (flat, or clamped back onto an input already run):
        # the two points may sit on both arms of a V-shaped cost such as |x - 42|, whose
        # zero then lies between them (see ``straddle_root``).
        between = straddle_root(i0, c0, i1, c1)
        if between is not None:
            value = domain.clamp(between)
    if value is None or value in (i0, i1):
        return None  # nothing new to try
    return Prediction(value, metric)


def straddle_root(i0: int, c0: int, i1: int, c1: int) -> int | None:
    """The zero of a symmetric V through (i0, c0) and (i1, c1), one point on each arm.

    Harvey's equality cost is ``|a - b|``; with ``a`` affine in the input, two inputs on
    either side of the solution have costs proportional to their distances from it, so
    it lies at ``(c0 * i1 + c1 * i0) / (c0 + c1)`` (rounded to the nearest integer).
    None unless both costs are positive.
    """
    if c0 <= 0 or c1 <= 0 or i0 == i1:
        return None
    total = c0 + c1
    return (2 * (c0 * i1 + c1 * i0) + total) // (2 * total)


@dataclass
class PredictionStats:
    """Successful and failed minimisations (S, F) and the success rate R = S / (S + F).

    ``rested``: predictions not made because their metric's target was resting (see
    ``secant.engine.harvey.prediction``).
    """

    attempts: int = 0
    success: int = 0
    fail: int = 0
    rested: int = 0

    @property
    def rate(self) -> float:
        """R, or 0.0 before any outcome."""
        done = self.success + self.fail
        return self.success / done if done else 0.0


@dataclass
class Secant:
    """Iterated, safeguarded secant steps on one metric (see the module docstring).

    ``max_iterations`` counts predictions after the first (0 is Harvey's configuration C).
    """

    metric: Hashable
    domain: Domain
    max_iterations: int
    points: list[tuple[int, int]] = field(default_factory=list)
    iterations: int = 0

    def next(self, value: int, costs: CostVector) -> int | None:
        """Record the run of ``value``; return the next value to try, or None when done.

        Done when the metric reached 0, vanished (the branch was not reached), the iteration
        budget is spent, or the line gives nothing new.
        """
        cost = costs.get(self.metric)
        if cost is None or cost == 0:
            return None
        self.points.append((value, cost))
        if self.iterations >= self.max_iterations or len(self.points) < 2:
            return None
        seen = {v for v, _ in self.points}
        best = sorted(self.points, key=lambda p: (p[1], p[0]))
        (i0, c0), (i1, c1) = best[0], best[1]
        candidates = []
        root = secant_root(i0, c0, i1, c1)
        if root is not None:
            candidates.append(self.domain.clamp(root))
        candidates.append((i0 + value) // 2)  # bisect toward the newest point
        candidates.append((i0 + i1) // 2)  # or between the two best
        for guess in candidates:
            if guess not in seen:
                self.iterations += 1
                return guess
        return None


def outcome(stats: PredictionStats, metric: Hashable, costs: CostVector) -> bool:
    """Count whether a predicted run minimised ``metric``; return True on success."""
    ok = costs.get(metric) == 0
    if ok:
        stats.success += 1
    else:
        stats.fail += 1
    return ok
