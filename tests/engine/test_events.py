"""Events reach the listeners that override a hook, in the order they were added."""

from __future__ import annotations

from secant.engine.events import Events, FuzzListener, OnRun
from secant.types import Finding, RunResult, TxOutcome


class Log(FuzzListener):
    def __init__(self, name: str, seen: list[str]) -> None:
        self.name = name
        self.seen = seen

    def on_finding(self, finding: Finding) -> None:
        self.seen.append(f"{self.name}:{finding.kind}")

    def on_progress(self) -> None:
        self.seen.append(f"{self.name}:progress")


def test_hooks_reach_only_the_listeners_that_override_them() -> None:
    seen: list[str] = []
    runs: list[RunResult] = []
    events = Events(Log("a", seen), OnRun(runs.append))
    events.add(Log("b", seen))
    result = RunResult((), [TxOutcome(True, False, b"", 0)], 7)
    events.on_run(result)
    events.on_progress()
    events.on_finding(Finding("assertion", "SWC-110", "C", "f", 0, None, "", ("k",)))
    events.on_round(())  # nobody listens: nothing happens
    assert runs == [result]
    assert seen == ["a:progress", "b:progress", "a:assertion", "b:assertion"]
    assert [len(hooks) for hooks in events._targets.values()] == [1, 0, 2, 0, 2, 0]
