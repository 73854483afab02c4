"""Stack and memory: POP, PUSH*, DUP*, SWAP*, MLOAD, MSTORE, MSTORE8, MSIZE, MCOPY, KECCAK256."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.crypto import keccak256
from secant.evm.memory import charge, copy_cost, expand
from secant.evm.opcodes import (
    DUP1,
    DUP16,
    KECCAK256,
    MCOPY,
    MLOAD,
    MSIZE,
    MSTORE,
    MSTORE8,
    POP,
    PUSH0,
    PUSH32,
    SWAP1,
    SWAP2,
    SWAP16,
)

if TYPE_CHECKING:
    from secant.evm.frame import Frame


def op_pop(s: list[int], f: Frame, a: Any) -> None:
    """POP."""
    s.pop()


def op_push(s: list[int], f: Frame, value: int) -> None:
    """PUSH0..PUSH32: ``value`` was decoded at analysis time."""
    s.append(value)


def op_dup(s: list[int], f: Frame, n: int) -> None:
    """DUPn (``n`` = 1..16)."""
    s.append(s[-n])


def op_swap(s: list[int], f: Frame, i: int) -> None:
    """SWAPn, with ``i`` = -(n + 1)."""
    s[-1], s[i] = s[i], s[-1]


def op_swap1(s: list[int], f: Frame, a: Any) -> None:
    """SWAP1 (most common, specialised)."""
    s[-1], s[-2] = s[-2], s[-1]


def mload(f: Frame, o: int) -> int:
    """MLOAD's semantics: the word at ``o``."""
    end = o + 32
    if end > len(f.memory):
        expand(f, end)
    return int.from_bytes(f.memory[o:end], "big")


def mstore(f: Frame, o: int, v: int) -> None:
    """MSTORE's semantics."""
    end = o + 32
    if end > len(f.memory):
        expand(f, end)
    f.memory[o:end] = v.to_bytes(32, "big")


def mstore8(f: Frame, o: int, v: int) -> None:
    """MSTORE8's semantics."""
    if o >= len(f.memory):
        expand(f, o + 1)
    f.memory[o] = v & 0xFF


def op_mload(s: list[int], f: Frame, a: Any) -> None:
    """MLOAD."""
    s[-1] = mload(f, s[-1])


def op_mstore(s: list[int], f: Frame, a: Any) -> None:
    """MSTORE."""
    o = s.pop()
    mstore(f, o, s.pop())


def op_mstore8(s: list[int], f: Frame, a: Any) -> None:
    """MSTORE8."""
    o = s.pop()
    mstore8(f, o, s.pop())


def op_msize(s: list[int], f: Frame, a: Any) -> None:
    """MSIZE."""
    s.append(len(f.memory))


def op_mcopy(s: list[int], f: Frame, a: Any) -> None:
    """MCOPY (EIP-5656)."""
    dst = s.pop()
    src = s.pop()
    size = s.pop()
    if size:
        charge(f, copy_cost(size))
        expand(f, max(dst, src) + size)
        mem = f.memory
        mem[dst : dst + size] = mem[src : src + size]


EMPTY_KECCAK = 0xC5D2460186F7233C927E7DB2DCC703C0E500B653CA82273B7BFAD8045D85A470


_HASHED: dict[bytes, int] = {}
"""Recent KECCAK256 inputs and their hashes as words (cleared when full)."""
HASHED_LIMIT = 1 << 14
"""How many inputs ``_HASHED`` holds at most (a few MB of 64-byte keys)."""


def keccak_memory(f: Frame, o: int, size: int) -> int:
    """KECCAK256's semantics: hash of ``memory[o:o+size]``, 6 gas per word.

    The hash of an input seen recently is looked up: a contract hashes the same mapping
    keys (a sender's balance slot) in run after run, and a lookup costs a fifth of hashing.
    """
    if not size:
        return EMPTY_KECCAK
    charge(f, 6 * ((size + 31) >> 5))
    expand(f, o + size)
    data = bytes(f.memory[o : o + size])
    word = _HASHED.get(data)
    if word is None:
        if len(_HASHED) >= HASHED_LIMIT:
            _HASHED.clear()
        word = _HASHED[data] = int.from_bytes(keccak256(data), "big")
    return word


def op_keccak256(s: list[int], f: Frame, a: Any) -> None:
    """KECCAK256 of a memory range."""
    o = s.pop()
    s[-1] = keccak_memory(f, o, s[-1])


HANDLERS = {
    POP: op_pop, MLOAD: op_mload, MSTORE: op_mstore, MSTORE8: op_mstore8, MSIZE: op_msize,
    MCOPY: op_mcopy, KECCAK256: op_keccak256,
    **{op: op_push for op in range(PUSH0, PUSH32 + 1)},
    **{op: op_dup for op in range(DUP1, DUP16 + 1)},
    **{op: op_swap for op in range(SWAP2, SWAP16 + 1)},
    SWAP1: op_swap1,
}
