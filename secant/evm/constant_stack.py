"""An abstract EVM stack of constants, for static scans of bytecode.

Static oracles walk a contract's instructions in order and want to know which operands
are constants (a CALL's target pushed by a PUSH20, a jump target, a value of 0): each item
is an ``int`` when a PUSH put it there (DUP and SWAP carry it along) and None when any
other instruction computed it. What the scan cannot know (an instruction's operands below
what it tracked, an unknown opcode) becomes None or clears the stack, never a wrong constant.
"""

from __future__ import annotations

from typing import TypeVar

from secant.evm.opcodes import DUP1, DUP16, OPS, PUSH0, PUSH1, PUSH32, SWAP1, SWAP16

__all__ = ["peek", "step"]

_Item = TypeVar("_Item")
"""What else a scan keeps on its stack besides constants (a hashed slot, say)."""


def peek(stack: list[_Item | int | None], depth: int) -> _Item | int | None:
    """The item ``depth`` below the top (None: unknown, or deeper than what was tracked)."""
    return stack[-1 - depth] if depth < len(stack) else None


def step(stack: list[_Item | int | None], op: int, value: int,
         limit: int | None = None) -> None:
    """Apply one instruction (``value``: a PUSH's immediate) to the abstract ``stack``.

    ``limit`` keeps only that many items from the top, so a long scan stays linear. A
    scan that keeps items of its own kind has them carried by DUP and SWAP like constants;
    any other instruction's results are None.
    """
    if op == PUSH0 or PUSH1 <= op <= PUSH32:
        stack.append(0 if op == PUSH0 else value)
    elif DUP1 <= op <= DUP16:
        stack.append(peek(stack, op - DUP1))
    elif SWAP1 <= op <= SWAP16:
        depth = op - SWAP1 + 1
        while len(stack) <= depth:
            stack.insert(0, None)
        stack[-1], stack[-1 - depth] = stack[-1 - depth], stack[-1]
    else:
        info = OPS.get(op)
        if info is None:
            stack.clear()
            return
        del stack[max(0, len(stack) - info.pops):]
        stack.extend([None] * info.pushes)
    if limit is not None and len(stack) > limit:
        del stack[:len(stack) - limit]
