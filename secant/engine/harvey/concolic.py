"""The concolic stage: z3 flips the just-missed branches prediction and mutation could not.

Input prediction (``secant.engine.harvey.prediction``) solves a branch whose cost falls
linearly in one input; mutation finds what is likely by chance. Neither solves a condition
that ties several inputs together through non-linear or wrapping arithmetic, or one an
input reaches only through storage. For those, the stage takes a just-missed branch side
(sFuzz's, ``secant.engine.harvey.adaptive``), replays its closest test case with the
``symbolic`` recording (``secant.symbolic``: the trace callable the worker gives), negates
the branch on that run's path condition and asks z3 for inputs (``flip_branch``); a ``sat``
answer is run as the next proposal, origin ``symbolic``.

**When a side is tried.** A side becomes eligible once it has stayed just-missed for
``patience`` executions since it was first seen: the cheap mechanisms get the first go,
and prediction, which needs only a few runs of the closest case's round, solves a linear
condition well within that. Sides first seen right after a solved case took its side are
eligible at once, and so are those after a solved case that covered new edges without
taking its side: they are the next conditions on the path the solver opened (the next
conjunct of an ``&&``), which the cheap mechanisms had no more chance at than the last.
Any solved case that did not take its side is the next base for that side, tried at once,
new edges or not: it got further along that side's path than the closest case (past the
condition that was flipped, to the next conjunct, which mutation may have covered
already), and sFuzz's distance, measured at the first copy of an ``&&``'s condition, may
still prefer the closest case. A side is solved against a given closest case once (solving
the same path again gives the same answer); it is tried again only when a closer case
replaces it or a solved case got further, at most ``max_tries`` times in all, not counting
the queries whose case went the way they flipped (a chain of conjuncts takes a query each;
up to ``MAX_PROGRESS`` such). A side whose condition depends only on the state before the
case (a maze's position read from storage, a value another function stored) cannot be
flipped by that case's inputs; for it the stage asks the policy for calls of the functions
known to write those slots (the sequences' data flow, ``writers``), puts one right before
the transaction that read them, replays that longer case and solves for the writer's
inputs too (``stash(v)`` before a move that tests ``memo % 1000 == 803``). When no
writer's input reaches the condition either (a position moved by constants), the side is
left to the sequence fuzzer. Among eligible sides the stage takes the one tried least,
then the one seen first.

**How much.** The stage runs between rounds while the work charged to it stays within
``share`` of the campaign's. Work is counted in steps, the transactions the target
actually ran (``FuzzStats.steps_run``: those a prefix cache restored cost nothing), because
a step's time varies far less between contracts than an execution's: over seven contracts
one step took 65 to 104 µs and one execution 94 to 983 µs (``bench/steps.py``; a maze case
runs seven to thirteen steps, Baz's one). Each attempt is charged
:data:`REPLAY_STEPS` per transaction it replayed symbolically plus z3's resource count
over :data:`RESOURCES_PER_STEP`, and each query is bounded by z3's resource limit
(``rlimit``): all are counts, not seconds, so with the stage on a campaign is still a
function of its seed and execution budget (the time limit per query is only a safety
net). A query that runs out of resources is charged what it used, as honestly as a timed
one, on any machine. A query spends at most what the share has earned and not yet spent
(never less than :data:`MIN_SPEND`), though each narrowed try keeps its share of the whole
limit (``flip_branch``'s ``spend``): one query of four seconds early in a campaign would
hold up a search that finds its bug in one second for four more. A query that stops at
such an allowance does not count against the side's tries; the side is asked again, from
the same case, once the share has earned twice what it spent.

**Answers.** ``sat``: the case runs; it is a success when it took the wanted side (as
prediction's successes and failures are counted). ``unsat`` with ``proved``: no input
follows that path and takes the side; the side is kept in :attr:`ConcolicStage.infeasible`
("proved unreachable on this path"), which the frontier shows; another path may still
reach it, so a closer case is tried again. ``unknown``: z3's limit ran out.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from secant.engine.harvey.adaptive import AdaptiveSeeds, BranchSide, Closest
from secant.engine.policy import LoopState, Novelty, Policy, Stage
from secant.symbolic.names import input_transaction, is_state_variable, state_slot
from secant.types import RunResult, Tx, TxSeq

if TYPE_CHECKING:
    from secant.symbolic.records import SymbolicRun

REPLAY_STEPS = 20
"""Steps charged per transaction of a symbolic replay: on a maze of the maze benchmark
(seed 0, a default campaign of 20,000 executions) the stage's replays took 2.0 ms per
transaction where the campaign ran a step in 0.10 ms."""

RESOURCES_PER_STEP = 120
"""z3 resource units charged as one step: in the same campaign a query took 0.88 µs of
wall time per unit z3 counted (0.82 in the solver, the rest building the query), and a
campaign runs a step in 65 to 104 µs over seven contracts (``bench/steps.py``), so a query
is charged about the steps its time would have run. Both constants were measured after
issue 24 made steps about three times cheaper (they were 25 and 450: the stage then took
about a fifth of a default maze campaign instead of its tenth)."""

DEFAULT_RLIMIT = 6_000_000
"""z3's resource limit per query: about four seconds of one core."""

MIN_SPEND = 1_000_000
"""The least a query may spend of z3's resources (under a second of one core), whatever the
share has earned so far (:meth:`ConcolicStage.allowance`)."""

DEFAULT_PATIENCE = 1000
"""Executions a side stays just-missed before the stage takes it up."""

DEFAULT_TIMEOUT_MS = 60_000
"""z3's time limit per query: a safety net behind the resource limit."""

DEFAULT_MAX_TRIES = 3
"""Queries at most per branch side (each against a closer case than the last) that made no
progress: a query whose solved case passed the condition it flipped, to fail at the next
conjunct of an ``&&``, does not count (up to :data:`MAX_PROGRESS` of them)."""

MAX_PROGRESS = 8
"""Queries per side that do not count against ``max_tries`` because their case got further
(a maze cell's nest of conditions has at most five)."""

PROVED = "proved unreachable on this path"
"""What the frontier says of a side whose query was unsat on every input of the path."""

SymbolicTrace = Callable[[TxSeq], "SymbolicRun | None"]
"""Replays a case with the ``symbolic`` recording (None: nothing was recorded)."""

Writers = Callable[[TxSeq, int, set[tuple[int, int]]], list[Tx]]
"""Calls that write some of the storage slots ``(address, slot)`` which transaction
``index`` of the case read before the case wrote them, aligned with that transaction (an
empty list: none known, or no room for one more transaction)."""

MAX_WRITERS = 2
"""Writer-prefixed replays at most per attempt (each costs a symbolic replay)."""


@runtime_checkable
class JustMissedSource(Protocol):
    """What the stage needs of the policy that runs it (Harvey's).

    ``adaptive``: sFuzz's just-missed sides and their closest cases (None: none kept);
    ``state_writers``: calls that write what a transaction read (``Writers``).
    """

    adaptive: AdaptiveSeeds | None

    def state_writers(self, case: TxSeq, index: int, slots: set[tuple[int, int]]
                      ) -> list[Tx]:
        """Calls that write ``slots``, read by ``case[index]`` (see ``Writers``)."""
        ...


@dataclass
class ConcolicStats:
    """The stage's counters (``summary.json``'s ``symbolic`` and the progress display)."""

    attempts: int = 0
    sat: int = 0
    unsat: int = 0
    proved: int = 0
    unknown: int = 0
    not_symbolic: int = 0
    """The side's JUMPI did not depend on any input in the closest case's replay."""
    needs_state: int = 0
    """The side's condition depended only on the state before the case, and no writer's
    input reached it either."""
    with_writer: int = 0
    """Queries on a case with a writer put before the transaction that read the state."""
    success: int = 0
    """Solved cases that took the wanted side."""
    fail: int = 0
    seconds: float = 0.0
    charged: int = 0
    """Steps charged to the stage (module docstring)."""

    def to_json(self) -> dict[str, Any]:
        """The counters as JSON."""
        return {"attempts": self.attempts, "sat": self.sat, "unsat": self.unsat,
                "proved_infeasible": self.proved, "unknown": self.unknown,
                "not_symbolic": self.not_symbolic, "needs_state": self.needs_state,
                "with_writer": self.with_writer,
                "success": self.success,
                "fail": self.fail, "seconds": round(self.seconds, 3),
                "charged_steps": self.charged}


class ConcolicStage(Stage):
    """Chooses just-missed sides, solves for inputs that flip them (module docstring)."""

    name = "concolic"
    origin = "symbolic"

    def __init__(self, trace: SymbolicTrace, senders: Sequence[int], *, share: float,
                 patience: int = DEFAULT_PATIENCE, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                 rlimit: int = DEFAULT_RLIMIT,
                 max_tries: int = DEFAULT_MAX_TRIES, max_time_delta: int | None = None,
                 max_blocks_delta: int | None = None,
                 worth: Callable[[BranchSide], bool] | None = None,
                 writers: Writers | None = None) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"the symbolic share must be between 0 and 1, not {share}")
        self.trace = trace
        # Which sides are conditions of the source at all (not a compiler's dispatch check
        # or a constant condition); every side when the campaign cannot tell.
        self.worth = worth or (lambda side: True)
        # Calls that store what a state-decided condition reads (the policy's data flow).
        self.writers = writers
        self.senders = list(senders)
        self.share = share
        self.patience = patience
        self.timeout_ms = timeout_ms
        self.rlimit = rlimit
        self.max_tries = max_tries
        self.max_time_delta = max_time_delta  # None: the solver's own bounds
        self.max_blocks_delta = max_blocks_delta
        self.stats = ConcolicStats()
        self.first_seen: dict[BranchSide, int] = {}
        self.tries: Counter[BranchSide] = Counter()
        self.progress: Counter[BranchSide] = Counter()  # queries that got further
        self.solved_against: dict[BranchSide, TxSeq] = {}
        self.infeasible: dict[BranchSide, str] = {}
        self._follow = False  # a solved case took its side since the last choice
        self._solved: TxSeq | None = None  # the last case a query gave
        self._flipped: tuple[bytes, int, bool] | None = None  # the edge it aimed at
        self._retry: tuple[BranchSide, TxSeq] | None = None
        self._adaptive: AdaptiveSeeds | None = None  # the policy's, once bound
        self._asked: BranchSide | None = None  # the side of the case last given
        # Sides whose query stopped at its allowance: the allowance their next one needs.
        self.waiting: dict[BranchSide, int] = {}

    # ------------------------------------------------------------------ the stage seam
    def bind(self, policy: Policy, fuzzer: LoopState) -> None:
        """Take the policy's just-missed sides, and its writers unless given some."""
        super().bind(policy, fuzzer)
        if isinstance(policy, JustMissedSource):
            self._adaptive = policy.adaptive
            if self.writers is None:
                self.writers = policy.state_writers

    def next_case(self) -> TxSeq | None:
        """A solved case while the stage's charge is within its share (None: no more now).

        Sides are chosen and solved until one gives a case: a query with no answer is
        charged, and the next side is tried while the share allows.
        """
        adaptive = self._adaptive
        if adaptive is None:
            return None
        fuzzer = self.fuzzer
        while self.due(fuzzer.stats.steps_run) and not fuzzer.exhausted():
            allowance = self.allowance(fuzzer.stats.steps_run)
            picked = self.choose(adaptive, fuzzer.stats.execs, allowance)
            if picked is None:
                return None
            side, closest = picked
            case = self.solve(side, closest.case, allowance)
            if case is not None:
                self._asked = side
                return case
        return None

    def ran(self, result: RunResult, novelty: Novelty) -> None:
        """Whether the solved case took its side (``observe``)."""
        if self._asked is not None:
            self.observe(self._asked, self.fuzzer.coverage.edges, novelty.new_edges,
                         result.edges)

    def summary(self) -> dict[str, Any]:
        """``summary.json``'s ``symbolic``: the share, the counters, the sides proved."""
        return {"symbolic": {"share": self.share, **self.stats.to_json(),
                             "infeasible_sides": len(self.infeasible)}}

    def progress_rows(self) -> list[tuple[str, str]]:
        """The live display's ``symbolic`` row."""
        counts = self.stats
        return [("symbolic", f"{counts.success} ok / {counts.fail} failed of "
                             f"{counts.sat} solved; {counts.unsat} unsat "
                             f"({counts.proved} proved), {counts.unknown} unknown; "
                             f"{counts.seconds:.1f} s"
                             + ("; switched off" if self.switched_off else ""))]

    # ------------------------------------------------------------------ choosing, solving

    def due(self, steps: int) -> bool:
        """Whether the stage may run now: its charge within its share of ``steps``."""
        return self.share > 0 and self.stats.charged <= self.share * steps

    def allowance(self, steps: int) -> int:
        """What a query asked now may spend, when the campaign has run ``steps``.

        What the share has earned and the stage not yet spent, in z3's units, at least
        :data:`MIN_SPEND` and at most the stage's limit (module docstring).
        """
        credit = int((self.share * steps - self.stats.charged) * RESOURCES_PER_STEP)
        return min(self.rlimit, max(MIN_SPEND, credit))

    def choose(self, adaptive: AdaptiveSeeds, execs: int, allowance: int | None = None
               ) -> tuple[BranchSide, Closest] | None:
        """The eligible just-missed side to try next, with its closest case (or None).

        With ``allowance`` (what a query asked now may spend), a side that waits for a
        larger one is not eligible.
        """
        waiting = self.waiting
        retry, self._retry = self._retry, None
        if retry is not None and retry[0] in adaptive.best \
                and self.tries[retry[0]] < self.max_tries:
            # The solved case went further along the side's path than its closest case
            # (which sFuzz's distance, measured at the first copy of an ``&&``'s condition,
            # still prefers): solve again from there.
            return retry[0], Closest(0, retry[1], execs)
        best: tuple[int, int, BranchSide] | None = None
        first_seen = self.first_seen
        # Sides that appeared with a solved case are the next conditions on its path (the
        # next conjunct of an ``&&``, the body's own branches): eligible at once.
        new_at = execs - self.patience if self._follow else execs
        self._follow = False
        for side, closest in adaptive.best.items():
            seen = first_seen.setdefault(side, new_at)
            if execs - seen < self.patience or self.tries[side] >= self.max_tries:
                continue
            if self.solved_against.get(side) == closest.case or not self.worth(side):
                continue
            if allowance is not None and waiting.get(side, 0) > allowance:
                continue
            key = (self.tries[side], seen, side)
            if best is None or key[:2] < best[:2]:
                best = key
        if best is None:
            return None
        side = best[2]
        return side, adaptive.best[side]

    def solve(self, side: BranchSide, case: TxSeq, allowance: int | None = None
              ) -> TxSeq | None:
        """A case that should take ``side``, solved from ``case``'s path (None: none).

        The attempt is charged its replay and its query's resources, in steps (module
        docstring). ``allowance``: what its query may spend (default: the stage's whole
        limit); a query that stops there does not count as a try, and the side then waits
        for twice that allowance (``waiting``).
        """
        spend = None if allowance is None or allowance >= self.rlimit else allowance
        # z3 loads only when the stage runs.
        from secant.symbolic.solve import (
            DEFAULT_MAX_BLOCKS_DELTA,
            DEFAULT_MAX_TIME_DELTA,
            flip_branch,
        )

        stats = self.stats
        self.tries[side] += 1
        self.solved_against[side] = case
        self._solved = None
        started = time.perf_counter()
        answer = None
        replayed = 0  # transactions replayed symbolically
        try:
            run = self.trace(case)
            replayed += len(case)
            index = _flip_index(run, side)
            if run is None or index is None:
                stats.not_symbolic += 1
                return None
            stats.attempts += 1
            record = run.branches[index]
            if _state_only(record.variables):
                # Decided by the state before the case alone: other inputs of this case
                # cannot flip it; a writer of that state put before the reading
                # transaction may. The case ends at the reader: what came after it cannot
                # matter to its branch, and a case at the length cap has room then.
                found = None
                for writer in self._writers(case, record.tx, record.variables):
                    longer = case[:record.tx] + (writer, case[record.tx])
                    longer_run = self.trace(longer)
                    replayed += len(longer)
                    at = _flip_index(longer_run, side)
                    if longer_run is not None and at is not None \
                            and not _state_only(longer_run.branches[at].variables):
                        found = longer, longer_run, at
                        break
                if found is None:
                    stats.needs_state += 1
                    return None
                stats.with_writer += 1
                case, run, index = found
            answer = flip_branch(case, run, index, senders=self.senders,
                                 vary=_varied(run, index),
                                 timeout_ms=self.timeout_ms, rlimit=self.rlimit,
                                 spend=spend,
                                 max_time_delta=(DEFAULT_MAX_TIME_DELTA
                                                 if self.max_time_delta is None
                                                 else self.max_time_delta),
                                 max_blocks_delta=(DEFAULT_MAX_BLOCKS_DELTA
                                                   if self.max_blocks_delta is None
                                                   else self.max_blocks_delta))
        finally:
            stats.seconds += time.perf_counter() - started
            used = answer.resources if answer is not None else 0
            stats.charged += REPLAY_STEPS * replayed + used // RESOURCES_PER_STEP
        if answer.status == "sat":
            stats.sat += 1
            self._solved = answer.case
            self._flipped = run.branches[index].other_edge
            return answer.case
        if answer.status == "unsat":
            stats.unsat += 1
            if answer.proved:
                stats.proved += 1
                self.infeasible[side] = PROVED
        else:
            stats.unknown += 1
            if spend is not None and answer.resources >= spend:
                # Stopped at its allowance: asked again, from the same case, with more.
                self.tries[side] -= 1
                self.solved_against.pop(side, None)
                self.waiting[side] = min(self.rlimit, 2 * spend)
        return None

    def _writers(self, case: TxSeq, index: int, variables: Collection[str]) -> list[Tx]:
        """Writers of the slots ``variables`` name, for transaction ``index`` of ``case``."""
        if self.writers is None:
            return []
        slots = {state_slot(name) for name in variables}
        return self.writers(case, index, slots)[:MAX_WRITERS]

    def observe(self, side: BranchSide, edges: set[tuple[bytes, int, bool]],
                new_edges: int = 0, run_edges: Collection[tuple[bytes, int, bool]] = ()
                ) -> None:
        """After a solved case ran: a success when the campaign now covers ``side``.

        ``edges`` is the campaign's coverage, ``run_edges`` the solved case's own. A case
        that did not take ``side`` (the flipped copy of an ``&&``'s first condition leads
        to the next conjunct, which failed) is the base of the side's next query, tried at
        once; when it covered new edges, it opened a path: the sides it brought are
        followed at once too, as after a success. When it did go the way the query flipped,
        it made progress along the side's path: that query does not count against
        ``max_tries`` (up to :data:`MAX_PROGRESS` such queries), so a chain of conjuncts,
        each needing a query of its own, is followed to its end.
        """
        if side in edges:
            self.stats.success += 1
            self.infeasible.pop(side, None)
            self._follow = True
        else:
            self.stats.fail += 1
            self._follow = new_edges > 0
            if self._solved is not None:
                # Solved from the earliest copy of a condition, the case now passes it and
                # fails at the next conjunct of the ``&&``, which the mutations may have
                # covered already (no new edges): the next query starts from it.
                self._retry = (side, self._solved)
                if self._flipped in run_edges and self.progress[side] < MAX_PROGRESS:
                    self.progress[side] += 1
                    self.tries[side] -= 1


def _varied(run: SymbolicRun, index: int) -> set[int]:
    """The transactions whose inputs the query for branch record ``index`` may change.

    The one that reached the branch and those whose inputs its condition reads (through
    storage, or a writer put before it); the others keep theirs. Freed, an earlier
    transaction's whole path joins the query, the revert of an overflow check that a
    narrow try cannot satisfy among it, and nothing it could change reaches the condition.
    (An ``unsat`` answer is then asked again with every input free, for the proof.)
    """
    record = run.branches[index]
    varied = {record.tx}
    for name in record.variables:
        tx = input_transaction(name)
        if tx is not None:
            varied.add(tx)
    return varied


def _flip_index(run: SymbolicRun | None, side: BranchSide) -> int | None:
    """The record of ``run`` to flip for ``side`` (None: the run never went the other way).

    The first time the case reached the JUMPI going the other way (the shortest path
    condition that leads there), or the earlier copy of its condition that decided it
    (``SymbolicRun.first_copy``).
    """
    if run is None:
        return None
    code_hash, pc, wanted = side
    found = run.find(code_hash, pc, taken=not wanted)
    if not found:
        return None
    return run.first_copy(found[0])


def _state_only(variables: Collection[str]) -> bool:
    """Whether a condition over ``variables`` depends on the state before the case alone."""
    return all(map(is_state_variable, variables))
