"""Solve for a test case that takes the other side of a recorded branch.

:func:`flip_branch` takes a test case, the ``symbolic`` recording of its run
(``SymbolicRun``) and the index of a branch record, and asks z3 for inputs under which

* every branch recorded before it goes the way it went in the run (the path condition),
* every concretisation made before it concretises to the same value (``SymPin``; on by
  default, ``pin_concretised``),
* and the branch itself goes the other way,

within the domains the fuzzer's inputs live in: the sender is one of ``senders``; the value
is at most ``max_value`` (default: what the sender could send in the run); the block
deltas stay between 0 and ``max_time_delta``/``max_blocks_delta``; every argument word is
a valid ABI encoding of its type (``secant.symbolic.abi_words``); offsets, lengths and
string contents keep their values (the calldata layout is part of the path); storage read
before the case keeps the values it had (``pin_storage``; the chain's post-deployment
state is what every case starts from). Transactions outside ``vary`` keep their inputs,
and so does a transaction sent through an attacker contract (its calldata is the
contract's, not the target's).

The answer is a :class:`FlipResult`: ``sat`` with the new case (every input the model does
not mention keeps its value), ``unsat``, or ``unknown`` (the time limit, or z3 gave up).
An ``unsat`` answer has ``proved`` set when no restriction entered it and no concretisation
of a free input preceded the branch: then no input of the fuzzer's domains that follows
the same path (with the same calldata layout) takes the other side, and a caller can show
the side as infeasible on this path. Without ``proved`` it says only that these inputs,
with these restrictions, do not flip it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import z3

from secant.abi import function_selector
from secant.symbolic.abi_words import FIXED_LAYOUT, WordSlot, apply_words, word_domain, word_slots
from secant.symbolic.names import is_state_variable, state_slot
from secant.symbolic.narrow import narrowed
from secant.symbolic.records import SymbolicRun, SymTx, variables
from secant.types import Tx, TxSeq

__all__ = ["DEFAULT_MAX_BLOCKS_DELTA", "DEFAULT_MAX_TIME_DELTA", "DEFAULT_NARROW_SHARE",
           "DEFAULT_TIMEOUT_MS", "NARROW_BITS", "NARROW_TRIES", "FlipResult", "flip_branch"]

DEFAULT_TIMEOUT_MS = 2000
"""A query's time limit when none is given."""

DEFAULT_MAX_TIME_DELTA = 10 * 365 * 86400
"""Ten years: a solved clock delta stays within what a campaign's deadlines need."""

DEFAULT_MAX_BLOCKS_DELTA = 10_000_000
"""About four years of twelve-second blocks."""

NARROW_BITS = 32
"""The width of integer arguments in a query's first, narrowed try."""

NARROW_TRIES = ((64, True, 8), (256, True, 8), (NARROW_BITS, False, None),
                (64, False, None))
"""The narrowed tries, in order, before the full query: the width of the integer
arguments (256: none narrowed), whether only the inputs the flipped condition reads are
free, and the bits of the smaller factor of a product equal to a constant (None: any;
``narrowed``'s ``factor_bits``)."""

DEFAULT_NARROW_SHARE = 0.4
"""The share of a query's (remaining) time and resources each narrowed try may use. A
256-bit multiplication behind solc's overflow check (``p6 * p0 == 819580`` in a maze cell)
needed about a million resource units in its 32-bit try: a quarter of the expert's three
million was not enough, and the 64-bit and full tries rarely answer what it cannot."""

_MASK = (1 << 256) - 1
_NAME = re.compile(r"^tx(\d+)_(w(\d+)|value|sender|time|blocks)$")
_GUARD = "__secant_guard_"

Status = Literal["sat", "unsat", "unknown"]


@dataclass(frozen=True)
class FlipResult:
    """What a query answered (see the module docstring).

    ``case`` is the new test case (``sat`` only). ``seconds`` is the time z3 took (both
    checks of an ``unsat`` whose proof needed a second one), ``resources`` z3's resource
    count over the same checks (the machine-independent measure of their work).
    ``proved``: an ``unsat`` that holds for every input of the fuzzer's domains on this
    path. ``reason`` explains ``unknown`` (z3's reason) and a failure to build the query.
    ``assignment`` holds the model's value of every variable of the query; ``storage`` the
    values of slots read before the case that the model chose (only with
    ``pin_storage=False``: the new case reaches the other side only if the chain holds
    them, as Harvey's aggressive mode can arrange with ``Tx.storage``).
    """

    status: Status
    case: TxSeq | None = None
    seconds: float = 0.0
    resources: int = 0
    proved: bool = False
    reason: str = ""
    assignment: Mapping[str, int] = field(default_factory=dict)
    storage: Mapping[tuple[int, int], int] = field(default_factory=dict)

    @property
    def sat(self) -> bool:
        """Whether a new case was found."""
        return self.status == "sat"


@dataclass
class _Query:
    """The constraints of one query, by role."""

    facts: list[Any] = field(default_factory=list)  # path, domains, fixed layout
    restrictions: list[Any] = field(default_factory=list)  # kept inputs (vary, relays)
    # The values of kept inputs and pinned storage: substituted before a check, so that
    # conditions over the state and earlier transactions reach z3 as constants (a 256-bit
    # remainder over a kept input costs as much to bit-blast as over a free one).
    constants: dict[str, int] = field(default_factory=dict)
    pins: list[Any] = field(default_factory=list)  # concretisations of free inputs
    free: set[str] = field(default_factory=set)  # variables the solver may choose
    fixed: set[str] = field(default_factory=set)  # kept by a fact (layout, storage)
    # Integer words wider than the first narrowed width: (signed?, the type's bits).
    narrow: dict[str, tuple[bool, int]] = field(default_factory=dict)


def flip_branch(case: TxSeq, run: SymbolicRun, index: int, *, senders: Sequence[int],
                timeout_ms: int = DEFAULT_TIMEOUT_MS, pin_storage: bool = True,
                pin_concretised: bool = True, vary: Collection[int] | None = None,
                max_value: int | None = None,
                max_time_delta: int = DEFAULT_MAX_TIME_DELTA,
                max_blocks_delta: int = DEFAULT_MAX_BLOCKS_DELTA,
                narrow_share: float = DEFAULT_NARROW_SHARE,
                rlimit: int | None = None, spend: int | None = None) -> FlipResult:
    """A case that follows ``run``'s path up to branch record ``index`` and flips it.

    ``case`` is the test case ``run`` recorded; ``senders`` the addresses a transaction may
    come from; ``vary`` the indices of the transactions whose inputs may change (default:
    all). Each narrowed try (``NARROW_TRIES``: the integer arguments limited to 64 or 32
    bits, the arithmetic at the widths it needs, ``secant.symbolic.narrow``) may use
    ``narrow_share`` of what is left of the time and resources (0: none), before the
    full query. ``rlimit``, when given, bounds the query by
    z3's resource count instead of only by time: the answer then no longer depends on the
    machine's speed (``timeout_ms`` stays a safety net). ``spend``, when given, caps the
    resources of all the query's checks together below ``rlimit`` while each narrowed try
    still gets its share of ``rlimit``: a query that a narrowed try answers cheaply is
    answered as under the whole limit, and one that would need more is ``unknown`` after
    ``spend``. See the module docstring for the
    constraints and :class:`FlipResult` for the answer.
    """
    if not 0 <= index < len(run.branches):
        raise IndexError(f"no branch record {index} (the run has {len(run.branches)})")
    target = run.branches[index]
    goal = z3.Not(target.path_condition)
    path = [record.path_condition for record in run.branches[:index]]
    pins = run.pins_before(target.seq)
    names: set[str] = set(target.variables)
    for record in run.branches[:index]:
        names |= record.variables
    for pin in pins:
        names |= pin.variables
    query = _Query(facts=list(path))
    layouts: dict[int, list[WordSlot]] = {}
    for name in sorted(names):
        _constrain(name, case, run, query, layouts, senders=senders, pin_storage=pin_storage,
                   vary=vary, max_value=max_value, max_time_delta=max_time_delta,
                   max_blocks_delta=max_blocks_delta)
    # A pin over inputs that facts keep (the calldata layout, storage before the case)
    # follows from the facts: no approximation. Any other pin is one.
    approximate = False
    for pin in pins:
        if pin.variables <= query.fixed:
            query.facts.append(pin.constraint)
            continue
        approximate = True
        if pin_concretised:
            query.pins.append(pin.constraint)
    return _solve(case, run, query, goal, timeout_ms, proof_possible=not approximate,
                  narrow_share=narrow_share, rlimit=rlimit, spend=spend)


def _constrain(name: str, case: TxSeq, run: SymbolicRun, query: _Query,
               layouts: dict[int, list[WordSlot]], *, senders: Sequence[int],
               pin_storage: bool, vary: Collection[int] | None, max_value: int | None,
               max_time_delta: int, max_blocks_delta: int) -> None:
    """Add the domain of variable ``name`` (or keep it at its value) to ``query``."""
    var = z3.BitVec(name, 256)
    bound = run.bindings.get(name, 0)
    keep = var == z3.BitVecVal(bound, 256)
    if is_state_variable(name):
        if pin_storage:
            query.facts.append(keep)
            query.fixed.add(name)
            query.constants[name] = bound
        else:
            query.free.add(name)
        return
    match = _NAME.match(name)
    if match is None:
        query.restrictions.append(keep)
        query.constants[name] = bound
        return
    tx = int(match.group(1))
    info = run.txs.get(tx)
    if tx >= len(case) or (vary is not None and tx not in vary) or _relayed(case[tx], info):
        query.restrictions.append(keep)
        query.constants[name] = bound
        return
    what = match.group(2)
    if match.group(3) is not None:
        slots = layouts.get(tx)
        if slots is None:
            slots = layouts[tx] = word_slots(case[tx].function, case[tx].args)
        word = int(match.group(3))
        slot = next((s for s in slots if s.word == word), None)
        if slot is None or slot.kind == FIXED_LAYOUT:
            query.facts.append(keep)  # the layout is part of the path
            query.fixed.add(name)
            return
        domain = word_domain(slot, var)
        if domain is not None:
            query.facts.append(domain)
        if slot.kind in ("uint", "int") and slot.bits > NARROW_BITS:
            query.narrow[name] = (slot.kind == "int", slot.bits)
    elif what == "value":
        limit = max_value if max_value is not None else (
            info.balance if info is not None and info.balance is not None else bound)
        query.facts.append(z3.ULE(var, z3.BitVecVal(limit, 256)))
    elif what == "sender":
        if not senders:
            query.restrictions.append(keep)
            return
        query.facts.append(z3.Or([var == z3.BitVecVal(s, 256) for s in senders]))
    else:
        # The change to the transaction's delta: the new delta stays in [0, limit].
        old = case[tx].time if what == "time" else case[tx].blocks
        limit = max_time_delta if what == "time" else max_blocks_delta
        query.facts.append(z3.ULE(var + z3.BitVecVal(old, 256), z3.BitVecVal(limit, 256)))
    query.free.add(name)


def _relayed(tx: Tx, info: SymTx | None) -> bool:
    """Whether the transaction's message is not the case's own (an attacker relays it)."""
    if info is None:
        return False
    if info.sender != tx.sender:
        return True
    if "(" in tx.function:
        return info.data[:4] != function_selector(tx.function)
    return False


def _solve(case: TxSeq, run: SymbolicRun, query: _Query, goal: Any, timeout_ms: int,
           proof_possible: bool, narrow_share: float, rlimit: int | None,
           spend: int | None = None) -> FlipResult:
    seconds = 0.0
    used = 0  # z3's resource count over every check
    budget = max(1, timeout_ms)
    resources = rlimit

    def capped(limit: int | None) -> int | None:
        """``limit`` within what ``spend`` leaves (None: no limit)."""
        if spend is None:
            return limit
        left = max(1, spend - used)
        return left if limit is None else min(limit, left)
    constants = [(z3.BitVec(name, 256), z3.BitVecVal(value, 256))
                 for name, value in sorted(query.constants.items())]
    facts = _substituted(query.facts + [goal], constants)
    pins = _substituted(query.pins, constants, keep_true=True)
    goal_inputs = variables(goal)
    for width, goal_only, factor_bits in NARROW_TRIES if narrow_share > 0 else ():
        # First with small integer arguments and the arithmetic at the widths they need,
        # under no-overflow guards (secant.symbolic.narrow): bit-blasted multiplications
        # and divisions of 256-bit words are slow, of 32- or 64-bit ones fast, and small
        # solutions are common (a remainder by a constant with a bound above 2**32 takes
        # z3 0.1 s over 64 bits and 2.7 s over 256). Any model of a narrowed query is one
        # of the full query.
        tried_facts, tried_pins, free = facts, pins, set(query.free)
        if goal_only:
            # The inputs the flipped condition does not read keep their values: the path
            # conditions over them alone drop out (an earlier branch that needed a 256-bit
            # argument would otherwise defeat every narrowed try).
            others = sorted(name for name in query.free if name not in goal_inputs)
            if not others:
                continue
            kept = [(z3.BitVec(name, 256), z3.BitVecVal(run.bindings.get(name, 0), 256))
                    for name in others]
            tried_facts = _substituted(facts, kept)
            tried_pins = _substituted(pins, kept, keep_true=True)
            free = query.free - set(others)
        wide = {name: signed for name, (signed, bits) in query.narrow.items()
                if bits > width and name in free}
        if not wide and not goal_only:
            continue
        narrowing = narrowed(tried_facts, tried_pins, variables=wide, width=width,
                             exact=False, factor_bits=factor_bits)
        widen = narrowing.variables
        answer, solver, spent = _check(
            narrowing.constraints, narrowing.guarded,
            max(1, int(budget * narrow_share)),
            capped(None if resources is None else max(1, int(resources * narrow_share))))
        seconds += spent
        spent_resources = _spent_resources(solver)
        used += spent_resources
        if answer == z3.sat:
            assignment = _assignment(solver.model())
            for name, (narrow, signed) in widen.items():
                small = assignment.pop(narrow, 0)
                if signed and small >> (width - 1):
                    small -= 1 << width
                assignment[name] = small & _MASK
            return _sat(case, run, query, assignment, seconds, used)
        budget = max(1, budget - int(spent * 1000))
        if resources is not None:
            resources = max(1, resources - spent_resources)
        if spend is not None and used >= spend:
            return FlipResult("unknown", seconds=seconds, resources=used,
                              reason="spent what it was allowed")
    # The full query, its arithmetic at the widths its values need (exact: an unsat answer
    # is still a proof).
    whole = narrowed(facts, pins)
    answer, solver, spent = _check(whole.constraints, whole.guarded, budget,
                                   capped(resources))
    seconds += spent
    spent_resources = _spent_resources(solver)
    used += spent_resources
    if answer == z3.sat:
        return _sat(case, run, query, _assignment(solver.model()), seconds, used)
    if answer == z3.unknown:
        return FlipResult("unknown", seconds=seconds, resources=used,
                          reason=solver.reason_unknown())
    proved = False
    if proof_possible:
        if not query.restrictions:
            # Only facts were substituted, and the pins follow from the facts here (they are
            # no guards): unsat on the facts alone.
            proved = True
        else:
            # The kept inputs took part: ask again with them free (storage still pinned).
            budget = max(1, budget - int(spent * 1000))
            if resources is not None:
                resources = max(1, resources - spent_resources)
            fixed = [(z3.BitVec(name, 256), z3.BitVecVal(value, 256))
                     for name, value in sorted(query.constants.items()) if name in query.fixed]
            unkept = narrowed(_substituted(query.facts + [goal], fixed))
            again, solver, spent = _check(unkept.constraints, [], budget, capped(resources))
            seconds += spent
            used += _spent_resources(solver)
            proved = again == z3.unsat
    return FlipResult("unsat", seconds=seconds, resources=used, proved=proved)


def _check(facts: list[Any], guarded: list[Any], timeout_ms: int,
           rlimit: int | None = None) -> tuple[Any, Any, float]:
    """Check ``facts`` and ``guarded`` (each under an assumption, for the unsat core).

    ``rlimit`` bounds z3's resource count (deterministic), ``timeout_ms`` its time.

    The query is copied into a fresh z3 context: z3's answers depend on the order its
    terms were created in, and the main context's order depends on everything the process
    built before (other runs, other queries). A fresh context makes the same query give
    the same model in any process, and frees the solver's memory with it.
    """
    context = z3.Context()
    solver = z3.Solver(ctx=context)
    solver.set("timeout", timeout_ms)
    if rlimit is not None:
        solver.set("rlimit", rlimit)
    solver.add(*[fact.translate(context) for fact in facts])
    guards = []
    for number, constraint in enumerate(guarded):
        guard = z3.Bool(f"{_GUARD}{number}", context)
        solver.add(z3.Implies(guard, constraint.translate(context)))
        guards.append(guard)
    started = time.perf_counter()
    answer = solver.check(*guards)
    return answer, solver, time.perf_counter() - started


def _substituted(constraints: list[Any], constants: list[tuple[Any, Any]],
                 keep_true: bool = False) -> list[Any]:
    """``constraints`` with ``constants`` substituted and simplified (true ones dropped)."""
    if not constants:
        return list(constraints)
    out = []
    for constraint in constraints:
        simple = z3.simplify(z3.substitute(constraint, *constants))
        if keep_true or not z3.is_true(simple):
            out.append(simple)
    return out


def _spent_resources(solver: Any) -> int:
    """The resource count a check used (0 when z3 does not say)."""
    statistics = solver.statistics()
    return int(statistics.get_key_value("rlimit count")) if "rlimit count" in statistics.keys() \
        else 0


def _assignment(model: Any) -> dict[str, int]:
    return {decl.name(): model[decl].as_long() for decl in model.decls()
            if not decl.name().startswith(_GUARD)}


def _sat(case: TxSeq, run: SymbolicRun, query: _Query, assignment: dict[str, int],
         seconds: float, used: int) -> FlipResult:
    new_case, storage = _case_from(case, run, assignment, query.free)
    return FlipResult("sat", new_case, seconds, used, assignment=assignment, storage=storage)


def _case_from(case: TxSeq, run: SymbolicRun, assignment: Mapping[str, int],
               free: set[str]) -> tuple[TxSeq, dict[tuple[int, int], int]]:
    """The case with the model's values of the free variables written in."""
    words: dict[int, dict[int, int]] = {}
    fields: dict[int, dict[str, int]] = {}
    storage: dict[tuple[int, int], int] = {}
    for name, value in assignment.items():
        if name not in free:
            continue
        if is_state_variable(name):
            storage[state_slot(name)] = value
            continue
        match = _NAME.match(name)
        if match is None:
            continue
        number = int(match.group(1))
        if match.group(3) is not None:
            words.setdefault(number, {})[int(match.group(3))] = value
        else:
            fields.setdefault(number, {})[match.group(2)] = value
    new: list[Tx] = []
    for index, tx in enumerate(case):
        changed = tx
        if index in words:
            slots = word_slots(tx.function, tx.args)
            changed = changed.with_args(apply_words(tx.args, slots, words[index]))
        found = fields.get(index, {})
        if "value" in found:
            changed = replace(changed, value=found["value"])
        if "sender" in found:
            changed = replace(changed, sender=found["sender"] & ((1 << 160) - 1))
        if "time" in found:
            changed = replace(changed, time=(tx.time + found["time"]) & _MASK)
        if "blocks" in found:
            changed = replace(changed, blocks=(tx.blocks + found["blocks"]) & _MASK)
        new.append(changed)
    return tuple(new), storage
