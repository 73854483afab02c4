"""Feedback: campaign-wide coverage, path novelty, and Harvey's cost vectors.

Cost vectors (Harvey §4.3; issue 4 item 5). For every executed JUMPI, the cost of the side
*not* taken, keyed ``(tx, code hash, pc, occurrence, wanted side)`` so that loop
iterations are distinct metrics and a branch that flipped between two runs is not compared
with itself. For every SSTORE, the arbitrary-write distance ``|slot - target|`` to a random
256-bit slot fixed per campaign, keyed ``("sstore", tx, code hash, pc, occurrence)``.

A branch's cost is computed when it is first read (``RunCosts``): prediction compares
two runs that differ in one parameter, and most of their branches are the same comparison
of the same operands, whose costs are equal without computing them (``differing``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice

from secant.evm.costs import flip_cost
from secant.types import BlockSet, BranchEvent, RunResult

CostKey = Hashable
"""A cost metric's key (see the module docstring)."""


class RunCosts(Mapping[CostKey, int]):
    """A run's cost metrics: branch costs computed on first read, SSTORE distances given.

    ``branches`` maps a branch metric's key to the branch event it comes from; ``writes``
    maps an SSTORE metric's key to its distance.
    """

    __slots__ = ("_branches", "_costs", "_writes")

    def __init__(self, branches: dict[CostKey, BranchEvent], writes: dict[CostKey, int]
                 ) -> None:
        self._branches = branches
        self._writes = writes
        self._costs: dict[CostKey, int] = {}

    def __getitem__(self, key: CostKey) -> int:
        cost = self._costs.get(key)
        if cost is not None:
            return cost
        event = self._branches.get(key)
        if event is None:
            return self._writes[key]
        cost = self._costs[key] = flip_cost(event[3], event[4], event[5], event[2])
        return cost

    def __contains__(self, key: object) -> bool:
        return key in self._branches or key in self._writes

    def __iter__(self) -> Iterator[CostKey]:
        return chain(self._branches, self._writes)

    def __len__(self) -> int:
        return len(self._branches) + len(self._writes)

    def differing(self, other: RunCosts) -> list[CostKey]:
        """The metrics of both vectors whose costs differ and are not both zero.

        Two branch events with the same relation and operands have the same cost: only
        the others are computed.
        """
        found: list[CostKey] = []
        theirs = other._branches
        for key, event in self._branches.items():
            twin = theirs.get(key)
            if twin is None or twin[3:] == event[3:]:
                continue
            mine, them = self[key], other[key]
            if mine != them:
                found.append(key)  # they differ, so not both are zero
        writes = other._writes
        for key, distance in self._writes.items():
            theirs_distance = writes.get(key)
            if theirs_distance is not None and distance != theirs_distance:
                found.append(key)
        return found


def cost_vector(result: RunResult, sstore_target: int | None, first_tx: int = 0
                ) -> RunCosts:
    """The cost of every branch side not taken and of every SSTORE of a run.

    ``first_tx`` leaves out the transactions before it: a case that differs from another
    only from transaction ``first_tx`` on ran the same branches before it, whose costs
    therefore cannot differ between the two runs.
    """
    branch_costs: dict[CostKey, BranchEvent] = {}
    marks = result.branch_marks
    branches = result.branches
    for tx in range(first_tx, len(marks)):
        end = marks[tx + 1] if tx + 1 < len(marks) else len(branches)
        seen: dict[tuple[bytes, int], int] = {}
        for event in islice(branches, marks[tx], end):
            site = event[:2]
            occurrence = seen.get(site, 0)
            seen[site] = occurrence + 1
            branch_costs[(tx, event[0], event[1], occurrence, not event[2])] = event
    writes: dict[CostKey, int] = {}
    if sstore_target is not None:
        marks = result.write_marks
        sstores = result.writes
        for tx in range(first_tx, len(marks)):
            end = marks[tx + 1] if tx + 1 < len(marks) else len(sstores)
            counted: dict[tuple[bytes, int], int] = {}
            for i in range(marks[tx], end):
                code_hash, pc, slot = sstores[i]
                site = (code_hash, pc)
                occurrence = counted.get(site, 0)
                counted[site] = occurrence + 1
                writes[("sstore", tx, code_hash, pc, occurrence)] = abs(slot - sstore_target)
    return RunCosts(branch_costs, writes)


@dataclass
class Coverage:
    """What the whole campaign has covered: blocks, branch edges and path ids."""

    blocks: BlockSet = field(default_factory=BlockSet)
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
