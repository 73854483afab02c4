"""Branch sides that do nothing but refuse the transaction, found statically.

A ``require`` that fails, a custom error, the compiler's input checks (an index out of
bounds, an overflow under checked arithmetic): on one side of their JUMPI the code reverts
straight away, and what that side reaches is the revert alone. A search that aims at such
a side (Harvey's input prediction, say) gains a revert and nothing behind it, while on a
handler that wraps its arguments into range, or a check the handler's own clamp already
satisfies, no input reaches it at all. The side is worth aiming at when the revert is a
finding: a Panic whose code the campaign reports (a failed ``assert`` is Panic(0x01)).

:func:`refuses` runs the side's code abstractly from the JUMPI: constants on the stack
(PUSH, DUP, SWAP and the pure operations of constants), constant words written to memory,
jumps to constant targets, so that a call of a shared helper and its return are followed.
The side refuses when it reaches REVERT without a branch, a log, a storage write, a call or
a creation on the way, and the revert is not a reported Panic. Whatever the walk cannot
follow (a jump to a computed target, a branch, a loop, too long a way) answers no: the side
is kept.
"""

from __future__ import annotations

import bisect
from collections.abc import Container

from secant.abi import PANIC_SELECTOR
from secant.evm.cfg import ControlFlowGraph
from secant.evm.constant_stack import peek, step
from secant.evm.opcodes import (
    CALL,
    CALLCODE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    HALTS,
    JUMP,
    JUMPI,
    LOG0,
    LOG4,
    MSTORE,
    REVERT,
    SSTORE,
    STATICCALL,
    TSTORE,
)
from secant.evm.pure import PURE

__all__ = ["refuses"]

_PANIC = int.from_bytes(PANIC_SELECTOR, "big")
"""The first four bytes of a Panic's revert data, as the top of a word."""

MAX_STEPS = 512
"""Instructions the walk follows from the JUMPI before it gives up (answers no)."""

_EFFECTS = frozenset({SSTORE, TSTORE, CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE,
                      CREATE2, *range(LOG0, LOG4 + 1)})
"""Instructions with an effect a finding may come of: a side that runs one is kept."""


def refuses(graph: ControlFlowGraph, pc: int, taken: bool, reported: Container[int]) -> bool:
    """Whether the side ``taken`` of the JUMPI at ``pc`` only refuses the transaction.

    ``reported`` holds the Panic codes the campaign reports: a side that panics with one of
    them is a finding, not a refusal (module docstring).
    """
    start = _side_start(graph, pc, taken)
    if start is None:
        return False
    index = bisect.bisect_left(graph.starts, start)
    stack: list[int | None] = []
    memory: dict[int, int | None] = {}
    steps = 0
    while index < len(graph.blocks):
        for _, op, value in graph.blocks[index][1]:
            steps += 1
            if steps > MAX_STEPS or op == JUMPI or op in _EFFECTS:
                return False
            if op == REVERT:
                return not _panics_with(memory, peek(stack, 0), reported)
            if op in HALTS:
                return False
            if op == JUMP:
                target = peek(stack, 0)
                if not isinstance(target, int) or target not in graph.jumpdests:
                    return False
                index = bisect.bisect_left(graph.starts, target)
                stack.pop()
                break
            if op == MSTORE:
                offset, word = peek(stack, 0), peek(stack, 1)
                if isinstance(offset, int):
                    memory[offset] = word if isinstance(word, int) else None
                else:
                    memory.clear()  # it may have overwritten any constant word
            pure = PURE.get(op)
            operands = [peek(stack, depth) for depth in range(pure.arity)] if pure else []
            step(stack, op, value)
            if pure is not None and all(isinstance(x, int) for x in operands):
                stack[-1] = pure.compute(*operands)
        else:
            index += 1  # fell through into the next block
    return False


def _side_start(graph: ControlFlowGraph, pc: int, taken: bool) -> int | None:
    """Where the side ``taken`` of the JUMPI at ``pc`` begins (None: not a known JUMPI)."""
    index = bisect.bisect_right(graph.starts, pc) - 1
    if index < 0:
        return None
    instructions = graph.blocks[index][1]
    if not instructions or instructions[-1][0] != pc or instructions[-1][1] != JUMPI:
        return None
    if not taken:
        return graph.starts[index + 1] if index + 1 < len(graph.starts) else None
    stack: list[int | None] = []
    for _, op, value in instructions[:-1]:
        step(stack, op, value)
    target = peek(stack, 0)
    return target if isinstance(target, int) and target in graph.jumpdests else None


def _panics_with(memory: dict[int, int | None], offset: int | None,
                 reported: Container[int]) -> bool:
    """Whether a revert of the data at ``offset`` is a Panic with a reported code.

    Unknown revert data that a Panic selector was written for counts as reported (kept).
    """
    selector_written = any(isinstance(word, int) and word >> 224 == _PANIC
                           for word in memory.values())
    if not isinstance(offset, int):
        return selector_written
    word = memory.get(offset)
    if not isinstance(word, int) or word >> 224 != _PANIC:
        return selector_written and offset not in memory
    code = memory.get(offset + 4)
    return not isinstance(code, int) or code in reported
