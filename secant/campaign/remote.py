"""A worker that fuzzes elsewhere (a child process, a Ray actor), and the campaign's mirror.

Two halves, whatever carries the messages between them (``secant.campaign.processes``,
``secant.campaign.ray_workers``):

* :class:`EpochServer`, where the worker runs: it builds the
  :class:`~secant.campaign.worker.Worker` on a chain of its own and runs *epochs*: import
  the cases it was given (found by the other workers since the last exchange), fuzz a given
  number of executions (or until told to stop), then answer an :class:`EpochReport`: its
  new corpus entries with their cost vectors, its findings, the parts it switched off, the
  coverage it added, its counters and its policy's summary.
* :class:`RemoteWorker`, on the campaign's side: it sends an epoch's request (``begin``),
  waits for its report (``end``), and keeps a *mirror* of the worker's fuzzer: a
  :class:`Fuzzer` that never runs anything itself, whose coverage, corpus, counters,
  findings and policy summary are what the reports said. The campaign reads the mirror as
  it reads an in-process worker's fuzzer, and hears the worker's events through the
  worker's own :class:`Events`, in the order they were fired.

Everything a worker does depends only on its seed and on the cases it is given at epoch
boundaries, so a campaign whose workers run elsewhere is the same campaign as one whose
workers take turns in one process. A worker that is lost (its process killed, its node
gone) or raises is recorded as an internal error of ``worker:N`` and started again,
importing the campaign's whole corpus, with what is left of its budget; after
``MAX_RESTARTS`` it is left off.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from secant.campaign.worker import Worker
from secant.engine.config import FuzzConfig, FuzzStats
from secant.engine.corpus import Seed
from secant.engine.events import Events, FuzzListener
from secant.engine.failures import InternalError, worker_part
from secant.engine.fuzzer import Fuzzer
from secant.engine.policy import BranchSide, JustMissed, Policy, Proposal
from secant.report.coverage import EdgeCounter
from secant.types import Finding, RunResult, TxSeq

MAX_RESTARTS = 3
"""How many times a worker that was lost is started again before it is left off."""

REPORT_TIMEOUT_S = 30.0
"""How long a campaign that stops (Ctrl-C, an error) waits for a busy worker's last report."""

OPEN_EPOCH_CHUNK = 16
"""Executions between two looks for the campaign's word in an epoch that ends when told."""

WorkerBuilder = Callable[[Events], Worker]
"""Builds a worker where it runs, on a chain of its own, telling ``events`` what happens."""


def resident_mb() -> float:
    """The resident memory of the calling process in MB (elsewhere than Linux: its peak)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 1e3 if sys.platform != "darwin" else peak / 1e6


class WorkerLost(Exception):
    """The worker's process, actor or node is gone (or did not answer in time)."""


class WorkerFailed(Exception):
    """The worker raised: its error in one line, and its traceback."""

    def __init__(self, error: str, trace: str) -> None:
        super().__init__(error)
        self.error, self.trace = error, trace


# ---------------------------------------------------------------------------- where it runs
@dataclass
class EpochReport:
    """What a worker tells the campaign at the end of an epoch."""

    events: list[tuple[str, Any]]
    """(``seed``, Seed), (``finding``, Finding), (``error``, InternalError) in firing order."""
    blocks: dict[bytes, set[int]]
    edges: set[tuple[bytes, int, bool]]
    paths: set[int]
    edge_counts: Counter[tuple[bytes, int, bool]]
    execs: int
    transactions: int
    steps_run: int
    probes: int
    last_new_path_exec: int
    elapsed: float
    exhausted: bool
    summary: dict[str, Any]
    resident_mb: float
    sent_at: float
    """The worker's wall clock when the report left (how long it waited to be applied)."""
    where: str
    """Where the worker runs (its process id, its Ray node)."""


class _Recorder(FuzzListener):
    """Keeps a worker's events until the end of its epoch."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_new_seed(self, seed: Seed) -> None:
        # What the campaign needs of a seed: its case (to pass on and write), where it came
        # from and when, its schedule statistics. Its cost vector and prediction material
        # stay with the worker: they are most of a seed's size, and the campaign keeps the
        # mirrors of every worker's corpus.
        self.events.append(("seed", replace(seed, costs=None, comparisons=(), reads=())))

    def on_finding(self, finding: Finding) -> None:
        self.events.append(("finding", finding))

    def on_internal_error(self, error: InternalError) -> None:
        self.events.append(("error", error))


@dataclass
class _Shipped:
    """The coverage a worker has reported already (reports carry what is new)."""

    blocks: dict[bytes, set[int]] = field(default_factory=dict)
    edges: set[tuple[bytes, int, bool]] = field(default_factory=set)
    paths: set[int] = field(default_factory=set)

    def report(self, fuzzer: Fuzzer, recorder: _Recorder, counter: EdgeCounter | None,
               where: str) -> EpochReport:
        """The report of the epoch that just ended; what it carries counts as shipped."""
        coverage = fuzzer.coverage
        blocks: dict[bytes, set[int]] = {}
        for code, pcs in coverage.blocks.by_code.items():
            known = self.blocks.setdefault(code, set())
            fresh = pcs - known
            if fresh:
                blocks[code] = fresh
                known |= fresh
        edges = coverage.edges - self.edges
        self.edges |= edges
        paths = coverage.paths - self.paths
        self.paths |= paths
        stats = fuzzer.stats
        events, recorder.events = recorder.events, []
        counts: Counter[tuple[bytes, int, bool]] = Counter()
        if counter is not None:
            counts, counter.counts = counter.counts, Counter()
        return EpochReport(events, blocks, edges, paths, counts, stats.execs,
                           stats.transactions, stats.steps_run, stats.probes,
                           stats.last_new_path_exec, stats.elapsed, fuzzer.exhausted(),
                           fuzzer.summary(), resident_mb(), time.time(), where)


class EpochServer:
    """A worker where it runs: built once, then one epoch per request (module docstring)."""

    def __init__(self, build: WorkerBuilder, count_edges: bool, where: str) -> None:
        self.recorder = _Recorder()
        # The runs per branch edge the reports need (the campaign's counter, here).
        self.edges = EdgeCounter() if count_edges else None
        self.shipped = _Shipped()
        self.where = where
        self.worker = build(Events(self.recorder, *([self.edges] if self.edges else [])))

    def epoch(self, imports: list[TxSeq], execs: int | None, time_left: float | None,
              budget: tuple[int | None, int | None] | None,
              told: Callable[[], bool]) -> EpochReport:
        """Import ``imports``, fuzz ``execs`` executions (None: until ``told()``), report.

        ``time_left`` is what remains of the campaign's time for this worker; ``budget``,
        when given, replaces its execution and transaction budget (a worker started again).
        """
        worker = self.worker
        fuzzer = worker.fuzzer
        if budget is not None:
            fuzzer.config.max_execs, fuzzer.config.max_transactions = budget
        if time_left is not None:
            fuzzer.config.max_time = fuzzer.stats.elapsed + time_left
        if imports:
            worker.import_cases(imports)
        if execs is not None:
            worker.fuzz(execs)
        else:
            while not told():
                before = fuzzer.stats.execs
                worker.fuzz(OPEN_EPOCH_CHUNK)
                if fuzzer.stats.execs == before:
                    break  # the budget is spent or the policy has nothing more
        return self.shipped.report(fuzzer, self.recorder, self.edges, self.where)

    def stop(self) -> None:
        """End the epoch under way after the current execution, and every later one."""
        self.worker.fuzzer.stop()

    def policy(self) -> tuple[dict[BranchSide, JustMissed] | None, dict[BranchSide, str]]:
        """The closest cases and the infeasible sides the worker's policy keeps.

        A policy that keeps no closest cases gets them from the worker's corpus seeds'
        cost vectors here, where they are (the campaign's mirror has none).
        """
        from secant.report.frontier import closest_cases

        fuzzer = self.worker.fuzzer
        policy = fuzzer.policy
        missed = policy.just_missed()
        if missed is None:
            missed = closest_cases([fuzzer], fuzzer.coverage.edges)
        return dict(missed), dict(policy.infeasible())


def failure(exc: BaseException) -> WorkerFailed:
    """A worker's exception as the campaign records it (one line and the traceback)."""
    record = InternalError.of("", exc, 0)
    return WorkerFailed(record.error, record.traceback)


# ---------------------------------------------------------------------------- the campaign's side
class RemotePolicy(Policy):
    """The policy of a worker that runs elsewhere, as its last report described it.

    It proposes nothing (the worker's own policy does); the campaign reads its summary and,
    for the reports, the closest cases and the infeasible sides the worker kept.
    """

    name = "remote"

    def __init__(self) -> None:
        self.reported: dict[str, Any] = {}
        self.missed: dict[BranchSide, JustMissed] | None = None
        self.unreachable: dict[BranchSide, str] = {}

    def propose(self) -> Proposal | None:
        """Nothing: the worker proposes."""
        return None

    def summary(self) -> dict[str, Any]:
        """The worker's policy summary (its fuzzer's summary holds it)."""
        return self.reported

    def just_missed(self) -> Mapping[BranchSide, JustMissed] | None:
        """What the worker kept, once fetched (``RemoteWorker.fetch_policy``)."""
        return self.missed

    def infeasible(self) -> Mapping[BranchSide, str]:
        """What the worker found infeasible, once fetched."""
        return self.unreachable


def _never(case: TxSeq) -> RunResult:
    raise RuntimeError("a mirror of a worker that runs elsewhere runs nothing")


_FUZZER_KEYS = frozenset({"execs", "transactions", "elapsed_s", "paths", "corpus",
                          "corpus_origins"})
"""The keys of a fuzzer's summary that are the loop's, not the policy's (``Fuzzer.summary``).

The others, ``cost_vectors`` among them (the mirror holds none), are the worker's as
reported."""


@dataclass
class ExchangeStats:
    """What the exchanges with one worker cost the campaign.

    ``report_bytes``: the reports' size pickled; ``waited_s``: from a report's leaving the
    worker to its being applied (transfer, and the campaign finishing its own epoch first);
    ``apply_s``: the campaign's time applying reports (mirror, events, corpus files).
    """

    epochs: int = 0
    report_bytes: int = 0
    waited_s: float = 0.0
    apply_s: float = 0.0
    cases_sent: int = 0

    def to_json(self) -> dict[str, Any]:
        """The figures ``summary.json`` gives of each worker that runs elsewhere."""
        epochs = max(self.epochs, 1)
        return {"epochs": self.epochs, "cases_sent": self.cases_sent,
                "report_kb_mean": round(self.report_bytes / epochs / 1e3, 2),
                "waited_ms_mean": round(self.waited_s / epochs * 1e3, 2),
                "apply_ms_mean": round(self.apply_s / epochs * 1e3, 3)}


class RemoteWorker(ABC):
    """A worker that runs elsewhere; ``fuzzer`` mirrors its fuzzer (module docstring).

    ``events`` hears the worker's events when its epoch's report arrives (the campaign and
    its listeners). ``begin`` sends an epoch's request, ``end`` waits for its report, so the
    campaign runs its own worker while the others run theirs. A transport (a child process,
    a Ray actor) implements the abstract methods.
    """

    def __init__(self, index: int, build: WorkerBuilder, config: FuzzConfig, events: Events,
                 edge_counts: Counter[tuple[bytes, int, bool]] | None) -> None:
        self.index = index
        self._build = build
        self.events = events
        self._edge_counts = edge_counts
        self.fuzzer = Fuzzer(_never, RemotePolicy(), replace(config), events=events)
        self._policy: RemotePolicy = self.fuzzer.policy  # type: ignore[assignment]
        self._pending: list[TxSeq] = []
        self._busy = False
        self._open = False  # the epoch under way ends when told (``end``)
        self._budget: tuple[int | None, int | None] | None = None
        self._done = FuzzStats()  # what the worker had counted before it was lost
        self.restarts = 0
        self.off = False
        self.resident_mb = 0.0
        """The worker's resident memory at its last report (MB)."""
        self.exchange = ExchangeStats()
        self.where = ""
        """Where the worker runs, as its last report said."""
        self._closing = False  # the campaign is ending: a worker lost now stays off
        # Started again after it was lost: the campaign gives it its corpus (restart_with).
        self.needs_corpus = False
        self._start()

    # ------------------------------------------------------------------ the transport
    @abstractmethod
    def _start(self) -> None:
        """Start the worker where it runs (it calls ``self._build`` there)."""

    @abstractmethod
    def _send(self, imports: list[TxSeq], execs: int | None, time_left: float | None,
              budget: tuple[int | None, int | None] | None) -> None:
        """Send an epoch's request (raise ``WorkerLost`` when it cannot be sent)."""

    @abstractmethod
    def _tell_end(self) -> None:
        """Tell a worker in an open epoch to end it."""

    @abstractmethod
    def _receive(self, timeout: float | None) -> EpochReport:
        """The epoch's report (raise ``WorkerLost`` or ``WorkerFailed``)."""

    @abstractmethod
    def _ask_policy(self, timeout: float
                    ) -> tuple[dict[BranchSide, JustMissed] | None, dict[BranchSide, str]]:
        """The worker's closest cases and infeasible sides (raise ``WorkerLost``)."""

    @abstractmethod
    def _signal_stop(self) -> None:
        """Ask a busy worker to stop after its current execution (Ctrl-C)."""

    @abstractmethod
    def _shut_down(self, gracefully: bool) -> None:
        """End the worker (``gracefully``: tell it to go first) and free the transport."""

    # ------------------------------------------------------------------ epochs
    def import_cases(self, cases: Iterable[TxSeq]) -> list[Seed]:
        """Pass cases found elsewhere on; the worker runs them first in its next epoch.

        Returns nothing: which of them join the worker's corpus is known from its report.
        """
        self._pending.extend(cases)
        return []

    def fuzz(self, execs: int | None = None) -> None:
        """One epoch of at most ``execs`` executions (None: the rest of the budget)."""
        self.begin(execs if execs is not None else self._rest())
        self.end()

    def _rest(self) -> int:
        """Executions of the rest of the budget (one epoch for a worker run alone)."""
        config = self.fuzzer.config
        if config.max_execs is not None:
            return max(config.max_execs - self.fuzzer.stats.execs, 0)
        return 1 << 62  # a time or transaction budget ends it first

    def begin(self, execs: int | None) -> None:
        """Ask the worker to import what is pending, then fuzz ``execs`` executions.

        ``execs`` None: until ``end`` tells it to stop (a campaign with a time budget).
        """
        if self.off or self._busy:
            return
        config = self.fuzzer.config
        time_left = (None if config.max_time is None
                     else max(config.max_time - self.fuzzer.stats.elapsed, 0.0))
        try:
            self._send(self._pending, execs, time_left, self._budget)
        except WorkerLost as exc:
            self._died(exc)
            return
        self.exchange.cases_sent += len(self._pending)
        self._pending, self._budget = [], None
        self._busy = True
        self._open = execs is None

    def end(self, timeout: float | None = None) -> None:
        """Wait for the epoch's report and apply it (nothing to wait for: return)."""
        if not self._busy:
            return
        try:
            if self._open:
                self._open = False
                self._tell_end()
            report = self._receive(timeout)
        except WorkerLost as exc:
            self._busy = False
            self._died(exc)
            return
        except WorkerFailed as exc:
            self._busy = False
            self._died(exc.error, exc.trace)
            return
        # Still busy until the report is read: Ctrl-C while waiting leaves it to close().
        self._busy = False
        exchange = self.exchange
        exchange.epochs += 1
        exchange.waited_s += max(time.time() - report.sent_at, 0.0)
        exchange.report_bytes += len(pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL))
        started = time.perf_counter()
        self._apply(report)
        exchange.apply_s += time.perf_counter() - started

    def _apply(self, report: EpochReport) -> None:
        """The worker's epoch, mirrored: coverage, counters, then its events in order."""
        fuzzer = self.fuzzer
        coverage = fuzzer.coverage
        for code, pcs in report.blocks.items():
            coverage.blocks.starts(code).update(pcs)
        coverage.edges |= report.edges
        coverage.paths |= report.paths
        if self._edge_counts is not None:
            self._edge_counts.update(report.edge_counts)
        done, stats = self._done, fuzzer.stats
        stats.execs = done.execs + report.execs
        stats.transactions = done.transactions + report.transactions
        stats.steps_run = done.steps_run + report.steps_run
        stats.probes = done.probes + report.probes
        stats.last_new_path_exec = done.execs + report.last_new_path_exec
        stats.started = time.perf_counter() - report.elapsed
        self.resident_mb = report.resident_mb
        self.where = report.where
        self._policy.reported = {key: value for key, value in report.summary.items()
                                 if key not in _FUZZER_KEYS}
        for kind, payload in report.events:
            if kind == "seed":
                fuzzer.corpus.add(payload)
                self.events.on_new_seed(payload)
            elif kind == "finding":
                fuzzer.findings.setdefault(payload.key, payload)
                self.events.on_finding(payload)
            else:
                fuzzer.internal_errors.append(payload)
                self.events.on_internal_error(payload)
        if report.exhausted:
            fuzzer.stop()
        self.events.on_progress()

    def fetch_policy(self) -> None:
        """Ask the worker for the closest cases and infeasible sides the reports show."""
        if self.off or self._busy:
            return
        try:
            self._policy.missed, self._policy.unreachable = self._ask_policy(
                REPORT_TIMEOUT_S)
        except (WorkerLost, WorkerFailed):
            return

    # ------------------------------------------------------------------ failures
    def _died(self, error: BaseException | str, trace: str = "") -> None:
        """Record the loss; start the worker again (up to ``MAX_RESTARTS``) or leave it off.

        The new worker starts from the campaign's corpus (``restart_with``) and gets what
        is left of this worker's budget.
        """
        fuzzer = self.fuzzer
        self._shut_down(gracefully=False)
        self.off = self._closing or self.restarts >= MAX_RESTARTS
        part = worker_part(self.index)
        # The worker's own error (its message and traceback), or how it was lost.
        record = (InternalError(part, error, fuzzer.stats.execs, "fuzzing", trace)
                  if isinstance(error, str)
                  else InternalError.of(part, error, fuzzer.stats.execs))
        record = replace(record, restarted=not self.off)
        fuzzer.internal_errors.append(record)
        self.events.on_internal_error(record)
        if self.off:
            fuzzer.stop()
            return
        self.restarts += 1
        self.needs_corpus = True
        self._done = replace(fuzzer.stats)
        config = fuzzer.config
        self._budget = (None if config.max_execs is None
                        else max(config.max_execs - fuzzer.stats.execs, 0),
                        None if config.max_transactions is None
                        else max(config.max_transactions - fuzzer.stats.transactions, 0))
        self._start()

    def restart_with(self, cases: Iterable[TxSeq]) -> None:
        """Give a restarted worker the campaign's corpus (before its next epoch)."""
        self._pending = list(cases) + self._pending
        self.needs_corpus = False

    # ------------------------------------------------------------------ the end
    def interrupt(self) -> None:
        """Ask a busy worker to end its epoch now (as Ctrl-C does); the campaign is ending."""
        self._closing = True
        if self._busy:
            self._signal_stop()

    def close(self) -> None:
        """Wait for a busy worker's last report (its findings count), then end the worker."""
        self._closing = True
        if self._busy:
            self.interrupt()
            self.end(REPORT_TIMEOUT_S)
        self._shut_down(gracefully=not self.off)
