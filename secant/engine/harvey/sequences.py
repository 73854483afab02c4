"""Transaction sequences: Harvey's demand-driven growth and sFuzz's sequence mutations.

Harvey §5. A test case is a sequence whose last transaction ``t`` is the one under test;
the transactions before it only set up the persistent state, so path ids span ``t`` alone.
Sequences grow *on demand*: a function demands longer sequences once aggressive mode (SLOAD
overrides, see ``secant.engine.harvey.demand``) showed that a different persistent state opens a new
path of it. For a demanding ``t``, regular mode then

* fuzzes the inputs of ``t`` or of a transaction before it (one parameter, as always);
* inserts a transaction before ``t`` (from the transaction pool, or a fresh call);
* replaces the transactions before ``t`` by a sequence from the sequence pool.

The pools hold what increased coverage *and* left the storage in a state not seen before.

Insertions can follow the data flow (an improvement over Harvey's blind insertion): the
mutator learns, per function, which storage slots it writes and, as a last transaction,
which it reads; ``insert-writer`` puts before a transaction a call of a function that writes
a slot that transaction reads. Stacked, this builds ``SetY(y); CopyY(); Bar()`` for a ``Bar``
that reads ``x``, ``CopyY`` writing ``x`` from ``y`` and ``SetY`` writing ``y``.

Slots of mappings keyed by accounts (``balances[msg.sender]``, ``allowance[owner][spender]``)
are named by who keys them, relative to the transaction (``secant.engine.harvey.dataflow``):
``deposit()`` by one sender then writes what ``withdraw()`` by another reads, and the
inserted writer is aligned with the reader (its sender, or the address argument keying
the entry, becomes the account the reader's entry belongs to).

sFuzz (§3.3, Table 1) adds pruneMethodCall, addMethodCall, swapMethodCall and crossover of
two sequences at a cut point. In demand-driven mode they act on the prefix and keep ``t``
last; in eager mode (Harvey's configuration D) they act on the whole sequence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from secant.engine.harvey.dataflow import (
    SlotKey,
    SlotNames,
    align,
    entry_pairs,
    links,
    read_shapes,
)
from secant.engine.mutators import Mutator
from secant.types import RunResult, Tx, TxSeq, storage_slot

FunctionKey = tuple[int | None, str]
"""(contract address or None for the main one, signature)."""

SEQUENCE_MODES = ("demand", "eager", "off")


@dataclass
class PoolStats:
    """How the pools grew."""

    offered: int = 0
    accepted: int = 0


class Pools:
    """Transactions and sequences that increased coverage and reached a new state.

    Bounded: past ``limit`` entries the oldest are dropped (deterministic). Aggressive-mode
    overrides are stripped: pooled inputs are real transactions.
    """

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self.transactions: list[Tx] = []
        self.sequences: list[TxSeq] = []
        # The pooled transactions of each function, in pool order.
        self.by_function: dict[tuple[int | None, str], list[Tx]] = {}
        # The post-deployment state (nothing written) is known from the start.
        self.states: set[int] = {0}
        self.stats = PoolStats()

    def offer(self, case: TxSeq, state_hash: int) -> bool:
        """Keep ``case`` (a run that increased coverage) if its final state is new."""
        self.stats.offered += 1
        if not case or state_hash in self.states:
            return False
        self.states.add(state_hash)
        clean = tuple(replace(tx, storage=()) if tx.storage else tx for tx in case)
        self.transactions.append(clean[-1])
        self.sequences.append(clean)
        last = clean[-1]
        self.by_function.setdefault((last.to, last.function), []).append(last)
        if len(self.transactions) > self.limit:
            dropped = self.transactions.pop(0)
            self.by_function[(dropped.to, dropped.function)].pop(0)
        if len(self.sequences) > self.limit:
            del self.sequences[0]
        self.stats.accepted += 1
        return True


class SequenceMutator:
    """Structural mutations of a sequence (the one-parameter ones are ``Mutator``'s)."""

    OPERATORS = ("insert", "insert-writer", "replace-prefix", "prune", "add", "swap",
                 "crossover")
    # Data-flow insertions are the ones that build state on purpose: drawn three times as
    # often as each other operator (they give up, returning None, when nothing is known).
    _DRAW = ("insert", "insert-writer", "insert-writer", "insert-writer", "replace-prefix",
             "prune", "add", "swap", "crossover")

    def __init__(self, mutator: Mutator, pools: Pools, max_length: int = 16,
                 caller_slots: bool = True) -> None:
        self.mutator = mutator
        self.pools = pools
        self.max_length = max_length
        # Data flow through storage, learnt from runs (see the module docstring).
        self.reads: dict[FunctionKey, set[SlotKey]] = {}
        self.writes: dict[FunctionKey, set[SlotKey]] = {}
        # Counts the changes ``learn_dataflow`` made to ``reads`` and ``writes``: what is
        # derived from them (below, and ``DemandDriven``'s union of demanded reads) is kept
        # while ``flow_key`` stays the same.
        self.version = 0
        # Per reader: the functions whose writes link to its reads, and per (reader,
        # writer) the mapping entries that pair up (``align``). Structural mutations ask
        # for them at every insertion, and new knowledge comes with new seeds only.
        self._linked: dict[FunctionKey, list[FunctionKey]] = {}
        self._pairs: dict[tuple[FunctionKey, FunctionKey],
                          list[tuple[tuple[Any, ...], tuple[Any, ...]]]] = {}
        self._derived_from = self.flow_key
        # Mapping entries named by the accounts keying them (none when caller_slots is
        # off: every slot is then a number).
        # The accounts: the senders, the deployed contracts and the zero address (what
        # address arguments mostly hold).
        accounts = list(dict.fromkeys([*mutator.senders, *mutator.dictionary.addresses, 0]))
        self.names = SlotNames(accounts, lambda tx: mutator.spec(tx).types, caller_slots)

    def written_keys(self, result: RunResult) -> set[SlotKey]:
        """The slots every transaction of a run wrote, each named for its transaction."""
        marks, sstores, case = result.write_marks, result.writes, result.case
        name = self.names.name
        keys: set[SlotKey] = set()
        for index, tx in enumerate(case):
            end = marks[index + 1] if index + 1 < len(marks) else len(sstores)
            start = marks[index] if index < len(marks) else end
            keys.update(name(slot, tx) for _, _, slot in sstores[start:end])
        return keys

    def learn_dataflow(self, result: RunResult) -> None:
        """Record the slots each transaction of a run wrote and the last one read."""
        marks, sstores = result.write_marks, result.writes
        known = self._known()
        for index, tx in enumerate(result.case):
            end = marks[index + 1] if index + 1 < len(marks) else len(sstores)
            start = marks[index] if index < len(marks) else end
            if start < end:
                self.writes.setdefault((tx.to, tx.function), set()).update(
                    self.names.name(slot, tx) for _, _, slot in sstores[start:end])
        last = len(result.case) - 1
        reader = result.case[last]
        # A read of a contract the reader calls is named by its slot, as writes are (a
        # handler's calls write and read the system it drives).
        read = {self.names.name(storage_slot(key), reader) for tx, _, key, _ in result.reads
                if tx == last}
        if read:
            self.reads.setdefault((reader.to, reader.function), set()).update(read)
        if self._known() != known:
            self.version += 1

    @property
    def flow_key(self) -> tuple[int, int, int]:
        """Equal while ``reads`` and ``writes`` are unchanged: what is derived from them holds.

        Changes by ``learn_dataflow`` (``version``) and dicts put in their place count.
        """
        return (self.version, id(self.reads), id(self.writes))

    def _known(self) -> tuple[int, int]:
        """How much of the data flow is known (the sets only grow)."""
        return (sum(len(slots) for slots in self.reads.values()) + len(self.reads),
                sum(len(slots) for slots in self.writes.values()) + len(self.writes))

    def writer_chain(self, before: Tx, rng: random.Random, room: int) -> tuple[Tx, ...]:
        """Writers to insert before ``before``, in order.

        One writer of a slot ``before`` reads, then, each time with probability 1/2, a
        writer of what the previous one reads (``SetY(); CopyY()`` before ``Bar()``).
        """
        chain: list[Tx] = []
        current = before
        while len(chain) < room:
            writer = self.writer_tx(current, rng)
            if writer is None:
                break
            chain.insert(0, writer)
            current = writer
            if rng.random() < 0.5:
                break
        return tuple(chain)

    def writer_tx(self, before: Tx, rng: random.Random) -> Tx | None:
        """A call of a function that writes a slot ``before`` reads (pooled or fresh).

        When what links them is a mapping entry keyed by accounts, the writer is aligned
        with ``before`` (``secant.engine.harvey.dataflow.align``): only then is it the same entry.
        """
        reader = (before.to, before.function)
        wanted = self.reads.get(reader)
        if not wanted:
            return None
        flow_key = self.flow_key
        if self._derived_from != flow_key:
            self._linked.clear()
            self._pairs.clear()
            self._derived_from = flow_key
        writers = self._linked.get(reader)
        if writers is None:
            shapes = read_shapes(wanted)
            writers = self._linked[reader] = [key for key, slots in self.writes.items()
                                              if links(slots, wanted, shapes)]
        if not writers:
            return None
        to, signature = writers[rng.randrange(len(writers))]
        pooled = self.pools.by_function.get((to, signature), [])
        if pooled and rng.random() < 0.5:
            writer = pooled[rng.randrange(len(pooled))]
        else:
            spec = self.mutator.spec(Tx(signature, (), 0, to=to))
            writer = self.mutator.random_tx(spec, rng)
        written = self.writes[(to, signature)]
        pairs = self._pairs.get((reader, (to, signature)))
        if pairs is None:
            pairs = self._pairs[(reader, (to, signature))] = entry_pairs(written, wanted)
        return align(writer, written, wanted, before, pairs)

    def writers_of(self, slots: set[int], reader: Tx, rng: random.Random) -> list[Tx]:
        """A fresh call of each function known to write one of ``slots``, for ``reader``.

        Each is aligned with ``reader`` (it writes the entry ``reader`` reads), in the
        order the functions were learnt. Slots are matched by number, whichever
        contract holds them, as everywhere in the data flow.
        """
        wanted = {self.names.name(slot, reader) for slot in slots}
        return self._writers(wanted, reader, rng)

    def writers_for(self, reader: Tx, rng: random.Random, most: int) -> list[Tx]:
        """Up to ``most`` fresh calls of other functions known to write what ``reader`` reads.

        Each is sent by ``reader``'s sender without ether and aligned with ``reader``, in
        the order the functions were learnt: a guard that anyone can open (an owner set by
        a public function, a registration) opens for the one who opened it.
        """
        wanted = self.reads.get((reader.to, reader.function))
        if not wanted:
            return []
        return self._writers(wanted, reader, rng, reader.sender, most)

    def _writers(self, wanted: set[SlotKey], reader: Tx, rng: random.Random,
                 sender: int | None = None, most: int | None = None) -> list[Tx]:
        """Fresh calls of the functions whose learnt writes link to ``wanted``, aligned.

        With ``sender``, each is sent by it without ether, and ``reader``'s own function is
        left out; ``most`` bounds how many.
        """
        found: list[Tx] = []
        for (to, signature), written in self.writes.items():
            if most is not None and len(found) >= most:
                break
            if sender is not None and (to, signature) == (reader.to, reader.function):
                continue
            if not links(written, wanted):
                continue
            spec = self.mutator.spec(Tx(signature, (), 0, to=to))
            writer = self.mutator.random_tx(spec, rng, sender=sender)
            if sender is not None:
                writer = replace(writer, value=0)
            found.append(align(writer, written, wanted, reader))
        return found

    def fresh_tx(self, rng: random.Random) -> Tx:
        """A new call of a random function, or a pooled transaction."""
        pool = self.pools.transactions
        if pool and rng.random() < 0.5:
            return pool[rng.randrange(len(pool))]
        functions = self.mutator.functions
        return self.mutator.random_tx(functions[rng.randrange(len(functions))], rng)

    def mutate(self, case: TxSeq, rng: random.Random, keep_last: bool,
               others: list[TxSeq] | None = None) -> tuple[TxSeq, str] | None:
        """1, 2 or 4 stacked structural mutations and their names, or None (no change).

        Stacking matters: a prefix such as ``SetY(y); CopyY()`` changes nothing observable
        until both calls are there, so one insertion at a time never gets a foothold.
        With ``keep_last`` (demand-driven mode) the last transaction stays where it is and
        only the prefix changes. ``others`` are corpus sequences for crossover.
        """
        current = case
        names: list[str] = []
        for _ in range(1 << rng.randint(0, 2)):
            step = self.mutate_once(current, rng, keep_last, others)
            if step is not None:
                current = step[0]
                names.append(step[1])
        if current == case:
            return None
        return current, "+".join(names)

    def mutate_once(self, case: TxSeq, rng: random.Random, keep_last: bool,
                    others: list[TxSeq] | None = None) -> tuple[TxSeq, str] | None:
        """One structural mutation (see ``OPERATORS``) and its name, or None."""
        operator = self._DRAW[rng.randrange(len(self._DRAW))]
        # Replacing "the transactions before t" names a t even in eager mode.
        split = keep_last or operator == "replace-prefix"
        head, tail = (case[:-1], case[-1:]) if split else (case, ())
        room = self.max_length - len(tail)
        if operator in ("insert", "add", "insert-writer"):
            if len(head) >= room:
                operator = "prune"
            else:
                at = rng.randrange(len(head) + 1)
                whole = head + tail
                tx: Tx | None
                if operator == "insert-writer":
                    chain = (self.writer_chain(whole[at], rng, room - len(head))
                             if at < len(whole) else ())
                    if not chain:
                        return None
                    head = head[:at] + chain + head[at:]
                else:
                    tx = self.fresh_tx(rng) if operator == "add" else self._pooled_tx(rng)
                    head = head[:at] + (tx,) + head[at:]
        if operator == "replace-prefix":
            prefix = self._pooled_sequence(rng)
            if prefix is None:
                return None
            head = prefix[-room:] if room > 0 else ()
        elif operator == "prune":
            if not head:
                return None
            at = rng.randrange(len(head))
            head = head[:at] + head[at + 1:]
        elif operator == "swap":
            if len(head) < 2:
                return None
            i, j = rng.sample(range(len(head)), 2)
            items = list(head)
            items[i], items[j] = items[j], items[i]
            head = tuple(items)
        elif operator == "crossover":
            if not others:
                return None
            other = others[rng.randrange(len(others))]
            other_head = other[:-1] if keep_last else other
            cut = rng.randrange(len(head) + 1)
            other_cut = rng.randrange(len(other_head) + 1)
            head = (head[:cut] + other_head[other_cut:])[:room]
        new = head + tail
        if not new or new == case:
            return None
        return new, operator

    def _pooled_tx(self, rng: random.Random) -> Tx:
        pool = self.pools.transactions
        return pool[rng.randrange(len(pool))] if pool else self.fresh_tx(rng)

    def _pooled_sequence(self, rng: random.Random) -> TxSeq | None:
        pool = self.pools.sequences
        return pool[rng.randrange(len(pool))] if pool else None
