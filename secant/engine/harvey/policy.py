"""Harvey's policy: Algorithm 1 with the learning of Algorithm 2, sequences and adaptive seeds.

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

The algorithm is written as it reads, as one generator (``_rounds``): where it runs an
input it yields a :class:`~secant.engine.policy.Proposal` and receives what the run did.
``observe`` feeds the result back at once, so the round goes on exactly as a loop that
called the executor itself would (the same random draws in the same order).

Sequences (Harvey §5): ``secant.engine.harvey.demand`` decides which rounds are aggressive
probes and which sequences grow; ``secant.engine.harvey.sequences`` mutates their
structure. LEARN is ``secant.engine.harvey.prediction``.

Invariant suites (``InputSpace.stateful``: properties are checked after every transaction,
as forge's invariants and Echidna's properties are) are sequences by nature, and the
demand signal may never come: a handler reads the system's storage through calls, which
the aggressive probes cannot override. There every sequence grows while no function
demands (``DemandDriven.stateful``), and a share of the executions (:data:`RANDOM_RUN_SHARE`) goes
to random runs of the longest length, each transaction a fresh call or a pooled one, as
forge and Echidna build every run: the first comes right after RUNSEEDS.

sFuzz's adaptive strategy (``secant.engine.harvey.adaptive``): next to the corpus, the
closest test case to every just-missed branch; a round picks one of them with probability
``adaptive_share`` (by default, as in sFuzz, in proportion to their number among all seeds).

The concolic stage (``secant.engine.harvey.concolic``) runs between rounds when the
configuration gives it a share and the campaign's context can replay cases symbolically
(:func:`harvey`, the campaign's default policy factory).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from secant.engine.corpus import Seed
from secant.engine.failures import stage_part
from secant.engine.harvey.adaptive import AdaptiveSeeds, BranchSide, Closest, K
from secant.engine.harvey.concolic import ConcolicStage
from secant.engine.harvey.demand import DemandDriven
from secant.engine.harvey.prediction import Pending, Predictor
from secant.engine.mutators import Mutation, Mutator
from secant.engine.policy import (
    InputSpace,
    JustMissed,
    LoopState,
    Novelty,
    Policy,
    PolicyContext,
    Proposal,
    Stage,
    SymbolicTracer,
)
from secant.engine.schedulers import PowerSchedule, make_schedule
from secant.engine.secant_method import PredictionStats
from secant.types import RunResult, Tx, TxSeq

if TYPE_CHECKING:
    from secant.engine.config import FuzzConfig
    from secant.symbolic.records import SymbolicRun

Outcome = tuple[RunResult, Novelty]
Rounds = Generator[Proposal, Outcome, None]

RANDOM_RUN_SHARE = 0.1
"""In an invariant suite, the share of executions that are random runs of the longest
length (module docstring)."""

FUNDING = 10 ** 18
"""The ether a trusted sender pays a contract before a funded seed's call (one ether)."""

ESCALATIONS = 3
"""At most this many writers tried before each funded seed's call (``_funded_seeds``)."""

RETURNED_BYTES = 128
"""Return data up to this size feeds the dictionary, word by word (``_harvest``)."""

AIM_TRIES = 8
"""How many times a campaign aims one write site at the target slot (``_aim_writes``)."""

AIM_MUTATIONS = 6
"""How many one-parameter changes one aim tries before it gives up (``_aim_writes``)."""

NEAR_SLOTS = 2 ** 32
"""A slot this close to one a site wrote before is the next element of the same array."""

WRITTEN_SLOTS = 64
"""How many slots per write site ``_aim_writes`` remembers as written."""

STAKE = 10 ** 15
"""What an attacker pays a payable writer in a funded seed (a thousandth of ``FUNDING``)."""


@dataclass
class HarveyStats:
    """The policy's own counters (the progress display and the summary read them)."""

    prediction: PredictionStats
    havoc: int = 0
    predicted_new_paths: int = 0
    probe_hits: int = 0
    adaptive_picks: int = 0
    structural: int = 0


class HarveyPolicy(Policy):
    """Harvey's choice of the next input (see the module docstring)."""

    name = "harvey"

    def __init__(self, space: InputSpace, schedule: PowerSchedule | None = None,
                 context: PolicyContext | None = None) -> None:
        self.space = space
        self.context = context
        self.dictionary = space.dictionary
        self.mutator = Mutator(space.functions, space.senders, space.dictionary,
                               max_value=space.max_value, reads_time=space.reads_time,
                               reads_number=space.reads_number)
        self._schedule = schedule
        self.harvey = HarveyStats(PredictionStats())
        self._outstanding: Proposal | None = None
        self._next: Proposal | None = None
        self._rounds: Rounds | None = None
        self._ended = False  # the loop ran out of things to propose
        # The concolic stage (secant.engine.harvey.concolic), when the configuration and
        # the context give one: it needs the adaptive seeds' just-missed sides.
        self.concolic: ConcolicStage | None = None
        # Stages run between rounds, in order (the concolic stage first, when there is
        # one); a factory may add its own before the policy is bound.
        self.stages: list[Stage] = []

    def bind(self, fuzzer: LoopState) -> None:
        """Attach to the fuzzer: its rng, coverage and configuration."""
        super().bind(fuzzer)
        config = fuzzer.config
        self.config = config
        self.rng = fuzzer.rng
        if config.max_time_delay is not None:
            self.mutator.max_time_delay = config.max_time_delay
        if config.max_block_delay is not None:
            self.mutator.max_block_delay = config.max_block_delay
        self.schedule = self._schedule or make_schedule(config.schedule)
        self.sequences = DemandDriven(config.sequences, self.mutator,
                                      config.max_sequence_length,
                                      config.aggressive_probability, config.caller_slots,
                                      stateful=self.space.stateful)
        self.random_runs = 0  # executions spent on random runs (invariant suites)
        # For ``_aim_writes``: slots written per write site, and the tries spent per site.
        self._written: dict[tuple[bytes, int], set[int]] = {}
        self._aims: dict[tuple[bytes, int], int] = {}
        self.predictor = Predictor(self.mutator, fuzzer.coverage, fuzzer.sstore_target,
                                   config.predict_iterations, self.rng,
                                   self.harvey.prediction, _aims(self.context))
        self.adaptive = AdaptiveSeeds() if config.adaptive else None
        context = self.context
        if (self.concolic is None and config.symbolic_share > 0 and context is not None
                and context.symbolic is not None):
            self.concolic = concolic_stage(context, context.symbolic, config)
        if self.concolic is not None and self.concolic not in self.stages:
            self.stages.insert(0, self.concolic)
        for stage in self.stages:
            stage.bind(self, fuzzer)

    # ------------------------------------------------------------------ the policy seam
    def propose(self) -> Proposal | None:
        """The next input of the current round (a new round or RUNSEEDS when it is done)."""
        if self._next is None:
            if self._rounds is None:
                if self._ended:
                    return None
                self._rounds = self._loop()
            self._next = next(self._rounds, None)
        proposal, self._next = self._next, None
        self._outstanding = proposal
        return proposal

    def observe(self, proposal: Proposal, result: RunResult, novelty: Novelty) -> None:
        """Bookkeeping of every run; for this policy's own proposal, the round goes on."""
        if proposal.probe:
            if novelty.new_path:
                self.harvey.probe_hits += 1
                self.sequences.probe_hit(proposal.case)
        else:
            self._learn_from(result, novelty)
        if proposal is self._outstanding and self._rounds is not None:
            self._outstanding = None
            try:
                self._next = self._rounds.send((result, novelty))
            except StopIteration:
                # The loop ends only when there is nothing more to propose.
                self._next = None
                self._rounds = None
                self._ended = True

    def _learn_from(self, result: RunResult, novelty: Novelty) -> None:
        """Schedule, dictionary, data-flow, pool and adaptive-seed bookkeeping of a run."""
        self.schedule.on_execution(result.path_id)
        if novelty.seed is not None:
            self._harvest(result)
            self.sequences.learn(result)
        self.sequences.offer(result, novelty.covered_more)
        adaptive = self.adaptive
        if adaptive is not None:
            coverage = self.fuzzer.coverage
            if novelty.new_edges:
                adaptive.forget_covered(coverage.edges)
            adaptive.observe(result, coverage.edges, self.fuzzer.stats.execs)

    def _harvest(self, result: RunResult) -> None:
        """Operands of just-missed comparisons, stored and returned words feed the dictionary.

        Only just-missed comparisons: one operand is usually the constant the input must
        match, while harvesting every comparison floods the bounded dictionary with values
        derived from the inputs themselves.
        """
        add = self.dictionary.add
        edges = self.fuzzer.coverage.edges
        for code_hash, pc, taken, relation, lhs, rhs in result.branches:
            if (relation != "ne" or rhs != 0) and (code_hash, pc, not taken) not in edges:
                add(lhs)
                add(rhs)
        # What the case left in storage and what its calls returned: a stake, a handle, an
        # id or a hash one call made is what a later call must be given (forge's
        # dictionary keeps both too).
        for word in result.stored:
            if word > 1:
                add(word)
        for outcome in result.outcomes:
            output = outcome.output
            if outcome.success and output and len(output) <= RETURNED_BYTES:
                for start in range(0, len(output) - 31, 32):
                    word = int.from_bytes(output[start:start + 32], "big")
                    if word > 1:
                        add(word)

    # ------------------------------------------------------------------ the algorithm
    def _loop(self) -> Rounds:
        """RUNSEEDS while the corpus is empty (or for what it does not call), then rounds."""
        fuzzer = self.fuzzer
        if not self.mutator.functions:
            # Nothing to call: the one case there is, the deployed state (its properties).
            if not fuzzer.exhausted():
                yield Proposal((), "init")
            return
        # A corpus imported before the first round (a resumed campaign) may not call every
        # function: those it does not call (new since, or never reached) start as RUNSEEDS.
        called = {(tx.to, tx.function) for seed in fuzzer.corpus.seeds for tx in seed.case}
        if called:
            for spec in self.mutator.functions:
                if (spec.to, spec.signature) not in called and not fuzzer.exhausted():
                    yield Proposal((self.mutator.random_tx(spec, self.rng),), "init")
        while not fuzzer.exhausted():
            if not fuzzer.corpus.seeds:
                for spec in self.mutator.functions:
                    if fuzzer.exhausted():
                        return
                    yield Proposal((self.mutator.random_tx(spec, self.rng),), "init")
                yield from self._funded_seeds()
                continue
            yield from self._random_runs()
            for stage in self.stages:
                if not stage.switched_off:
                    yield from self._stage(stage)
            yield from self._round()

    def _funded_seeds(self) -> Rounds:
        """RUNSEEDS from a funded state: a trusted sender pays, then a call by an attacker.

        Each function that takes no ether is called after a trusted sender paid the
        contract through a payable function, by the attacker side when there is one. A
        contract that holds what its users paid and can send ether may give it to the
        wrong caller (SWC-105), and a payout's path is often the same whether the contract
        holds ether or not, so neither coverage nor Harvey's demand (storage reads) would
        ever put a payment before it. One case per function, after the usual seeds.
        """
        space, rng, fuzzer = self.space, self.rng, self.fuzzer
        payable = [spec for spec in self.mutator.functions if spec.payable]
        trusted = [sender for sender in space.senders if sender not in space.untrusted]
        if not (space.pays_out and payable and trusted):
            return
        callers = [s for s in space.senders if s in space.untrusted] or list(space.senders)
        for index, spec in enumerate(f for f in self.mutator.functions if not f.payable):
            if fuzzer.exhausted():
                return
            pay = self.mutator.random_tx(payable[index % len(payable)], rng,
                                         sender=trusted[index % len(trusted)])
            pay = replace(pay, value=max(pay.value, min(FUNDING, space.max_value)))
            call = self.mutator.random_tx(spec, rng, sender=callers[index % len(callers)])
            yield Proposal((pay, call), "init")
            # What guards the call (an owner, a role, a registered account) may be open to
            # anyone: the same caller first calls each function known to write what the
            # call reads. Coverage never asks for this: the deployer already took the
            # guarded path, so the attacker taking it is no new path. A writer that takes
            # ether gets a small stake, and the call then runs twice: a credit that is paid
            # out and never cleared pays again, from the others' ether.
            for writer in self.sequences.sequence_mutator.writers_for(
                    call, rng, ESCALATIONS):
                if fuzzer.exhausted():
                    return
                if self.mutator.spec(writer).payable:
                    stake = replace(writer, value=min(STAKE, space.max_value))
                    result, _ = yield Proposal((pay, stake, call, call), "init")
                else:
                    result, _ = yield Proposal((pay, writer, call), "init")
                yield from self._aim_writes(result, False)

    def _random_runs(self) -> Rounds:
        """In an invariant suite, random runs of the longest length up to their share."""
        fuzzer = self.fuzzer
        if not self.space.stateful or self.sequences.mode == "off":
            return
        length = self.config.max_sequence_length
        while (self.random_runs <= RANDOM_RUN_SHARE * fuzzer.stats.execs
               and not fuzzer.exhausted()):
            fresh = self.sequences.sequence_mutator.fresh_tx
            case = tuple(fresh(self.rng) for _ in range(length))
            self.random_runs += 1
            yield Proposal(case, "random")

    def _stage(self, stage: Stage) -> Rounds:
        """Between rounds: the cases a stage gives, until it has no more for now.

        A stage is optional: when it raises (the concolic stage's symbolic replay, z3, its
        bookkeeping) it is switched off for the rest of the run and the rounds go on
        without it.
        """
        fuzzer = self.fuzzer
        while not fuzzer.exhausted():
            try:
                case = stage.next_case()
            except Exception as exc:  # the stage's bug: the campaign goes on without it
                self._stage_failed(stage, exc)
                return
            if case is None:
                return
            # Outside the ``try``: what the loop throws into the generator is not the stage's.
            result, novelty = yield Proposal(case, stage.origin)
            try:
                stage.ran(result, novelty)
            except Exception as exc:
                self._stage_failed(stage, exc)
                return

    def _stage_failed(self, stage: Stage, error: Exception) -> None:
        """Switch a stage off for the rest of the run and record why."""
        stage.switched_off = True
        self.fuzzer.switch_off(stage_part(stage.name), error)

    @property
    def concolic_on(self) -> bool:
        """Whether the concolic stage is there and not switched off."""
        return self.concolic is not None and not self.concolic.switched_off

    def state_writers(self, case: TxSeq, index: int, slots: set[tuple[int, int]]
                      ) -> list[Tx]:
        """For the concolic stage: calls that write ``slots``, read by ``case[index]``.

        The stage puts one before ``case[index]`` and ends the case there: there must be
        room for ``index + 2`` transactions.
        """
        if index + 2 > self.config.max_sequence_length:
            return []
        return self.sequences.sequence_mutator.writers_of({slot for _, slot in slots},
                                                          case[index], self.rng)

    def _round(self) -> Rounds:
        """One round of Alg. 2 on a picked input."""
        fuzzer = self.fuzzer
        seed, max_energy, adaptive = yield from self._pick_seed()
        if seed.costs is None and not (yield from self._restore_costs(seed)):
            return
        fuzzer.corpus.costs.touch(seed)
        fuzzer.events.on_round(seed.case)
        rng = self.rng
        config = self.config
        energy = 0
        pending: Pending | None = None
        while (energy < max_energy or pending is not None) and not fuzzer.exhausted():
            if pending is not None:
                current, pending = pending, None
                result, novelty = yield Proposal(current.case, "prediction", current.probe,
                                                 adaptive)
                if novelty.seed is not None:
                    self.harvey.predicted_new_paths += 1
                pending = self.predictor.after_prediction(current, result)
            elif self.sequences.wants_probe(seed, rng):
                probe = self.sequences.probe(seed, rng)
                if probe is not None:
                    base, probed = probe
                    result, _ = yield Proposal(probed.case, "aggressive", True, adaptive)
                    if energy < max_energy and config.predict:
                        pending = self.predictor.predict(base, probed, result, probe=True)
            else:
                proposed = self._mutate(seed)
                if proposed is None:
                    energy += 1
                    continue
                origin = ("havoc" if proposed.operator == "havoc" else
                          "sequence" if proposed.location is None else "mutation")
                result, _ = yield Proposal(proposed.case, origin, False, adaptive)
                if origin == "sequence":
                    energy += yield from self._follow_up(result, adaptive)
                    energy += yield from self._aim_writes(result, adaptive)
                elif energy < max_energy and config.predict:
                    pending = self.predictor.predict(seed, proposed, result)
            energy += 1

    def _pick_seed(self) -> Generator[Proposal, Outcome, tuple[Seed, int, bool]]:
        """A seed, its energy and whether it is adaptive.

        The schedule's pick, or an adaptive seed (sFuzz), whose costs may take one more run.
        """
        adaptive = self.adaptive
        corpus = self.fuzzer.corpus
        if adaptive is not None and len(adaptive):
            share = self.config.adaptive_share
            if share is None:
                share = len(adaptive) / (len(adaptive) + len(corpus))
            if self.rng.random() < share:
                picked = adaptive.pick(self.rng)
                if picked is not None:
                    seed = yield from self._adaptive_seed(picked[1])
                    if seed is not None:
                        self.harvey.adaptive_picks += 1
                        return seed, self.schedule.base_energy, True
        self.fuzzer.refresh_distances()
        index = self.schedule.choose(corpus.stats, self.rng)
        seed = corpus[index]
        return seed, self.schedule.energy(corpus.stats, index), False

    def _adaptive_seed(self, closest: Closest) -> Generator[Proposal, Outcome, Seed | None]:
        """The seed object of an adaptive test case (its costs come from one more run)."""
        if closest.seed is not None:
            return closest.seed
        fuzzer = self.fuzzer
        if fuzzer.exhausted():
            return None
        result, novelty = yield Proposal(closest.case, "adaptive")
        seed = novelty.seed
        if seed is None:
            seed = fuzzer.make_seed(result, "adaptive", closest.found_at)
            fuzzer.corpus.costs.admit(seed)  # held within the corpus's budget too
        closest.seed = seed
        return seed

    def _restore_costs(self, seed: Seed) -> Generator[Proposal, Outcome, bool]:
        """Run a seed whose prediction material was dropped (``CostMemory``) once more.

        One execution: a case runs from the same deployed state every time, so the cost
        vector and the reads are the ones it had; its just-missed comparisons are those
        whose other side is still uncovered now. False when the budget is spent.
        """
        fuzzer = self.fuzzer
        if fuzzer.exhausted():
            return False
        result, _ = yield Proposal(seed.case, "costs")
        fuzzer.restore_material(seed, result)
        return True

    def _follow_up(self, result: RunResult, adaptive: bool
                   ) -> Generator[Proposal, Outcome, int]:
        """After a structural mutation, its follow-up (``DemandDriven.follow_up``).

        Returns the executions spent (0 or 1).
        """
        fuzzer = self.fuzzer
        if fuzzer.exhausted():
            return 0
        follow = self.sequences.follow_up(result.case, fuzzer.missed_comparisons(result),
                                          self.rng, result.clock)
        if follow is None:
            return 0
        yield Proposal(follow.case, "sequence", False, adaptive)
        return 1

    def _aim_writes(self, result: RunResult, adaptive: bool
                    ) -> Generator[Proposal, Outcome, int]:
        """After a structural mutation, aim its last transaction's writes at the target slot.

        Harvey finds writes whose slot the inputs steer by minimising their distance to a
        random target slot, but only on corpus seeds, and a new prefix that makes a write
        steerable (an array whose length wrapped below zero, then a write at any index)
        takes no new path: the write's branch was covered with a small index before. So
        when a structural mutation makes a write site write a slot far from every slot it
        wrote before (not the next element of an array), the run becomes a seed for a
        moment: one parameter of its last transaction is changed and
        the secant step aims at the target through the write's distance. Each site gets
        ``AIM_TRIES`` such tries in a campaign. Returns the executions spent.
        """
        fuzzer = self.fuzzer
        target = fuzzer.sstore_target
        last = len(result.case) - 1
        if target is None or not self.config.predict or not result.outcomes[last].success:
            return 0
        marks, writes = result.write_marks, result.writes
        start = marks[last] if last < len(marks) else len(writes)
        fresh: list[tuple[bytes, int]] = []
        for code_hash, pc, slot in writes[start:]:
            site = (code_hash, pc)
            seen = self._written.setdefault(site, set())
            if slot in seen:
                continue  # the usual case: a variable written again
            if (self._aims.get(site, 0) < AIM_TRIES
                    and all(abs(slot - other) > NEAR_SLOTS for other in seen)):
                fresh.append(site)
            if len(seen) < WRITTEN_SLOTS:
                seen.add(slot)
        if not fresh:
            return 0
        for site in dict.fromkeys(fresh):
            self._aims[site] = self._aims.get(site, 0) + 1
        seed = fuzzer.make_seed(result, "sequence", fuzzer.stats.execs)
        spent = 0
        pending = None
        # A change of a parameter the slot does not depend on teaches nothing: a few tries.
        for _ in range(AIM_MUTATIONS):
            mutation = self.mutator.mutate(seed.case, self.rng, last)
            if mutation is None or mutation.location is None or fuzzer.exhausted():
                continue
            aimed, _ = yield Proposal(mutation.case, "mutation", False, adaptive)
            spent += 1
            pending = self.predictor.predict(seed, mutation, aimed, writes=True)
            if pending is not None:
                break
        while pending is not None and not fuzzer.exhausted():
            aimed, _ = yield Proposal(pending.case, "prediction", False, adaptive)
            spent += 1
            pending = self.predictor.after_prediction(pending, aimed)
        return spent

    def _mutate(self, seed: Seed) -> Mutation | None:
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
            structural = self.sequences.structural(case, rng, self.fuzzer.corpus.seeds)
            if structural is not None:
                self.harvey.structural += 1
                return structural
            if index and rng.random() < 0.5:
                index = rng.randrange(index)
        if len(case) > 1 and rng.random() < 0.1:
            reused = self.mutator.reuse(case, rng, index)
            if reused is not None:
                return reused
        if seed.comparisons and rng.random() < self.config.input_to_state_probability:
            mutation = self.mutator.input_to_state(case, seed.comparisons, rng, index,
                                                   clock=seed.clock)
            if mutation is not None:
                return mutation
        if rng.random() < self.config.havoc_probability:
            self.harvey.havoc += 1
            return self.mutator.havoc(case, rng, index)
        return self.mutator.mutate(case, rng, index)

    # ------------------------------------------------------------------ reporting
    def summary(self) -> dict[str, Any]:
        """Prediction, sequence and adaptive-seed counters for ``summary.json``."""
        stats = self.harvey
        fuzzer = self.fuzzer
        corpus = fuzzer.corpus
        return {
            "prediction": {
                "attempts": stats.prediction.attempts,
                "success": stats.prediction.success,
                "fail": stats.prediction.fail,
                "rested": stats.prediction.rested,
                "rate": round(stats.prediction.rate, 4),
                "new_paths": stats.predicted_new_paths,
            },
            "sequences": {
                "mode": self.config.sequences,
                "lengths": corpus.lengths(),
                "demanding": sorted(f for _, f in self.sequences.demanding),
                "aggressive_probes": fuzzer.stats.probes,
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
                "corpus_entries": sum(1 for s in corpus.seeds if s.adaptive),
            },
            **{key: value for stage in self.stages for key, value in stage.summary().items()},
        }

    def progress_rows(self) -> list[tuple[str, str]]:
        """Prediction, sequence and adaptive-seed rows for the live display."""
        stats = self.harvey
        prediction = stats.prediction
        fuzzer = self.fuzzer
        lengths = fuzzer.corpus.lengths()
        rows = [("prediction", f"{prediction.success} ok / {prediction.fail} failed "
                               f"(R = {prediction.rate:.2f})"),
                ("sequence lengths", ", ".join(f"{n}:{c}" for n, c in lengths.items()))]
        if self.config.sequences == "demand":
            probes = fuzzer.stats.probes
            rate = stats.probe_hits / probes if probes else 0.0
            rows.append(("aggressive probes", f"{probes:,} ({stats.probe_hits} new "
                                              f"paths, {rate:.1%}); demanding: "
                                              f"{len(self.sequences.demanding)} function(s)"))
        if self.adaptive is not None:
            from_adaptive = sum(1 for seed in fuzzer.corpus.seeds if seed.adaptive)
            rows.append(("adaptive seeds", f"{len(self.adaptive)} just-missed branches, "
                                           f"{stats.adaptive_picks} picks, {from_adaptive} "
                                           "corpus entries"))
        for stage in self.stages:
            rows.extend(stage.progress_rows())
        return rows

    def just_missed(self) -> dict[BranchSide, JustMissed] | None:
        """SFuzz's adaptive seeds: the closest case of every just-missed side.

        Its distance is the side's flip cost (the adaptive distance less ``K``).
        """
        if self.adaptive is None:
            return None
        return {side: JustMissed(kept.distance - K, kept.case, kept.found_at)
                for side, kept in self.adaptive.best.items()}

    def infeasible(self) -> dict[BranchSide, str]:
        """The sides the concolic stage proved unreachable on the path it solved them on."""
        return dict(self.concolic.infeasible) if self.concolic is not None else {}


def _aims(context: PolicyContext | None) -> Callable[[BranchSide], bool] | None:
    """Which branch sides prediction may aim at: conditions of the source, not refusals.

    A side that only reverts (a ``require`` failing, the compiler's input check) gains
    the search nothing, and behind a handler that wraps its input into range no input
    reaches it (``secant.engine.harvey.prediction``).
    """
    if context is None:
        return None
    worth, refuses = context.worth, context.refuses
    return lambda side: worth(side) and not refuses(side)


def harvey(context: PolicyContext) -> HarveyPolicy:
    """Harvey's policy for a campaign's context (the default ``PolicyFactory``)."""
    return HarveyPolicy(context.space, context=context)


def concolic_stage(context: PolicyContext, symbolic: Callable[[bool], SymbolicTracer],
                   config: FuzzConfig) -> ConcolicStage:
    """The concolic stage of ``config``'s share, replaying cases on a tracer of its own.

    Without a prefix cache: the cache does not weigh the z3 terms a symbolic prefix holds.
    """
    tracer = symbolic(False)

    def trace(case: TxSeq) -> SymbolicRun | None:
        return tracer(case)[1]

    return ConcolicStage(trace, context.space.senders, share=config.symbolic_share,
                         max_time_delta=config.max_time_delay,
                         max_blocks_delta=config.max_block_delay, worth=context.worth)
