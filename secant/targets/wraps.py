"""Wrapped arithmetic seen from a block's entry: the ``arithmetic`` recording.

The overflow oracle needs to know whether an arithmetic instruction wrapped at the width of
its source type (``secant.compile.arith_types``). The ``dataflow`` recording tells it and
where the wrapped value went, but it steps every instruction; running it on every run of a
contract compiled by solc < 0.8, where every ``+`` is such a site, costs several times the
campaign's speed. This recording tells the cheap half, whether a site wrapped, on the
traced run itself: the traced tables report every basic block's entry with the live frame,
and a block is straight-line code, so the operands of a site in it follow from the stack at
the block's entry and the instructions before the site.

``watch_blocks`` registers, per runtime code, the blocks holding sites, and turns the
instructions from each block's start to its last site into a Python function once (as the
EVM's block compiler does): at the entry of such a block ``wraps_at_entry`` calls it with the
frame, and it computes the sites' operands from the stack without changing anything:
PUSH, DUP, SWAP, POP, the pure arithmetic, comparison and bitwise operations, the message's
values (CALLER, CALLVALUE, CALLDATALOAD, ...), SLOAD from the state and MLOAD, MSTORE and
KECCAK256 on a copy of memory (the block's SSTOREs go to an overlay). Any other instruction
pushes unknown values (and a call, a copy into memory or a creation make memory and storage
unknown from there on). A site is reported wrapped, or unknown when an operand is: both
make the run worth the dataflow replay, which decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from secant.compile.arith_types import wrapped
from secant.evm.analysis import analyze, code_end
from secant.evm.crypto import keccak256
from secant.evm.instructions.environment import calldataload
from secant.evm.opcodes import (
    ADDRESS,
    CALLDATALOAD,
    CALLDATASIZE,
    CALLER,
    CALLVALUE,
    DUP1,
    DUP16,
    JUMPDEST,
    KECCAK256,
    MLOAD,
    MSTORE,
    MSTORE8,
    NUMBER,
    OPS,
    ORIGIN,
    POP,
    PUSH0,
    PUSH1,
    PUSH32,
    SLOAD,
    SSTORE,
    SWAP1,
    SWAP16,
    TIMESTAMP,
)
from secant.evm.pure import NAMESPACE, PURE

if TYPE_CHECKING:
    from secant.evm.forks import Fork
    from secant.evm.frame import Frame

__all__ = ["HOOKS", "PLANS", "BlockPlan", "plans_of", "watch_blocks", "wraps_at_entry"]

_MEMORY_LIMIT = 1 << 20  # a block that touches memory beyond this is not followed


# Instructions after which memory and storage are not known any more: they write memory
# from outside the block's values, or let other code run.
_CLOBBERS = frozenset(op for op, info in OPS.items()
                      if info.name in ("CALL", "CALLCODE", "DELEGATECALL", "STATICCALL",
                                       "CREATE", "CREATE2", "CALLDATACOPY", "CODECOPY",
                                       "EXTCODECOPY", "RETURNDATACOPY", "MCOPY"))


class _Unknown(Exception):
    """A value the evaluation cannot know at run time (memory far beyond the block's)."""


def _sload(f: Frame, stored: dict[int, int], slot: int) -> int:
    if slot in stored:
        return stored[slot]
    account = f.state.accounts.get(f.address)
    return account.storage.get(slot, 0) if account is not None else 0


def _grow(memory: bytearray, offset: int, size: int) -> None:
    end = offset + size
    if end > _MEMORY_LIMIT:
        raise _Unknown
    if len(memory) < end:
        memory.extend(bytes(end - len(memory)))


def _mload(memory: bytearray, offset: int) -> int:
    _grow(memory, offset, 32)
    return int.from_bytes(memory[offset:offset + 32], "big")


def _mstore(memory: bytearray, offset: int, word: int) -> None:
    _grow(memory, offset, 32)
    memory[offset:offset + 32] = word.to_bytes(32, "big")


def _mstore8(memory: bytearray, offset: int, word: int) -> None:
    _grow(memory, offset, 1)
    memory[offset] = word & 0xFF


def _keccak_words(*words: int) -> int:
    return int.from_bytes(keccak256(b"".join(word.to_bytes(32, "big") for word in words)),
                          "big")


def _keccak(memory: bytearray, offset: int, size: int) -> int:
    if not size:
        return int.from_bytes(keccak256(b""), "big")
    _grow(memory, offset, size)
    return int.from_bytes(keccak256(bytes(memory[offset:offset + size])), "big")


def _calldataload(f: Frame, offset: int) -> int:
    return calldataload(f, offset) if offset < 1 << 64 else 0


# How each evaluated instruction is written in the generated code: ``{a}`` is the top of
# the stack, ``{b}`` the next, ``{c}`` the third. The pure operations are the EVM's table
# (``secant.evm.pure``, EXP's value included); the others read the frame.
_EXPRESSIONS: dict[int, str] = {
    **{op: pure.template for op, pure in PURE.items()},
    ADDRESS: "f.address", CALLER: "f.caller", CALLVALUE: "f.value",
    CALLDATASIZE: "len(f.calldata)", ORIGIN: "f.evm.origin", TIMESTAMP: "f.env.timestamp",
    NUMBER: "f.env.number", CALLDATALOAD: "calldataload(f, {a})",
}
_NAMESPACE: dict[str, object] = {
    **NAMESPACE, "calldataload": _calldataload,
    "sload": _sload, "mload": _mload, "mstore": _mstore, "mstore8": _mstore8,
    "keccak": _keccak, "keccak_words": _keccak_words, "wrapped": wrapped,
    "Unknown": _Unknown,
}
# Operations folded when their operands are constants (no frame, no memory, no state).
_FOLDED = frozenset(PURE)
_UNKNOWN = "None"  # an expression whose value the evaluation cannot know


class _Symbolic(Exception):
    """The block touches memory in a way words written in it do not cover (see ``_Writer``)."""


class _Writer:
    """Writes the evaluation of one block as Python (what ``BlockPlan`` compiles).

    Constant operands are folded when the code is written. With ``words``, memory is kept
    as the 32-byte words the block itself stores at constant offsets (solc's mapping-slot
    hashing: two MSTOREs and a KECCAK256 of them), so the evaluation copies no memory;
    anything else in memory raises ``_Symbolic`` and the block is written again with a
    copy of memory.
    """

    def __init__(self, words: bool = False) -> None:
        self.stack: list[str] = []  # expressions; the bottom continues into the entry stack
        self.entries = 0  # items of the stack at the block's entry used so far
        self.temps = 0
        self.lines: list[str] = []
        self.memory = False  # memory was used: a copy is made at the start
        self.memory_known = True
        self.state_known = True
        self.words: dict[int, str] | None = {} if words else None

    def need(self, count: int) -> None:
        while len(self.stack) < count:
            self.entries += 1
            self.stack.insert(0, f"e{self.entries}")

    def pop(self) -> str:
        self.need(1)
        return self.stack.pop()

    def value(self, expression: str) -> str:
        self.temps += 1
        name = f"t{self.temps}"
        self.lines.append(f"{name} = {expression}")
        return name

    def site(self, pc: int, kind: tuple[int, int, bool]) -> None:
        self.need(2)
        a, b = self.stack[-1], self.stack[-2]
        if _UNKNOWN in (a, b):
            self.lines.append(f"out.append(({pc}, False))")
        else:
            self.lines.append(f"if wrapped({kind[0]}, {kind[1]}, {kind[2]}, {a}, {b}) "
                              f"is not None: out.append(({pc}, True))")

    def instruction(self, op: int, value: int) -> bool:
        """Write one instruction; False when evaluation cannot go on past it."""
        stack = self.stack
        if op == PUSH0 or PUSH1 <= op <= PUSH32:
            stack.append(str(value if op != PUSH0 else 0))
        elif DUP1 <= op <= DUP16:
            self.need(op - DUP1 + 1)
            stack.append(stack[-(op - DUP1 + 1)])
        elif SWAP1 <= op <= SWAP16:
            depth = op - SWAP1 + 1
            self.need(depth + 1)
            stack[-1], stack[-1 - depth] = stack[-1 - depth], stack[-1]
        elif op == POP:
            self.pop()
        elif op == JUMPDEST:
            pass
        elif op in _EXPRESSIONS:
            info = OPS[op]
            operands = [self.pop() for _ in range(info.pops)]
            if _UNKNOWN in operands:
                stack.append(_UNKNOWN)
            else:
                names = dict(zip("abc", operands))
                expression = _EXPRESSIONS[op].format(**names)
                folded = _fold(op, operands)
                stack.append(folded if folded is not None else self.value(expression))
        elif op == SLOAD:
            slot = self.pop()
            known = slot != _UNKNOWN and self.state_known
            stack.append(self.value(f"sload(f, stored, {slot})") if known else _UNKNOWN)
        elif op == SSTORE:
            slot, word = self.pop(), self.pop()
            if _UNKNOWN in (slot, word):
                self.state_known = False
            else:
                self.lines.append(f"stored[{slot}] = {word}")
        elif op in (MLOAD, MSTORE, MSTORE8, KECCAK256) and self.words is not None:
            self.word_access(op)
        elif op in (MLOAD, MSTORE, MSTORE8, KECCAK256):
            self.memory = True
            offset = self.pop()
            second = self.pop() if op != MLOAD else "0"
            known = self.memory_known and _UNKNOWN not in (offset, second)
            if op == MLOAD or op == KECCAK256:
                call = (f"mload(memory, {offset})" if op == MLOAD
                        else f"keccak(memory, {offset}, {second})")
                stack.append(self.value(call) if known else _UNKNOWN)
            elif not known:
                self.memory_known = False
            else:
                store = "mstore" if op == MSTORE else "mstore8"
                self.lines.append(f"{store}(memory, {offset}, {second})")
        else:
            other = OPS.get(op)
            if other is None:
                return False
            for _ in range(other.pops):
                self.pop()
            stack.extend([_UNKNOWN] * other.pushes)
            if op in _CLOBBERS:
                self.memory_known = self.state_known = False
        return True

    def word_access(self, op: int) -> None:
        """A memory instruction on the words the block wrote (``_Symbolic`` otherwise)."""
        assert self.words is not None
        offset = self.pop()
        second = self.pop() if op != MLOAD else "0"
        if not self.memory_known or _UNKNOWN in (offset, second):
            if op == MLOAD or op == KECCAK256:
                self.stack.append(_UNKNOWN)
            else:
                self.memory_known = False
            return
        if not offset.isdigit() or op == MSTORE8:
            raise _Symbolic
        start = int(offset)
        if op == MSTORE:
            if any(start != other and abs(start - other) < 32 for other in self.words):
                raise _Symbolic  # words that overlap: bytes of both
            self.words[start] = second
            return
        size = 32 if op == MLOAD else int(second) if second.isdigit() else -1
        if size <= 0 or size % 32:
            raise _Symbolic
        parts = [self.words.get(at) for at in range(start, start + size, 32)]
        if any(part is None for part in parts):
            raise _Symbolic  # bytes written before the block: its memory is needed
        if op == MLOAD:
            self.stack.append(str(parts[0]))
        else:
            self.stack.append(self.value(f"keccak_words({', '.join(map(str, parts))})"))

    def source(self, sites: Mapping[int, tuple[int, int, bool]]) -> str:
        head = [f"if len(s) < {self.entries}: return out"]
        head += [f"e{k} = s[-{k}]" for k in range(1, self.entries + 1)]
        if self.memory:
            head.append("memory = bytearray(f.memory)")
        head.append("stored = {}")
        rest = ", ".join(str(pc) for pc in sites)
        body = (["try:"] + [f"    {line}" for line in self.lines or ["pass"]]
                + ["except Unknown:",
                   "    done = {pc for pc, _ in out}",
                   f"    out += [(pc, False) for pc in ({rest},) if pc not in done]"])
        lines = ["out = []", "s = f.stack", *head, *body, "return out"]
        return "def evaluate(f):\n" + "\n".join(f"    {line}" for line in lines) + "\n"


def _fold(op: int, operands: list[str]) -> str | None:
    """The value of ``op`` when every operand is a constant (None otherwise)."""
    if op not in _FOLDED or not all(operand.isdigit() for operand in operands):
        return None
    return str(PURE[op].compute(*map(int, operands)))


def _write(instructions: tuple[tuple[int, int, int], ...],
           sites: Mapping[int, tuple[int, int, bool]], words: bool) -> _Writer:
    writer = _Writer(words)
    for pc, op, value in instructions:
        if pc in sites:
            writer.site(pc, sites[pc])
            if pc == max(sites):
                break  # what the last site computes is never needed
        if not writer.instruction(op, value):
            break
    return writer


def _compile(instructions: tuple[tuple[int, int, int], ...],
             sites: Mapping[int, tuple[int, int, bool]]
             ) -> Callable[[Frame], list[tuple[int, bool]]]:
    try:
        writer = _write(instructions, sites, words=True)
    except _Symbolic:
        writer = _write(instructions, sites, words=False)
    namespace = dict(_NAMESPACE)
    exec(compile(writer.source(sites), "<wrapping sites>", "exec"), namespace)  # our own text
    evaluate: Callable[[Frame], list[tuple[int, bool]]] = namespace["evaluate"]  # type: ignore[assignment]
    return evaluate


class BlockPlan:
    """A block's instructions up to its last site, the sites' types, and their evaluation."""

    __slots__ = ("evaluate", "instructions", "sites")

    def __init__(self, instructions: tuple[tuple[int, int, int], ...],
                 sites: Mapping[int, tuple[int, int, bool]]) -> None:
        self.instructions = instructions
        self.sites = dict(sites)
        self.evaluate = _compile(instructions, self.sites)


PLANS: dict[bytes, dict[int, BlockPlan]] = {}
"""The watched blocks by code hash, then by the block's start (``watch_blocks`` fills it)."""

HOOKS: dict[bytes, frozenset[int]] = {}
"""The starts of the watched blocks by code hash: the recorder's ``block_hooks``, so the
EVM calls it at the entry of these blocks only (``secant.evm.inspector``)."""


def watch_blocks(code: bytes, code_hash: bytes, fork: Fork,
                 sites: Mapping[int, tuple[int, int, bool]]) -> None:
    """Follow the blocks of ``code`` holding ``sites`` (pc -> opcode, bits, signed)."""
    if not sites or code_hash in PLANS:
        return
    plans: dict[int, BlockPlan] = {}
    end = code_end(code)
    for start, instructions in analyze(code, code_hash, fork).blocks:
        mine = [pc for pc, _, _ in instructions if pc in sites and pc < end]
        if not mine:
            continue
        last = max(mine)
        kept = tuple((pc, op, value) for pc, op, value in instructions if pc <= last)
        plans[start] = BlockPlan(kept, {pc: sites[pc] for pc in mine})
    PLANS[code_hash] = plans
    HOOKS[code_hash] = frozenset(plans)


def plans_of(code_hash: bytes) -> dict[int, BlockPlan] | None:
    """The watched blocks of a code by their start (None: not watched)."""
    return PLANS.get(code_hash)


def wraps_at_entry(frame: Frame, plan: BlockPlan) -> list[tuple[int, bool]]:
    """The block's sites that wrap (True) or might (False: an operand is unknown).

    Called at the block's entry, before it runs; ``frame`` is left untouched.
    """
    return plan.evaluate(frame)
