"""Control-flow signals and exceptional halts of the interpreter.

Instructions raise these; the frame loop catches them. An ``ExceptionalHalt`` consumes all gas
of the frame and reverts its changes; ``Revert`` reverts but keeps the remaining gas.
"""


class Halt(Exception):
    """Base of every way a frame stops running."""


class Stop(Halt):
    """Normal end: STOP, RETURN, SELFDESTRUCT (output is in the frame)."""


class Revert(Halt):
    """REVERT: undo the frame's changes, return the unused gas and the output."""


class Suspend(Halt):
    """The frame started a child message; the driver runs it, then resumes the frame."""


class ExceptionalHalt(Halt):
    """An error that consumes all the frame's gas."""

    reason = "exceptional halt"


class OutOfGas(ExceptionalHalt):
    """Not enough gas."""

    reason = "out of gas"


class StackUnderflow(ExceptionalHalt):
    """Too few stack items."""

    reason = "stack underflow"


class StackOverflow(ExceptionalHalt):
    """More than 1024 stack items."""

    reason = "stack overflow"


class InvalidJump(ExceptionalHalt):
    """Jump to a destination that is not a JUMPDEST."""

    reason = "invalid jump destination"


class InvalidOpcode(ExceptionalHalt):
    """INVALID (0xfe) or a byte that is no opcode in this fork."""

    reason = "invalid opcode"


class StaticViolation(ExceptionalHalt):
    """A state change inside STATICCALL."""

    reason = "state change in static context"


class ReturnDataOutOfBounds(ExceptionalHalt):
    """RETURNDATACOPY beyond the return data."""

    reason = "return data out of bounds"
