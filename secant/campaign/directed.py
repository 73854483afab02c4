"""Directed fuzzing glue: ``--target`` resolution and AFLGo seed distances.

The control-flow graph of the main contract's runtime code is recovered statically
(``secant.campaign.cfg``) and completed with the block transitions runs actually take
(dynamic jumps, such as internal-function returns, that the static pass missed). A seed's
distance is AFLGo's: the mean block-level distance to the targets over the blocks it
covered. When run-time edges change the graph, every seed's distance is recomputed before
the schedule next chooses.
"""

from __future__ import annotations

from secant.campaign.cfg import ControlFlowGraph, resolve_line_target, resolve_pc_target
from secant.chain.chain import TestChain
from secant.engine.corpus import Corpus
from secant.errors import SecantError
from secant.evm.crypto import keccak256
from secant.evm.forks import Fork
from secant.targets.contract import ContractRun
from secant.types import RunResult


def resolve_target(spec: str, chain: TestChain) -> frozenset[int]:
    """The main contract's runtime pcs named by ``FILE:LINE`` or ``pc:N``."""
    main = chain.main
    assert main is not None
    if spec.startswith("pc:"):
        return frozenset(resolve_pc_target(spec))
    if main.compiled is None or main.compilation is None:
        raise SecantError(f"{main.name} has no source map, so {spec!r} cannot be resolved",
                          "use --target pc:N with a runtime pc")
    return frozenset(resolve_line_target(spec, main.compilation, main.compiled))


class DirectedDistance:
    """Seed distances to target pcs of one code, over a CFG completed at run time."""

    def __init__(self, code: bytes, fork: Fork, targets: frozenset[int]) -> None:
        self.code_hash = keccak256(code)
        self.cfg = ControlFlowGraph.from_code(code, fork)
        self.targets = targets
        self._seed_blocks: list[frozenset[int]] = []
        self.dirty = False

    def blocks_of(self, result: RunResult) -> frozenset[int]:
        """The blocks of the directed code a run covered."""
        code_hash = self.code_hash
        return frozenset(pc for h, pc in result.blocks if h == code_hash)

    def observe(self, result: RunResult) -> None:
        """Add the run's block transitions to the CFG."""
        code_hash = self.code_hash
        if not isinstance(result, ContractRun):
            return
        for h, src, dst in result.transitions:
            if h == code_hash and self.cfg.add_edge(src, dst):
                self.dirty = True

    def __call__(self, result: RunResult) -> float | None:
        """The distance of a new seed (remembered for later recomputation)."""
        blocks = self.blocks_of(result)
        self._seed_blocks.append(blocks)
        return self.cfg.seed_distance(blocks, self.cfg.distances(self.targets))

    def refresh(self, corpus: Corpus) -> None:
        """Recompute every seed's distance after the graph changed."""
        if not self.dirty:
            return
        self.dirty = False
        distances = self.cfg.distances(self.targets)
        for seed, blocks in zip(corpus.seeds, self._seed_blocks):
            seed.stats.distance = self.cfg.seed_distance(blocks, distances)
