"""Following a code's paths from one point on an abstract stack, for the static pre-checks.

Some oracles ask a question of a code before any run: which storage slots it compares with
``msg.sender`` (``owner-takeover``), which balance reads reach a strict comparison that
decides a branch (``forced-ether``). Each answers by walking the runtime code from a point
with a stack of its own items (constants and tags of what a value came from), along
constant jumps and both sides of every branch, within a budget of instructions and paths.
The walk is the same for both; what an instruction does to the stack, and what a branch
on a tagged condition means, are the oracle's (``apply`` and ``decided``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from secant.evm.opcodes import HALTS, JUMP, JUMPI, OPS

Item = TypeVar("Item")

Apply = Callable[[list[Item], int, int, int], None]
"""What an instruction other than a jump or a halt does: (stack, pc, opcode, immediate)."""

Decided = Callable[[int, int, Item | None, Item | None, list[Item]], bool]
"""Told of each JUMP or JUMPI (pc, opcode, destination, condition, the stack after both
pops); True ends the path there, neither side followed."""


def follow_paths(ops: dict[int, tuple[int, int]], jumpdests: frozenset[int], start: int,
                 stack: list[Item], steps: int, paths: int, apply: Apply[Item],
                 decided: Decided[Item] | None = None) -> None:
    """Walk the code ``ops`` (pc -> opcode, immediate) from ``start`` with ``stack``.

    Depth first: at a JUMPI the fall-through side waits (with a copy of the stack) while
    the jump is followed, when its destination is a constant JUMPDEST; a jump anywhere
    else, a halt, an unknown byte or the end of the code ends a path. At most ``steps``
    instructions over all paths, and at most ``paths`` paths: an answer from a walk that
    ran out errs towards what it has seen so far.
    """
    waiting: list[tuple[int, list[Item]]] = [(start, stack)]
    budget, followed = steps, 0
    while waiting and budget > 0 and followed < paths:
        pc, stack = waiting.pop()
        followed += 1
        while budget > 0:
            budget -= 1
            entry = ops.get(pc)
            if entry is None:
                break
            op, value = entry
            if op == JUMP or op == JUMPI:
                dest = stack.pop() if stack else None
                condition = (stack.pop() if stack else None) if op == JUMPI else None
                if decided is not None and decided(pc, op, dest, condition, stack):
                    break
                if op == JUMPI:
                    waiting.append((pc + 1, list(stack)))
                if not isinstance(dest, int) or dest not in jumpdests:
                    break
                pc = dest
                continue
            if op in HALTS or op not in OPS:
                break
            apply(stack, pc, op, value)
            pc += 1 + OPS[op].immediate
