"""Control flow and halting: STOP, JUMP, JUMPI, PC, GAS, RETURN, REVERT, INVALID."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from secant.evm.errors import InvalidJump, InvalidOpcode, Revert, Stop
from secant.evm.memory import expand
from secant.evm.opcodes import GAS, INVALID, JUMP, JUMPI, PC, RETURN, REVERT, STOP

if TYPE_CHECKING:
    from secant.evm.frame import Frame


def op_stop(s: list[int], f: Frame, a: Any) -> None:
    """STOP."""
    raise Stop


def op_jump(s: list[int], f: Frame, a: Any) -> None:
    """JUMP to a JUMPDEST."""
    dest = s.pop()
    if dest not in f.jumpdests:
        raise InvalidJump
    f.pc = dest


def op_jumpi(s: list[int], f: Frame, a: Any) -> None:
    """JUMPI: jump if the condition is non-zero."""
    dest = s.pop()
    if s.pop():
        if dest not in f.jumpdests:
            raise InvalidJump
        f.pc = dest


def op_pc(s: list[int], f: Frame, pc: int) -> None:
    """PC (``pc`` fixed at analysis time)."""
    s.append(pc)


def op_gas(s: list[int], f: Frame, a: Any) -> None:
    """GAS: gas left after this instruction (the block ends here, so it is exact)."""
    s.append(f.gas)


def op_return(s: list[int], f: Frame, a: Any) -> None:
    """RETURN."""
    o = s.pop()
    size = s.pop()
    if size:
        expand(f, o + size)
        f.output = bytes(f.memory[o : o + size])
    raise Stop


def op_revert(s: list[int], f: Frame, a: Any) -> None:
    """REVERT."""
    o = s.pop()
    size = s.pop()
    if size:
        expand(f, o + size)
        f.output = bytes(f.memory[o : o + size])
    raise Revert


def op_invalid(s: list[int], f: Frame, a: Any) -> None:
    """INVALID (0xfe) and every byte that is no opcode in the fork."""
    raise InvalidOpcode


HANDLERS = {
    STOP: op_stop, JUMP: op_jump, JUMPI: op_jumpi, PC: op_pc, GAS: op_gas, RETURN: op_return,
    REVERT: op_revert, INVALID: op_invalid,
}
