"""Harvey's demand-driven sequence fuzzing (§5) as the greybox loop uses it.

In demand-driven mode (configuration A, the default), a round on a seed whose last
transaction ``t`` reads storage is, with probability ``aggressive_probability``, an
*aggressive probe*: one value those reads return becomes an input (an SLOAD override) and is
mutated and predicted like an argument. A probe never joins the corpus, the coverage or the
findings (the state it fakes may be unreachable); when it reaches a path of ``t`` not seen
before, ``t``'s function *demands* longer sequences. Regular mode then mutates the sequence
before a demanding ``t`` too: two mutations in three are structural
(``secant.engine.harvey.sequences.SequenceMutator``), and the others may change any transaction.
Eager mode (configuration D) mutates every sequence structurally and has no probes. In an
invariant suite (``stateful``) demand-driven mode grows every sequence while no function
demands: a handler that reads the system through calls never shows the probes a demand,
yet the suite is sequences by nature; once the signal comes, it decides as elsewhere.

After a structural mutation the loop runs one *follow-up*: input-to-state anywhere in the
new sequence (a value ``SetY(v)`` passed reaches ``Bar``'s ``x == 42`` through storage),
else the last transaction reusing a value of the new prefix.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from secant.engine.corpus import Seed
from secant.engine.harvey.dataflow import SlotKey, links, read_shapes
from secant.engine.harvey.sequences import SEQUENCE_MODES, FunctionKey, Pools, SequenceMutator
from secant.engine.mutators import Comparison, Mutation, Mutator
from secant.types import RunResult, Tx, TxSeq

STRUCTURAL_SHARE = 2 / 3
"""Regular mode: fuzz t's inputs, insert before t, replace t's prefix; two of three change
the sequence."""


class DemandDriven:
    """Which sequences grow, the probes that decide it, and the pools they grow from."""

    def __init__(self, mode: str, mutator: Mutator, max_length: int,
                 aggressive_probability: float, caller_slots: bool = True,
                 stateful: bool = False) -> None:
        if mode not in SEQUENCE_MODES:
            raise ValueError(f"unknown sequence mode {mode!r}; choose one of: "
                             f"{', '.join(SEQUENCE_MODES)}")
        self.mode = mode
        self.stateful = stateful
        self.mutator = mutator
        self.aggressive_probability = aggressive_probability
        self.pools = Pools()
        self.sequence_mutator = SequenceMutator(mutator, self.pools, max_length, caller_slots)
        # Functions (contract, signature) for which aggressive mode found new paths.
        self.demanding: set[FunctionKey] = set()
        # What the demanding functions read, with its mapping shapes, and the (data flow's
        # ``flow_key``, number of demanding functions) it was gathered at
        # (``sets_up_demand``; both only grow).
        self._wanted: tuple[set[SlotKey], set[tuple[Any, int]]] = (set(), set())
        self._wanted_at: tuple[tuple[int, int, int], int] | None = None

    # ------------------------------------------------------------------ demand
    def demands(self, tx: Tx) -> bool:
        """Whether ``tx``'s function demands longer sequences."""
        return (tx.to, tx.function) in self.demanding

    def grows(self, case: TxSeq) -> bool:
        """Whether a round on ``case`` mutates its structure (regular or eager mode)."""
        return self.mode == "eager" or (self.mode == "demand" and (
            self.demands(case[-1]) or self.stateful and not self.demanding))

    def wants_probe(self, seed: Seed, rng: random.Random) -> bool:
        """Whether this step of a round on ``seed`` is an aggressive probe.

        A probe only tells whether t demands sequences: once it does, further probes of t
        cannot add anything.
        """
        return (self.mode == "demand" and bool(seed.reads)
                and rng.random() < self.aggressive_probability
                and not self.demands(seed.case[-1]))

    def probe(self, seed: Seed, rng: random.Random) -> tuple[Seed, Mutation] | None:
        """Aggressive mode: one read storage slot of the last transaction, mutated.

        The base input overrides every read slot with the value it held, so it behaves
        like the seed and differs from the probe in one location (prediction can learn).
        """
        index = len(seed.case) - 1
        tx = seed.case[index]
        base_case = seed.case[:index] + (replace(tx, storage=seed.reads),)
        slot = seed.reads[rng.randrange(len(seed.reads))][0]
        mutation = self.mutator.mutate_at(base_case, ("slot", index, slot), rng)
        if mutation is None:
            return None
        return replace(seed, case=base_case), mutation

    def probe_hit(self, case: TxSeq) -> None:
        """A probe of ``case`` reached a new path of its last transaction."""
        last = case[-1]
        self.demanding.add((last.to, last.function))

    # ------------------------------------------------------------------ pools
    def learn(self, result: RunResult) -> None:
        """Learn the data flow of a run that joined the corpus."""
        self.sequence_mutator.learn_dataflow(result)

    def offer(self, result: RunResult, covered_more: bool) -> None:
        """Pool a run that increased coverage or set up a demanding function's state."""
        if self.mode != "off" and (covered_more or self.sets_up_demand(result)):
            self.pools.offer(result.case, result.state_hash)

    def sets_up_demand(self, result: RunResult) -> bool:
        """Whether a run reached a new state in slots that demanding functions read.

        Harvey's pools take runs that increased coverage and reached a new state. A prefix
        that only moves the state (a maze position, ``x = y``) covers nothing new, yet it
        is exactly what a demanding function needs before it; such runs join the pools
        too (an extension: without it, a ten-move walk has no stepping stones).
        """
        if not self.demanding or result.state_hash in self.pools.states:
            return False
        sequences = self.sequence_mutator
        gathered_at = (sequences.flow_key, len(self.demanding))
        if self._wanted_at != gathered_at:
            wanted: set[SlotKey] = set()
            for key in self.demanding:
                wanted |= sequences.reads.get(key, set())
            self._wanted = (wanted, read_shapes(wanted))
            self._wanted_at = gathered_at
        wanted, shapes = self._wanted
        return links(sequences.written_keys(result), wanted, shapes)

    # ------------------------------------------------------------------ mutations
    def structural(self, case: TxSeq, rng: random.Random, corpus: Sequence[Seed]
                   ) -> Mutation | None:
        """A structural mutation of a growing ``case`` (one round step in three is not)."""
        if rng.random() >= STRUCTURAL_SHARE:
            return None
        others = [corpus[rng.randrange(len(corpus))].case] if corpus else None
        structural = self.sequence_mutator.mutate(case, rng, self.mode == "demand", others)
        if structural is None:
            return None
        return Mutation(structural[0], None, structural[1])

    def follow_up(self, case: TxSeq, missed: Sequence[Comparison], rng: random.Random,
                  clock: tuple[int, int] = (0, 0)) -> Mutation | None:
        """The follow-up of a structural mutation (see the module docstring).

        ``clock``: the (block number, timestamp) its last transaction began at.
        """
        follow = self.mutator.input_to_state(case, missed, rng, anywhere=True, clock=clock)
        if follow is None:
            # Nothing to replace: let the last transaction reuse a value the new prefix
            # passed (an answer given to one call and expected by the next).
            follow = self.mutator.reuse(case, rng, len(case) - 1)
        return follow
