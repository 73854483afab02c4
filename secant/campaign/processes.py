"""Workers in child processes: a campaign's other workers on the machine's other cores.

A :class:`ProcessWorker` is a :class:`~secant.campaign.remote.RemoteWorker` whose worker
runs in a child process, and talks to it through a pipe. Children are forked
(``multiprocessing``'s ``fork`` start method) after compiling and planning: they inherit
the compiled code and the campaign's configuration and deploy a chain of their own, which
costs no compilation and no pickling of code. The same seed, execution budget and number
of workers therefore give the same campaign on any machine (``secant.campaign.remote``),
and where fork is missing the workers take turns in one process instead
(``processes_available``), which is the same campaign too.

A child's Ctrl-C (SIGINT) and SIGTERM ask its fuzzer to stop after the current execution,
so the epoch ends and its report, findings included, still reaches the campaign; a child
whose campaign is gone (killed outright) sees its pipe close and goes too.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import Counter
from multiprocessing.connection import Connection
from typing import Any

from secant.campaign.collector import fuzzing_collector
from secant.campaign.remote import (
    EpochReport,
    EpochServer,
    RemoteWorker,
    WorkerBuilder,
    WorkerFailed,
    WorkerLost,
    failure,
)
from secant.engine.config import FuzzConfig
from secant.engine.events import Events
from secant.engine.policy import BranchSide, JustMissed
from secant.types import TxSeq

START_METHOD = "fork"
"""Children inherit the compiled code and the configuration (see the module docstring)."""


def processes_available() -> bool:
    """Whether this platform can fork worker processes (Linux and the BSDs can)."""
    return START_METHOD in multiprocessing.get_all_start_methods()


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
    frontier; ``("close",)`` or a closed pipe ends it. An exception answers
    ``("failed", error, traceback)`` and ends it.
    """
    for end in _CAMPAIGN_ENDS:
        end.close()
    server: list[EpochServer] = []

    def stop(signum: int, frame: object) -> None:
        if server:
            server[0].stop()

    def told() -> bool:
        if not conn.poll():
            return False
        conn.recv()  # the ("end",)
        return True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        server.append(EpochServer(build, count_edges, f"process {os.getpid()}"))
        with fuzzing_collector():
            while True:
                try:
                    request = conn.recv()
                except (EOFError, OSError):
                    return  # the campaign is gone
                kind = request[0]
                if kind == "close":
                    return
                if kind == "policy":
                    conn.send(("policy", *server[0].policy()))
                elif kind == "fuzz":
                    _, imports, execs, time_left, budget = request
                    report = server[0].epoch(imports, execs, time_left, budget, told)
                    conn.send(("report", report))
                # else: an "end" for an epoch that ended by itself
    except Exception as exc:  # the worker's bug: the campaign records it and goes on
        failed = failure(exc)
        try:
            conn.send(("failed", failed.error, failed.trace))
        except (OSError, ValueError):
            pass


class ProcessWorker(RemoteWorker):
    """A worker in a child process (see the module docstring)."""

    def __init__(self, index: int, build: WorkerBuilder, config: FuzzConfig, events: Events,
                 edge_counts: Counter[tuple[bytes, int, bool]] | None) -> None:
        self.process: multiprocessing.process.BaseProcess | None = None
        super().__init__(index, build, config, events, edge_counts)

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
        pid: int | None = None if self.process is None else self.process.pid
        return pid

    def _send(self, imports: list[TxSeq], execs: int | None, time_left: float | None,
              budget: tuple[int | None, int | None] | None) -> None:
        try:
            self.conn.send(("fuzz", imports, execs, time_left, budget))
        except (OSError, ValueError) as exc:
            raise WorkerLost(f"{type(exc).__name__}: {exc}") from exc

    def _tell_end(self) -> None:
        try:
            self.conn.send(("end",))
        except (OSError, ValueError) as exc:
            raise WorkerLost(f"{type(exc).__name__}: {exc}") from exc

    def _receive(self, timeout: float | None) -> EpochReport:
        kind, *answer = self._answer(timeout)
        if kind == "failed":
            raise WorkerFailed(str(answer[0]), str(answer[1]))
        report: EpochReport = answer[0]
        return report

    def _answer(self, timeout: float | None) -> tuple[Any, ...]:
        try:
            if timeout is not None and not self.conn.poll(timeout):
                raise WorkerLost(f"no answer within {timeout:.0f} s")
            answer: tuple[Any, ...] = self.conn.recv()
            return answer
        except (EOFError, OSError) as exc:
            raise WorkerLost(f"the worker process ended ({type(exc).__name__})") from exc

    def _ask_policy(self, timeout: float
                    ) -> tuple[dict[BranchSide, JustMissed] | None, dict[BranchSide, str]]:
        try:
            self.conn.send(("policy",))
        except (OSError, ValueError) as exc:
            raise WorkerLost(str(exc)) from exc
        kind, missed, infeasible = self._answer(timeout)
        if kind != "policy":
            raise WorkerLost(f"unexpected answer {kind!r}")
        return missed, infeasible

    def _signal_stop(self) -> None:
        process = self.process
        if process is not None and process.pid is not None and process.is_alive():
            try:
                os.kill(process.pid, signal.SIGINT)
            except OSError:
                pass

    def _shut_down(self, gracefully: bool) -> None:
        process = self.process
        if process is None:
            return
        if gracefully:
            try:
                self.conn.send(("close",))
            except (OSError, ValueError):
                pass
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()
        self.conn.close()
        if self.conn in _CAMPAIGN_ENDS:
            _CAMPAIGN_ENDS.remove(self.conn)
        self.process = None
