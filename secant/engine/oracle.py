"""The oracle seam: a detector that looks at every run and reports findings.

An oracle declares its ``name`` (how users pick it: ``--oracles``), the ``swc`` class it
reports (None when it has none), a one-line ``description`` and the *recordings* it reads
(``needs``): the campaign turns on only the instrumentation its enabled oracles need (the
contract target's recordings are listed in ``secant.targets.trace.RECORDINGS``).

The engine calls ``check(result, post)`` on every run that is not an aggressive probe
(a probe fakes storage, so what it shows may be unreachable). ``post`` answers read-only
calls on the state the run left, for oracles that must ask the contracts something
(a property's value). Findings are deduplicated by their ``key``, which the oracle
chooses; the engine reports each key once and stamps when it was found.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

from secant.types import Finding, RunResult, TxOutcome


class PostState(Protocol):
    """Read-only calls on the state a run left (the contract target implements it)."""

    def call(self, to: int, data: bytes, sender: int | None = None) -> TxOutcome:
        """Call ``to`` with ``data`` from ``sender`` (default: the deployer); undo it all."""
        ...


class Oracle(ABC):
    """A detector (see the module docstring)."""

    name: str = ""
    swc: str | None = None
    description: str = ""
    needs: frozenset[str] = frozenset()
    switched_off: bool = False
    """Set when the oracle raised and stopped checking runs (``Fuzzer.drop_oracle``): what
    it did not find since then was not checked, which its summary must not call a pass."""

    @abstractmethod
    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        """The findings of one run (an empty list when it shows nothing)."""

    def summary(self, findings: Mapping[tuple[Any, ...], Finding]) -> dict[str, Any]:
        """What the oracle adds to ``summary.json``, given the campaign's findings."""
        return {}
