"""User-facing errors of secant and the CLI's way of reporting them.

Every failure a user can cause or fix (a missing tool, a bad input, an unsatisfiable
requirement) raises a :class:`SecantError`. The CLI turns it into one line on stderr,
``error: <message>; <hint>``, and exit code 2, never a traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

EXIT_USER_ERROR = 2
"""Exit code of the CLI when a :class:`SecantError` stops a command."""

_P = ParamSpec("_P")
_R = TypeVar("_R")


class SecantError(Exception):
    """An error the user can act on: ``message`` names the cause, ``hint`` the fix."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.one_line()

    def one_line(self) -> str:
        """Return the message and the hint joined into a single line (newlines folded)."""
        text = f"{self.message}; {self.hint}" if self.hint else self.message
        return " ".join(text.split("\n")).strip()


def report(error: SecantError) -> None:
    """Print ``error: <message>; <hint>`` to stderr."""
    print(f"error: {error.one_line()}", file=sys.stderr)


def cli_errors(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a CLI command so a :class:`SecantError` prints one line and exits with 2."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return func(*args, **kwargs)
        except SecantError as error:
            report(error)
            raise SystemExit(EXIT_USER_ERROR) from None
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            raise SystemExit(130) from None

    return wrapper
