"""Shrinking: the smallest test case that still shows a finding.

A campaign reports the case that happened to show a bug: six transactions where two
suffice, ``10**66`` where ``1001`` would do. :class:`Shrinker` takes a way to run a case
and get the keys of the findings it shows (``Worker.finding_keys``; any callable will do,
the unit tests use a plain predicate), the key to keep, and a budget of executions. It
applies passes to the current case until none changes it (a fixed point) or the budget is
spent, keeping a candidate only when it still shows the key:

1. ``storage``: drop the SLOAD overrides (aggressive mode's), all at once, then per
   transaction;
2. ``suffixes``: keep the shortest failing prefix. A runner that returns a mapping names,
   for each key, the case its finding names (a property's failing prefix, the transaction
   that paid an attacker): that prefix is tried first;
3. ``prefixes``: drop transactions from the front, the most first;
4. ``chunks``: drop runs of consecutive transactions, half the case first, then smaller
   runs down to single transactions (delta debugging's order);
5. ``senders``: each sender toward the campaign's first sender (a sender earlier in the
   campaign's list is simpler);
6. ``values`` and ``blocks``: ``msg.value`` and the block-number and timestamp deltas
   toward 0 (integers as below);
7. ``args``: every argument toward zero and short values, as its ABI type allows:
   integers try 0, then 1 (-1 for a negative one), then one closer to 0 than the value
   (when that does not fail, the value is a boundary), then a binary search between
   those, so ``x > 1000`` shrinks ``10**66`` to ``1001``; ``bool`` toward False;
   ``address`` toward 0, then the campaign's senders, then the other accounts and
   contracts the chain names (a named address only toward those before it); ``bytesN``
   toward zero bytes; ``bytes``, ``string`` and ``T[]`` toward empty (half the elements
   first, then smaller runs), then each element (bytes toward 0, characters toward
   ``a``, array elements as their type); fixed-size arrays keep their length; tuples
   shrink field by field.

Every candidate stays valid for its type: an integer moves between 0 and its value, so a
``uint8`` stays below 256 and an ``int8`` above -129. A candidate already run is not run
again (the answers are remembered), and nothing is random: the same case, key, runner and
budget give the same result.

A campaign with a time budget also gives the shrinker a ``deadline`` (on its ``clock``):
once it has passed, no candidate runs and the smallest failing case so far is the result
(``out_of_time``), as when the execution budget is spent. Without a deadline (an execution
budget) shrinking depends on nothing but its inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from secant.engine.mutators import FunctionSpec
from secant.engine.values import Path, VType, get_at, set_at
from secant.types import Tx, TxSeq

Key = tuple[Any, ...]
"""A finding's key (``Finding.key``)."""

Runner = Callable[[TxSeq], Collection[Key]]
"""Runs a case and returns the keys of the findings it shows. A ``Mapping`` may name, for
each key, the case its finding names (a prefix of the case run), or None."""

DEFAULT_SHRINK_LIMIT = 5000
"""Executions a campaign spends at most on shrinking one finding."""


@dataclass(frozen=True)
class ShrinkSpace:
    """What the shrinker may put in a case.

    ``types`` gives the argument types of each function by ``(to, signature)`` (as
    ``Tx.to`` and ``Tx.function`` name it); a transaction whose function is not there
    keeps its arguments. ``senders`` are the campaign's senders, simplest (the first)
    first; ``addresses`` the other accounts and contracts an address argument may take,
    simplest first.
    """

    types: Mapping[tuple[int | None, str], tuple[VType, ...]] = field(default_factory=dict)
    senders: tuple[int, ...] = ()
    addresses: tuple[int, ...] = ()

    @classmethod
    def of(cls, functions: Iterable[FunctionSpec], senders: Iterable[int],
           addresses: Iterable[int] = ()) -> ShrinkSpace:
        """The space of a campaign's functions, senders and known addresses."""
        return cls({(spec.to, spec.signature): spec.types for spec in functions},
                   tuple(dict.fromkeys(senders)), tuple(dict.fromkeys(addresses)))

    def address_order(self) -> tuple[int, ...]:
        """Address argument values, simplest first: 0, the senders, the other names."""
        return tuple(dict.fromkeys((0, *self.senders, *self.addresses)))


@dataclass
class ShrinkResult:
    """What shrinking gave: the smallest case found that shows the key, and the cost.

    ``reproduced`` is False when the original case did not show the key when run again
    (then ``case`` is the original); ``complete`` is True when the passes reached a fixed
    point, False when the budget ran out first; ``out_of_time`` is True when the deadline
    passed first.
    """

    case: TxSeq
    original: TxSeq
    execs: int
    reproduced: bool
    complete: bool
    out_of_time: bool = False

    @property
    def tx_before(self) -> int:
        """Transactions in the original case."""
        return len(self.original)

    @property
    def tx_after(self) -> int:
        """Transactions in the shrunk case."""
        return len(self.case)

    def stats(self) -> dict[str, Any]:
        """The figures a finding's ``shrink`` entry reports (``out_of_time`` only when so)."""
        stats: dict[str, Any] = {"execs": self.execs, "tx_before": self.tx_before,
                                 "tx_after": self.tx_after, "reproduced": self.reproduced,
                                 "complete": self.complete}
        if self.out_of_time:
            stats["out_of_time"] = True
        return stats


class _BudgetSpent(Exception):
    """The execution budget is spent, or the deadline passed: the passes stop where they are."""


class Shrinker:
    """Shrinks one finding's case (see the module docstring).

    ``on_exec`` is called after every execution (a progress display); ``execs`` counts
    them and ``current`` is the smallest failing case so far. ``deadline``, a time on
    ``clock``, stops shrinking as the execution budget does (None: no deadline);
    ``out_of_time`` then says it did.
    """

    def __init__(self, run: Runner, key: Key, limit: int = DEFAULT_SHRINK_LIMIT,
                 space: ShrinkSpace | None = None,
                 on_exec: Callable[[Shrinker], None] | None = None, *,
                 deadline: float | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.run = run
        self.key = key
        self.limit = limit
        self.space = space if space is not None else ShrinkSpace()
        self.on_exec = on_exec
        self.deadline = deadline
        self.clock = clock
        self.out_of_time = False
        self.execs = 0
        self.current: TxSeq = ()
        self.original: TxSeq = ()
        self._answers: dict[TxSeq, bool] = {}
        self._named: dict[TxSeq, TxSeq] = {}

    # ------------------------------------------------------------------ driver
    def shrink(self, case: TxSeq) -> ShrinkResult:
        """The smallest case found that shows the key, starting from ``case``.

        An exception of the runner (a KeyboardInterrupt) goes through; ``result()`` then
        still gives the smallest failing case found so far.
        """
        self.original = self.current = tuple(case)
        try:
            if not self._fails(self.current):
                return self.result()
            passes = (self._storage, self._suffixes, self._prefixes, self._chunks,
                      self._senders, self._values, self._blocks, self._args)
            while True:
                before = self.current
                for shrink_pass in passes:
                    shrink_pass()
                if self.current == before:
                    return self.result(complete=True)
        except _BudgetSpent:
            return self.result()

    def result(self, complete: bool = False) -> ShrinkResult:
        """Where shrinking stands: the smallest failing case so far (see ``shrink``)."""
        # Without a single execution (a budget of 0) nothing was shown again.
        reproduced = self._answers.get(self.original, False)
        case = self.current if reproduced else self.original
        return ShrinkResult(case, self.original, self.execs, reproduced,
                            complete and reproduced, self.out_of_time)

    def _fails(self, case: TxSeq) -> bool:
        """Whether ``case`` shows the key (each distinct case runs once)."""
        known = self._answers.get(case)
        if known is not None:
            return known
        if self.execs >= self.limit:
            raise _BudgetSpent
        if self.deadline is not None and self.clock() >= self.deadline:
            self.out_of_time = True
            raise _BudgetSpent
        shown = self.run(case)
        self.execs += 1  # a run that raised (Ctrl-C) does not count
        fails = self.key in shown
        if fails and isinstance(shown, Mapping):
            named = shown[self.key]
            if named is not None and len(named) < len(case) and case[:len(named)] == named:
                self._named[case] = tuple(named)
        self._answers[case] = fails
        if self.on_exec is not None:
            self.on_exec(self)
        return fails

    def _try(self, candidate: TxSeq) -> bool:
        """Adopt ``candidate`` when it differs from the current case and still fails."""
        if not candidate or candidate == self.current or not self._fails(candidate):
            return False
        self.current = candidate
        return True

    # ------------------------------------------------------------------ transactions
    def _storage(self) -> None:
        """Drop storage overrides: all of them, else those of one transaction at a time."""
        if not any(tx.storage for tx in self.current):
            return
        if self._try(tuple(replace(tx, storage=()) if tx.storage else tx
                           for tx in self.current)):
            return
        for index in range(len(self.current)):
            if self.current[index].storage:
                self._try(self._with_tx(index, replace(self.current[index], storage=())))

    def _suffixes(self) -> None:
        """Keep the shortest failing prefix (the prefix a finding names, first)."""
        named = self._named.get(self.current)
        if named is not None:
            self._try(named)
        for length in range(1, len(self.current)):
            if self._try(self.current[:length]):
                return

    def _prefixes(self) -> None:
        """Drop the most transactions from the front that can go."""
        for start in range(len(self.current) - 1, 0, -1):
            if self._try(self.current[start:]):
                return

    def _chunks(self) -> None:
        """Drop runs of consecutive transactions, longer runs first, later runs first."""
        size = len(self.current) // 2
        while size >= 1:
            start = len(self.current) - size
            while start >= 0:
                case = self.current
                if not self._try(case[:start] + case[start + size:]):
                    start -= 1
                else:
                    start = min(start, len(self.current) - size)
            size //= 2

    def _senders(self) -> None:
        """Each sender toward the first of the campaign's senders."""
        senders = self.space.senders
        for index in range(len(self.current)):
            sender = self.current[index].sender
            simpler = senders[:senders.index(sender)] if sender in senders else senders
            for candidate in simpler:
                if self._try(self._with_tx(index, replace(self.current[index],
                                                          sender=candidate))):
                    break

    def _values(self) -> None:
        """``msg.value`` toward 0."""
        for index in range(len(self.current)):
            if self.current[index].value:
                self._tx_field(index, "value")

    def _blocks(self) -> None:
        """Block-number and timestamp deltas toward 0."""
        for index in range(len(self.current)):
            for name in ("blocks", "time"):
                if getattr(self.current[index], name):
                    self._tx_field(index, name)

    def _tx_field(self, index: int, name: str) -> None:
        """An integer field (``value``, ``blocks``, ``time``) of tx ``index`` toward 0."""
        def make(value: int) -> TxSeq:
            tx = self.current[index]
            changed = (replace(tx, value=value) if name == "value"
                       else replace(tx, blocks=value) if name == "blocks"
                       else replace(tx, time=value))
            return self._with_tx(index, changed)

        self._integer(lambda: getattr(self.current[index], name), make)

    def _with_tx(self, index: int, tx: Tx) -> TxSeq:
        """The current case with transaction ``index`` replaced."""
        case = self.current
        return case[:index] + (tx,) + case[index + 1:]

    # ------------------------------------------------------------------ arguments
    def _args(self) -> None:
        """Every argument of every transaction toward zero and short values."""
        for index in range(len(self.current)):
            tx = self.current[index]
            types = self.space.types.get((tx.to, tx.function))
            if types is None or len(types) != len(tx.args):
                continue  # a function the campaign does not know: left as it is
            for position, vt in enumerate(types):
                self._value(index, (position,), vt)

    def _get(self, index: int, path: Path) -> Any:
        return get_at(self.current[index].args, path)

    def _put(self, index: int, path: Path, value: Any) -> TxSeq:
        """The current case with the argument part at ``path`` of tx ``index`` replaced."""
        tx = self.current[index]
        return self._with_tx(index, tx.with_args(set_at(tx.args, path, value)))

    def _value(self, index: int, path: Path, vt: VType) -> None:
        """The argument part at ``path`` of transaction ``index`` toward simpler values."""
        kind = vt.kind
        if kind in ("uint", "int"):
            self._integer(lambda: self._get(index, path),
                          lambda value: self._put(index, path, value))
        elif kind == "bool":
            value = self._get(index, path)
            if value:
                self._try(self._put(index, path, False if isinstance(value, bool) else 0))
        elif kind == "address":
            self._address(index, path)
        elif kind == "fbytes":
            self._zero_bytes(index, path)
        elif kind == "bytes":
            self._shorten(index, path)
            self._zero_bytes(index, path)
        elif kind == "string":
            self._shorten(index, path)
            self._characters(index, path)
        elif kind == "array":
            assert vt.elem is not None
            if vt.length is None:
                self._shorten(index, path)
            for position in range(len(self._get(index, path))):
                self._value(index, (*path, position), vt.elem)
        elif kind == "tuple":
            for position, field_type in enumerate(vt.fields):
                self._value(index, (*path, position), field_type)

    def _integer(self, get: Callable[[], int], make: Callable[[int], TxSeq]) -> None:
        """An integer toward 0: 0, +-1, one below it, then a binary search between them.

        The search first looks for the smallest power of two that fails by halving the
        range of exponents, then halves the range of values below it: about 8 + k runs
        for a threshold of k bits, where halving the values alone takes as many runs as
        the value has bits (220 for ``10**66``). Every candidate lies between 0 and the
        value, so it fits the value's type.
        """
        value = get()
        if isinstance(value, bool) or not isinstance(value, int) or value == 0:
            return
        sign = 1 if value > 0 else -1
        magnitude = abs(value)
        if self._try(make(0)):
            return
        if magnitude == 1:
            return
        if self._try(make(sign)):
            return
        if magnitude > 2:
            # One below: when it does not fail the value is a boundary already (the usual
            # answer on every pass after the first, from the cache); when it does, the
            # search starts from it.
            if not self._try(make(sign * (magnitude - 1))):
                return
            magnitude -= 1
        low, high = 1, magnitude  # low does not fail, high does
        exp_low, exp_high = 0, magnitude.bit_length()  # 2**exp_high stands for the value
        while exp_high - exp_low > 1:
            middle = (exp_low + exp_high) // 2
            power = 1 << middle
            if power >= high or self._try(make(sign * power)):
                exp_high, high = middle, min(high, power)
            else:
                exp_low, low = middle, power
        while high - low > 1:
            middle = (low + high) // 2
            if self._try(make(sign * middle)):
                high = middle
            else:
                low = middle

    def _address(self, index: int, path: Path) -> None:
        """An address toward 0, the senders and the chain's other named accounts."""
        value = self._get(index, path)
        order = self.space.address_order()
        simpler = order[:order.index(value)] if value in order else order
        for candidate in simpler:
            if self._try(self._put(index, path, candidate)):
                return

    def _shorten(self, index: int, path: Path) -> None:
        """A bytes, string or dynamic array toward empty: all, then halves, ... then one.

        Runs of elements are dropped at positions aligned to their length, later runs
        first, so a long value costs a few runs per halving rather than one per element.
        """
        value = self._get(index, path)
        if not value:
            return
        if self._try(self._put(index, path, value[:0])):
            return
        size = len(value) // 2
        while size >= 1:
            start = (len(self._get(index, path)) - size) // size * size
            while start >= 0:
                value = self._get(index, path)
                if start + size <= len(value):
                    self._try(self._put(index, path, value[:start] + value[start + size:]))
                start -= size
            size //= 2

    def _zero_bytes(self, index: int, path: Path) -> None:
        """A bytes or bytesN value toward zero bytes: all at once, then one at a time."""
        value = self._get(index, path)
        if not any(value):
            return
        if self._try(self._put(index, path, bytes(len(value)))):
            return
        for position in range(len(value)):
            value = self._get(index, path)
            if value[position]:
                self._try(self._put(index, path, value[:position] + b"\0"
                                    + value[position + 1:]))

    def _characters(self, index: int, path: Path) -> None:
        """A string's characters toward ``a``, one at a time."""
        for position in range(len(self._get(index, path))):
            value = self._get(index, path)
            if value[position] != "a":
                self._try(self._put(index, path, value[:position] + "a"
                                    + value[position + 1:]))


def shrink(run: Runner, key: Key, case: TxSeq, limit: int = DEFAULT_SHRINK_LIMIT,
           space: ShrinkSpace | None = None) -> ShrinkResult:
    """Shrink ``case`` while it shows ``key`` (see :class:`Shrinker`)."""
    return Shrinker(run, key, limit, space).shrink(case)


@dataclass
class ShrinkProgress:
    """Where a campaign's shrinking stands, for the progress display and the summary.

    ``out_of_time`` says the campaign's time budget stopped shrinking before every
    finding was shrunk to a fixed point (``cut_short`` of them partly: the smallest failing
    case found so far is kept; the others are left as found).
    """

    total: int
    done: int = 0
    execs: int = 0
    tx_before: int = 0
    tx_after: int = 0
    active: Shrinker | None = None
    interrupted: bool = False
    out_of_time: bool = False
    cut_short: int = 0

    def row(self) -> str:
        """One line: the finding being shrunk, or what shrinking gave."""
        shrinker = self.active
        if shrinker is not None:
            return (f"finding {self.done + 1}/{self.total}: {len(shrinker.original)} -> "
                    f"{len(shrinker.current)} txs, {shrinker.execs:,} execs")
        state = ("interrupted, " if self.interrupted
                 else "out of time, " if self.out_of_time else "")
        return (f"{state}{self.done}/{self.total} findings, {self.tx_before} -> "
                f"{self.tx_after} txs, {self.execs:,} execs")

