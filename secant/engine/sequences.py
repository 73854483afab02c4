"""Transaction sequences: Harvey's demand-driven growth and sFuzz's sequence mutations.

Harvey §5. A test case is a sequence whose last transaction ``t`` is the one under test;
the transactions before it only set up the persistent state, so path ids span ``t`` alone.
Sequences grow *on demand*: a function demands longer sequences once aggressive mode (SLOAD
overrides, see ``secant.engine.demand``) showed that a different persistent state opens a new
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

Slots of mappings keyed by the caller (``balances[msg.sender]``) differ per sender, so the
data flow names them relative to the transaction's sender: ``("caller", base)`` for the
slot of key ``msg.sender`` in the mapping at slot ``base`` (Solidity's
``keccak(key . base)`` and Vyper's ``keccak(base . key)``, for the campaign's senders and
the first ``CALLER_BASES`` base slots). ``deposit()`` by one sender then writes what
``withdraw()`` by another reads, and the inserted writer takes the reader's sender. A write
keyed by an address *argument* (``grant(to)`` writing ``grants[to]``) is named
``("arg", base, path)``; it writes what a ``("caller", base)`` reader reads once the
argument at ``path`` is the reader's sender, which is what the inserted writer gets (its own
sender, an owner perhaps, stays).

sFuzz (§3.3, Table 1) adds pruneMethodCall, addMethodCall, swapMethodCall and crossover of
two sequences at a cut point. In demand-driven mode they act on the prefix and keep ``t``
last; in eager mode (Harvey's configuration D) they act on the whole sequence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

from secant.engine.mutators import Mutator
from secant.engine.values import args_leaves, get_at, set_at
from secant.evm.crypto import keccak256
from secant.targets.contract import ExecResult
from secant.types import Tx, TxSeq

FunctionKey = tuple[int | None, str]
"""(contract address or None for the main one, signature)."""

SlotKey = int | tuple[Any, ...]
"""A storage slot as the data flow sees it: a number, ``("caller", base)`` or
``("arg", base, path)`` (see the module docstring)."""

CALLER_BASES = 64
"""Mapping base slots recognised for caller-keyed slots (state variables 0-63)."""

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
        # The slot of key `sender` in the mapping at `base` -> (sender, base); empty when
        # caller-keyed slots are off (every slot is a number).
        self._caller_slots: dict[int, tuple[int, int]] = {}
        for sender in mutator.senders if caller_slots else ():
            key = sender.to_bytes(32, "big")
            for base in range(CALLER_BASES):
                word = base.to_bytes(32, "big")
                for preimage in (key + word, word + key):  # Solidity, Vyper
                    slot = int.from_bytes(keccak256(preimage), "big")
                    self._caller_slots[slot] = (sender, base)

    def slot_key(self, slot: int, sender: int) -> SlotKey:
        """``slot`` as the data flow names it for a transaction from ``sender``."""
        owner = self._caller_slots.get(slot)
        if owner is not None and owner[0] == sender:
            return ("caller", owner[1])
        return slot

    def write_key(self, slot: int, tx: Tx) -> SlotKey:
        """A slot ``tx`` wrote, as the data flow names it (``"arg"`` keys included)."""
        owner = self._caller_slots.get(slot)
        if owner is None:
            return slot
        account, base = owner
        if account == tx.sender:
            return ("caller", base)
        spec = self.mutator.spec(tx)
        for path, vt in args_leaves(spec.types, tx.args):
            if vt.kind == "address" and get_at(tx.args, path) == account:
                return ("arg", base, path)
        return slot

    def written_keys(self, result: ExecResult) -> set[SlotKey]:
        """The slots every transaction of a run wrote, relative to its sender.

        An argument-keyed write counts as the ``("caller", base)`` slot of its key's owner.
        """
        marks, sstores, case = result.sstore_marks, result.sstores, result.case
        keys: set[SlotKey] = set()
        for index, tx in enumerate(case):
            end = marks[index + 1] if index + 1 < len(marks) else len(sstores)
            start = marks[index] if index < len(marks) else end
            for _, _, slot in sstores[start:end]:
                key = self.write_key(slot, tx)
                keys.add(("caller", key[1]) if isinstance(key, tuple) else key)
        return keys

    def learn_dataflow(self, result: ExecResult) -> None:
        """Record the slots each transaction of a run wrote and the last one read."""
        marks, sstores = result.sstore_marks, result.sstores
        for index, tx in enumerate(result.case):
            end = marks[index + 1] if index + 1 < len(marks) else len(sstores)
            start = marks[index] if index < len(marks) else end
            if start < end:
                self.writes.setdefault((tx.to, tx.function), set()).update(
                    self.write_key(slot, tx) for _, _, slot in sstores[start:end])
        last = len(result.case) - 1
        reader = result.case[last]
        read = {self.slot_key(slot, reader.sender) for tx, _, slot, _ in result.sloads
                if tx == last}
        if read:
            self.reads.setdefault((reader.to, reader.function), set()).update(read)

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

        When what it writes for ``before`` is a caller-keyed slot, it is sent by
        ``before``'s sender; when it is keyed by an address argument, that argument is
        ``before``'s sender (only then is it the same slot).
        """
        wanted = self.reads.get((before.to, before.function))
        if not wanted:
            return None
        writers = [key for key, slots in self.writes.items() if _links(slots, wanted)]
        if not writers:
            return None
        to, signature = writers[rng.randrange(len(writers))]
        pooled = self.pools.by_function.get((to, signature), [])
        if pooled and rng.random() < 0.5:
            writer = pooled[rng.randrange(len(pooled))]
        else:
            spec = self.mutator.spec(Tx(signature, (), 0, to=to))
            writer = self.mutator.random_tx(spec, rng)
        return _aligned(writer, self.writes[(to, signature)], wanted, before.sender)

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


def _links(writes: set[SlotKey], reads: set[SlotKey]) -> bool:
    """Whether some slot of ``writes`` is, or can be made, one of ``reads``."""
    if not writes.isdisjoint(reads):
        return True
    return any(isinstance(key, tuple) and key[0] == "arg" and ("caller", key[1]) in reads
               for key in writes)


def _aligned(writer: Tx, writes: set[SlotKey], reads: set[SlotKey], reader: int) -> Tx:
    """``writer`` changed so that the caller-keyed slots it links to are ``reader``'s.

    Plain slots linking need nothing. Otherwise, a caller-keyed link makes ``reader`` the
    sender; an argument-keyed one puts ``reader`` in that argument.
    """
    if any(not isinstance(key, tuple) for key in writes & reads):
        return writer
    if any(isinstance(key, tuple) for key in writes & reads):
        return writer if writer.sender == reader else replace(writer, sender=reader)
    # In a fixed order: set order of tuples holding strings varies between processes.
    for key in sorted(writes, key=repr):
        if isinstance(key, tuple) and key[0] == "arg" and ("caller", key[1]) in reads:
            path = key[2]
            try:
                return writer.with_args(set_at(writer.args, path, reader))
            except (IndexError, TypeError):
                continue  # a shorter array than the learnt run had: no such argument
    return writer
