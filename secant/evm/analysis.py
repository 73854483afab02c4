"""Bytecode analysis: decode once per code, cut into basic blocks, compile them.

Block-level charging. Each basic block's static gas and stack bounds are checked once at block
entry instead of per instruction. This is exact for the EVM's observable results because
(1) every exceptional halt has the same effect wherever it happens in a block (all the frame's
gas consumed, its changes reverted) and (2) blocks end at every instruction that reads the
remaining gas (GAS, SSTORE, CALL*, CREATE*), at every jump and halt, and before every
JUMPDEST, so no instruction can observe gas charged early.

Variants. The same code gets up to four compiled tables (``blockgen.py``), built lazily:
``PLAIN`` (no instrumentation), ``TRACED`` (branch, storage, log and block-value hooks),
``RECORDED`` (the same, with branches appended to the frame's branch log instead of a hook
call) and ``STEPPED`` (also ``on_step`` before every instruction, for the recordings that
follow every instruction). A table can also come with *block hooks* (``Inspector.block_hooks``):
a copy whose entries at the named block starts call ``on_hooked_block`` first.
"""

from __future__ import annotations

from typing import Any

from secant.evm.blockgen import (
    PLAIN,
    RECORDED,
    STEPPED,
    TRACED,
    VARIANT_NAMES,
    Instruction,
    compile_blocks,
)
from secant.evm.forks import Fork
from secant.evm.frame import BlockFn
from secant.evm.opcodes import HALTS, JUMP, JUMPDEST, JUMPI, READS_GAS, immediate_size

__all__ = ["PLAIN", "RECORDED", "STEPPED", "TRACED", "CodeAnalysis", "analyze", "code_end"]


def _decode(code: bytes) -> tuple[list[Instruction], frozenset[int]]:
    """Instructions as (pc, opcode, push value) and the valid jump destinations."""
    instructions: list[Instruction] = []
    jumpdests: set[int] = set()
    n = len(code)
    pc = 0
    while pc < n:
        op = code[pc]
        width = immediate_size(op)
        if width:
            raw = code[pc + 1 : pc + 1 + width]
            # A PUSH cut off by the end of code reads zeros past the end.
            value = int.from_bytes(raw, "big") << (8 * (width - len(raw)))
            instructions.append((pc, op, value))
            pc += 1 + width
        else:
            if op == JUMPDEST:
                jumpdests.add(pc)
            instructions.append((pc, op, 0))
            pc += 1
    return instructions, frozenset(jumpdests)


class CodeAnalysis:
    """Decoded code with per-variant block tables (``table[pc]`` for every block start)."""

    __slots__ = ("code", "code_hash", "fork", "instructions", "jumpdests", "_tables", "_blocks",
                 "_hooked")

    def __init__(self, code: bytes, code_hash: bytes, fork: Fork) -> None:
        self.code = code
        self.code_hash = code_hash
        self.fork = fork
        self.instructions, self.jumpdests = _decode(code)
        self._tables: dict[int, list[BlockFn | None]] = {}
        self._hooked: dict[tuple[int, frozenset[int]], list[BlockFn | None]] = {}
        self._blocks: list[tuple[int, list[Instruction]]] | None = None

    @property
    def blocks(self) -> list[tuple[int, list[Instruction]]]:
        """Basic blocks as (start pc, instructions)."""
        if self._blocks is None:
            self._blocks = self._split()
        return self._blocks

    def blocks_for(self, variant: int) -> list[BlockFn | None]:
        """The compiled table of ``variant`` (built on first use)."""
        table = self._tables.get(variant)
        if table is None:
            label = f"<evm {self.code_hash.hex()[:16]} {VARIANT_NAMES[variant]}>"
            table = self._tables[variant] = compile_blocks(
                self.blocks, self.fork, variant, self.jumpdests, len(self.code), label,
                self.code_hash,
            )
        return table

    def hooked_blocks_for(self, variant: int, hooks: frozenset[int]) -> list[BlockFn | None]:
        """The table of ``variant`` whose blocks at ``hooks`` call ``on_hooked_block`` first.

        A table of its own, compiled so that no block runs on into a hooked one (the hook
        is at the table's entry), with a wrapper at each hooked start (a pc that starts no
        block is ignored): the other blocks run as fast as ever.
        """
        key = (variant, hooks)
        table = self._hooked.get(key)
        if table is None:
            label = (f"<evm {self.code_hash.hex()[:16]} {VARIANT_NAMES[variant]} "
                     f"{len(hooks)} hooked>")
            table = compile_blocks(self.blocks, self.fork, variant, self.jumpdests,
                                   len(self.code), label, self.code_hash, hooks, _hooked)
            self._hooked[key] = table
        return table

    def block_pcs(self) -> dict[int, tuple[int, ...]]:
        """Block start pc -> pcs of the instructions in the block (for coverage)."""
        return {start: tuple(pc for pc, _, _ in instrs) for start, instrs in self.blocks}

    def _split(self) -> list[tuple[int, list[Instruction]]]:
        """Cut the instruction list into basic blocks."""
        enabled = self.fork.opcodes
        out: list[tuple[int, list[Instruction]]] = []
        current: list[Instruction] = []
        for ins in self.instructions:
            op = ins[1]
            if op == JUMPDEST and current:
                out.append((current[0][0], current))
                current = []
            current.append(ins)
            if op == JUMP or op == JUMPI or op in HALTS or op in READS_GAS or op not in enabled:
                out.append((current[0][0], current))
                current = []
        if current:
            out.append((current[0][0], current))
        return out


def _hooked(block: BlockFn, pc: int) -> BlockFn:
    """``block`` preceded by the inspector's ``on_hooked_block`` for its start ``pc``."""

    def hooked(stack: list[int], frame: Any) -> int:
        frame.evm.inspector.on_hooked_block(frame, pc)
        return block(stack, frame)

    return hooked


_CACHE: dict[tuple[bytes, str], CodeAnalysis] = {}
_CACHE_LIMIT = 4096


def analyze(code: bytes, code_hash: bytes, fork: Fork) -> CodeAnalysis:
    """The (cached) analysis of ``code`` under ``fork``."""
    key = (code_hash, fork.name)
    found = _CACHE.get(key)
    if found is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            # Drop the oldest half: analyses are cheap to rebuild, memory is not free.
            for old in list(_CACHE)[: _CACHE_LIMIT // 2]:
                del _CACHE[old]
        found = _CACHE[key] = CodeAnalysis(code, code_hash, fork)
    return found


def code_end(code: bytes) -> int:
    """Where the instructions end: before solc's CBOR metadata when the code has it.

    solc appends a CBOR map (one to three entries: "ipfs", "bzzr0", "solc", ...) and its
    two-byte length; those bytes decode as instructions that never run.
    """
    if len(code) < 2:
        return len(code)
    length = int.from_bytes(code[-2:], "big")
    start = len(code) - 2 - length
    if 0 <= start < len(code) - 2 and code[start] in (0xA1, 0xA2, 0xA3):
        return start
    return len(code)
