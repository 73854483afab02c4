"""Internal errors a campaign survives: a part that failed is switched off, and recorded.

An oracle whose ``check`` raises, or an optional stage of a policy (the concolic stage)
that raises, is a bug of that part, not of the campaign: the part is switched off for the
rest of the run, the campaign goes on, and the error is kept as an :class:`InternalError`
(``summary.json``'s ``internal_errors``). A part is switched off at its first error, so
which parts are off depends only on the run: the same seed and budget give the same
campaign. Errors of the loop itself, of the target and the EVM, and Ctrl-C are not
contained: they end the campaign as before. A worker process that dies is the exception:
it is recorded and started again (``restarted``), up to a limit
(``secant.campaign.processes``).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

TRACEBACK_FRAMES = 8
"""Innermost frames an :class:`InternalError` keeps of its traceback."""

ERROR_CHARS = 1000
"""The most characters of an error's message a record keeps (a z3 term can be long)."""

LINE_CHARS = 200
"""The most characters of an error's message the console line shows."""

TRACEBACK_CHARS = 4000
"""The most characters of traceback a record keeps (its end: the innermost frames)."""


def oracle_part(name: str) -> str:
    """The part name of an oracle (``oracle:reentrancy``)."""
    return f"oracle:{name}"


def stage_part(name: str) -> str:
    """The part name of a policy's stage (``stage:concolic``)."""
    return f"stage:{name}"


def worker_part(index: int) -> str:
    """The part name of a campaign's worker process (``worker:1``).

    A worker that died is started again from the campaign's corpus, not switched off
    (``secant.campaign.processes``).
    """
    return f"worker:{index}"



@dataclass(frozen=True)
class InternalError:
    """A part that raised and was switched off (see the module docstring).

    ``part`` names it (``oracle:NAME``, ``stage:concolic``); ``error`` is the exception's
    type and message; ``exec`` the executions the worker had counted when it happened (the
    run being judged included); ``during`` is ``fuzzing``, ``replay`` (a case replayed
    alone: shrinking, resuming) or ``summary``; ``traceback`` its innermost frames.
    """

    part: str
    error: str
    exec: int
    during: str
    traceback: str
    restarted: bool = False
    """The part was started again rather than switched off (a worker process)."""

    @classmethod
    def of(cls, part: str, error: BaseException, execs: int,
           during: str = "fuzzing") -> InternalError:
        """The record of ``error`` raised by ``part``."""
        message = " ".join(f"{type(error).__name__}: {error}".split())[:ERROR_CHARS]
        frames = "".join(traceback.format_exception(error, limit=-TRACEBACK_FRAMES,
                                                    chain=False))
        return cls(part, message, execs, during, frames[-TRACEBACK_CHARS:])

    def line(self, then: str = "switched off for this run; details in summary.json") -> str:
        """One line for the console; ``then`` says what became of the part."""
        kind, _, name = self.part.partition(":")
        if self.restarted:
            then = "started again from the campaign's corpus; details in summary.json"
        error = (self.error if len(self.error) <= LINE_CHARS
                 else self.error[:LINE_CHARS - 3] + "...")
        return f"internal error in {kind} {name} ({error}): {then}"

    def to_json(self) -> dict[str, Any]:
        """The record as ``summary.json`` holds it."""
        record: dict[str, Any] = {"part": self.part, "error": self.error, "exec": self.exec,
                                  "during": self.during, "traceback": self.traceback}
        if self.restarted:
            record["restarted"] = True
        return record
