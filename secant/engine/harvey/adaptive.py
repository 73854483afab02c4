"""sFuzz's adaptive seed selection: the closest test case for every just-missed branch.

sFuzz §3.2, Algorithm 2 (fitToSurvive). A *just-missed* branch is a branch side no run has
taken whose JUMPI some run reached. For a test case t that reaches the JUMPI, sFuzz's
``distance(t, br)`` is ``|a - b| + K`` for a wanted ``a == b``, ``K`` for ``a != b``,
``b - a + K`` for ``a >= b`` / ``a > b`` and ``a - b + K`` for ``a <= b`` / ``a < b``, with
K = 1. That is Harvey's flip cost of the branch plus K up to the off-by-one of the strict
relations, which does not change which test case is closest to a given branch (each branch
side has one relation), so the flip cost + 1 is used. Only the closest test case per branch
is kept: a small multi-objective population next to the coverage corpus.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from secant.engine.corpus import Seed
from secant.evm.costs import flip_cost
from secant.types import RunResult, TxSeq

K = 1
BranchSide = tuple[bytes, int, bool]
"""(code hash, JUMPI pc, wanted side)."""


@dataclass
class Closest:
    """The test case closest to covering one just-missed branch side."""

    distance: int
    case: TxSeq
    found_at: int
    seed: Seed | None = None  # its corpus-style seed, made when it is first picked


class AdaptiveSeeds:
    """Keeps, per just-missed branch side, the closest test case seen (see module doc)."""

    def __init__(self) -> None:
        self.best: dict[BranchSide, Closest] = {}

    def __len__(self) -> int:
        return len(self.best)

    def observe(self, result: RunResult, edges: set[tuple[bytes, int, bool]],
                execs: int) -> bool:
        """Update the closest test cases with a run; True when one improved.

        ``edges`` is the campaign's coverage after the run was merged, so a side the run
        itself covered is not just-missed. The branches of transactions the target restored
        from its prefix cache instead of running are skipped: they are those of an earlier
        run with the same prefix, observed then, and the same distance never replaces the
        closest case kept.
        """
        best = self.best
        improved = False
        case = result.case
        branches = result.branches
        skipped = len(case) - result.steps_run if result.steps_run is not None else 0
        if 0 < skipped < len(result.branch_marks):
            branches = branches[result.branch_marks[skipped]:]
        for code_hash, pc, taken, relation, lhs, rhs in branches:
            side = (code_hash, pc, not taken)
            if side in edges:
                continue
            distance = flip_cost(relation, lhs, rhs, taken) + K
            current = best.get(side)
            if current is None or distance < current.distance:
                best[side] = Closest(distance, case, execs)
                improved = True
        return improved

    def forget_covered(self, edges: set[tuple[bytes, int, bool]]) -> None:
        """Drop branch sides that some run has now taken."""
        for side in [side for side in self.best if side in edges]:
            del self.best[side]

    def pick(self, rng: random.Random) -> tuple[BranchSide, Closest] | None:
        """A just-missed branch side (uniformly, in insertion order) and its closest case."""
        if not self.best:
            return None
        sides = list(self.best)
        side = sides[rng.randrange(len(sides))]
        return side, self.best[side]
