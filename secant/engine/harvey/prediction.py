"""Input prediction (Harvey's LEARN, Alg. 2): a predicted input from two runs.

The fuzzer mutates one parameter of a test case (an argument, a byte of a bytes argument,
msg.value, a block-number or timestamp step, or, in aggressive mode, a value an SLOAD
returns). ``Predictor.predict`` sees that parameter as an integer in both inputs, compares
the two runs' cost vectors and asks ``secant.engine.secant_method`` (the secant method) for the
value that brings a metric to zero. The prediction runs next; when it misses,
``Predictor.after_prediction`` applies the secant step again with the points seen so far
(configuration B; C stops after one step).

**Resting targets.** The papers leave open which cost to learn from. A metric that no
value of the parameter brings to zero still changes with it (a handler wraps its argument
into a range before the comparison; ``require(sent)`` after paying an account that always
accepts), so it was chosen again and again: on a staking handler suite 45 % of the
executions were predictions, 1 % of them hits, and the invariant took about twice as many
executions to break as with prediction off. So each *target* (a branch side or a write
site, whatever its transaction and occurrence) counts its prediction runs (the secant steps
after a miss included) and its hits. Past :data:`PATIENCE` runs per hit plus one it rests:
it is learnt from with probability ``2 ** -(beyond / PATIENCE)``, ``beyond`` being the runs
past that allowance, so a target that never hits is retried ever less often (about
``PATIENCE`` runs each time its chances of being offered double) but never given up, as the
state it depends on may change. A hit earns ``PATIENCE`` more runs, and so does every
target once the campaign has covered a new branch edge since it was last woken: on the
mazes of ``bench/maze_gen.py`` a side that no seed could flip becomes reachable from the
seed that a new edge brought, and resting without waking lost assertions there.

**What is aimed at.** Some targets rest for good reason from the start: the failing side
of a ``require`` or of the compiler's own check (an overflow, an index out of bounds) gains
a revert and nothing behind it, and behind a handler that wraps its input into range no
input reaches it at all. The policy passes ``aim`` (``HarveyPolicy``'s ``_aims``: a
condition of the source that does not merely refuse the transaction, see
``secant.evm.refusals``), and only such branch sides are learnt from. A write's distance is
learnt from only when its slot moved by a whole slope of the parameter between the two runs,
as an array index moves it: a mapping's slot is a hash of its key, and no secant step comes
near the target through it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Container, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from secant.engine.corpus import Seed
from secant.engine.feedback import Coverage, cost_vector
from secant.engine.mutators import Mutation, Mutator
from secant.engine.secant_method import Domain, PredictionStats, Secant, predict
from secant.engine.values import from_int, get_at, int_domain, set_at, to_int, type_at
from secant.types import Location, RunResult, TxSeq

PATIENCE = 16
"""Prediction runs of a target per hit, plus one, before it rests (module docstring)."""

IntegerView = tuple[int, Domain, Callable[[int], TxSeq]]
"""A parameter's integer value, its domain, and how to build the case with another value."""


@dataclass
class Pending:
    """A predicted input waiting to run, and the secant state that produced it."""

    case: TxSeq
    location: Location
    value: int
    secant: Secant
    probe: bool = False  # an aggressive-mode input (state overrides)


class Predictor:
    """Input prediction over the parameters of test cases (see the module docstring)."""

    def __init__(self, mutator: Mutator, coverage: Coverage, sstore_target: int | None,
                 iterations: int, rng: random.Random, stats: PredictionStats,
                 aim: Callable[[tuple[bytes, int, bool]], bool] | None = None) -> None:
        self.mutator = mutator
        self.aim = aim
        self.coverage = coverage
        self.sstore_target = sstore_target
        self.iterations = iterations
        self.rng = rng
        self.stats = stats
        # target -> [prediction runs, hits, branch edges covered when last woken]
        self._record: dict[Hashable, list[int]] = {}

    def integer_view(self, case: TxSeq, location: Location) -> IntegerView | None:
        """The parameter at ``location`` as an integer, its domain and how to set it."""
        kind, index = location[0], location[1]
        tx = case[index]

        def with_tx(**changes: Any) -> TxSeq:
            return case[:index] + (replace(tx, **changes),) + case[index + 1:]

        if kind == "arg" and len(location) == 4:
            return _byte_view(case, location, with_tx)
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
            most = (self.mutator.max_time_delay if kind == "time"
                    else self.mutator.max_block_delay)
            return (getattr(tx, kind), Domain(0, most),
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

    def predict(self, seed: Seed, mutation: Mutation, result: RunResult,
                probe: bool = False, writes: bool = False) -> Pending | None:
        """LEARN(input, cost, input', cost'): a predicted input, or None.

        With ``writes`` the metric learnt from is a write's distance to the target slot
        when one changed (``HarveyPolicy._aim_writes``); otherwise, preferably, the cost of
        a branch side not yet covered.
        """
        location = mutation.location
        costs0 = seed.costs
        if location is None or costs0 is None:  # None: dropped for memory
            return None
        before = self.integer_view(seed.case, location)
        after = self.integer_view(mutation.case, location)
        if before is None or after is None:
            return None
        i0, domain, _ = before
        i1, _, setter = after
        # The two cases differ from the location's transaction on: only metrics from there
        # on can differ (``choose_metric`` takes only those).
        costs1 = cost_vector(result, self.sstore_target, location[1])
        prefer: Container[Hashable] = (_WRITES if writes
                                       else _Uncovered(self.coverage.edges, self._aimed))

        def keep(metric: Hashable) -> bool:
            # A write's slot learnt from must move with the parameter as an array index
            # does (a whole slope): a hashed slot (a mapping's) jumps, and no step of the
            # secant method comes near the target through it.
            if metric in _WRITES and _wrapped_root(i0, costs0[metric], i1,
                                                   costs1[metric]) is None:
                return False
            return self._awake(metric)

        prediction = predict(i0, costs0, i1, costs1, domain, self.rng, prefer, keep)
        if prediction is None:
            return None
        metric = prediction.metric
        value = prediction.value
        if writes and metric in _WRITES and domain == _WORD:
            # A write's slot is base + k * input modulo 2**256: its root may lie past the
            # wrap, where clamping would never reach it.
            value = _wrapped_root(i0, costs0[metric], i1, costs1[metric]) or value
        secant = Secant(metric, domain, self.iterations,
                        points=[(i0, costs0[metric]), (i1, costs1[metric])])
        self.stats.attempts += 1
        return Pending(setter(value), location, value, secant, probe)

    def after_prediction(self, pending: Pending, result: RunResult) -> Pending | None:
        """Count S/F for a predicted run; iterate the secant step when it failed."""
        # The metric belongs to the location's transaction or a later one.
        costs = cost_vector(result, self.sstore_target, pending.location[1])
        metric = pending.secant.metric
        stats = self.stats
        record = self._record.setdefault(_target(metric), [0, 0, len(self.coverage.edges)])
        record[0] += 1
        if _minimised(metric, costs):
            stats.success += 1
            record[1] += 1
            return None
        if metric not in costs:
            # The run took another way before reaching the branch: a failed minimisation.
            stats.fail += 1
            return None
        stats.fail += 1
        guess = pending.secant.next(pending.value, costs)
        if guess is None:
            return None
        view = self.integer_view(pending.case, pending.location)
        if view is None:
            return None
        stats.attempts += 1
        return Pending(view[2](guess), pending.location, guess, pending.secant, pending.probe)

    def _aimed(self, target: Hashable) -> bool:
        """Whether the policy aims at a target (module docstring).

        Any write site, and the branch sides ``aim`` lets through.
        """
        assert isinstance(target, tuple)
        return self.aim is None or target[0] == "sstore" or self.aim(target)

    def _awake(self, metric: Hashable) -> bool:
        """Whether ``metric`` may be learnt from now (module docstring).

        Yes when the policy aims at its target and the target is not resting, or when the
        draw of a resting one came up.
        """
        target = _target(metric)
        if not self._aimed(target):
            return False
        record = self._record.get(target)
        if record is None:
            return True
        tries, hits, seen = record
        allowed = PATIENCE * (hits + 1)
        edges = len(self.coverage.edges)
        if edges > seen:  # the campaign went further since: a fresh allowance
            record[0] = tries = min(tries, allowed)
            record[2] = edges
        beyond = tries - allowed
        if beyond < 0 or self.rng.random() < 0.5 ** (beyond / PATIENCE):
            return True
        self.stats.rested += 1
        return False


def _target(metric: Hashable) -> Hashable:
    """What a metric aims at, whatever its transaction and occurrence.

    A branch side ``(code hash, pc, wanted side)`` or a write site ``("sstore", code hash,
    pc)`` (the keys of ``secant.engine.feedback.cost_vector``).
    """
    assert isinstance(metric, tuple)
    if metric[0] == "sstore":
        return ("sstore", metric[2], metric[3])
    return (metric[1], metric[2], metric[4])


def _byte_view(case: TxSeq, location: Location, with_tx: Callable[..., TxSeq]
               ) -> IntegerView | None:
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


def _minimised(metric: Any, costs: Mapping[Any, int]) -> bool:
    """Whether a run brought ``metric`` to zero.

    For a branch metric: whether the branch now goes the wanted side (its cost is then
    recorded for the other side).
    """
    if costs.get(metric) == 0:
        return True
    return metric[0] != "sstore" and (*metric[:4], not metric[4]) in costs


_WORD = Domain.unsigned(256)


def _wrapped_root(i0: int, c0: int, i1: int, c1: int) -> int | None:
    """The uint256 input that makes ``|slot - target|`` zero, for a slot linear in it.

    Two runs with costs ``c0`` and ``c1`` give the slope ``k`` of the slot in the input;
    the target lies ``c0 / k`` inputs away from ``i0``, modulo 2**256 as the EVM adds.
    None when the costs are not those of a whole slope.
    """
    di, dc = i1 - i0, c1 - c0
    if di == 0 or dc == 0 or dc % di:
        return None
    k = dc // di
    if c0 % abs(k):
        return None
    return (i0 - c0 // k) % (1 << 256)


class _Writes:
    """Container view: the metrics of writes (their distance to the target slot)."""

    __slots__ = ()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and bool(key) and key[0] == "sstore"


_WRITES = _Writes()


class _Uncovered:
    """Container view: branch metrics aimed at whose wanted side no run has taken yet."""

    __slots__ = ("aimed", "edges")

    def __init__(self, edges: set[tuple[bytes, int, bool]],
                 aimed: Callable[[Hashable], bool]) -> None:
        self.edges = edges
        self.aimed = aimed

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or key[0] == "sstore":
            return False
        target = _target(key)  # a branch's target is its edge
        return target not in self.edges and self.aimed(target)
