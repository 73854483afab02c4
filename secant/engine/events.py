"""What a fuzzing loop tells the world: one listener interface, and a fan-out of listeners.

A :class:`FuzzListener` overrides the hooks it cares about; the others are no-ops. The
loop holds one :class:`Events` and calls it; ``Events`` forwards each hook only to the
listeners that override it, so a hook nobody listens to costs one empty loop per call.

Hooks, in the order one execution fires them:

* ``on_run(result)``: every run that is not an aggressive probe, before the engine looks
  at its coverage (a listener may call ``Fuzzer.stop``);
* ``on_new_seed(seed)``: the run took a new path and joined the corpus;
* ``on_finding(finding)``: an oracle reported something not reported before;
* ``on_progress()``: after every execution, probes included (a display refreshes).

``on_internal_error(error)`` is fired when a part of the campaign (an oracle, an optional
stage) raised and was switched off (``secant.engine.failures``).

``on_round(case)`` is fired by a policy before it mutates ``case`` many times over (the
contract target caches its prefix).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from secant.types import Finding, RunResult, TxSeq

if TYPE_CHECKING:
    from secant.engine.corpus import Seed
    from secant.engine.failures import InternalError

_HOOKS = ("on_run", "on_new_seed", "on_finding", "on_round", "on_progress",
          "on_internal_error")


class FuzzListener:
    """Base class with no-op hooks (see the module docstring); override what you need."""

    def on_run(self, result: RunResult) -> None:
        """A run that is not a probe finished."""

    def on_new_seed(self, seed: Seed) -> None:
        """A run joined the corpus."""

    def on_finding(self, finding: Finding) -> None:
        """An oracle reported something new."""

    def on_round(self, case: TxSeq) -> None:
        """A policy is about to mutate ``case`` many times over."""

    def on_progress(self) -> None:
        """An execution finished."""

    def on_internal_error(self, error: InternalError) -> None:
        """A part raised and was switched off for the rest of the run."""


class Events(FuzzListener):
    """Forwards every hook to the listeners that override it, in the order they were added."""

    def __init__(self, *listeners: FuzzListener) -> None:
        self.listeners: list[FuzzListener] = []
        self._targets: dict[str, list[Callable[..., Any]]] = {name: [] for name in _HOOKS}
        for listener in listeners:
            self.add(listener)

    def add(self, listener: FuzzListener) -> None:
        """Start forwarding to ``listener``."""
        self.listeners.append(listener)
        for name in _HOOKS:
            method = getattr(type(listener), name, None)
            if method is not None and method is not getattr(FuzzListener, name):
                self._targets[name].append(getattr(listener, name))

    def on_run(self, result: RunResult) -> None:
        """Forward."""
        for hook in self._targets["on_run"]:
            hook(result)

    def on_new_seed(self, seed: Seed) -> None:
        """Forward."""
        for hook in self._targets["on_new_seed"]:
            hook(seed)

    def on_finding(self, finding: Finding) -> None:
        """Forward."""
        for hook in self._targets["on_finding"]:
            hook(finding)

    def on_round(self, case: TxSeq) -> None:
        """Forward."""
        for hook in self._targets["on_round"]:
            hook(case)

    def on_progress(self) -> None:
        """Forward."""
        for hook in self._targets["on_progress"]:
            hook()

    def on_internal_error(self, error: InternalError) -> None:
        """Forward."""
        for hook in self._targets["on_internal_error"]:
            hook(error)


class OnRun(FuzzListener):
    """A listener that calls ``callback(result)`` on every run (benches, tests, scripts)."""

    def __init__(self, callback: Callable[[RunResult], None]) -> None:
        self.callback = callback

    def on_run(self, result: RunResult) -> None:
        """Call the callback."""
        self.callback(result)
