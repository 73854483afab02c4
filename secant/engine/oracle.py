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

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

from secant.types import Finding, RunResult, TxOutcome, TxSeq


class PostState(Protocol):
    """The view of a run an oracle gets (the contract target implements it).

    Read-only calls and storage reads on the state the run left, and the run's recordings.
    """

    def call(self, to: int, data: bytes, sender: int | None = None) -> TxOutcome:
        """Call ``to`` with ``data`` from ``sender`` (default: the deployer); undo it all."""
        ...

    def storage_at(self, address: int, slot: int) -> int:
        """The word the run left in ``slot`` of ``address``'s storage."""
        ...

    def recording(self, result: RunResult, name: str, replay: bool = True) -> Any | None:
        """The ``name`` records of the run ``result`` (the target's recordings).

        The run's own when the campaign recorded ``name``; otherwise, with ``replay``, from
        running the case again once with that recording, shared by every oracle that asks.
        None when there are none.
        """
        ...

    def run_variant(self, case: TxSeq, forced: Mapping[int, Mapping[int, int]] | None = None,
                    recordings: frozenset[str] = frozenset({"calls"}),
                    gas: Mapping[int, int] | None = None) -> RunResult:
        """A run of ``case``, a variant of the judged run's case, recording ``recordings``.

        The same transactions in another order, say, or (``forced``: ``{index: {address:
        wei}}``) with wei added to accounts right before transaction ``index``, as a
        self-destruct's beneficiary or a future CREATE address paid in advance gets it,
        without running any code, or (``gas``: ``{index: gas}``) with transaction
        ``index`` sent with that gas limit instead of the chain's, as its sender may
        choose. It runs on a target of its own, deterministically, and leaves the judged
        run's post-state as it was (``call`` and ``storage_at`` still answer about it);
        the target counts it among its replays.
        """
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

    # ------------------------------------------------------------------ optional hooks
    def idle(self) -> bool:
        """Whether no run of this campaign can show it anything, whatever the run does.

        Decided once, from the code the oracle was built on (its static pre-check: no
        call site, no loop, no owner slot); the fuzzer then does not call ``check`` on its
        runs, which a dozen oracles on a plain token would otherwise each cost every run.
        The default: never idle.
        """
        return False

    def watches_steps(self) -> bool:
        """Whether the target shows it every transaction of a run, not only the run.

        Such an oracle also implements the target's ``StepObserver`` (``start``,
        ``after_step``: a property oracle checks the state between transactions); when
        it does, the default answer is yes.
        """
        return callable(getattr(self, "start", None)) and callable(
            getattr(self, "after_step", None))

    def holds_invariants(self) -> bool:
        """Whether something it checks must hold after every transaction.

        The campaign is then an invariant suite, whose sequences grow as such suites need
        (``InputSpace.stateful``).
        """
        return False

    def use_target_slot(self, slot: int | None) -> None:  # noqa: B027 (optional hook)
        """Told the campaign's random target slot (None: none).

        Harvey's write cost aims at it; an oracle of writes to arbitrary slots watches it.
        """

    def fresh(self) -> Oracle:
        """A copy as it was before any run, to judge a replay without touching this one.

        The default copies the oracle and every list, dict, set and bytearray it holds
        (what it reported, remembered or counted); an oracle that keeps such state deeper
        overrides it. Called on a copy taken before the campaign's first run.
        """
        twin = copy.copy(self)
        state = getattr(twin, "__dict__", None)
        if state is not None:
            for name, value in list(state.items()):
                if isinstance(value, list | dict | set | bytearray):
                    state[name] = copy.copy(value)
        return twin


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
