"""Workers as Ray actors: one campaign over the machines of a Ray cluster (``--ray``).

A :class:`RayWorker` is a :class:`~secant.campaign.remote.RemoteWorker` whose worker is a
Ray actor, placed by Ray on any node of the cluster with a free CPU. The actor receives how
to build its worker (the campaign's recipe and the compiled code, serialised by Ray with
cloudpickle: no source file and no compiler is needed on the node, only secant and Ray of
the driver's versions), deploys its own chain, and runs epochs as a worker process does
(``secant.campaign.remote.EpochServer``); requests and reports go through Ray's object
store. Epochs, the mirror, the order in which reports are applied and restarts are the
remote worker's, so a campaign with ``--ray`` and ``--execs`` is the same campaign as with
local worker processes. Only the driver (the ``secant fuzz`` command) writes the output
folder.

``connect`` joins the cluster: ``auto`` is the one ``ray start`` runs on this machine,
``local`` starts a private one in this process, anything else is an address
(``HOST:PORT`` or ``ray://HOST:PORT``). Every failure to join is one line naming the fix.
"""

from __future__ import annotations

import logging
import socket
from collections import Counter
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
from secant.errors import SecantError
from secant.types import TxSeq

RAY_REQUIREMENT = "ray==2.60.0"
"""The Ray release secant is tested with; the driver and every node need the same one."""

CONNECT_TIMEOUT_S = 10
"""How long a ``HOST:PORT`` may take to accept a connection before it counts as unreachable."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SecantError("--ray needs the ray package, which is not installed",
                          f"install it on this machine and every node: pip install "
                          f"'{RAY_REQUIREMENT}'") from None
    return ray


def connect(address: str) -> int:
    """Join the Ray cluster at ``address``; return the CPUs it has.

    Raises a one-line ``SecantError`` when Ray is missing, the address answers nothing, or
    the cluster runs another Ray or Python than this process.
    """
    ray = _ray()
    if not ray.is_initialized():
        arguments: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False,
                                     "configure_logging": True}
        if address != "local":
            arguments["address"] = address
            _reachable(address)
        try:
            ray.init(**arguments)
        except ConnectionError as exc:
            raise SecantError(
                f"no Ray cluster answers at {address!r} ({_first_line(exc)})",
                "start one with `ray start --head` and pass --ray auto, or pass the head "
                "node's address as --ray HOST:6379") from None
        except RuntimeError as exc:
            text = str(exc)
            if "ersion mismatch" in text:
                raise SecantError(
                    f"the Ray cluster at {address!r} runs another Ray or Python than this "
                    f"process ({_first_line(exc)})",
                    f"install {RAY_REQUIREMENT} and the cluster's Python on every node and "
                    "here") from None
            raise SecantError(f"cannot join the Ray cluster at {address!r}: "
                              f"{_first_line(exc)}",
                              "check the address (ray status on the head node)") from None
        except ValueError as exc:
            raise SecantError(f"--ray {address!r} is not a Ray address: {_first_line(exc)}",
                              "pass auto, local, HOST:PORT or ray://HOST:PORT") from None
    return int(ray.cluster_resources().get("CPU", 1))


def _reachable(address: str) -> None:
    """Fail at once when a ``HOST:PORT`` address answers nothing (Ray would wait for it)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # auto, or a form Ray itself will judge
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)),
                                      timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise SecantError(f"no Ray cluster answers at {address!r} ({exc})",
                          "start one with `ray start --head` on that machine, or pass the "
                          "head node's address as --ray HOST:6379") from None


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0][:200] if lines else type(error).__name__


class _Actor:
    """Where a Ray worker runs: an epoch server, and the word that ends an open epoch.

    Its methods run in up to three threads at once (``max_concurrency``): an epoch, the
    campaign's "end it" and its "stop". An open epoch ends once ``ended`` reaches its number,
    so an "end" that overtakes its epoch's start still ends it.
    """

    def __init__(self, build: WorkerBuilder, count_edges: bool) -> None:
        node = _ray().get_runtime_context().get_node_id()
        self.server = EpochServer(build, count_edges, f"Ray node {node[:12]}")
        self.ended = 0

    def epoch(self, number: int, imports: list[TxSeq], execs: int | None,
              time_left: float | None,
              budget: tuple[int | None, int | None] | None) -> EpochReport | Any:
        try:
            with fuzzing_collector():
                return self.server.epoch(imports, execs, time_left, budget,
                                         lambda: self.ended >= number)
        except Exception as exc:  # the worker's bug: the campaign records it and goes on
            failed = failure(exc)
            return ("failed", failed.error, failed.trace)

    def end_epoch(self, number: int) -> None:
        self.ended = max(self.ended, number)

    def stop(self) -> None:
        self.server.stop()

    def policy(self) -> tuple[Any, Any]:
        return self.server.policy()


_REMOTE_ACTOR: Any = None


def _actor_class() -> Any:
    """The Ray actor class (made once Ray is imported)."""
    global _REMOTE_ACTOR
    if _REMOTE_ACTOR is None:
        _REMOTE_ACTOR = _ray().remote(_Actor)
    return _REMOTE_ACTOR


class RayWorker(RemoteWorker):
    """A worker as a Ray actor (see the module docstring)."""

    def __init__(self, index: int, build: WorkerBuilder, config: FuzzConfig, events: Events,
                 edge_counts: Counter[tuple[bytes, int, bool]] | None) -> None:
        self.actor: Any = None
        self._number = 0
        self._reply: Any = None
        super().__init__(index, build, config, events, edge_counts)

    def _start(self) -> None:
        self.actor = _actor_class().options(num_cpus=1, max_concurrency=3).remote(
            self._build, self._edge_counts is not None)

    def _send(self, imports: list[TxSeq], execs: int | None, time_left: float | None,
              budget: tuple[int | None, int | None] | None) -> None:
        self._number += 1
        self._reply = self.actor.epoch.remote(self._number, imports, execs, time_left, budget)

    def _tell_end(self) -> None:
        self.actor.end_epoch.remote(self._number)

    def _get(self, reply: Any, timeout: float | None) -> Any:
        ray = _ray()
        try:
            return ray.get(reply, timeout=timeout)
        except ray.exceptions.GetTimeoutError as exc:
            raise WorkerLost(f"no answer within {timeout:.0f} s") from exc
        except ray.exceptions.RayActorError as exc:
            raise WorkerLost(f"the Ray actor died ({_first_line(exc)})") from exc
        except ray.exceptions.RayError as exc:
            raise WorkerLost(_first_line(exc)) from exc

    def _receive(self, timeout: float | None) -> EpochReport:
        answer = self._get(self._reply, timeout)
        if isinstance(answer, tuple) and answer and answer[0] == "failed":
            raise WorkerFailed(str(answer[1]), str(answer[2]))
        report: EpochReport = answer
        return report

    def _ask_policy(self, timeout: float
                    ) -> tuple[dict[BranchSide, JustMissed] | None, dict[BranchSide, str]]:
        missed, infeasible = self._get(self.actor.policy.remote(), timeout)
        return missed, infeasible

    def _signal_stop(self) -> None:
        if self.actor is not None:
            self.actor.stop.remote()

    def _shut_down(self, gracefully: bool) -> None:
        if self.actor is None:
            return
        try:
            _ray().kill(self.actor, no_restart=True)
        except Exception:  # already gone
            pass
        self.actor = None
