"""Feedback: campaign-wide coverage, path novelty, and Harvey's cost vectors.

Cost vectors (Harvey §4.3; issue 4 item 5). For every executed JUMPI, the cost of the side
*not* taken, keyed ``(tx, code hash, pc, occurrence, wanted side)`` so that loop
iterations are distinct metrics and a branch that flipped between two runs is not compared
with itself. For every SSTORE, the arbitrary-write distance ``|slot - target|`` to a random
256-bit slot fixed per campaign, keyed ``("sstore", tx, code hash, pc, occurrence)``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from secant.evm.costs import flip_cost
from secant.types import RunResult

CostKey = Hashable
"""A cost metric's key (see the module docstring)."""


def cost_vector(result: RunResult, sstore_target: int | None) -> dict[CostKey, int]:
    """The cost of every branch side not taken and of every SSTORE of a run."""
    costs: dict[CostKey, int] = {}
    marks = result.branch_marks
    branches = result.branches
    for tx, start in enumerate(marks):
        end = marks[tx + 1] if tx + 1 < len(marks) else len(branches)
        seen: dict[tuple[bytes, int], int] = {}
        for i in range(start, end):
            code_hash, pc, taken, relation, lhs, rhs = branches[i]
            site = (code_hash, pc)
            occurrence = seen.get(site, 0)
            seen[site] = occurrence + 1
            costs[(tx, code_hash, pc, occurrence, not taken)] = flip_cost(relation, lhs, rhs,
                                                                         taken)
    if sstore_target is not None:
        marks = result.write_marks
        sstores = result.writes
        for tx, start in enumerate(marks):
            end = marks[tx + 1] if tx + 1 < len(marks) else len(sstores)
            counted: dict[tuple[bytes, int], int] = {}
            for i in range(start, end):
                code_hash, pc, slot = sstores[i]
                site = (code_hash, pc)
                occurrence = counted.get(site, 0)
                counted[site] = occurrence + 1
                costs[("sstore", tx, code_hash, pc, occurrence)] = abs(slot - sstore_target)
    return costs


@dataclass
class Coverage:
    """What the whole campaign has covered: blocks, branch edges and path ids."""

    blocks: set[tuple[bytes, int]] = field(default_factory=set)
    edges: set[tuple[bytes, int, bool]] = field(default_factory=set)
    paths: set[int] = field(default_factory=set)

    def merge(self, result: RunResult) -> tuple[bool, int, int]:
        """Add a run; return (new path?, new blocks, new edges)."""
        new_path = result.path_id not in self.paths
        if new_path:
            self.paths.add(result.path_id)
        new_blocks = 0
        if not result.blocks <= self.blocks:
            before = len(self.blocks)
            self.blocks |= result.blocks
            new_blocks = len(self.blocks) - before
        new_edges = 0
        if not result.edges <= self.edges:
            fresh = result.edges - self.edges
            new_edges = len(fresh)
            self.edges |= fresh
        return new_path, new_blocks, new_edges
