"""A control-flow graph recovered from EVM bytecode, and AFLGo's distances over it.

Nodes are basic blocks (``secant.evm.analysis``). Edges are the fall-through of every block
that does not end in JUMP or a halt, and jump targets that the block itself pushes (an
abstract run of the block over an unknown entry stack, following PUSH/DUP/SWAP). Internal
function calls are handled as a call graph would: solc pushes the return address before
jumping to the callee, and a block that leaves a jump destination on the stack gets a
*summary edge* to it, while the callee's return (a jump to a stack value) stays without a
static edge. Context-insensitive return edges would connect every caller of a shared
helper (say, checked addition) with every other caller's continuation and make distances
meaningless. Other edges the analysis misses (function pointers) are added at run time
with :meth:`ControlFlowGraph.add_edge`.

Distances (AFLGo, Böhme et al. 2017, as the Fuzzing Book's directed schedule uses them):
the block-level distance ``d(b, T)`` is 0 for a target block and otherwise the harmonic
mean ``(sum_t 1/d(b, t))^-1`` over the targets reachable from ``b``, where ``d(b, t)`` is the
shortest path length; a seed's distance is the mean over the blocks it covered that have
one.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterable

from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.forks import CANCUN, Fork
from secant.evm.opcodes import DUP1, DUP16, HALTS, JUMP, JUMPI, OPS, PUSH0, PUSH32, SWAP1, SWAP16


class ControlFlowGraph:
    """Basic blocks of one code and the edges between them (see the module docstring)."""

    def __init__(self, blocks: list[tuple[int, list[tuple[int, int, int]]]],
                 jumpdests: frozenset[int]) -> None:
        self.blocks = blocks
        self.starts = [start for start, _ in blocks]
        self.jumpdests = jumpdests
        self.successors: dict[int, set[int]] = {start: set() for start in self.starts}
        self.unresolved: set[int] = set()  # blocks ending in a jump with unknown target
        self.continuations: set[int] = set()  # return addresses pushed by call sites
        self._distance_cache: dict[frozenset[int], dict[int, float]] = {}
        self._recover()

    @classmethod
    def from_code(cls, code: bytes, fork: Fork = CANCUN) -> ControlFlowGraph:
        """Recover the graph of ``code``."""
        analysis = analyze(code, keccak256(code), fork)
        return cls(analysis.blocks, analysis.jumpdests)

    def block_of(self, pc: int) -> int:
        """The start of the block containing ``pc``."""
        index = bisect.bisect_right(self.starts, pc) - 1
        if index < 0:
            raise ValueError(f"pc {pc} is before the first block")
        return self.starts[index]

    def add_edge(self, src: int, dst: int) -> bool:
        """Add an edge seen at run time; True when it was new.

        Returns into a known continuation are left out: the call site's summary edge
        already stands for them, and a return edge from a shared callee would connect every
        caller to every other caller's continuation.
        """
        if dst in self.continuations and src in self.unresolved:
            return False
        successors = self.successors.setdefault(src, set())
        if dst in successors:
            return False
        successors.add(dst)
        self.successors.setdefault(dst, set())
        self._distance_cache.clear()
        return True

    # ------------------------------------------------------------------ recovery
    def _recover(self) -> None:
        """Static edges: fall-through, constant jump targets, continuation summaries."""
        starts = self.starts
        for i, (start, instructions) in enumerate(self.blocks):
            targets, pushed, falls = self._run_block(instructions)
            successors = self.successors[start]
            if targets is None:
                self.unresolved.add(start)
            else:
                successors.update(t for t in targets if t in self.jumpdests)
            # A jump destination pushed and left on the stack is a return address: the
            # code there runs after the call, so the block leads to it (a summary edge
            # over the callee, as a call graph would have it).
            for value in pushed:
                if value in self.jumpdests and (targets is None or value not in targets):
                    successors.add(value)
                    self.continuations.add(value)
            if falls and i + 1 < len(starts):
                successors.add(starts[i + 1])

    @staticmethod
    def _run_block(instructions: list[tuple[int, int, int]]
                   ) -> tuple[frozenset[int] | None, set[int], bool]:
        """Run a block on an unknown entry stack.

        Returns its jump targets (None: unknown), the constants it leaves on the stack,
        and whether it can fall through.
        """
        stack: list[int | None] = []
        targets: frozenset[int] | None = frozenset()
        falls = True

        def pop() -> int | None:
            return stack.pop() if stack else None

        for _, op, value in instructions:
            if PUSH0 <= op <= PUSH32:
                stack.append(value)
            elif DUP1 <= op <= DUP16:
                n = op - DUP1 + 1
                stack.append(stack[-n] if n <= len(stack) else None)
            elif SWAP1 <= op <= SWAP16:
                n = op - SWAP1 + 1
                while len(stack) < n + 1:
                    stack.insert(0, None)
                stack[-1], stack[-1 - n] = stack[-1 - n], stack[-1]
            elif op == JUMP or op == JUMPI:
                target = pop()
                targets = None if target is None else frozenset((target,))
                if op == JUMP:
                    falls = False
                else:
                    pop()
            else:
                info = OPS.get(op)
                if info is None:  # not an opcode: execution stops here
                    return frozenset(), set(), False
                for _ in range(info.pops):
                    pop()
                stack.extend([None] * info.pushes)
                if op in HALTS:
                    falls = False
        return targets, {v for v in stack if v is not None}, falls

    # ------------------------------------------------------------------ distances
    def distances(self, targets: Iterable[int]) -> dict[int, float]:
        """AFLGo block distances to the blocks holding ``targets`` (pcs); cached."""
        target_blocks = frozenset(self.block_of(pc) for pc in targets)
        cached = self._distance_cache.get(target_blocks)
        if cached is not None:
            return cached
        predecessors: dict[int, list[int]] = {}
        for src, dsts in self.successors.items():
            for dst in dsts:
                predecessors.setdefault(dst, []).append(src)
        inverse_sum: dict[int, float] = {}
        for target in target_blocks:
            seen = {target: 0}
            queue = deque([target])
            while queue:
                node = queue.popleft()
                for pred in predecessors.get(node, ()):
                    if pred not in seen:
                        seen[pred] = seen[node] + 1
                        queue.append(pred)
            for node, length in seen.items():
                if length:
                    inverse_sum[node] = inverse_sum.get(node, 0.0) + 1.0 / length
        result = {node: 1.0 / total for node, total in inverse_sum.items()}
        for target in target_blocks:
            result[target] = 0.0
        self._distance_cache[target_blocks] = result
        return result

    @staticmethod
    def seed_distance(covered: Iterable[int], distances: dict[int, float]) -> float | None:
        """AFLGo's seed distance: the mean distance of its covered blocks that have one."""
        values = [distances[b] for b in covered if b in distances]
        return sum(values) / len(values) if values else None
