"""The greybox loop: a policy proposes, the target runs, feedback and oracles judge.

    while budget left:
        proposal <- policy.propose()
        result <- RUN(proposal.case)                      the target's executor
        novelty <- ISNEW(result); if new path: ADD seed   coverage and corpus
        findings <- every oracle's check(result)          (not for aggressive probes)
        policy.observe(proposal, result, novelty)

The fuzzer owns what every policy shares: the campaign-wide coverage, the corpus (one
seed per path id, with the cost vector prediction reads and the statistics schedules
read), the execution counters, the budget, the oracles and the events. *What* to run is
the policy's (``secant.engine.policy``); Harvey's is ``secant.engine.harvey``.

Cost vectors (Harvey §4.3) need a random target slot for the arbitrary-write distance:
it is the campaign's first random draw. Everything random flows from
``random.Random(config.seed)``; with an execution budget the campaign is a pure function
of the seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from secant.engine.config import FuzzConfig, FuzzStats
from secant.engine.corpus import Corpus, CostMemory, Seed
from secant.engine.events import Events
from secant.engine.failures import InternalError, oracle_part
from secant.engine.feedback import Coverage, cost_vector
from secant.engine.mutators import Comparison
from secant.engine.oracle import Oracle, PostState, claim
from secant.engine.policy import Novelty, Policy, Proposal
from secant.engine.schedulers import SeedStats
from secant.types import Finding, RunResult, TxSeq


class SeedDistance(Protocol):
    """A directed campaign's distance of seeds to its target (AFLGo; None: unknown)."""

    def observe(self, result: RunResult) -> None:
        """Learn from a run (e.g. complete a control-flow graph)."""
        ...

    def __call__(self, result: RunResult) -> float | None:
        """The distance of a run that becomes a seed."""
        ...

    def refresh(self, corpus: Corpus) -> None:
        """Bring the corpus's distances up to date before a schedule chooses."""
        ...


class Fuzzer:
    """One worker's greybox loop over an executor ``run(case) -> RunResult``.

    ``oracles`` check every run that is not a probe (``post`` answers their read-only
    calls); ``events`` hears about runs, seeds, findings and progress; ``distance`` gives
    seeds their AFLGo distance in a directed campaign. An oracle whose ``check`` raises
    is switched off and the loop goes on (``secant.engine.failures``): ``oracles`` holds
    those still on, ``internal_errors`` what was switched off and why.
    """

    def __init__(self, run: Callable[[TxSeq], RunResult], policy: Policy, config: FuzzConfig,
                 *, oracles: Sequence[Oracle] = (), post: PostState | None = None,
                 events: Events | None = None, distance: SeedDistance | None = None) -> None:
        self.run_case = run
        self.config = config
        self.rng = random.Random(config.seed)
        self.sstore_target = self.rng.getrandbits(256) if config.sstore_cost else None
        self.coverage = Coverage()
        budget = config.cost_vectors_mb
        self.corpus = Corpus(CostMemory(None if budget is None else int(budget * 1e6)))
        self.stats = FuzzStats()
        self.events = events if events is not None else Events()
        self.oracles = list(oracles)
        # Those ``_check`` asks: an idle oracle (``Oracle.idle``) can find nothing here.
        self._checking = [oracle for oracle in self.oracles if not oracle.idle()]
        self.post = post
        self.distance = distance
        self.findings: dict[tuple[Any, ...], Finding] = {}
        self.internal_errors: list[InternalError] = []
        self._stop = False
        self.policy = policy
        policy.bind(self)

    # ------------------------------------------------------------------ budget
    def stop(self) -> None:
        """Ask the loop to end after the current execution."""
        self._stop = True

    def exhausted(self) -> bool:
        """Whether the execution, transaction or time budget is spent (or ``stop`` was called)."""
        config = self.config
        if self._stop:
            return True
        if config.max_execs is not None and self.stats.execs >= config.max_execs:
            return True
        if (config.max_transactions is not None
                and self.stats.transactions >= config.max_transactions):
            return True
        return config.max_time is not None and self.stats.elapsed >= config.max_time

    # ------------------------------------------------------------------ the loop
    def fuzz(self, execs: int | None = None) -> None:
        """Run proposals until the budget is spent or the policy has nothing more.

        With ``execs``, stop after that many more executions at most: the policy keeps its
        place, so fuzzing in slices (workers that exchange cases in between) runs the same
        rounds as fuzzing at once.
        """
        policy = self.policy
        stats = self.stats
        limit = None if execs is None else stats.execs + execs
        while not self.exhausted() and (limit is None or stats.execs < limit):
            proposal = policy.propose()
            if proposal is None:
                return
            self.execute(proposal)

    def execute(self, proposal: Proposal) -> tuple[RunResult, Novelty]:
        """RUN, then ISNEW/ADD, the oracles and the policy's observation."""
        case = proposal.case
        result = self.run_case(case)
        stats = self.stats
        stats.execs += 1
        stats.transactions += len(case)
        stats.steps_run += len(case) if result.steps_run is None else result.steps_run
        if proposal.probe:
            stats.probes += 1
            novelty = Novelty(result.path_id not in self.coverage.paths, 0, 0)
            self.policy.observe(proposal, result, novelty)
            self.events.on_progress()
            return result, novelty
        if self.distance is not None:
            self.distance.observe(result)
        self.events.on_run(result)
        new_path, new_blocks, new_edges = self.coverage.merge(result)
        # The empty case (a target with nothing to call) has nothing to mutate.
        seed = self._add(result, proposal) if new_path and case else None
        novelty = Novelty(new_path, new_blocks, new_edges, seed)
        if self._checking:
            self._check(result)
        self.policy.observe(proposal, result, novelty)
        self.events.on_progress()
        return result, novelty

    def import_cases(self, cases: Iterable[TxSeq], origin: str = "import") -> list[Seed]:
        """Run cases found elsewhere (another worker, a saved corpus) as if proposed here.

        Each runs once within the budget; those that take a path new to this worker join
        its corpus (returned), and the policy observes them all.
        """
        seeds = []
        for case in cases:
            if self.exhausted():
                break
            _, novelty = self.execute(Proposal(case, origin))
            if novelty.seed is not None:
                seeds.append(novelty.seed)
        return seeds

    # ------------------------------------------------------------------ feedback
    def _add(self, result: RunResult, proposal: Proposal) -> Seed:
        stats = self.stats
        stats.last_new_path_exec = stats.execs
        distance = self.distance(result) if self.distance is not None else None
        seed = self.make_seed(result, proposal.origin, stats.execs, distance)
        seed.adaptive = proposal.adaptive
        self.corpus.add(seed)
        self.events.on_new_seed(seed)
        return seed

    def make_seed(self, result: RunResult, origin: str, found_at: int,
                  distance: float | None = None) -> Seed:
        """A seed of a run: its cost vector, schedule statistics and prediction material."""
        return Seed(
            case=result.case,
            path_id=result.path_id,
            costs=cost_vector(result, self.sstore_target),
            stats=SeedStats(result.path_id, distance,
                            max(sum(o.gas_used for o in result.outcomes), 1),
                            len(result.edges), len(result.case)),
            origin=origin,
            found_at=found_at,
            comparisons=self.missed_comparisons(result),
            reads=first_reads(result),
            clock=result.clock,
        )

    def restore_material(self, seed: Seed, result: RunResult) -> None:
        """Give ``seed`` back what ``CostMemory`` dropped, from a run of its case.

        Its cost vector, just-missed comparisons and storage reads, held again within the
        budget.
        """
        seed.costs = cost_vector(result, self.sstore_target)
        seed.comparisons = self.missed_comparisons(result)
        seed.reads = first_reads(result)
        self.corpus.costs.admit(seed, restored=True)

    def missed_comparisons(self, result: RunResult, limit: int = 32
                           ) -> tuple[Comparison, ...]:
        """Operands and relation of the last step's comparisons with an uncovered side.

        At most ``limit`` of them, in the order they ran: the first half and the last half
        when there are more. A run's first comparisons include its dispatchers' selector
        tests, whose other sides stay uncovered for every function the campaign never
        calls, while the comparison the run stopped short of, in a handler's deep call,
        comes last; a maze walk's checks come in between and on both sides.
        """
        edges = self.coverage.edges
        found: dict[Comparison, None] = {}
        for code_hash, pc, taken, relation, lhs, rhs in result.tx_branches(
                len(result.case) - 1):
            if lhs == rhs or (lhs <= 1 and rhs <= 1) or (code_hash, pc, not taken) in edges:
                continue  # nothing to replace, or a boolean test
            found[(lhs, rhs, relation)] = None
        kept = tuple(found)
        if len(kept) <= limit:
            return kept
        head = limit // 2
        return kept[:head] + kept[len(kept) - (limit - head):]

    def refresh_distances(self) -> None:
        """Bring seed distances up to date (a directed schedule calls it before choosing)."""
        if self.distance is not None:
            self.distance.refresh(self.corpus)

    # ------------------------------------------------------------------ internal errors
    def switch_off(self, part: str, error: Exception, *, execs: int | None = None,
                   during: str = "fuzzing") -> InternalError:
        """Record that ``part`` raised ``error`` and is off for the rest of the run.

        The caller has stopped using the part; this records it (``execs`` defaults to the
        executions counted so far) and announces it to the listeners.
        """
        record = InternalError.of(part, error, self.stats.execs if execs is None else execs,
                                  during)
        self.internal_errors.append(record)
        self.events.on_internal_error(record)
        return record

    def is_off(self, part: str) -> bool:
        """Whether ``part`` raised earlier in this run and is switched off."""
        return any(record.part == part for record in self.internal_errors)

    def drop_oracle(self, oracle: Oracle, error: Exception, *, execs: int | None = None,
                    during: str = "fuzzing") -> None:
        """Switch ``oracle`` off after ``error``: it checks no more runs; its findings stay."""
        # New lists: the loop in ``_check`` may be iterating over the old one.
        self.oracles = [other for other in self.oracles if other is not oracle]
        self._checking = [other for other in self._checking if other is not oracle]
        oracle.switched_off = True
        self.switch_off(oracle_part(oracle.name), error, execs=execs, during=during)

    # ------------------------------------------------------------------ oracles
    def _check(self, result: RunResult) -> None:
        """Every oracle on a run, but the idle ones; new findings are stamped, kept, announced.

        An oracle that raises is switched off (``drop_oracle``); the others still judge
        the run. The ``try`` costs nothing while no oracle raises (Python 3.11).
        """
        stats = self.stats
        for oracle in self._checking:
            try:
                found = oracle.check(result, self.post)
            except Exception as exc:  # the oracle's bug: the campaign goes on without it
                self.drop_oracle(oracle, exc)
                continue
            for finding in found:
                if finding.key in self.findings:
                    continue
                claim(finding, oracle, result)
                finding.execs_to_find = stats.execs
                finding.time_to_find_s = stats.elapsed
                self.findings[finding.key] = finding
                self.events.on_finding(finding)
                if self.config.stop_on_finding:
                    self._stop = True

    # ------------------------------------------------------------------ reporting
    def summary(self) -> dict[str, Any]:
        """Counters for ``summary.json`` (coverage figures are the campaign layer's)."""
        stats = self.stats
        summary: dict[str, Any] = {
            "execs": stats.execs,
            "transactions": stats.transactions,
            "elapsed_s": round(stats.elapsed, 3),
            "paths": len(self.coverage.paths),
            "corpus": len(self.corpus),
            "corpus_origins": self.corpus.origins(),
            "cost_vectors": self.corpus.costs.summary(),
        }
        summary.update(self.policy.summary())
        return summary


def first_reads(result: RunResult) -> tuple[tuple[int, int], ...]:
    """(key, value) of the last step's first read of each key of its own state."""
    last = len(result.case) - 1
    reads: dict[int, int] = {}
    for tx, _, slot, value in result.reads:
        if tx == last:
            reads.setdefault(slot, value)
    return tuple(sorted(reads.items()))
