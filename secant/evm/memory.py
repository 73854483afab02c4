"""Memory expansion: gas and growth."""

from __future__ import annotations

from typing import TYPE_CHECKING

from secant.evm.errors import OutOfGas

if TYPE_CHECKING:
    from secant.evm.frame import Frame

# No gas limit can pay for memory beyond 4 GiB (the quadratic term alone exceeds 2**53), so a
# larger end offset is out of gas without computing anything.
MAX_MEMORY_END = 1 << 32


def memory_cost(words: int) -> int:
    """Total gas for a memory of ``words`` 32-byte words."""
    return 3 * words + (words * words >> 9)


def expand(f: Frame, end: int) -> None:
    """Grow memory to cover byte ``end - 1``, charging the expansion gas."""
    mem = f.memory
    size = len(mem)
    if end <= size:
        return
    if end > MAX_MEMORY_END:
        raise OutOfGas
    words = (end + 31) >> 5
    old = size >> 5
    gas = f.gas - (3 * (words - old) + (words * words >> 9) - (old * old >> 9))
    if gas < 0:
        raise OutOfGas
    f.gas = gas
    mem.extend(bytes((words << 5) - size))


def expansion_cost(f: Frame, end: int) -> int:
    """Gas that growing memory to ``end`` would cost, without growing it."""
    size = len(f.memory)
    if end <= size:
        return 0
    if end > MAX_MEMORY_END:
        raise OutOfGas
    words = (end + 31) >> 5
    return memory_cost(words) - memory_cost(size >> 5)


def grow(f: Frame, end: int) -> None:
    """Grow memory to cover byte ``end - 1`` whose gas was already charged."""
    size = len(f.memory)
    if end > size:
        f.memory.extend(bytes((((end + 31) >> 5) << 5) - size))


def charge(f: Frame, gas: int) -> None:
    """Subtract ``gas`` or raise OutOfGas."""
    left = f.gas - gas
    if left < 0:
        raise OutOfGas
    f.gas = left


def copy_cost(size: int) -> int:
    """3 gas per word copied."""
    return 3 * ((size + 31) >> 5)
