"""The oracle seam: a detector that looks at every run and reports findings.

An oracle declares its ``name`` (how users pick it: ``--oracles``), the ``swc`` class it
reports (None when it has none), a one-line ``description`` and the *recordings* it reads
(``needs``): the campaign turns on only the instrumentation its enabled oracles need (the
contract target's recordings are listed in ``secant.targets.trace.RECORDINGS``).

The engine calls ``check(result, post)`` on every run that is not an aggressive probe
(a probe fakes storage, so what it shows may be unreachable). ``post`` answers read-only
calls on the state the run left, for oracles that must ask the contracts something
(a property's value). Findings are deduplicated by their ``key``, which the oracle
chooses; the engine reports each key once and stamps when it was found. Its ``severity``
and ``confidence`` rate its findings (a finding may carry its own confidence):
:func:`claim` fills in what a finding left out, on every run and every replay alike.
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
    severity: str | None = None
    """How bad its findings are when real (``high``, ``medium``, ``low``; None: unrated)."""
    confidence: str | None = None
    """How sure its findings are when a finding does not say (``certain``, ``likely``,
    ``possible``; None: unrated)."""
    switched_off: bool = False
    """Set when the oracle raised and stopped checking runs (``Fuzzer.drop_oracle``): what
    it did not find since then was not checked, which its summary must not call a pass."""

    @abstractmethod
    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        """The findings of one run (an empty list when it shows nothing)."""

    def summary(self, findings: Mapping[tuple[Any, ...], Finding]) -> dict[str, Any]:
        """What the oracle adds to ``summary.json``, given the campaign's findings."""
        return {}


def claim(finding: Finding, oracle: Oracle, result: RunResult) -> Finding:
    """``finding`` as ``oracle`` reported it on ``result``, with what it left out filled in.

    The oracle's name, the run's case (an oracle that names no prefix found it on the
    whole case), and the oracle's ratings.
    """
    finding.oracle = finding.oracle or oracle.name
    if finding.case is None:
        finding.case = result.case
    if finding.severity is None:
        finding.severity = oracle.severity
    if finding.confidence is None:
        finding.confidence = oracle.confidence
    return finding
