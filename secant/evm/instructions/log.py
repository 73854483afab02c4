"""LOG0 .. LOG4."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.errors import StaticViolation
from secant.evm.memory import charge, expand
from secant.evm.opcodes import LOG0, LOG4

if TYPE_CHECKING:
    from secant.evm.frame import Frame


def log_event(s: list[int], f: Frame, n: int) -> tuple[tuple[int, ...], bytes]:
    """LOGn's semantics; returns (topics, data) for tracing."""
    o = s.pop()
    size = s.pop()
    topics = tuple([s.pop() for _ in range(n)])
    data = b""
    if size:
        charge(f, 8 * size)
        expand(f, o + size)
        data = bytes(f.memory[o : o + size])
    if f.is_static:
        raise StaticViolation
    f.state.add_log((f.address, topics, data))
    return topics, data


def op_log(s: list[int], f: Frame, n: int) -> None:
    """LOGn (``n`` topics; static gas 375 * (n + 1) is charged per block)."""
    log_event(s, f, n)


HANDLERS: dict[int, Any] = {op: op_log for op in range(LOG0, LOG4 + 1)}
