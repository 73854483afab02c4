"""Which storage slots a function may read and write: a static scan of its code region.

ILF's policy network runs a graph convolution over the contract's functions (§5.1): two
functions are linked when one writes a storage slot the other reads or writes. The slots
come from a static walk of each function's *region* (``secant.learn.features``: the blocks
reachable from its entry in the dispatcher), with an abstract stack:

* a value is a constant (folded through PUSH, DUP, SWAP and a few arithmetic and bitwise
  operations), a *hashed slot* (the result of KECCAK256 over memory that holds a constant
  slot, or over another hashed slot: a mapping's entry, a dynamic array's data, a nested
  mapping), or unknown;
* memory is tracked at constant offsets for constant and hashed values only, so that
  ``mstore(0, key); mstore(0x20, slot); keccak256(0, 0x40)`` (a mapping) and
  ``mstore(0, slot); keccak256(0, 0x20)`` (a dynamic array) both give the hashed slot of
  ``slot``; the word at the highest offset the hash covers that holds a constant or a
  hashed slot is the base (solc puts the slot after the key);
* ``ADD`` of a hashed slot and anything stays that hashed slot (an array element, a struct
  field of a mapping's entry);
* an SLOAD or SSTORE at a constant records that slot, at a hashed slot its base; at an
  unknown slot nothing is recorded.

States flow along the region's blocks: a block's entry state joins those of its
predecessors (equal values kept, others unknown; stacks cut to the shorter one), a JUMP
goes where a constant on top of the stack says, a JUMPI there and to the next block.
Blocks of the region this flow never reaches (a helper solc returns from with a target
it carried on the stack, once two callers disagree) are scanned from an unknown state.
This under-approximates (a slot computed in a way the scan does not follow is left out)
and never invents a slot that is not pushed as a constant.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from secant.evm.blockgen import Instruction
from secant.evm.constant_stack import step as constant_step
from secant.evm.opcodes import (
    ADD,
    AND,
    DIV,
    DUP1,
    EXP,
    HALTS,
    JUMP,
    JUMPI,
    KECCAK256,
    MLOAD,
    MSTORE,
    MUL,
    NOT,
    OPS,
    OR,
    POP,
    PUSH0,
    PUSH32,
    SHL,
    SHR,
    SLOAD,
    SSTORE,
    SUB,
    SWAP16,
    XOR,
)

__all__ = ["Hashed", "SlotAccess", "region_slots"]

_WORD = (1 << 256) - 1
_MAX_VISITS = 8
"""Entry states a block is walked from at most per context (a loop that keeps changing
its stack would otherwise be walked for long)."""

_MAX_WALKS_PER_BLOCK = 64
"""Walks of one block at most over all contexts (a recursion or a helper called from
very many places): past it, the block keeps what it recorded."""


@dataclass(frozen=True, slots=True)
class Hashed:
    """A slot computed by hashing: a mapping's entry or an array's data, of slot ``base``."""

    base: int


Value = int | Hashed | None
"""An abstract stack or memory value: a constant, a hashed slot, or unknown (None)."""


@dataclass(frozen=True)
class SlotAccess:
    """The storage slots a region reads (SLOAD) and writes (SSTORE)."""

    reads: frozenset[int]
    writes: frozenset[int]


@dataclass(frozen=True)
class _State:
    stack: tuple[Value, ...]  # the top is the last element
    memory: tuple[tuple[int, Value], ...]  # sorted (offset, value) of known words

    def join(self, other: _State) -> _State:
        depth = min(len(self.stack), len(other.stack))
        mine = self.stack[len(self.stack) - depth:]
        theirs = other.stack[len(other.stack) - depth:]
        stack = tuple(a if a == b else None for a, b in zip(mine, theirs, strict=True))
        known = dict(other.memory)
        memory = tuple((offset, value) for offset, value in self.memory
                       if known.get(offset, None) == value and value is not None)
        return _State(stack, memory)


_UNKNOWN = _State((), ())


def _fold(op: int, a: Value, b: Value) -> Value:
    """``op`` over the top ``a`` and the next ``b`` (EVM operand order)."""
    if op == ADD and (isinstance(a, Hashed) or isinstance(b, Hashed)):
        return a if isinstance(a, Hashed) else b
    if not isinstance(a, int) or not isinstance(b, int):
        return None
    if op == ADD:
        return (a + b) & _WORD
    if op == SUB:
        return (a - b) & _WORD
    if op == MUL:
        return (a * b) & _WORD
    if op == DIV:
        return a // b if b else 0
    if op == EXP:
        return pow(a, b, 1 << 256) if b < 4096 else None
    if op == AND:
        return a & b
    if op == OR:
        return a | b
    if op == XOR:
        return a ^ b
    if op == SHL:
        return (b << a) & _WORD if a < 256 else 0
    if op == SHR:
        return b >> a if a < 256 else 0
    return None


_BINARY = frozenset({ADD, SUB, MUL, DIV, EXP, AND, OR, XOR, SHL, SHR})


def _hash_base(memory: Mapping[int, Value], offset: int, size: int) -> Value:
    """The hashed slot of KECCAK256 over ``size`` bytes at ``offset`` (module docstring)."""
    if size <= 0 or size % 32 or size > 32 * 8:
        return None
    for word in range(offset + size - 32, offset - 1, -32):
        value = memory.get(word)
        if isinstance(value, Hashed):
            return value
        if isinstance(value, int):
            return Hashed(value)
    return None


def _walk(instructions: list[Instruction], state: _State, reads: set[int],
          writes: set[int]) -> tuple[_State, Value]:
    """Run a block's instructions over ``state``; record the slots of SLOAD and SSTORE.

    Returns the state after the block and the target of its closing JUMP or JUMPI (the top
    of the stack then; None when unknown or when the block ends otherwise).
    """
    stack = list(state.stack)
    memory = dict(state.memory)
    target: Value = None

    def pop() -> Value:
        return stack.pop() if stack else None

    for _, op, value in instructions:
        if PUSH0 <= op <= PUSH32 or DUP1 <= op <= SWAP16:  # the stack's own moves
            constant_step(stack, op, value)
        elif op == POP:
            pop()
        elif op in _BINARY:
            a = pop()
            b = pop()
            stack.append(_fold(op, a, b))
        elif op == NOT:
            a = pop()
            stack.append(None if not isinstance(a, int) else a ^ _WORD)
        elif op == MSTORE:
            offset, word = pop(), pop()
            if isinstance(offset, int):
                # A word written at an offset overlaps the words within 32 bytes of it.
                for known in [k for k in memory if abs(k - offset) < 32]:
                    del memory[known]
                if word is not None:
                    memory[offset] = word
            else:
                memory.clear()
        elif op == MLOAD:
            offset = pop()
            stack.append(memory.get(offset) if isinstance(offset, int) else None)
        elif op == KECCAK256:
            offset, size = pop(), pop()
            stack.append(_hash_base(memory, offset, size)
                         if isinstance(offset, int) and isinstance(size, int) else None)
        elif op == SLOAD:
            slot = pop()
            _record(slot, reads)
            stack.append(None)
        elif op == SSTORE:
            slot = pop()
            pop()
            _record(slot, writes)
        elif op in (JUMP, JUMPI):
            target = pop()
            if op == JUMPI:
                pop()
        else:
            info = OPS.get(op)
            pops, pushes = (info.pops, info.pushes) if info is not None else (0, 0)
            for _ in range(pops):
                pop()
            stack.extend([None] * pushes)
            if info is not None and info.name in ("CALLDATACOPY", "CODECOPY",
                                                  "RETURNDATACOPY", "EXTCODECOPY", "MCOPY",
                                                  "CALL", "CALLCODE", "DELEGATECALL",
                                                  "STATICCALL"):
                memory.clear()  # writes memory where the scan does not follow
    # A long-running stack of unknowns carries nothing: keep its known part bounded.
    return _State(tuple(stack[-64:]), tuple(sorted(memory.items()))), target


def _record(slot: Value, into: set[int]) -> None:
    if isinstance(slot, int):
        into.add(slot)
    elif isinstance(slot, Hashed):
        into.add(slot.base)


def region_slots(blocks: Mapping[int, list[Instruction]], following: Mapping[int, int],
                 region: Collection[int], entry: int | None = None,
                 enabled: Collection[int] | None = None) -> SlotAccess:
    """The slots the blocks ``region`` (block starts into ``blocks``) read and write.

    ``following`` maps a block to the next one (fall-through); ``entry`` is where the walk
    starts (default: the lowest block of the region); ``enabled`` the fork's opcodes (an
    opcode outside them halts). See the module docstring.

    States are kept apart per *context*: the block addresses on the stack (the return
    addresses of the internal calls under way). A helper solc calls from several places
    (checked arithmetic, a storage update) is so walked once per caller, and its closing
    bare JUMP goes back to that caller's continuation with the caller's slot still on the
    stack; joining the callers' states would lose both.
    """
    inside = set(region) & set(blocks)
    reads: set[int] = set()
    writes: set[int] = set()
    if not inside:
        return SlotAccess(frozenset(), frozenset())
    start = entry if entry in inside else min(inside)
    Key = tuple[int, tuple[int, ...]]
    entries: dict[Key, _State] = {(start, ()): _UNKNOWN}
    visits: dict[Key, int] = {}
    walked: dict[int, int] = {}
    reached: set[int] = set()
    todo: list[Key] = [(start, ())]
    budget = _MAX_WALKS_PER_BLOCK * len(inside)
    while True:
        while todo and budget > 0:
            key = todo.pop()
            block = key[0]
            state = entries[key]
            visits[key] = visits.get(key, 0) + 1
            walked[block] = walked.get(block, 0) + 1
            reached.add(block)
            budget -= 1
            instructions = blocks[block]
            out, target = _walk(instructions, state, reads, writes)
            last = instructions[-1][1]
            successors: list[int] = []
            if isinstance(target, int) and target in inside:
                successors.append(target)
            halts = last in HALTS or (enabled is not None and last not in enabled)
            if last == JUMPI or (last != JUMP and not halts):
                following_block = following.get(block)
                if following_block is not None and following_block in inside:
                    successors.append(following_block)
            context = tuple(v for v in out.stack if isinstance(v, int) and v in inside)
            for successor in successors:
                if walked.get(successor, 0) >= _MAX_WALKS_PER_BLOCK:
                    continue  # walked often enough: what it records is recorded
                next_key = (successor, context)
                old = entries.get(next_key)
                new = out if old is None else old.join(out)
                # A state walked often enough keeps what it recorded (slots only add up).
                if new != old and visits.get(next_key, 0) < _MAX_VISITS:
                    entries[next_key] = new
                    todo.append(next_key)
        missing = next((block for block in sorted(inside) if block not in reached), None)
        if missing is None or budget <= 0:
            break
        entries[(missing, ())] = _UNKNOWN
        todo.append((missing, ()))
    return SlotAccess(frozenset(reads), frozenset(writes))
