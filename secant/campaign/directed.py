"""Directed fuzzing glue: ``--target`` resolution and AFLGo seed distances.

The control-flow graph of the main contract's runtime code is recovered statically
(``secant.evm.cfg``) and completed with the block transitions runs actually take
(dynamic jumps, such as internal-function returns, that the static pass missed). A seed's
distance is AFLGo's: the mean block-level distance to the targets over the blocks it
covered. When run-time edges change the graph, every seed's distance is recomputed before
the schedule next chooses.
"""

from __future__ import annotations

from pathlib import Path

from secant.chain.chain import TestChain
from secant.compile.artifacts import Compilation, CompiledContract
from secant.engine.corpus import Corpus
from secant.errors import SecantError
from secant.evm.cfg import ControlFlowGraph
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


# ---------------------------------------------------------------------- targets
def resolve_pc_target(spec: str) -> set[int]:
    """``pc:0x1a2`` or ``pc:418`` -> {pc}."""
    text = spec.removeprefix("pc:").strip()
    try:
        return {int(text, 0)}
    except ValueError:
        raise SecantError(f"cannot read the pc in {spec!r}",
                          "write it as pc:418 or pc:0x1a2") from None


def resolve_line_target(spec: str, compilation: Compilation, contract: CompiledContract
                        ) -> set[int]:
    """Runtime pcs of ``contract`` whose source range starts on line ``LINE`` of ``FILE``."""
    file_part, _, line_part = spec.rpartition(":")
    if not file_part or not line_part.isdigit():
        raise SecantError(f"cannot read the target {spec!r}",
                          "write it as File.sol:42 (a source file and a line number)")
    line = int(line_part)
    wanted = Path(file_part)
    matches = [s for s in compilation.sources.values()
               if s.name == file_part or (s.path is not None and s.path == wanted)
               or Path(s.name).name == wanted.name and s.name.endswith(file_part.lstrip("./"))]
    if not matches:
        matches = [s for s in compilation.sources.values() if Path(s.name).name == wanted.name]
    if not matches:
        known = ", ".join(sorted(s.name for s in compilation.sources.values())) or "none"
        raise SecantError(f"no source file {file_part!r} in the compilation",
                          f"use one of: {known}")
    source = matches[0]
    mapper = compilation.mapper(contract)
    starting: set[int] = set()
    covering: dict[int, int] = {}
    lines_with_code: set[int] = set()
    for pc, entry in mapper.entries.items():
        if entry.file != source.id or entry.length <= 0:
            continue
        first, _ = source.position(entry.offset)
        last, _ = source.position(entry.offset + entry.length)
        lines_with_code.add(first)
        if first == line:
            starting.add(pc)
        elif first < line <= last:
            covering[pc] = entry.length
    if starting:
        return starting
    if covering:
        smallest = min(covering.values())
        return {pc for pc, length in covering.items() if length == smallest}
    nearest = sorted(lines_with_code, key=lambda n: (abs(n - line), n))[:3]
    hint = (f"lines with code nearby: {', '.join(map(str, sorted(nearest)))}" if nearest
            else f"{contract.name} has no code from {source.name}")
    raise SecantError(f"line {line} of {source.name} has no code in {contract.name}", hint)
