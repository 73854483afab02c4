"""Errors raised while compiling or loading contracts (all :class:`SecantError`)."""

from __future__ import annotations

from secant.errors import SecantError


class ToolMissing(SecantError):
    """A program secant needs (node, npm, forge, vyper) is not installed."""


class CompilerUnavailable(SecantError):
    """A compiler version could not be installed or started."""


class PragmaUnsatisfiable(SecantError):
    """No known compiler version satisfies the version pragmas of the sources."""


class CompilationFailed(SecantError):
    """The compiler reported errors; ``errors`` holds them as ``file:line:col: message``."""

    def __init__(self, message: str, hint: str = "", errors: tuple[str, ...] = ()) -> None:
        super().__init__(message, hint)
        self.errors = errors


class NoDeployableContract(SecantError):
    """The input holds no contract with creation or runtime bytecode."""


class UnknownContract(SecantError):
    """A contract name given by the user is not among the compiled contracts."""


class InputError(SecantError):
    """The input path or file is missing, unreadable or of an unknown kind."""
