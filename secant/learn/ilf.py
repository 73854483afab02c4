"""ILF's fuzzing loop: episodes of transactions from the deployed state, chosen by a policy.

ILF (§4) fuzzes in *episodes*: from the deployed contract it chooses one transaction at a
time, runs it on the state the episode has reached, and after a fixed number of
transactions starts again from the deployed state. Who chooses is the policy:

* ``uniform`` (:class:`UniformChooser`, ILF's π_unif, its baseline): a function, a sender and
  arguments uniformly from their domains, ether uniformly up to the most a transaction may
  carry when the function is payable;
* ``learned`` (:class:`LearnedChooser`, ILF's π_nn): the networks trained by imitation of
  the symbolic expert (:mod:`secant.learn.network`) choose the function, the sender, the
  amount and the integer and address arguments from the functions' features for the
  history so far (:func:`secant.learn.features.feature_matrix`);
* ``mix`` (ILF's π_mix): the learned choice, except that with probability ``expert_share``
  the symbolic expert chooses the next transaction from the episode's state
  (:meth:`secant.learn.expert.ExpertPolicy.choose_from`).

On secant's engine an episode's next transaction runs as a case: the episode's transactions
so far, then the new one; the worker's prefix cache resumes the prefix, so each execution
runs about one transaction. A transaction that fails leaves the state as it was: it joins
the history the features see (ILF's revert features) but not the case the next one extends,
as the expert does. Every draw comes from the fuzzer's rng (the campaign seed).

:class:`EpisodePolicy` runs episodes as a campaign's whole policy (``--policy uniform``,
``learned``, ``mix``); :class:`LearnedStage` runs learned episodes as a stage of Harvey's
loop (``--learned-share``), so that its transactions become seeds that Harvey's mutation,
prediction and demand-driven sequences work on.

Departures from the paper: a transaction moves the clock (a random delay among a few
scales, a fifth of the time, only when the code reads the timestamp or the block number);
an argument the networks leave to the policy (``other``, strings, bytes, booleans) takes
the mutator's random value, which favours small numbers, interesting values and the
dictionary's constants; and a share ``EXPLORE`` of a learned episode's transactions is the
mutator's random transaction instead of the networks' (the networks, trained on a few
thousand of the expert's steps, concentrate on few functions and senders; the random
share keeps the rest in the episodes: docs/learned.md has the measurements).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from secant.engine.mutators import Mutator
from secant.engine.policy import (
    InputSpace,
    LoopState,
    Novelty,
    Policy,
    PolicyContext,
    Proposal,
    Stage,
)
from secant.engine.values import VType, from_int
from secant.learn.features import (
    FunctionInfo,
    Step,
    code_sizes,
    ended_as,
    feature_matrix,
    function_infos,
)
from secant.learn.network import Decision
from secant.types import RunResult, Tx, TxSeq

if TYPE_CHECKING:
    from secant.learn.network import ArgumentChoice, Episode, LearnedModel
    from secant.learn.view import ContractView

DEFAULT_LEARNED_SHARE = 0.0
"""Share of a Harvey campaign's executions the learned stage runs (off by default until
measurements show it pays; docs/learned.md)."""

EXPLORE = 0.2
"""The share of a learned episode's transactions drawn at random instead (module
docstring; measured in docs/learned.md)."""

DEFAULT_EXPERT_SHARE = 0.1
"""ILF's π_mix: the probability that the expert chooses the next transaction."""

_TIME_SCALES = (1, 15, 60, 3_600, 86_400, 604_800, 2_592_000)
_BLOCK_SCALES = (1, 2, 10, 100, 5_760, 40_320)
_CLOCK_MOVES = 0.2  # the share of transactions that move the clock


class TxChooser(ABC):
    """Chooses the transactions of an episode, one at a time."""

    name: str = ""

    def reset(self) -> None:  # noqa: B027 (optional hook)
        """A new episode starts from the deployed state."""

    @abstractmethod
    def choose(self, history: Sequence[Step], rng: random.Random) -> Tx:
        """The next transaction after ``history`` (every transaction so far, failed ones too)."""

    def ran(self, tx: Tx, ended: str) -> None:  # noqa: B027 (optional hook)
        """The chosen transaction ran and ended so (``return``, ``revert``, ``assert``)."""

    def summary(self) -> dict[str, Any]:
        """The chooser's counters for ``summary.json``."""
        return {}


@dataclass
class _Clock:
    """Random clock moves for a space whose code reads the block (module docstring)."""

    reads_time: bool
    reads_number: bool
    max_time: int | None = None
    max_blocks: int | None = None

    def move(self, tx: Tx, rng: random.Random) -> Tx:
        if not (self.reads_time or self.reads_number) or rng.random() >= _CLOCK_MOVES:
            return tx
        time = rng.choice(_TIME_SCALES) if self.reads_time else 0
        blocks = rng.choice(_BLOCK_SCALES) if self.reads_number else 0
        if self.max_time is not None:
            time = min(time, self.max_time)
        if self.max_blocks is not None:
            blocks = min(blocks, self.max_blocks)
        return replace(tx, time=time, blocks=blocks)


class UniformChooser(TxChooser):
    """ILF's π_unif: every part of the transaction uniformly from its domain.

    Integers are uniform over their type's range, booleans and fixed bytes likewise;
    addresses uniformly among the campaign's candidates (its senders, its deployed
    contracts and the zero address: a uniform 160-bit number is never an account);
    ``bytes`` and strings get a uniform length up to 64 and uniform bytes; dynamic arrays
    a uniform length up to 4.
    """

    name = "uniform"

    def __init__(self, space: InputSpace, addresses: Sequence[int], clock: _Clock) -> None:
        self.space = space
        self.addresses = list(addresses) or list(space.senders)
        self.clock = clock

    def choose(self, history: Sequence[Step], rng: random.Random) -> Tx:
        """A uniform transaction."""
        space = self.space
        spec = space.functions[rng.randrange(len(space.functions))]
        args = tuple(self.value(vt, rng) for vt in spec.types)
        sender = space.senders[rng.randrange(len(space.senders))]
        amount = rng.randint(0, space.max_value) if spec.payable else 0
        return self.clock.move(Tx(spec.signature, args, sender, amount, to=spec.to), rng)

    def value(self, vt: VType, rng: random.Random) -> Any:
        """A uniform value of type ``vt``."""
        kind = vt.kind
        if kind in ("uint", "int", "fbytes"):
            return from_int(vt, rng.getrandbits(vt.bits))
        if kind == "address":
            return self.addresses[rng.randrange(len(self.addresses))]
        if kind == "bool":
            return rng.random() < 0.5
        if kind in ("bytes", "string"):
            data = rng.randbytes(rng.randint(0, 64))
            return data if kind == "bytes" else data.decode("latin-1")
        if kind == "array":
            assert vt.elem is not None
            count = vt.length if vt.length is not None else rng.randint(0, 4)
            return tuple(self.value(vt.elem, rng) for _ in range(count))
        return tuple(self.value(f, rng) for f in vt.fields)


@dataclass
class LearnedStats:
    """What the learned chooser did: decisions, and how its arguments were filled."""

    decisions: int = 0
    explored: int = 0
    arguments: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The counters as JSON."""
        return {"decisions": self.decisions, "explored": self.explored,
                "arguments": dict(sorted(self.arguments.items()))}


class LearnedChooser(TxChooser):
    """ILF's π_nn: the trained networks choose from the functions' features (module docstring)."""

    name = "learned"

    def __init__(self, space: InputSpace, model: LearnedModel, view: ContractView,
                 infos: Sequence[FunctionInfo], sizes: Mapping[bytes, tuple[int, int]],
                 covered: Callable[[], Any], mutator: Mutator, clock: _Clock) -> None:
        self.space = space
        self.view = view
        self.infos = list(infos)
        self.sizes = sizes
        self.covered = covered
        self.mutator = mutator
        self.clock = clock
        self.episode: Episode = model.start(view, space.functions)
        self.stats = LearnedStats()
        self._last: tuple[Decision, Tx] | None = None
        self._index = {(spec.to, spec.signature): i for i, spec in enumerate(space.functions)}
        self.explore = EXPLORE

    def reset(self) -> None:
        """A new episode: the networks' state starts again."""
        self.episode.reset()

    def choose(self, history: Sequence[Step], rng: random.Random) -> Tx:
        """The networks' transaction for the features of ``history``.

        A share ``EXPLORE`` of the time, the mutator's random transaction instead (see the
        module docstring).
        """
        if self.explore and rng.random() < self.explore:
            self.stats.explored += 1
            spec = self.space.functions[rng.randrange(len(self.space.functions))]
            return self.clock.move(self.mutator.random_tx(spec, rng), rng)
        features = feature_matrix(self.infos, history, self.covered(), self.sizes)
        decision = self.episode.decide(features, rng)
        self.stats.decisions += 1
        spec = self.space.functions[decision.function]
        args = tuple(self._argument(vt, choice, rng)
                     for vt, choice in zip(spec.types, decision.arguments))
        sender = self.view.senders[decision.sender]
        amount = min(decision.amount, self.space.max_value) if spec.payable else 0
        tx = self.clock.move(Tx(spec.signature, args, sender, amount, to=spec.to), rng)
        self._last = (decision, tx)
        return tx

    def ran(self, tx: Tx, ended: str) -> None:
        """The networks' state takes in the transaction that ran and how it ended.

        A transaction someone else chose (the expert, in π_mix) goes in as its function and
        sender: the state the networks see is the episode's, whoever chose its steps.
        """
        last, self._last = self._last, None
        if last is not None and last[1] is tx:
            self.episode.advance(last[0], ended)
            return
        senders = self.view.senders
        decision = Decision(self._index.get((tx.to, tx.function), 0),
                            senders.index(tx.sender) if tx.sender in senders else 0,
                            tx.value, ())
        self.episode.advance(decision, ended)

    def summary(self) -> dict[str, Any]:
        """The chooser's counters."""
        return {"learned": self.stats.to_json()}

    def _argument(self, vt: VType, choice: ArgumentChoice, rng: random.Random) -> Any:
        counts = self.stats.arguments
        kind = vt.kind
        if kind == "array" and vt.elem is not None and vt.elem.kind in _CHOSEN and \
                choice.values:
            elem = vt.elem
            count = vt.length if vt.length is not None else len(choice.values)
            values = list(choice.values[:count])
            values += [values[-1]] * (count - len(values))  # a static array's rest
            counts[choice.kind] = counts.get(choice.kind, 0) + 1
            return tuple(self._scalar(elem, value) for value in values)
        if kind in _CHOSEN and choice.value is not None and choice.kind != "other":
            counts[choice.kind] = counts.get(choice.kind, 0) + 1
            return self._scalar(vt, choice.value)
        counts["other"] = counts.get("other", 0) + 1
        return self.mutator.random_value(vt, rng)

    @staticmethod
    def _scalar(vt: VType, value: int) -> Any:
        if vt.kind == "address":
            return value & ((1 << 160) - 1)
        return from_int(vt, value % (1 << vt.bits))


_CHOSEN = frozenset({"uint", "int", "address"})
"""The argument types the networks choose (ILF's integers and addresses)."""


class EpisodeRunner:
    """The episode so far: its case (transactions that succeeded) and its history (all)."""

    def __init__(self, chooser: TxChooser, length: int) -> None:
        self.chooser = chooser
        self.length = max(length, 1)
        self.case: TxSeq = ()
        self.history: list[Step] = []
        self.episodes = 0
        self.transactions = 0
        self._pending: Tx | None = None

    def begin(self) -> None:
        """Start a new episode from the deployed state when the last one is over."""
        if len(self.history) >= self.length or self.episodes == 0:
            self.case = ()
            self.history = []
            self.episodes += 1
            self.chooser.reset()

    def next_case(self, rng: random.Random) -> TxSeq:
        """The episode's case with the chooser's next transaction (module docstring)."""
        self.begin()
        return self.take(self.chooser.choose(self.history, rng))

    def take(self, tx: Tx) -> TxSeq:
        """The episode's case with ``tx`` next (chosen by the chooser or someone else)."""
        self._pending = tx
        return self.case + (tx,)

    def ran(self, case: TxSeq, result: RunResult) -> None:
        """The case ``next_case`` gave ran: the episode moves on (or stays, on a failure)."""
        tx = self._pending
        if tx is None or not case or case[-1] is not tx:
            return
        self._pending = None
        self.transactions += 1
        outcome = result.outcomes[-1] if len(result.outcomes) == len(case) else None
        ended = ended_as(outcome) if outcome is not None else "revert"
        self.history.append(Step(tx.function, tx.to, ended))
        if ended == "return":
            self.case = case
        self.chooser.ran(tx, ended)

    def summary(self) -> dict[str, Any]:
        """Episodes and transactions run, with the chooser's counters."""
        return {"episodes": self.episodes, "transactions": self.transactions,
                **self.chooser.summary()}


class EpisodePolicy(Policy):
    """A campaign's whole policy: ILF's episodes under one chooser (module docstring)."""

    def __init__(self, chooser: TxChooser, length: int | None = None,
                 expert: ExpertChoice | None = None, expert_share: float = 0.0) -> None:
        self.chooser = chooser
        self.name = chooser.name if expert is None else "mix"
        self._length = length
        self.expert = expert
        self.expert_share = expert_share
        self.expert_choices = 0

    def bind(self, fuzzer: LoopState) -> None:
        """Attach to the fuzzer; episodes are as long as its longest sequence."""
        super().bind(fuzzer)
        length = self._length if self._length is not None else \
            fuzzer.config.max_sequence_length
        self.runner = EpisodeRunner(self.chooser, length)
        if self.expert is not None:
            self.expert.bind(fuzzer)

    def propose(self) -> Proposal | None:
        """The episode's next transaction (the expert's, a share of the time, in mix)."""
        fuzzer = self.fuzzer
        if fuzzer.exhausted():
            return None
        runner = self.runner
        runner.begin()
        if self.expert is not None and fuzzer.rng.random() < self.expert_share:
            chosen = self.expert.choose_from(runner.case, tuple(runner.history))
            if chosen is not None:
                self.expert_choices += 1
                return Proposal(runner.take(chosen), self.name)
        return Proposal(runner.next_case(fuzzer.rng), self.name)

    def observe(self, proposal: Proposal, result: RunResult, novelty: Novelty) -> None:
        """The episode moves on by the transaction that ran."""
        if proposal.origin == self.name:
            self.runner.ran(proposal.case, result)

    def summary(self) -> dict[str, Any]:
        """The episodes' counters."""
        out = self.runner.summary()
        if self.expert is not None:
            out["expert_choices"] = self.expert_choices
        return {"episodes": out}

    def progress_rows(self) -> list[tuple[str, str]]:
        """The live display's row."""
        runner = self.runner
        return [(self.name, f"{runner.episodes} episodes, {runner.transactions} transactions")]


class ExpertChoice(Protocol):
    """The symbolic expert choosing one transaction from a given state (π_mix).

    ``secant.learn.expert.ExpertPolicy`` is one.
    """

    def bind(self, fuzzer: LoopState) -> None:
        """Attach to the fuzzer whose loop runs the episodes."""

    def choose_from(self, case: TxSeq, history: tuple[Step, ...]) -> Tx | None:
        """The expert's next transaction after ``case`` (None: it has none)."""


class LearnedStage(Stage):
    """Learned episodes between Harvey's rounds, up to a share of the executions."""

    name = "learned"
    origin = "learned"

    def __init__(self, chooser: TxChooser, share: float, length: int | None = None) -> None:
        self.chooser = chooser
        self.share = share
        self._length = length
        self.runs = 0
        self._case: TxSeq = ()

    def bind(self, policy: Policy, fuzzer: LoopState) -> None:
        """Attach; episodes are as long as the campaign's longest sequence."""
        super().bind(policy, fuzzer)
        length = self._length if self._length is not None else \
            fuzzer.config.max_sequence_length
        self.runner = EpisodeRunner(self.chooser, length)

    def next_case(self) -> TxSeq | None:
        """The next learned transaction while the stage is under its share."""
        fuzzer = self.fuzzer
        if self.runs > self.share * fuzzer.stats.execs:
            return None
        self.runs += 1
        self._case = self.runner.next_case(fuzzer.rng)
        return self._case

    def ran(self, result: RunResult, novelty: Novelty) -> None:
        """The episode moves on."""
        self.runner.ran(self._case, result)

    def summary(self) -> dict[str, Any]:
        """The stage's counters."""
        return {"learned_stage": {"runs": self.runs, **self.runner.summary()}}

    def progress_rows(self) -> list[tuple[str, str]]:
        """The live display's row."""
        return [("learned", f"{self.runs} runs, {self.runner.episodes} episodes")]


# ---------------------------------------------------------------------- building them
def _clock(context: PolicyContext, config_time: int | None = None,
           config_blocks: int | None = None) -> _Clock:
    space = context.space
    return _Clock(space.reads_time, space.reads_number, config_time, config_blocks)


def candidate_addresses(context: PolicyContext) -> list[int]:
    """The senders, the deployed targets, then the zero address (no repeats)."""
    out: list[int] = []
    for address in (*context.space.senders, *context.targets, 0):
        if address not in out:
            out.append(address)
    return out


def uniform_chooser(context: PolicyContext) -> UniformChooser:
    """ILF's uniform policy for a campaign's context."""
    return UniformChooser(context.space, candidate_addresses(context), _clock(context))


def learned_chooser(context: PolicyContext, model: LearnedModel,
                    covered: Callable[[], Any]) -> LearnedChooser:
    """The learned policy for a campaign's context (``covered``: the covered blocks now)."""
    from secant.learn.view import contract_view

    if context.fork is None:
        raise ValueError("the learned policy needs the campaign's fork")
    space = context.space
    infos = function_infos(space.functions, context.function_codes, context.fork)
    view = contract_view(space, infos, context.function_codes, context.codes, context.fork,
                         context.targets)
    mutator = Mutator(space.functions, space.senders, space.dictionary,
                      max_value=space.max_value, reads_time=space.reads_time,
                      reads_number=space.reads_number)
    return LearnedChooser(space, model, view, infos, code_sizes(context.codes, context.fork),
                          covered, mutator, _clock(context))


class CoveredBlocks:
    """The covered blocks of the fuzzer a policy or stage is bound to (set at bind)."""

    def __init__(self) -> None:
        self.fuzzer: LoopState | None = None

    def __call__(self) -> Any:
        """The bound fuzzer's covered blocks (none before ``bind``)."""
        return self.fuzzer.coverage.blocks if self.fuzzer is not None else frozenset()


class _BoundPolicy(EpisodePolicy):
    def __init__(self, chooser: TxChooser, covered: CoveredBlocks, **kwargs: Any) -> None:
        super().__init__(chooser, **kwargs)
        self._covered = covered

    def bind(self, fuzzer: LoopState) -> None:
        self._covered.fuzzer = fuzzer
        super().bind(fuzzer)


class _BoundStage(LearnedStage):
    def __init__(self, chooser: TxChooser, covered: CoveredBlocks, share: float) -> None:
        super().__init__(chooser, share)
        self._covered = covered

    def bind(self, policy: Policy, fuzzer: LoopState) -> None:
        self._covered.fuzzer = fuzzer
        super().bind(policy, fuzzer)


def episode_policy(context: PolicyContext, kind: str, model: LearnedModel | None = None,
                   expert: ExpertChoice | None = None,
                   expert_share: float = DEFAULT_EXPERT_SHARE) -> EpisodePolicy:
    """The policy ``kind`` (``uniform``, ``learned`` or ``mix``) for a campaign's context."""
    if kind == "uniform":
        return EpisodePolicy(uniform_chooser(context))
    if model is None:
        raise ValueError(f"the {kind} policy needs a learned model")
    covered = CoveredBlocks()
    chooser = learned_chooser(context, model, covered)
    if kind == "learned":
        return _BoundPolicy(chooser, covered)
    if kind == "mix":
        if expert is None:
            raise ValueError("the mix policy needs the symbolic expert")
        return _BoundPolicy(chooser, covered, expert=expert, expert_share=expert_share)
    raise ValueError(f"unknown episode policy {kind!r}")


def learned_stage(context: PolicyContext, model: LearnedModel, share: float) -> LearnedStage:
    """The learned stage of Harvey's loop for a campaign's context."""
    covered = CoveredBlocks()
    return _BoundStage(learned_chooser(context, model, covered), covered, share)


__all__ = ["DEFAULT_EXPERT_SHARE", "DEFAULT_LEARNED_SHARE",
           "CoveredBlocks", "EpisodePolicy", "EpisodeRunner", "ExpertChoice", "LearnedChooser",
           "LearnedStage", "LearnedStats", "TxChooser", "UniformChooser",
           "candidate_addresses", "episode_policy", "learned_chooser",
           "learned_stage", "uniform_chooser"]
