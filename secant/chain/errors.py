"""Errors raised while deploying to or calling the test chain (all :class:`SecantError`).

"No deployable contract" and "unknown contract name" are the compile layer's
:class:`~secant.compile.errors.NoDeployableContract` and
:class:`~secant.compile.errors.UnknownContract`, re-exported here.
"""

from __future__ import annotations

from secant.abi import RevertReason
from secant.compile.errors import NoDeployableContract, UnknownContract
from secant.errors import SecantError

__all__ = [
    "ConstructorArgumentError",
    "ConstructorReverted",
    "DeploymentFailed",
    "NoDeployableContract",
    "UnknownContract",
    "UnknownFunction",
    "UnsupportedCheatcode",
]


class ConstructorReverted(SecantError):
    """A constructor reverted; ``reason`` is the decoded revert data."""

    def __init__(self, contract: str, reason: RevertReason, args_note: str = "") -> None:
        super().__init__(
            f"the constructor of {contract} reverted: {reason}{args_note}",
            "pass constructor arguments it accepts with --arg (one per parameter), "
            "or choose another contract with --contract",
        )
        self.contract = contract
        self.reason = reason
        self.args_note = args_note


class ConstructorArgumentError(SecantError):
    """A constructor argument does not parse or encode as its ABI type."""


class DeploymentFailed(SecantError):
    """Deployment failed for a reason other than a revert (gas, code size, a missing library)."""


class UnknownFunction(SecantError):
    """A function name or signature is not in the contract's ABI."""


class UnsupportedCheatcode(SecantError):
    """A harness called a cheatcode secant does not implement (raised out of the transaction).

    ``selector`` is the 4-byte selector called; ``signature`` its Foundry signature when
    secant knows it, else None.
    """

    def __init__(self, message: str, hint: str, selector: bytes,
                 signature: str | None = None) -> None:
        super().__init__(message, hint)
        self.selector = selector
        self.signature = signature
