"""Workers in processes of their own: a campaign's other workers on the machine's other cores.

A :class:`ProcessWorker` runs a :class:`~secant.campaign.worker.Worker` in a child process
and gives its campaign a *mirror* of the child's fuzzer: a :class:`Fuzzer` that never runs
anything itself, whose coverage, corpus, counters, findings and policy summary are what
the child reported at the end of its last epoch. The campaign reads the mirror as it reads
an in-process worker's fuzzer (the summary, the coverage figures, the reports), and hears
the child's events (new corpus entries, findings, parts switched off) through the worker's
own :class:`Events`, in the order the child fired them.

An *epoch* is one request and its report: the child imports the cases the campaign passed
on (found by the other workers since the last exchange), then fuzzes a given number of
executions, then reports. Everything a worker does therefore depends only on its seed and
on the cases it was given at epoch boundaries, so a campaign whose workers run in
processes is the same campaign as one whose workers take turns in one process: the same
seed, execution budget and number of workers give the same corpus and findings on any
machine, however fast each core is (``tests/campaign/test_processes.py`` compares the two).

Children are forked (``multiprocessing``'s ``fork`` start method): they inherit the
compiled code and the campaign's configuration and deploy a chain of their own, which costs
no compilation and no pickling of code. A child ignores nothing: Ctrl-C (SIGINT) asks its
fuzzer to stop after the current execution, so the epoch ends and its report, findings
included, still reaches the campaign. A child that dies (killed, out of memory) or raises
is recorded as an internal error of ``worker:N`` and started again, importing the
campaign's whole corpus; after ``MAX_RESTARTS`` it is left off.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Any

from secant.campaign.collector import fuzzing_collector
from secant.campaign.worker import Worker
from secant.engine.config import FuzzConfig, FuzzStats
from secant.engine.corpus import Seed
from secant.engine.events import Events, FuzzListener
from secant.engine.failures import InternalError, worker_part
from secant.engine.fuzzer import Fuzzer
from secant.engine.policy import BranchSide, JustMissed, Policy, Proposal
from secant.types import Finding, RunResult, TxSeq

MAX_RESTARTS = 3
"""How many times a worker that died is started again before it is left off."""

REPORT_TIMEOUT_S = 30.0
"""How long a campaign that stops (Ctrl-C, an error) waits for a busy child's last report."""

START_METHOD = "fork"
"""Children inherit the compiled code and the configuration (see the module docstring)."""


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


def processes_available() -> bool:
    """Whether this platform can fork worker processes (Linux and the BSDs can)."""
    return START_METHOD in multiprocessing.get_all_start_methods()


WorkerBuilder = Callable[[Events], Worker]
"""Builds a worker in the child, on a chain of its own, telling ``events`` what happens."""


# ---------------------------------------------------------------------------- the child
@dataclass
class EpochReport:
    """What a child tells the campaign at the end of an epoch."""

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


class _Recorder(FuzzListener):
    """Keeps a child's events and edge counts until the end of its epoch."""

    def __init__(self, count_edges: bool) -> None:
        self.events: list[tuple[str, Any]] = []
        self.counts: Counter[tuple[bytes, int, bool]] | None = (Counter() if count_edges
                                                                  else None)

    def on_run(self, result: RunResult) -> None:
        if self.counts is not None:
            self.counts.update(result.edges)

    def on_new_seed(self, seed: Seed) -> None:
        self.events.append(("seed", seed))

    def on_finding(self, finding: Finding) -> None:
        self.events.append(("finding", finding))

    def on_internal_error(self, error: InternalError) -> None:
        self.events.append(("error", error))


@dataclass
class _Shipped:
    """The coverage a child has reported already (reports carry what is new)."""

    blocks: dict[bytes, set[int]] = field(default_factory=dict)
    edges: set[tuple[bytes, int, bool]] = field(default_factory=set)
    paths: set[int] = field(default_factory=set)

    def report(self, fuzzer: Fuzzer, recorder: _Recorder) -> EpochReport:
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
        if recorder.counts is not None:
            counts, recorder.counts = recorder.counts, Counter()
        return EpochReport(events, blocks, edges, paths, counts, stats.execs,
                           stats.transactions, stats.steps_run, stats.probes,
                           stats.last_new_path_exec, stats.elapsed, fuzzer.exhausted(),
                           fuzzer.summary(), resident_mb())


_CAMPAIGN_ENDS: list[Connection] = []
"""The campaign's ends of its children's pipes. A forked child inherits every one of them
and closes them first: while any process holds the campaign's end of a pipe, the child
on the other end would never see the campaign go (a killed campaign's workers would live
on)."""


def _serve(build: WorkerBuilder, conn: Connection, count_edges: bool) -> None:
    """A child's life: build its worker, then answer the campaign's requests until told to go.

    Requests: ``("fuzz", imports, execs, time_left, budget)`` runs an epoch and answers
    ``("report", EpochReport)`` (``execs`` None: until ``("end",)`` comes);
    ``("policy",)`` answers ``("policy", just_missed, infeasible)`` for the reports'
    frontier; ``("close",)`` or a closed pipe ends it. An
    exception answers ``("failed", error, traceback)`` and ends it.
    """
    for end in _CAMPAIGN_ENDS:
        end.close()
    worker: list[Worker] = []

    def stop(signum: int, frame: object) -> None:
        if worker:
            worker[0].fuzzer.stop()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    recorder = _Recorder(count_edges)
    shipped = _Shipped()
    try:
        worker.append(build(Events(recorder)))
        with fuzzing_collector():
            while True:
                try:
                    request = conn.recv()
                except (EOFError, OSError):
                    return  # the campaign is gone
                kind = request[0]
                if kind == "close":
                    return
                fuzzer = worker[0].fuzzer
                if kind == "policy":
                    conn.send(("policy", _plain(fuzzer.policy.just_missed()),
                               dict(fuzzer.policy.infeasible())))
                    continue
                if kind != "fuzz":
                    continue  # an "end" for an epoch that ended by itself
                _, imports, execs, time_left, budget = request
                if budget is not None:
                    fuzzer.config.max_execs, fuzzer.config.max_transactions = budget
                if time_left is not None:
                    fuzzer.config.max_time = fuzzer.stats.elapsed + time_left
                if imports:
                    worker[0].import_cases(imports)
                if execs is not None:
                    worker[0].fuzz(execs)
                else:
                    _fuzz_until_told(worker[0], conn)
                conn.send(("report", shipped.report(fuzzer, recorder)))
    except Exception as exc:  # the worker's bug: the campaign records it and goes on
        record = InternalError.of("", exc, worker[0].fuzzer.stats.execs if worker else 0)
        try:
            conn.send(("failed", record.error, record.traceback))
        except (OSError, ValueError):
            pass


OPEN_EPOCH_CHUNK = 16
"""Executions between two looks at the pipe in an epoch that ends when the campaign says."""


def _fuzz_until_told(worker: Worker, conn: Connection) -> None:
    """Fuzz until the campaign sends ``("end",)``, the budget is spent or nothing is left.

    The epochs of a campaign with a time budget: the campaign ends them when its own
    worker's epoch (or its shrinking) is over, so no worker waits for a slower one.
    """
    fuzzer = worker.fuzzer
    while not conn.poll():
        before = fuzzer.stats.execs
        worker.fuzz(OPEN_EPOCH_CHUNK)
        if fuzzer.stats.execs == before:
            return  # the budget is spent or the policy has nothing more
    conn.recv()


def _plain(found: Mapping[BranchSide, JustMissed] | None
           ) -> dict[BranchSide, JustMissed] | None:
    return None if found is None else dict(found)


# ---------------------------------------------------------------------------- the campaign's side
class RemotePolicy(Policy):
    """The policy of a worker in another process, as its last report described it.

    It proposes nothing (the child's own policy does); the campaign reads its summary and,
    for the reports, the closest cases and the infeasible sides the child kept.
    """

    name = "remote"

    def __init__(self) -> None:
        self.reported: dict[str, Any] = {}
        self.missed: dict[BranchSide, JustMissed] | None = None
        self.unreachable: dict[BranchSide, str] = {}

    def propose(self) -> Proposal | None:
        """Nothing: the child proposes."""
        return None

    def summary(self) -> dict[str, Any]:
        """The child's policy summary (its fuzzer's summary holds it)."""
        return self.reported

    def just_missed(self) -> Mapping[BranchSide, JustMissed] | None:
        """What the child kept, once fetched (``ProcessWorker.fetch_policy``)."""
        return self.missed

    def infeasible(self) -> Mapping[BranchSide, str]:
        """What the child found infeasible, once fetched."""
        return self.unreachable


def _never(case: TxSeq) -> RunResult:
    raise RuntimeError("a mirror of a worker in another process runs nothing")


class ProcessWorker:
    """A worker in a child process; ``fuzzer`` mirrors the child's (module docstring).

    ``events`` hears the child's events when its epoch's report arrives (the campaign and
    its listeners). ``begin`` sends an epoch's request, ``end`` waits for its report, so the
    campaign runs its own worker while the children run theirs.
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
        self._done = FuzzStats()  # what children that died had counted
        self.restarts = 0
        self.off = False
        self.resident_mb = 0.0
        """The child's resident memory at its last report (MB)."""
        self._closing = False  # the campaign is ending: a child that dies now stays off
        # Started again after it died: the campaign gives it its corpus (restart_with).
        self.needs_corpus = False
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(self._build, theirs, self._edge_counts is not None),
            name=f"secant-worker-{self.index}", daemon=True)
        _CAMPAIGN_ENDS.append(ours)
        self.process.start()
        theirs.close()
        self.conn = ours

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        pid: int | None = self.process.pid
        return pid

    # ------------------------------------------------------------------ epochs
    def import_cases(self, cases: Iterable[TxSeq]) -> list[Seed]:
        """Pass cases found elsewhere on; the child runs them first in its next epoch.

        Returns nothing: which of them join the child's corpus is known from its report.
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
        """Ask the child to import what is pending, then fuzz ``execs`` executions.

        ``execs`` None: until ``end`` tells it to stop (a campaign with a time budget).
        """
        if self.off or self._busy:
            return
        config = self.fuzzer.config
        time_left = (None if config.max_time is None
                     else max(config.max_time - self.fuzzer.stats.elapsed, 0.0))
        request = ("fuzz", self._pending, execs, time_left, self._budget)
        try:
            self.conn.send(request)
        except (OSError, ValueError) as exc:
            self._died(exc)
            return
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
                self.conn.send(("end",))
            if timeout is not None and not self.conn.poll(timeout):
                raise TimeoutError(f"no report within {timeout:.0f} s")
            kind, *answer = self.conn.recv()
        except (EOFError, OSError, TimeoutError) as exc:
            self._busy = False
            self._died(exc)
            return
        # Still busy until the report is read: Ctrl-C while waiting leaves it to close().
        self._busy = False
        if kind == "failed":
            self._died(answer[0], answer[1])
            return
        self._apply(answer[0])

    def _apply(self, report: EpochReport) -> None:
        """The child's epoch, mirrored: coverage, counters, then its events in order."""
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
        summary = dict(report.summary)
        self._policy.reported = {key: value for key, value in summary.items()
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
        """Ask the child for the closest cases and infeasible sides the reports show."""
        if self.off or self._busy:
            return
        try:
            self.conn.send(("policy",))
            if not self.conn.poll(REPORT_TIMEOUT_S):
                return
            kind, missed, infeasible = self.conn.recv()
        except (EOFError, OSError, ValueError):
            return
        if kind == "policy":
            self._policy.missed, self._policy.unreachable = missed, infeasible

    # ------------------------------------------------------------------ failures
    def _died(self, error: BaseException | str, trace: str = "") -> None:
        """Record the child's death; start it again (up to ``MAX_RESTARTS``) or leave it off.

        The new child starts from the campaign's corpus (``restart_with``) and gets what
        is left of this worker's budget.
        """
        fuzzer = self.fuzzer
        self._close_process()
        self.off = self._closing or self.restarts >= MAX_RESTARTS
        part = worker_part(self.index)
        # The child's own error (its message and traceback), or how it was lost.
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
        """Give a restarted child the campaign's corpus (before its next epoch)."""
        self._pending = list(cases) + self._pending
        self.needs_corpus = False

    # ------------------------------------------------------------------ the end
    def interrupt(self) -> None:
        """Ask a busy child to end its epoch now (as Ctrl-C does); the campaign is ending."""
        self._closing = True
        if self._busy and self.process.pid is not None and self.process.is_alive():
            try:
                os.kill(self.process.pid, signal.SIGINT)
            except OSError:
                pass

    def close(self) -> None:
        """Wait for a busy child's last report (its findings count), then end the child."""
        self._closing = True
        if self._busy:
            self.interrupt()
            self.end(REPORT_TIMEOUT_S)
        if not self.off:
            try:
                self.conn.send(("close",))
            except (OSError, ValueError):
                pass
        self._close_process()

    def _close_process(self) -> None:
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()
        if self.conn in _CAMPAIGN_ENDS:
            _CAMPAIGN_ENDS.remove(self.conn)


_FUZZER_KEYS = frozenset({"execs", "transactions", "elapsed_s", "paths", "corpus",
                          "corpus_origins"})
"""The keys of a fuzzer's summary that are the loop's, not the policy's (``Fuzzer.summary``)."""
