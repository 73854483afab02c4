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

Everything random flows from ``random.Random(config.seed)``; with an execution budget the
campaign is a pure function of the seed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from secant.engine.corpus import Corpus, Seed
from secant.engine.dictionary import Dictionary
from secant.engine.feedback import Coverage, cost_vector
from secant.engine.mutators import FunctionSpec, Mutation, Mutator
from secant.engine.predict import Domain, PredictionStats, Secant, predict
from secant.engine.schedulers import PowerSchedule, SeedStats, make_schedule
from secant.engine.values import from_int, get_at, int_domain, set_at, to_int, type_at
from secant.targets.contract import ExecResult
from secant.types import Location, TxSeq

_SCALAR_DOMAIN = Domain(0, (1 << 40) - 1)  # block-number and timestamp deltas


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


@dataclass
class Pending:
    """A predicted input waiting to run, and the secant state that produced it."""

    case: TxSeq
    location: Location
    value: int
    secant: Secant


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
        self._stop = False

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
    def execute(self, case: TxSeq, origin: str) -> tuple[ExecResult, Seed | None]:
        """RUN(input'), then ISNEW/ADD; return the result and the new seed, if any."""
        started = time.perf_counter()
        result = self.run_case(case)
        result.exec_us = (time.perf_counter() - started) * 1e6
        stats = self.stats
        stats.execs += 1
        self.schedule.on_execution(result.path_id)
        for observer in self.observers:
            observer(result)
        new_path, new_blocks, new_edges = self.coverage.merge(result)
        seed = None
        if new_path:
            seed = self._add(result, origin, new_edges)
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
        )
        self.corpus.add(seed)
        self._harvest(result)
        if self.on_new_seed is not None:
            self.on_new_seed(seed)
        return seed

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

    def fuzz_one(self) -> None:
        """One round of Alg. 2 on a picked input."""
        index = self.pick()
        seed = self.corpus[index]
        seed.picked += 1
        max_energy = self.schedule.energy(self.corpus.stats, index)
        energy = 0
        pending: Pending | None = None
        while (energy < max_energy or pending is not None) and not self.exhausted():
            if pending is not None:
                current, pending = pending, None
                result, new = self.execute(current.case, "prediction")
                if new is not None:
                    self.stats.predicted_new_paths += 1
                pending = self._after_prediction(current, result)
            else:
                mutation = self.propose(seed)
                if mutation is None:
                    energy += 1
                    continue
                result, _ = self.execute(mutation.case,
                                         "havoc" if mutation.location is None else "mutation")
                if energy < max_energy and self.config.predict:
                    pending = self.learn(seed, mutation, result)
            energy += 1

    def propose(self, seed: Seed) -> Mutation | None:
        """FUZZINPUT: one-parameter mutation of the last transaction, or havoc."""
        index = len(seed.case) - 1
        if self.rng.random() < self.config.havoc_probability:
            self.stats.havoc += 1
            return self.mutator.havoc(seed.case, self.rng, index)
        return self.mutator.mutate(seed.case, self.rng, index)

    # ------------------------------------------------------------------ prediction
    def _integer_view(self, case: TxSeq, location: Location
                      ) -> tuple[int, Domain, Callable[[int], TxSeq]] | None:
        """The parameter at ``location`` as an integer, its domain and how to set it."""
        kind, index = location[0], location[1]
        tx = case[index]

        def with_tx(**changes: Any) -> TxSeq:
            return case[:index] + (replace(tx, **changes),) + case[index + 1:]

        if kind == "arg" and len(location) == 4:
            return self._byte_view(case, location, with_tx)
        if kind == "arg":
            path = location[2]
            vt = type_at(self.mutator.spec(tx).types, path)
            domain = int_domain(vt)
            if domain is None:
                return None
            value = to_int(vt, get_at(tx.args, path))

            def set_arg(number: int) -> TxSeq:
                return with_tx(args=set_at(tx.args, path, from_int(vt, number)))
            return value, domain, set_arg
        if kind == "value":
            return (tx.value, Domain(0, self.mutator.max_value),
                    lambda number: with_tx(value=number))
        if kind in ("time", "blocks"):
            return (getattr(tx, kind), _SCALAR_DOMAIN,
                    lambda number: with_tx(**{kind: number}))
        if kind == "slot":
            slot = location[2]
            storage = dict(tx.storage)

            def set_slot(number: int) -> TxSeq:
                changed = dict(storage)
                changed[slot] = number
                return with_tx(storage=tuple(sorted(changed.items())))
            return storage.get(slot, 0), Domain.unsigned(256), set_slot
        return None

    @staticmethod
    def _byte_view(case: TxSeq, location: Location, with_tx: Callable[..., TxSeq]
                   ) -> tuple[int, Domain, Callable[[int], TxSeq]] | None:
        """One byte of a bytes/string argument as an integer parameter."""
        tx = case[location[1]]
        path, byte = location[2], location[3]
        value = get_at(tx.args, path)
        is_text = isinstance(value, str)
        data = value.encode("latin-1", "replace") if is_text else value
        if byte >= len(data):
            return None

        def set_byte(number: int) -> TxSeq:
            changed = bytearray(data)
            changed[byte] = number
            new = changed.decode("latin-1") if is_text else bytes(changed)
            return with_tx(args=set_at(tx.args, path, new))
        return data[byte], Domain(0, 255), set_byte

    def learn(self, seed: Seed, mutation: Mutation, result: ExecResult) -> Pending | None:
        """LEARN(input, cost, input', cost'): a predicted input, or None."""
        location = mutation.location
        if location is None:
            return None
        before = self._integer_view(seed.case, location)
        after = self._integer_view(mutation.case, location)
        if before is None or after is None:
            return None
        i0, domain, _ = before
        i1, _, setter = after
        costs1 = cost_vector(result, self.sstore_target)
        prediction = predict(i0, seed.costs, i1, costs1, domain, self.rng,
                             _Uncovered(self.coverage.edges))
        if prediction is None:
            return None
        metric = prediction.metric
        secant = Secant(metric, domain, self.config.predict_iterations,
                        points=[(i0, seed.costs[metric]), (i1, costs1[metric])])
        self.stats.prediction.attempts += 1
        return Pending(setter(prediction.value), location, prediction.value, secant)

    def _after_prediction(self, pending: Pending, result: ExecResult) -> Pending | None:
        """Count S/F for a predicted run; iterate the secant step when it failed."""
        costs = cost_vector(result, self.sstore_target)
        metric = pending.secant.metric
        stats = self.stats.prediction
        if _minimised(metric, costs):
            stats.success += 1
            return None
        if metric not in costs:
            # The run took another way before reaching the branch: a failed minimisation.
            stats.fail += 1
            return None
        stats.fail += 1
        guess = pending.secant.next(pending.value, costs)
        if guess is None:
            return None
        view = self._integer_view(pending.case, pending.location)
        if view is None:
            return None
        stats.attempts += 1
        return Pending(view[2](guess), pending.location, guess, pending.secant)

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
        }


def _minimised(metric: Any, costs: dict[Any, int]) -> bool:
    """Whether a run brought ``metric`` to zero.

    For a branch metric: whether the branch now goes the wanted side (its cost is then
    recorded for the other side).
    """
    if costs.get(metric) == 0:
        return True
    return metric[0] != "sstore" and (*metric[:4], not metric[4]) in costs


class _Uncovered:
    """Container view: branch metrics whose wanted side no run has taken yet."""

    __slots__ = ("edges",)

    def __init__(self, edges: set[tuple[bytes, int, bool]]) -> None:
        self.edges = edges

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or key[0] == "sstore":
            return False
        return (key[1], key[2], key[4]) not in self.edges

