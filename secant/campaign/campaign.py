"""A fuzzing campaign: its workers, its findings, its output directory, its summary.

:class:`Campaign` runs one :class:`~secant.campaign.worker.Worker` per chain it is given
(one, usually), each with its own seed, and listens to their events. Findings are kept
by key across workers; findings and new corpus entries are written to the output
directory the moment they appear (``findings/``, ``corpus/``), each file named by a hash
of what identifies it (a finding's key, a corpus entry's test case), so two workers or two
runs name the same thing alike; every file is written under a temporary name and renamed,
so a killed campaign leaves no half-written file. At the end every finding is shrunk to the
smallest case that still shows it (``secant.engine.shrink``, at most ``shrink_limit``
executions each) and its file rewritten, and ``summary.json`` is written.

A wall-time budget (``FuzzConfig.max_time``) is the whole campaign's, shrinking and reports
included (:class:`TimeBudget`): fuzzing stops early enough for what comes after it, and
shrinking stops at a deadline. An execution budget alone keeps the campaign, its shrinking
included, a function of its seed and budget.

Several workers fuzz in *epochs* of ``sync_every`` executions each; after every epoch each
worker is given the corpus entries the others found since the last exchange, and imports
(re-executes) them at the start of its next epoch. Workers may take turns in this process
(one chain each) or run elsewhere while the first works here (``processes`` of them, each
deploying its chain with ``make_chain``: child processes, ``secant.campaign.processes``,
or Ray actors, ``secant.campaign.ray_workers``, as ``transport`` says); either way
the execution budget is the campaign's, split evenly between the workers, and the campaign
is the same for a given seed, budget and number of workers.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from secant.campaign.collector import fuzzing_collector
from secant.campaign.config import CampaignConfig, OracleFactory
from secant.campaign.processes import ProcessWorker
from secant.campaign.remote import REPORT_TIMEOUT_S, RemoteWorker, WorkerBuilder, resident_mb
from secant.campaign.worker import Worker, WorkerSettings
from secant.chain.chain import TestChain
from secant.engine.config import FuzzConfig
from secant.engine.corpus import Seed
from secant.engine.events import Events, FuzzListener
from secant.engine.failures import oracle_part
from secant.engine.fuzzer import Fuzzer
from secant.engine.mutators import FunctionSpec
from secant.engine.oracle import Oracle
from secant.engine.policy import PolicyFactory
from secant.engine.shrink import Shrinker, ShrinkProgress, ShrinkSpace
from secant.evm.analysis import analyze
from secant.evm.opcodes import JUMPI
from secant.files import write_atomic
from secant.oracles import registry
from secant.report.coverage import EdgeCounter
from secant.report.frontier import FrontierEntry
from secant.report.plot import Timeline
from secant.types import Finding, TxSeq, case_to_json

if TYPE_CHECKING:
    from secant.campaign.manifest import Manifest

# What a time budget keeps back from fuzzing (docs/configuration.md, "The time budget").
# The reports (summary.json, coverage LCOV and HTML, the plot with matplotlib's import, the
# frontier, SARIF, the reproducers) took 0.5 to 1 s on the examples and on the 240-branch
# contract of the maze bench; they hardly grow with the budget, so their reserve is a small
# share of it within bounds. Shrinking needs time only once there are findings, so nothing
# is kept back for it before the first one, then a tenth of the budget. Estimating the
# shrinking work instead (replays per finding times their cost) would need what is only
# known while shrinking: a finding took 33 to 285 replays on the maze bench, and a replay
# of a long case costs several fuzzing executions. What shrinking leaves of its reserve goes
# back to fuzzing (Campaign._fuzz_within_budget), so the share costs little: it bounds how
# long fuzzing may pause for findings that are hard to shrink.
REPORTS_RESERVE_SHARE = 0.01
REPORTS_RESERVE_MIN_S = 1.0
REPORTS_RESERVE_MAX_S = 5.0
SHRINK_RESERVE_SHARE = 0.1
SHRINK_RESERVE_MIN_S = 1.0
RESERVE_MAX_SHARE = 0.25
"""Neither reserve takes more than this share of a (very short) budget."""

FUZZ_SLICE_S = 0.1
"""Seconds of fuzzing between two readings of the clock of a campaign with a time budget:
how late fuzzing may pause for shrinking."""

FIRST_SLICE_EXECS = 10
"""Executions of the first slice, before the rate of executions is known."""

EPOCH_S = 1.0
"""Seconds of an epoch of several workers with a time budget, about: each exchange of cases
costs every worker the others' new cases, so epochs are longer than a single worker's
slices, but short enough that a pause for shrinking is not late by more. The first worker
runs that many executions at its rate so far; the workers in processes fuzz until its epoch
(or its shrinking) is over, so that none waits for a slower one."""


def reports_reserve(seconds: float) -> float:
    """Seconds of a ``seconds`` budget kept for the summary and the reports."""
    share = min(max(REPORTS_RESERVE_SHARE * seconds, REPORTS_RESERVE_MIN_S),
                REPORTS_RESERVE_MAX_S)
    return min(share, RESERVE_MAX_SHARE * seconds)


def shrink_reserve(seconds: float) -> float:
    """Seconds of a ``seconds`` budget kept for shrinking once findings wait for it."""
    return min(max(SHRINK_RESERVE_SHARE * seconds, SHRINK_RESERVE_MIN_S),
               RESERVE_MAX_SHARE * seconds)


@dataclass(frozen=True)
class TimeBudget:
    """A campaign's wall-time budget: ``seconds`` from ``start`` (on the campaign's clock).

    The end of the budget is ``start + seconds``. The reports get the last ``reports``
    seconds, so shrinking must end by ``shrink_deadline``; fuzzing ends ``shrinking``
    seconds earlier while findings wait to be shrunk, else at the shrink deadline too.
    """

    seconds: float
    start: float
    reports: float
    shrinking: float

    @classmethod
    def of(cls, seconds: float, start: float, reports: bool, shrinking: bool) -> TimeBudget:
        """The budget of a campaign that writes ``reports`` and shrinks (``shrinking``)."""
        return cls(seconds, start, reports_reserve(seconds) if reports else 0.0,
                   shrink_reserve(seconds) if shrinking else 0.0)

    @property
    def end(self) -> float:
        """When the campaign should be over, reports written."""
        return self.start + self.seconds

    @property
    def shrink_deadline(self) -> float:
        """When shrinking stops: the reports' reserve before the end."""
        return self.end - self.reports

    def fuzz_deadline(self, waiting: bool) -> float:
        """When fuzzing stops, with findings ``waiting`` to be shrunk or not."""
        return self.shrink_deadline - (self.shrinking if waiting else 0.0)


MIN_CAMPAIGN_S = 1.0
"""The least time a campaign of a run of several gets from the run's shared time budget,
however late it starts: enough to deploy, fuzz a little and write its reports."""


def run_share(remaining: float, campaigns_left: int) -> float:
    """Seconds for the next campaign of a run with ``remaining`` seconds of its time budget.

    Why an equal part of what is left, not of the whole: a campaign that ends early (its
    policy ran out of proposals, or it had nothing to fuzz) leaves its time to the later
    ones, and deploying a later campaign's system counts against the run, so the run still
    ends within its budget.
    """
    return max(remaining / max(campaigns_left, 1), MIN_CAMPAIGN_S)


def _share(budget: int | None, index: int, workers: int) -> int | None:
    """Worker ``index``'s part of a count budget (None: no limit): equal, the rest first."""
    if budget is None:
        return None
    return budget // workers + (1 if index < budget % workers else 0)


def worker_seed(seed: int, index: int) -> int:
    """The seed of worker ``index`` of a campaign with seed ``seed`` (worker 0 keeps it)."""
    return seed if index == 0 else seed * 1_000_003 + index


def content_name(material: object) -> str:
    """A short, stable file-name stem for ``material`` (a hash of its JSON or repr)."""
    text = material if isinstance(material, str) else json.dumps(material, sort_keys=True,
                                                                  default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def finding_file_name(oracle: str, key: tuple[object, ...]) -> str:
    """The name of a finding's file in ``findings/``: its oracle and a hash of its key."""
    return f"{oracle}-{content_name(repr(key))}.json"


@dataclass(frozen=True)
class _WorkerRecipe:
    """How a campaign builds its worker ``index`` on a chain, here or in a child process."""

    config: CampaignConfig
    oracles: Sequence[OracleFactory] | None
    policy: PolicyFactory | None
    functions: Sequence[FunctionSpec] | None
    senders: Sequence[int] | None
    block_steps: bool
    workers: int

    def fuzz_config(self, index: int) -> FuzzConfig:
        """Worker ``index``'s engine configuration: its seed and its part of the budget."""
        fuzz = self.config.fuzz
        return replace(fuzz, seed=worker_seed(fuzz.seed, index),
                       max_execs=_share(fuzz.max_execs, index, self.workers),
                       max_transactions=_share(fuzz.max_transactions, index, self.workers))

    def build(self, index: int, chain: TestChain, events: Events) -> Worker:
        """Worker ``index`` on ``chain``, telling ``events`` what happens."""
        config = self.config
        oracles = (registry.build(chain, config.oracles) if self.oracles is None
                   else [make(chain) for make in self.oracles])
        settings = WorkerSettings(self.fuzz_config(index), config.target_pcs,
                                  config.prefix_cache, config.prefix_cache_mb)
        return Worker(chain, settings, oracles, events, self.policy, self.functions,
                      self.senders, self.block_steps)

    def builder(self, index: int, make_chain: Callable[[], TestChain]) -> WorkerBuilder:
        """What a child process runs to build worker ``index`` on a chain it deploys."""
        def build(events: Events) -> Worker:
            return self.build(index, make_chain(), events)

        return build


class Campaign(FuzzListener):
    """One fuzzing campaign (see the module docstring)."""

    def __init__(self, chain: TestChain | Sequence[TestChain], config: CampaignConfig, *,
                 policy: PolicyFactory | None = None,
                 oracles: Sequence[OracleFactory] | None = None,
                 functions: Sequence[FunctionSpec] | None = None,
                 senders: Sequence[int] | None = None, block_steps: bool = True,
                 manifest: Manifest | None = None,
                 clock: Callable[[], float] = time.perf_counter, processes: int = 0,
                 make_chain: Callable[[], TestChain] | None = None,
                 transport: type[RemoteWorker] = ProcessWorker) -> None:
        chains = [chain] if isinstance(chain, TestChain) else list(chain)
        if not chains:
            raise ValueError("a campaign needs at least one chain")
        # A time budget counts from here: the code is compiled and deployed, the workers
        # are about to be built (their fuzzers' clocks start a moment later).
        self.clock = clock
        seconds = config.fuzz.max_time
        self.budget = None if seconds is None else TimeBudget.of(
            seconds, clock(), reports=config.out is not None,
            shrinking=config.shrink_limit > 0)
        self.chain = chains[0]
        self.config = config
        self.findings: dict[tuple[object, ...], Finding] = {}
        self._listeners: list[FuzzListener] = []
        self.workers: list[Worker | RemoteWorker] = []
        # What the reports need (secant.report), kept only when they will be written:
        # runs per branch edge, and coverage over time sampled on new seeds and findings.
        self.edge_counter = (EdgeCounter() if config.out is not None and config.reports
                             else None)
        self.timeline = Timeline()
        self._block_sizes: tuple[int, dict[tuple[bytes, int], int]] | None = None
        self.frontier: list[FrontierEntry] | None = None  # once the reports are written
        self._recipe = _WorkerRecipe(config, oracles, policy, functions, senders, block_steps,
                                     len(chains) + processes)
        for index, worker_chain in enumerate(chains):
            events = Events(self, *([self.edge_counter] if self.edge_counter else []))
            self.workers.append(self._recipe.build(index, worker_chain, events))
        if processes and make_chain is None:
            raise ValueError("workers in processes need make_chain to deploy their chains")
        for index in range(len(chains), len(chains) + processes):
            assert make_chain is not None
            self.workers.append(transport(
                index, self._recipe.builder(index, make_chain),
                self._recipe.fuzz_config(index), Events(self),
                self.edge_counter.counts if self.edge_counter is not None else None))
        self.notes = self.first.notes
        self.codes = self.first.codes
        self.oracles = self.first.fuzzer.oracles
        self._exported = [0] * len(self.workers)
        # Cases each in-process worker imports before its next turn (as a process does).
        self._pending: list[list[TxSeq]] = [[] for _ in self.workers]
        self.shrinking: ShrinkProgress | None = None
        # What summary.json records of the run (secant.campaign.manifest), when given.
        self.manifest = manifest
        self.interrupted = False
        # What resuming from an earlier run's folder carried over (secant.rerun.resume).
        self.resumed: dict[str, Any] | None = None
        # What the shared corpus folder (--corpus) gave the campaign before it fuzzed.
        self.shared_corpus: dict[str, Any] | None = None
        if config.out is not None:
            (config.out / "corpus").mkdir(parents=True, exist_ok=True)
            (config.out / "findings").mkdir(parents=True, exist_ok=True)
        if self.budget is not None:
            self._limit_fuzzing(self.budget)

    @property
    def first(self) -> Worker:
        """The first worker: in this process, it replays, shrinks and reports."""
        worker = self.workers[0]
        assert isinstance(worker, Worker)
        return worker

    @property
    def fuzzer(self) -> Fuzzer:
        """The first worker's fuzzer (the only one of a one-worker campaign)."""
        return self.workers[0].fuzzer

    def resident_mb(self) -> list[float]:
        """Each worker's resident memory in MB (see ``summary.json``'s ``resident_mb``).

        The first worker's is this process's now; a worker process's, its last report's.
        """
        return [round(resident_mb() if isinstance(w, Worker) else w.resident_mb, 1)
                for w in self.workers]

    def totals(self) -> tuple[int, int, int]:
        """Executions, distinct paths and corpus entries over every worker."""
        fuzzers = [worker.fuzzer for worker in self.workers]
        if len(fuzzers) == 1:
            return (fuzzers[0].stats.execs, len(fuzzers[0].coverage.paths),
                    len(fuzzers[0].corpus))
        return (sum(f.stats.execs for f in fuzzers),
                len(set().union(*(f.coverage.paths for f in fuzzers))),
                sum(len(f.corpus) for f in fuzzers))

    def listen(self, listener: FuzzListener) -> None:
        """Let ``listener`` hear every worker's events (a progress display, a bench)."""
        self._listeners.append(listener)
        for worker in self.workers:
            worker.events.add(listener)

    # ------------------------------------------------------------------ events
    def on_new_seed(self, seed: Seed) -> None:
        """Write a new corpus entry (in ``out``'s corpus/ and the shared corpus folder)."""
        folders = [folder for folder in (None if self.config.out is None
                                         else self.config.out / "corpus",
                                         self.config.shared_corpus) if folder is not None]
        if folders:
            sequence = case_to_json(seed.case, self.chain.names())
            name = f"{content_name(sequence)}.json"
            entry = {"origin": seed.origin, "found_at": seed.found_at, "sequence": sequence}
            for folder in folders:
                path = folder / name
                if not path.exists():  # a resumed campaign's entry keeps its origin, time
                    write_atomic(path, json.dumps(entry, indent=1))
        self._sample()

    def on_finding(self, finding: Finding) -> None:
        """Keep a finding new to the campaign, fill in its sequence, write it."""
        if finding.key in self.findings:
            return
        finding.sequence = case_to_json(finding.case or (), self.chain.names())
        self.findings[finding.key] = finding
        self.write_finding(finding)
        self._sample()

    def write_finding(self, finding: Finding) -> None:
        """(Re)write a finding's file, named by its key."""
        out = self.config.out
        if out is not None:
            name = finding_file_name(finding.oracle or finding.kind, finding.key)
            write_atomic(out / "findings" / name, json.dumps(finding.to_json(), indent=1))

    # ------------------------------------------------------------------ running
    def run(self) -> dict[str, Any]:
        """Fuzz until the budget is spent; write and return the summary.

        Ctrl-C (a KeyboardInterrupt) goes on to the caller, who calls ``finish``: the
        manifest then says ``interrupted``. Any other exception is secant failing: the
        summary is written saying ``failed`` (see ``fail``) and the exception goes on.
        """
        if self.manifest is not None:
            self.manifest.start()
        try:
            if self.config.out is not None and self.manifest is not None:
                # A summary saying "running" from the start: a campaign killed at any
                # moment leaves the manifest ``--resume`` rebuilds it from.
                self._write_summary()
            with fuzzing_collector():
                if self.budget is None:
                    self._fuzz()
                else:
                    self._fuzz_within_budget()
        except KeyboardInterrupt:
            self.interrupted = True
            raise
        except Exception as exc:
            self.fail(exc)
            raise
        return self.finish()

    def _fuzz(self) -> None:
        """Fuzz until the workers' budgets are spent (or their policies have nothing more)."""
        if len(self.workers) == 1:
            self.first.fuzz()
        else:
            self._run_in_turns()

    def _fuzz_within_budget(self) -> None:
        """Fuzz and shrink within the time budget, leaving the reports their reserve.

        Fuzzing stops at the budget's fuzz deadline, earlier while findings wait to be
        shrunk (``TimeBudget.fuzz_deadline``); they are shrunk until the shrink deadline,
        and whatever time shrinking left goes back to fuzzing (the policy keeps its place),
        until the time is up, the execution budget is spent or the policy has nothing more.
        A finding found meanwhile pauses fuzzing again, to be shrunk in the time left.
        ``finish`` then has nothing left to shrink (but what Ctrl-C left) and writes the
        reports.
        """
        budget = self.budget
        assert budget is not None
        while True:
            more = self._fuzz_until_pause(budget)
            if not self._to_shrink():
                return
            if self.config.out is not None:
                self._write_summary()  # the findings as found, before shrinking
            for worker in self.workers:
                if isinstance(worker, RemoteWorker) and not worker.fuzzer.exhausted():
                    worker.begin(None)  # the other workers fuzz on meanwhile
            self.shrink_findings()
            if (not more or (self.shrinking is not None and self.shrinking.interrupted)
                    or self.clock() >= budget.fuzz_deadline(False)):
                return

    def _fuzz_until_pause(self, budget: TimeBudget) -> bool:
        """Fuzz in slices until the fuzz deadline; whether fuzzing could go on after it.

        The deadline comes the shrinking reserve earlier as soon as a finding waits to be
        shrunk, and the campaign's clock is read between slices of about ``FUZZ_SLICE_S``
        seconds (``_slice``): the engine's loop keeps its own limit, the end of the
        budget's fuzzing (``_limit_fuzzing``), because reaching it also ends the policy's
        rounds for good; a pause for shrinking must stop the loop from outside, and the
        policy keeps its place between slices.
        """
        while True:
            now = self.clock()
            pause = budget.fuzz_deadline(bool(self._to_shrink()))
            if now >= pause:
                return now < budget.fuzz_deadline(False)
            before = sum(w.fuzzer.stats.execs for w in self.workers)
            if len(self.workers) == 1:
                self.first.fuzz(self._slice(pause - now))
            else:
                self._turn()
            if sum(w.fuzzer.stats.execs for w in self.workers) == before:
                return False  # the time is up, the budget spent or nothing more to propose

    def _slice(self, seconds: float) -> int:
        """About ``min(seconds, FUZZ_SLICE_S)`` of fuzzing, in executions at the rate so far."""
        stats = self.fuzzer.stats
        if not stats.execs:
            return FIRST_SLICE_EXECS
        rate = stats.execs / max(stats.elapsed, 1e-9)
        return max(1, int(rate * min(seconds, FUZZ_SLICE_S)))

    def _limit_fuzzing(self, budget: TimeBudget) -> None:
        """Make the budget's fuzz deadline the workers' own time limit.

        A worker's limit is its fuzzer's ``max_time`` (the engine's loop compares it with
        the fuzzer's elapsed time after every execution): the fuzzer's elapsed time now
        plus the time left on the campaign's clock. Each worker's ``FuzzConfig`` is its own
        (``__init__`` made it), so setting it in place changes no other worker's, nor the
        campaign's configuration the manifest records.
        """
        left = budget.fuzz_deadline(False) - self.clock()
        for worker in self.workers:
            fuzzer = worker.fuzzer
            fuzzer.config.max_time = fuzzer.stats.elapsed + left

    def _run_in_turns(self) -> None:
        """Every worker fuzzes ``sync_every`` executions, then they exchange new cases."""
        while True:
            before = sum(w.fuzzer.stats.execs for w in self.workers)
            self._turn()
            if sum(w.fuzzer.stats.execs for w in self.workers) == before:
                return  # every worker is done (or has nothing left to propose)

    def _turn(self) -> None:
        """One epoch: each worker not done imports what it was given and fuzzes its part.

        Workers in processes get their request first and fuzz while this process runs its
        own; their reports are then applied in worker order, so the campaign hears every
        worker's events in the same order whichever ran faster.
        """
        busy = [(index, worker) for index, worker in enumerate(self.workers)
                if not worker.fuzzer.exhausted()]
        for _, worker in busy:
            if isinstance(worker, RemoteWorker):
                # With a time budget a child fuzzes until this process's epoch is over.
                worker.begin(None if self.budget is not None else self._epoch(worker))
        for index, worker in busy:
            if isinstance(worker, RemoteWorker):
                worker.end()
                if worker.needs_corpus:
                    worker.restart_with(self._corpus_cases())
                continue
            pending, self._pending[index] = self._pending[index], []
            if pending:
                worker.import_cases(pending)
            worker.fuzz(self._epoch(worker))
        self.exchange()

    def _epoch(self, worker: Worker | RemoteWorker) -> int:
        """The executions of ``worker``'s next epoch.

        ``sync_every``; with a time budget at most about ``EPOCH_S`` seconds of them at the
        worker's rate so far, so that a pause for shrinking or the end of the time comes
        on time.
        """
        every = self.config.sync_every
        if self.budget is None:
            return every
        stats = worker.fuzzer.stats
        if not stats.execs:
            return min(every, FIRST_SLICE_EXECS)
        rate = stats.execs / max(stats.elapsed, 1e-9)
        return max(1, min(every, int(rate * EPOCH_S)))

    def _corpus_cases(self) -> list[TxSeq]:
        """Every worker's corpus, worker by worker: what a restarted worker starts from."""
        return [seed.case for worker in self.workers for seed in worker.fuzzer.corpus.seeds
                if seed.origin != "import"]

    def exchange(self) -> None:
        """Each worker gets the cases the others added to their corpora since last time.

        It runs them at the start of its next epoch (a worker in a process in its next
        request).
        """
        fresh: list[list[TxSeq]] = []
        for index, worker in enumerate(self.workers):
            seeds = worker.fuzzer.corpus.seeds
            fresh.append([s.case for s in seeds[self._exported[index]:]
                          if s.origin != "import"])
        for index, worker in enumerate(self.workers):
            cases = [case for other, found in enumerate(fresh) if other != index
                     for case in found]
            if not cases:
                continue
            if isinstance(worker, RemoteWorker):
                worker.import_cases(cases)
            else:
                self._pending[index].extend(cases)
        self._exported = [len(w.fuzzer.corpus.seeds) for w in self.workers]

    def _settle(self) -> None:
        """Busy workers in processes end their epoch now; their reports are applied."""
        for worker in self.workers:
            if isinstance(worker, RemoteWorker):
                worker.interrupt()
        for worker in self.workers:
            if isinstance(worker, RemoteWorker):
                worker.end(REPORT_TIMEOUT_S)

    def close(self) -> None:
        """End the workers in processes (their last reports applied first)."""
        for worker in self.workers:
            if isinstance(worker, RemoteWorker):
                worker.close()

    def finish(self) -> dict[str, Any]:
        """Shrink the findings; write ``summary.json`` (also after an interrupted run).

        Returns the summary. The findings as found are on disk before shrinking starts
        (their files since they appeared, the summary written first), so shrinking that
        fails or is interrupted loses nothing.
        """
        try:
            self._settle()
            if self.config.out is not None and self._to_shrink():
                self._write_summary()
            self.shrink_findings()
            self._write_finding_reports()
            if self.manifest is not None:
                stopped = self.interrupted or (self.shrinking is not None
                                               and self.shrinking.interrupted)
                self.manifest.end("interrupted" if stopped else "completed")
            return self._write_coverage_reports(self._write_summary())
        except Exception as exc:
            self.fail(exc)
            raise
        finally:
            self.close()

    def _write_finding_reports(self) -> None:
        """findings.sarif and the Foundry reproducers of the shrunk findings (docs/reports.md).

        A report that fails costs the campaign nothing but a note.
        """
        out = self.config.out
        if out is None or not self.config.reports:
            return
        from secant.report.findings import write_finding_reports

        try:
            write_finding_reports(out, self.chain, list(self.findings.values()), self.oracles,
                                  self.config.test_contract)
        except Exception as exc:  # a report bug must not cost the campaign its findings
            self.notes.append(f"SARIF and reproducers not written: {type(exc).__name__}: "
                              f"{exc}")

    def _sample(self) -> None:
        """A point of the coverage-over-time plot (on new seeds and findings, not per run)."""
        if self.edge_counter is not None:
            self.timeline.sample([w.fuzzer for w in self.workers], self.codes,
                                 len(self.findings), self.block_sizes())

    def block_sizes(self) -> dict[tuple[bytes, int], int]:
        """Instructions per block of the target codes, by (code hash, block start).

        Computed once per set of target codes (the summary's and the timeline's count).
        """
        if self._block_sizes is None or self._block_sizes[0] != len(self.codes):
            fork = self.chain.fork
            sizes = {(code_hash, start): len(pcs)
                     for code_hash, (_, code) in self.codes.items()
                     for start, pcs in analyze(code, code_hash, fork).block_pcs().items()}
            self._block_sizes = (len(self.codes), sizes)
        return self._block_sizes[1]

    def _write_coverage_reports(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Coverage (LCOV, HTML, plot) and the frontier in the output folder (docs/reports.md).

        Returns the summary. A report that fails costs the campaign nothing: the summary,
        written already, gets a note and is written again.
        """
        out = self.config.out
        if out is None or self.edge_counter is None:
            return summary
        from secant.evm.cfg import ControlFlowGraph
        from secant.report.coverage_reports import write_reports

        self._sample()
        for worker in self.workers:
            if isinstance(worker, RemoteWorker):
                worker.fetch_policy()
        fork = self.chain.fork
        space = self.first.space
        try:
            self.frontier = write_reports(
                out, self.chain, self.codes, [w.fuzzer for w in self.workers],
                space.functions, space.senders, self.edge_counter.counts, self.timeline,
                lambda code: ControlFlowGraph.from_code(code, fork), summary)
        except Exception as exc:  # a report bug must not cost the campaign its summary
            self.notes.append(f"coverage reports not written: {type(exc).__name__}: {exc}")
            return self._write_summary()
        return summary

    def fail(self, error: Exception) -> None:
        """Secant failed with ``error``: write a summary saying so, as far as it can.

        The findings and corpus entries on disk stay as they are. Computing the summary
        may be what failed: then the manifest and the findings are written alone, and a
        summary that cannot be written at all is left as it was (the error matters more).
        """
        if self.manifest is not None:
            self.manifest.end("failed", f"{type(error).__name__}: {error}")
        try:
            self._settle()
            self.close()
        except Exception:
            pass  # the error that failed the campaign matters more
        out = self.config.out
        if out is None:
            return
        try:
            self._write_summary()
        except Exception:
            try:
                partial = {"manifest": self.manifest.to_json() if self.manifest else None,
                           "findings": [f.to_json() for f in self.findings.values()]}
                write_atomic(out / "summary.json", json.dumps(partial, indent=1))
            except Exception:
                pass

    def _write_summary(self) -> dict[str, Any]:
        summary = self.summary()
        if self.config.out is not None:
            write_atomic(self.config.out / "summary.json", json.dumps(summary, indent=1))
        return summary

    # ------------------------------------------------------------------ shrinking
    def _to_shrink(self) -> list[Finding]:
        """The findings still to shrink (none once shrinking was interrupted)."""
        if self.config.shrink_limit <= 0 or (self.shrinking is not None
                                             and self.shrinking.interrupted):
            return []
        return [f for f in self.findings.values() if f.shrink is None and f.case]

    def shrink_findings(self) -> None:
        """Shrink the case of every finding not shrunk yet (``secant.engine.shrink``).

        Each finding gets at most ``shrink_limit`` executions, replayed on the first
        worker's chain (``Worker.replay``: the campaign's corpus, coverage, findings and
        counters do not change), and its file is written again once it is shrunk. Ctrl-C
        stops shrinking: the finding being shrunk keeps the smallest failing case found so
        far, the findings not shrunk yet keep the case found.

        With a time budget shrinking also stops at the budget's shrink deadline, likewise:
        each finding gets an equal share of the time left (what one leaves goes to the
        next), and the progress says ``out_of_time`` when a finding was cut short or left
        as found.
        """
        todo = self._to_shrink()
        if not todo:
            return
        worker = self.first
        space = worker.shrink_space()
        progress = self.shrinking
        if progress is None:
            progress = self.shrinking = ShrinkProgress(len(todo))
        # Shrinking again (a time budget's fuzzing went on after the last round): the
        # findings done so far and those waiting now.
        progress.total = progress.done + len(todo)
        deadline = self.budget.shrink_deadline if self.budget is not None else None
        try:
            for index, finding in enumerate(todo):
                until = None
                if deadline is not None:
                    now = self.clock()
                    if now >= deadline:
                        progress.out_of_time = True  # the rest stay as found
                        break
                    until = now + (deadline - now) / (len(todo) - index)
                self._shrink(finding, worker, space, progress, until)
        except KeyboardInterrupt:
            progress.interrupted = True
        finally:
            progress.active = None
            self._refresh()

    def _shrink(self, finding: Finding, worker: Worker, space: ShrinkSpace,
                progress: ShrinkProgress, deadline: float | None = None) -> None:
        """Shrink one finding; replace its case, sequence and detail by the shrunk ones.

        The finding each failing replay showed is kept, so the shrunk finding's own words
        (a property's "after N transactions") cost no execution beyond the budget. A
        KeyboardInterrupt keeps the smallest failing case found so far, then stops
        shrinking (it goes on up to ``shrink_findings``). At ``deadline`` (on the campaign's
        clock) shrinking stops likewise and the finding's ``shrink`` says ``out_of_time``;
        a finding the deadline left no execution is left as found (not shrunk).
        """
        original = finding.case or ()
        shown: dict[TxSeq, Finding] = {}

        def run(case: TxSeq) -> dict[tuple[Any, ...], TxSeq | None]:
            found = worker.replay(case)
            same = found.get(finding.key)
            if same is not None:
                shown[case] = same
            return {key: other.case for key, other in found.items()}

        def ran(shrinker: Shrinker) -> None:
            self._refresh()

        shrinker = progress.active = Shrinker(run, finding.key, self.config.shrink_limit,
                                              space, ran, deadline=deadline, clock=self.clock)
        interrupted: KeyboardInterrupt | None = None
        try:
            try:
                result = shrinker.shrink(original)
            except KeyboardInterrupt as stop:
                interrupted = stop
                result = shrinker.result()
            stats = result.stats()
            if interrupted is not None:
                stats["interrupted"] = True
        except Exception as exc:  # a shrinking bug must not cost the campaign its findings
            result = None
            stats = {"execs": shrinker.execs, "tx_before": len(original),
                     "tx_after": len(original), "reproduced": False, "complete": False,
                     "error": f"{type(exc).__name__}: {exc}"}
        if stats.get("out_of_time"):
            progress.out_of_time = True
            if not stats["execs"]:
                progress.active = None
                return  # not a single replay in time: left as found, as if not reached
            progress.cut_short += 1
        finding.original_case = original
        finding.original_sequence = finding.sequence
        finding.original_detail = finding.detail
        if result is not None and result.reproduced and result.case != original:
            again = shown[result.case]
            # The case the finding names (a property's failing prefix), else the one run.
            named = again.case
            case = (named if named and result.case[:len(named)] == named
                    else result.case)
            finding.case = case
            finding.sequence = case_to_json(case, self.chain.names())
            finding.detail = again.detail
            stats["tx_after"] = len(case)
        finding.shrink = stats
        progress.active = None
        progress.done += 1
        progress.execs += stats["execs"]
        progress.tx_before += len(original)
        progress.tx_after += len(finding.case or ())
        self.write_finding(finding)
        if interrupted is not None:
            raise interrupted

    def _refresh(self) -> None:
        """Let the listeners (a live display) redraw while no fuzzer runs."""
        for listener in self._listeners:
            listener.on_progress()

    # ------------------------------------------------------------------ reporting
    def progress_rows(self) -> list[tuple[str, str]]:
        """More rows for the progress display (the policy's and the prefix cache's)."""
        rows = self.fuzzer.policy.progress_rows()
        cache = self.first.target.prefix_cache
        if cache is not None:
            rows.append(("prefix cache", f"{cache.hit_rate:.1%} hits, {cache.partial_hits:,} "
                                         f"misses resumed from a shorter prefix, "
                                         f"{len(cache)} entries"))
        return rows

    def coverage_figures(self) -> dict[str, int]:
        """Covered and total branch sides and instructions of the target contracts."""
        fork = self.chain.fork
        blocks: set[tuple[bytes, int]] = set()
        edges: set[tuple[bytes, int, bool]] = set()
        for worker in self.workers:
            blocks |= worker.fuzzer.coverage.blocks
            edges |= worker.fuzzer.coverage.edges
        branches_total = instructions_total = 0
        for code_hash, (_, code) in self.codes.items():
            analysis = analyze(code, code_hash, fork)
            instructions_total += len(analysis.instructions)
            branches_total += 2 * sum(1 for _, op, _ in analysis.instructions if op == JUMPI)
        sizes = self.block_sizes()
        instructions_covered = sum(sizes.get(block, 0) for block in blocks)
        branches_covered = sum(1 for h, _, _ in edges if h in self.codes)
        return {"branches_covered": branches_covered, "branches_total": branches_total,
                "instructions_covered": instructions_covered,
                "instructions_total": instructions_total}

    def internal_errors(self) -> list[dict[str, Any]]:
        """``summary.json``'s ``internal_errors``: the parts switched off after an error.

        In each worker's order; ``worker`` names the worker when there are several.
        """
        several = len(self.workers) > 1
        rows = []
        for index, worker in enumerate(self.workers):
            for record in worker.fuzzer.internal_errors:
                row = record.to_json()
                if several:
                    row["worker"] = index
                rows.append(row)
        return rows

    def _oracle_summary(self, oracle: Oracle) -> dict[str, Any]:
        """What ``oracle`` adds to the summary; nothing once its summary raised.

        An oracle whose summary raises is switched off in every worker, and the error is
        recorded once (the summary is written several times in a run).
        """
        part = oracle_part(oracle.name)
        first = self.workers[0].fuzzer
        if any(r.part == part and r.during == "summary" for r in first.internal_errors):
            return {}
        try:
            return oracle.summary(self.findings)
        except Exception as exc:  # the oracle's bug: the summary goes on without it
            for worker in self.workers:
                for other in list(worker.fuzzer.oracles):
                    if other.name == oracle.name:
                        worker.fuzzer.drop_oracle(other, exc, during="summary")
            if not any(r.part == part and r.during == "summary"
                       for r in first.internal_errors):
                first.switch_off(part, exc, during="summary")  # it was off already
            return {}

    def summary(self) -> dict[str, Any]:
        """The campaign's ``summary.json``."""
        main = self.chain.main
        summary = self.fuzzer.summary()
        if len(self.workers) > 1:
            summary["workers"] = [w.fuzzer.summary() for w in self.workers]
            for row, worker in zip(summary["workers"], self.workers, strict=True):
                if isinstance(worker, RemoteWorker):
                    row["where"] = worker.where
                    row["exchange"] = worker.exchange.to_json()
            summary["execs"], summary["paths"], summary["corpus"] = self.totals()
            summary["transactions"] = sum(w.fuzzer.stats.transactions for w in self.workers)
        summary.update(self.coverage_figures())
        summary["contract"] = main.name if main else None
        summary["seed"] = self.config.fuzz.seed
        summary["schedule"] = self.config.fuzz.schedule
        summary["oracles"] = [oracle.name for oracle in self.oracles]
        summary["findings"] = [f.to_json() for f in self.findings.values()]
        if self.shrinking is not None:
            shrinking = self.shrinking
            summary["shrink"] = {"limit": self.config.shrink_limit,
                                 "findings": shrinking.done, "execs": shrinking.execs,
                                 "tx_before": shrinking.tx_before,
                                 "tx_after": shrinking.tx_after,
                                 "interrupted": shrinking.interrupted,
                                 "out_of_time": shrinking.out_of_time,
                                 "cut_short": shrinking.cut_short,
                                 "not_shrunk": sum(1 for f in self.findings.values()
                                                   if f.shrink is None and f.case)}
        for oracle in self.oracles:
            summary.update(self._oracle_summary(oracle))
        cache = self.first.target.prefix_cache
        if cache is not None:
            summary["prefix_cache"] = {"hits": cache.hits, "misses": cache.misses,
                                       "hit_rate": round(cache.hit_rate, 4),
                                       "partial_hits": cache.partial_hits,
                                       "entries": len(cache)}
        summary["resident_mb"] = self.resident_mb()
        summary["notes"] = list(self.notes)
        summary["internal_errors"] = self.internal_errors()
        if self.resumed is not None:
            summary["resume"] = self.resumed
        if self.shared_corpus is not None:
            summary["shared_corpus"] = self.shared_corpus
        if self.manifest is not None:
            summary["manifest"] = self.manifest.to_json()
        return summary
