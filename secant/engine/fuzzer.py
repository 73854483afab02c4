"""The greybox loop: Harvey's Algorithm 1 with the learning of Algorithm 2.

    PIDs <- RUNSEEDS(S)                        one call of every fuzzable function (sFuzz)
    while budget left:
        input, cost <- PICKINPUT(PIDs)         the power schedule's weighted choice
        maxEnergy <- ASSIGNENERGY(input)
        energy <- 0; learned <- nil
        while energy < maxEnergy or learned != nil:
            input' <- learned if learned else FUZZINPUT(input)   (one parameter, or havoc)
            PID', cost' <- RUN(input')
            if ISNEW(PID'): add (input', cost') to PIDs
            if energy < maxEnergy: learned <- LEARN(input, cost, input', cost')
            energy += 1

A predicted input runs even when the energy is spent. When it does not bring its metric to
zero, the secant step is applied again with the points seen so far, up to
``predict_iterations`` times (Harvey's configuration B; 0 is configuration C).

Sequences (Harvey §5): ``secant.engine.demand`` decides which rounds are aggressive probes
and which sequences grow; ``secant.engine.sequences`` mutates their structure. LEARN is
``secant.engine.learning``.

sFuzz's adaptive strategy (``secant.engine.adaptive``): next to the corpus, the closest test
case to every just-missed branch; a round picks one of them with probability
``adaptive_share`` (by default, as in sFuzz, in proportion to their number among all seeds).

Everything random flows from ``random.Random(config.seed)``; with an execution budget the
campaign is a pure function of the seed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from secant.engine.adaptive import AdaptiveSeeds, Closest
from secant.engine.corpus import Corpus, Seed
from secant.engine.demand import DemandDriven
from secant.engine.dictionary import Dictionary
from secant.engine.feedback import Coverage, cost_vector
from secant.engine.learning import Learner, Pending
from secant.engine.mutators import Comparison, FunctionSpec, Mutation, Mutator
from secant.engine.predict import PredictionStats
from secant.engine.schedulers import PowerSchedule, SeedStats, make_schedule
from secant.targets.contract import ExecResult
from secant.types import TxSeq


@dataclass
class FuzzConfig:
    """What a campaign does and for how long (None: no limit of that kind)."""

    seed: int = 0
    max_execs: int | None = 10_000
    max_time: float | None = None
    schedule: str = "aflfast"
    predict: bool = True
    predict_iterations: int = 8
    havoc_probability: float = 0.1
    sstore_cost: bool = True
    stop_on_finding: bool = False
    input_to_state_probability: float = 0.15
    sequences: str = "demand"  # "demand" (Harvey A), "eager" (Harvey D) or "off"
    aggressive_probability: float = 0.125
    max_sequence_length: int = 16
    adaptive: bool = True
    adaptive_share: float | None = None  # None: sFuzz's, by the number of adaptive seeds
    caller_slots: bool = True  # data flow names balances[msg.sender] per sender (ablation)


@dataclass
class FuzzStats:
    """Counters the progress display and the summary read."""

    execs: int = 0
    started: float = field(default_factory=time.perf_counter)
    last_new_path_exec: int = 0
    last_new_path_time: float = field(default_factory=time.perf_counter)
    prediction: PredictionStats = field(default_factory=PredictionStats)
    havoc: int = 0
    predicted_new_paths: int = 0
    transactions: int = 0
    probes: int = 0
    probe_hits: int = 0
    adaptive_picks: int = 0
    structural: int = 0

    @property
    def elapsed(self) -> float:
        """Seconds since the campaign started."""
        return time.perf_counter() - self.started


class Fuzzer:
    """One campaign's greybox loop over an executor (``run(case) -> ExecResult``).

    Hooks: ``on_new_seed(seed)``, ``on_result(result)`` (oracles), ``on_progress()``; the
    campaign layer attaches them.
    """

    def __init__(self, run: Callable[[TxSeq], ExecResult], functions: list[FunctionSpec],
                 senders: list[int], dictionary: Dictionary, config: FuzzConfig,
                 schedule: PowerSchedule | None = None) -> None:
        if not functions:
            raise ValueError("no function to fuzz")
        self.run_case = run
        self.config = config
        self.rng = random.Random(config.seed)
        self.sstore_target = self.rng.getrandbits(256) if config.sstore_cost else None
        self.dictionary = dictionary
        self.mutator = Mutator(functions, senders, dictionary)
        self.schedule = schedule or make_schedule(config.schedule)
        self.coverage = Coverage()
        self.corpus = Corpus()
        self.stats = FuzzStats()
        self.on_new_seed: Callable[[Seed], None] | None = None
        self.on_result: Callable[[ExecResult], bool] | None = None
        self.on_progress: Callable[[], None] | None = None
        self.seed_distance: Callable[[ExecResult], float | None] | None = None
        self.observers: list[Callable[[ExecResult], None]] = []  # see every run
        self.before_pick: list[Callable[[], None]] = []
        self.on_round: list[Callable[[TxSeq], None]] = []  # the case a round will mutate
        self._stop = False
        self.sequences = DemandDriven(config.sequences, self.mutator,
                                      config.max_sequence_length,
                                      config.aggressive_probability,
                                      config.caller_slots)
        self.learner = Learner(self.mutator, self.coverage, self.sstore_target,
                               config.predict_iterations, self.rng, self.stats.prediction)
        self.adaptive = AdaptiveSeeds() if config.adaptive else None
        self._adaptive_round = False

    # ------------------------------------------------------------------ budget
    def stop(self) -> None:
        """Ask the loop to end after the current execution."""
        self._stop = True

    def exhausted(self) -> bool:
        """Whether the execution or time budget is spent (or ``stop`` was called)."""
        config = self.config
        if self._stop:
            return True
        if config.max_execs is not None and self.stats.execs >= config.max_execs:
            return True
        return config.max_time is not None and self.stats.elapsed >= config.max_time

    # ------------------------------------------------------------------ execution
    def execute(self, case: TxSeq, origin: str, probe: bool = False
                ) -> tuple[ExecResult, Seed | None]:
        """RUN(input'), then ISNEW/ADD; return the result and the new seed, if any.

        A ``probe`` (aggressive mode) only tells whether its last transaction took a new
        path: it is not merged into coverage, the corpus, the pools or the findings.
        """
        started = time.perf_counter()
        result = self.run_case(case)
        result.exec_us = (time.perf_counter() - started) * 1e6
        stats = self.stats
        stats.execs += 1
        stats.transactions += len(case)
        if probe:
            stats.probes += 1
            if result.path_id not in self.coverage.paths:
                stats.probe_hits += 1
                self.sequences.probe_hit(case)
            if self.on_progress is not None:
                self.on_progress()
            return result, None
        self.schedule.on_execution(result.path_id)
        for observer in self.observers:
            observer(result)
        new_path, new_blocks, new_edges = self.coverage.merge(result)
        seed = None
        if new_path:
            seed = self._add(result, origin, new_edges)
        self.sequences.offer(result, bool(new_path or new_blocks or new_edges))
        adaptive = self.adaptive
        if adaptive is not None:
            if new_edges:
                adaptive.forget_covered(self.coverage.edges)
            adaptive.observe(result, self.coverage.edges, stats.execs)
        if result.panics and self.on_result is not None and self.on_result(result):
            if self.config.stop_on_finding:
                self._stop = True
        if self.on_progress is not None:
            self.on_progress()
        return result, seed

    def _add(self, result: ExecResult, origin: str, new_edges: int) -> Seed:
        stats = self.stats
        stats.last_new_path_exec = stats.execs
        stats.last_new_path_time = time.perf_counter()
        distance = self.seed_distance(result) if self.seed_distance is not None else None
        seed = Seed(
            case=result.case,
            path_id=result.path_id,
            costs=cost_vector(result, self.sstore_target),
            stats=SeedStats(result.path_id, distance, max(result.exec_us, 1.0),
                            len(result.edges), len(result.case)),
            origin=origin,
            found_at=stats.execs,
            new_edges=new_edges,
            comparisons=self._missed_comparisons(result),
            reads=_first_reads(result),
            adaptive=self._adaptive_round,
        )
        self.corpus.add(seed)
        self._harvest(result)
        self.sequences.learn(result)
        if self.on_new_seed is not None:
            self.on_new_seed(seed)
        return seed

    def _missed_comparisons(self, result: ExecResult, limit: int = 32
                            ) -> tuple[Comparison, ...]:
        """Operands and relation of the last transaction's comparisons with an uncovered side."""
        edges = self.coverage.edges
        found: dict[Comparison, None] = {}
        for code_hash, pc, taken, relation, lhs, rhs in result.tx_branches(
                len(result.case) - 1):
            if lhs == rhs or (lhs <= 1 and rhs <= 1) or (code_hash, pc, not taken) in edges:
                continue  # nothing to replace, or a boolean test
            found[(lhs, rhs, relation)] = None
            if len(found) >= limit:
                break
        return tuple(found)

    def _harvest(self, result: ExecResult) -> None:
        """Operands of comparisons whose other side is still uncovered feed the dictionary.

        Only just-missed comparisons: one operand is usually the constant the input must
        match, while harvesting every comparison floods the bounded dictionary with values
        derived from the inputs themselves.
        """
        add = self.dictionary.add
        edges = self.coverage.edges
        for code_hash, pc, taken, relation, lhs, rhs in result.branches:
            if (relation != "ne" or rhs != 0) and (code_hash, pc, not taken) not in edges:
                add(lhs)
                add(rhs)

    # ------------------------------------------------------------------ the loop
    def initial_population(self) -> None:
        """RUNSEEDS: one transaction per fuzzable function (sFuzz's initial population)."""
        rng = self.rng
        for spec in self.mutator.functions:
            if self.exhausted():
                return
            self.execute((self.mutator.random_tx(spec, rng),), "init")

    def fuzz(self) -> None:
        """Run the campaign until the budget is spent."""
        if not self.corpus.seeds:
            self.initial_population()
        while not self.exhausted():
            if not self.corpus.seeds:
                self.initial_population()
                continue
            self.fuzz_one()

    def pick(self) -> int:
        """PICKINPUT: the schedule's choice."""
        for hook in self.before_pick:
            hook()
        return self.schedule.choose(self.corpus.stats, self.rng)

    def _pick_seed(self) -> tuple[Seed, int]:
        """A seed and its energy: the schedule's pick, or an adaptive seed (sFuzz)."""
        adaptive = self.adaptive
        self._adaptive_round = False
        if adaptive is not None and len(adaptive):
            share = self.config.adaptive_share
            if share is None:
                share = len(adaptive) / (len(adaptive) + len(self.corpus))
            if self.rng.random() < share:
                picked = adaptive.pick(self.rng)
                if picked is not None:
                    seed = self._adaptive_seed(picked[1])
                    if seed is not None:
                        self.stats.adaptive_picks += 1
                        self._adaptive_round = True
                        return seed, self.schedule.base_energy
        index = self.pick()
        seed = self.corpus[index]
        seed.picked += 1
        return seed, self.schedule.energy(self.corpus.stats, index)

    def _adaptive_seed(self, closest: Closest) -> Seed | None:
        """The seed object of an adaptive test case (its costs come from one more run)."""
        if closest.seed is not None:
            return closest.seed
        if self.exhausted():
            return None
        result, new = self.execute(closest.case, "adaptive")
        seed = new or Seed(
            case=result.case, path_id=result.path_id,
            costs=cost_vector(result, self.sstore_target),
            stats=SeedStats(result.path_id, None, max(result.exec_us, 1.0),
                            len(result.edges), len(result.case)),
            origin="adaptive", found_at=closest.found_at,
            comparisons=self._missed_comparisons(result), reads=_first_reads(result))
        closest.seed = seed
        return seed

    def fuzz_one(self) -> None:
        """One round of Alg. 2 on a picked input."""
        seed, max_energy = self._pick_seed()
        for hook in self.on_round:
            hook(seed.case)
        rng = self.rng
        config = self.config
        energy = 0
        pending: Pending | None = None
        while (energy < max_energy or pending is not None) and not self.exhausted():
            if pending is not None:
                current, pending = pending, None
                result, new = self.execute(current.case, "prediction", current.probe)
                if new is not None:
                    self.stats.predicted_new_paths += 1
                pending = self.learner.after_prediction(current, result)
            elif self.sequences.wants_probe(seed, rng):
                probe = self.sequences.probe(seed, rng)
                if probe is not None:
                    base, probed = probe
                    result, _ = self.execute(probed.case, "aggressive", probe=True)
                    if energy < max_energy and config.predict:
                        pending = self.learner.learn(base, probed, result, probe=True)
            else:
                proposed = self.propose(seed)
                if proposed is None:
                    energy += 1
                    continue
                origin = ("havoc" if proposed.operator == "havoc" else
                          "sequence" if proposed.location is None else "mutation")
                result, _ = self.execute(proposed.case, origin)
                if origin == "sequence":
                    energy += self._follow_up(result)
                elif energy < max_energy and config.predict:
                    pending = self.learner.learn(seed, proposed, result)
            energy += 1

    def _follow_up(self, result: ExecResult) -> int:
        """After a structural mutation, its follow-up (``DemandDriven.follow_up``).

        Returns the executions spent (0 or 1).
        """
        if self.exhausted():
            return 0
        follow = self.sequences.follow_up(result.case, self._missed_comparisons(result),
                                          self.rng)
        if follow is None:
            return 0
        self.execute(follow.case, "sequence")
        return 1

    def propose(self, seed: Seed) -> Mutation | None:
        """FUZZINPUT: one-parameter mutation of the last transaction, or havoc.

        Now and then the mutation is an input-to-state replacement from the seed's own
        just-missed comparisons (see ``Mutator.input_to_state``) or, in a sequence, a value
        reused from another transaction (``Mutator.reuse``). When sequences may grow
        (eager mode, or a demanding last transaction), two thirds of the mutations are
        structural (``SequenceMutator``) and the others may change any transaction.
        """
        case = seed.case
        index = len(case) - 1
        rng = self.rng
        if self.sequences.grows(case):
            structural = self.sequences.structural(case, rng, self.corpus.seeds)
            if structural is not None:
                self.stats.structural += 1
                return structural
            if index and rng.random() < 0.5:
                index = rng.randrange(index)
        if len(case) > 1 and rng.random() < 0.1:
            reused = self.mutator.reuse(case, rng, index)
            if reused is not None:
                return reused
        if seed.comparisons and rng.random() < self.config.input_to_state_probability:
            mutation = self.mutator.input_to_state(case, seed.comparisons, rng, index)
            if mutation is not None:
                return mutation
        if rng.random() < self.config.havoc_probability:
            self.stats.havoc += 1
            return self.mutator.havoc(case, rng, index)
        return self.mutator.mutate(case, rng, index)

    # ------------------------------------------------------------------ reporting
    def summary(self) -> dict[str, Any]:
        """Counters for ``summary.json`` (coverage figures are the campaign layer's)."""
        stats = self.stats
        return {
            "execs": stats.execs,
            "elapsed_s": round(stats.elapsed, 3),
            "paths": len(self.coverage.paths),
            "corpus": len(self.corpus),
            "prediction": {
                "attempts": stats.prediction.attempts,
                "success": stats.prediction.success,
                "fail": stats.prediction.fail,
                "rate": round(stats.prediction.rate, 4),
                "new_paths": stats.predicted_new_paths,
            },
            "corpus_origins": self.corpus.origins(),
            "sequences": {
                "mode": self.config.sequences,
                "lengths": self.corpus.lengths(),
                "demanding": sorted(f for _, f in self.sequences.demanding),
                "aggressive_probes": stats.probes,
                "aggressive_hits": stats.probe_hits,
                "structural_mutations": stats.structural,
                "pool_transactions": len(self.sequences.pools.transactions),
                "pool_sequences": len(self.sequences.pools.sequences),
            },
            "adaptive": {
                "enabled": self.adaptive is not None,
                # None: sFuzz's share, the adaptive seeds' number over all seeds.
                "share": self.config.adaptive_share,
                "just_missed_tracked": len(self.adaptive) if self.adaptive else 0,
                "picks": stats.adaptive_picks,
                "corpus_entries": sum(1 for s in self.corpus.seeds if s.adaptive),
            },
        }


def _first_reads(result: ExecResult) -> tuple[tuple[int, int], ...]:
    """(slot, value) of the last transaction's first read of each slot of its contract."""
    last = len(result.case) - 1
    reads: dict[int, int] = {}
    for tx, _, slot, value in result.sloads:
        if tx == last:
            reads.setdefault(slot, value)
    return tuple(sorted(reads.items()))
