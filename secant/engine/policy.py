"""The policy seam: who proposes the next test case, and learns from what it did.

A :class:`Policy` is bound to one :class:`~secant.engine.fuzzer.Fuzzer` and then asked,
again and again, for a :class:`Proposal` (a case and what produced it); the fuzzer runs
it, decides its novelty and hands both back through ``observe``. Harvey's choice
(schedule, mutation, prediction, sequences, adaptive seeds, probes) is one policy
(``secant.engine.harvey.policy.HarveyPolicy``); a learned policy or a symbolic expert is
another, or a stage mixed into one.

A policy reads the fuzzer's shared state (``corpus``, ``coverage``, ``stats``, ``rng``,
``config``, ``exhausted()``) and draws every random choice from ``fuzzer.rng``, so a
campaign stays a function of its seed.

A campaign builds its policy with a :data:`PolicyFactory` from a :class:`PolicyContext`:
the input space and what the campaign can do for a policy beyond running cases (symbolic
replays, which branch sides are worth solving, the code behind each function). A policy
takes what it needs from it, so a new policy, or a stage one mixes in, needs no change to
the campaign that runs it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from secant.engine.dictionary import Dictionary
from secant.engine.mutators import FunctionSpec
from secant.types import RunResult, TxSeq

if TYPE_CHECKING:
    import random

    from secant.engine.config import FuzzConfig, FuzzStats
    from secant.engine.corpus import Corpus, Seed
    from secant.engine.events import Events
    from secant.engine.failures import InternalError
    from secant.engine.feedback import Coverage
    from secant.engine.mutators import Comparison
    from secant.evm.forks import Fork
    from secant.symbolic.records import SymbolicRun


class LoopState(Protocol):
    """What a policy or a stage reads of the loop that asks it (``Fuzzer`` is the loop).

    The campaign-wide coverage and corpus, the counters and the configuration, the rng
    every random choice comes from, the events, the budget, and the loop's services that
    seeds and costs need. Declared here so that the seam does not import the loop.
    """

    config: FuzzConfig
    stats: FuzzStats
    rng: random.Random
    coverage: Coverage
    corpus: Corpus
    events: Events
    sstore_target: int | None

    def exhausted(self) -> bool:
        """Whether the budget is spent (or the loop was asked to stop)."""
        ...

    def switch_off(self, part: str, error: Exception, *, execs: int | None = None,
                   during: str = "fuzzing") -> InternalError:
        """Record that ``part`` raised ``error`` and is off for the rest of the run."""
        ...

    def make_seed(self, result: RunResult, origin: str, found_at: int,
                  distance: float | None = None) -> Seed:
        """A seed of a run: its cost vector, schedule statistics and prediction material."""
        ...

    def missed_comparisons(self, result: RunResult, limit: int = 32
                           ) -> tuple[Comparison, ...]:
        """Operands and relation of the last step's comparisons with an uncovered side."""
        ...

    def restore_material(self, seed: Seed, result: RunResult) -> None:
        """Give ``seed`` back what ``CostMemory`` dropped, from a run of its case."""
        ...

    def refresh_distances(self) -> None:
        """Bring seed distances up to date (a directed schedule calls it before choosing)."""
        ...


@dataclass
class InputSpace:
    """What a policy may put in a test case.

    ``functions`` are the callable functions; ``senders`` the accounts that may send;
    ``dictionary`` the constants mutation draws from; ``max_value`` the most ether a
    transaction may carry; ``reads_time``/``reads_number`` whether the code reads the
    timestamp or block number (only then are block deltas mutated).
    """

    functions: Sequence[FunctionSpec]
    senders: Sequence[int]
    dictionary: Dictionary
    max_value: int = 10 ** 21
    reads_time: bool = True
    reads_number: bool = True
    stateful: bool = False
    """Properties are checked after every transaction (an invariant suite): sequences grow
    without demand, and random runs of the longest length are tried."""
    untrusted: frozenset[int] = frozenset()
    """The senders of the attacker side (attacker accounts and contracts)."""
    pays_out: bool = False
    """The code can send ether (a CALL, CALLCODE or SELFDESTRUCT)."""


BranchSide = tuple[bytes, int, bool]
"""A side of a conditional branch: (code hash, pc of the JUMPI, taken)."""

SymbolicTracer = Callable[[TxSeq], "tuple[RunResult, SymbolicRun | None]"]
"""Runs a case with the ``symbolic`` recording: the run and its symbolic records (None
when the run could not be followed symbolically)."""


@dataclass
class PolicyContext:
    """What a campaign gives the policy it builds (module docstring).

    ``symbolic(cached)`` makes a tracer that replays cases symbolically on a target of its
    own (``cached``: with a prefix cache, for a policy that extends one state at a time);
    None when the campaign cannot. ``worth`` says whether a branch side is a condition of
    the source (not a compiler's check); ``function_codes`` maps each function's target
    (None: the main contract) to the (code hash, runtime code) it runs, ``codes`` lists
    every deployed target code; ``fork`` is the chain's, ``contract`` the main contract's
    name, ``targets`` the deployed contracts' addresses.
    """

    space: InputSpace
    symbolic: Callable[[bool], SymbolicTracer] | None = None
    worth: Callable[[BranchSide], bool] = field(default=lambda side: True)
    function_codes: Mapping[int | None, tuple[bytes, bytes]] = field(default_factory=dict)
    codes: Sequence[tuple[bytes, bytes]] = ()
    fork: Fork | None = None
    contract: str = ""
    targets: Sequence[int] = ()
    """The deployed contracts' addresses, the main contract first."""
    refuses: Callable[[BranchSide], bool] = field(default=lambda side: False)
    """Whether a branch side does nothing but refuse the transaction: it reverts straight
    away, and no oracle of the campaign reports that revert (``secant.evm.refusals``)."""


@dataclass(slots=True)
class Proposal:
    """A case to run and what produced it.

    ``origin`` names the producer (``init``, ``mutation``, ``havoc``, ``prediction``,
    ``sequence``, ``adaptive``, ``aggressive``, ``import``, or a policy's own word); a
    seed found by it keeps that name. A ``probe`` only asks whether its last step takes a
    new path: it joins neither the coverage, the corpus nor the findings. ``adaptive``
    marks a case proposed while fuzzing an sFuzz adaptive seed (sFuzz counts those).
    """

    case: TxSeq
    origin: str
    probe: bool = False
    adaptive: bool = False


class Novelty(NamedTuple):
    """What a run added to the campaign's coverage (a probe adds nothing)."""

    new_path: bool
    new_blocks: int
    new_edges: int
    seed: Seed | None = None

    @property
    def covered_more(self) -> bool:
        """Whether the run covered anything new: a path, a block or an edge."""
        return self.new_path or bool(self.new_blocks) or bool(self.new_edges)


class Policy(ABC):
    """Proposes cases (see the module docstring)."""

    name: str = ""

    def bind(self, fuzzer: LoopState) -> None:
        """Attach to the fuzzer whose loop will ask this policy (called once, first)."""
        self.fuzzer = fuzzer

    @abstractmethod
    def propose(self) -> Proposal | None:
        """The next case to run, or None when there is none (the loop then ends)."""

    def observe(self, proposal: Proposal, result: RunResult,  # noqa: B027 (optional hook)
                novelty: Novelty) -> None:
        """What the proposed case did (called after every execution of a proposal)."""

    def summary(self) -> dict[str, Any]:
        """The policy's counters for ``summary.json``."""
        return {}

    def progress_rows(self) -> list[tuple[str, str]]:
        """Rows for the live display: (label, text)."""
        return []

    def just_missed(self) -> Mapping[BranchSide, JustMissed] | None:
        """The closest case the policy keeps for each just-missed branch side.

        The reports' frontier reads it; None when the policy keeps none (the frontier then
        takes the corpus seeds' cost vectors).
        """
        return None

    def infeasible(self) -> Mapping[BranchSide, str]:
        """Branch sides shown unreachable on some path, each with the reason.

        The reports' frontier says so of each.
        """
        return {}


class JustMissed(NamedTuple):
    """The case that came closest to a branch side: its flip cost, the case, when found."""

    distance: int
    case: TxSeq
    found_at: int


PolicyFactory = Callable[[PolicyContext], Policy]
"""Builds a worker's policy from its context (the campaign's default: Harvey's)."""


class Stage(ABC):
    """A source of cases a policy runs between its own rounds (Harvey's concolic stage).

    The policy binds it once, then, between two of its rounds, asks ``next_case`` until it
    answers None (nothing now: it is asked again after the next round), runs each case
    with ``origin`` and reports the run through ``ran``. A stage that raises is switched
    off for the rest of the run (``switched_off``) and recorded as the part ``stage:NAME``;
    its counters stay in the summary. Its random choices come from the fuzzer's ``rng``.
    """

    name: str = ""
    origin: str = ""
    """What its proposals say produced them (the corpus's origins count them)."""
    switched_off: bool = False

    def bind(self, policy: Policy, fuzzer: LoopState) -> None:
        """Attach to the policy that runs it and the fuzzer whose loop runs the policy."""
        self.policy = policy
        self.fuzzer = fuzzer

    @abstractmethod
    def next_case(self) -> TxSeq | None:
        """The next case to run, or None when the stage has nothing now."""

    def ran(self, result: RunResult, novelty: Novelty) -> None:  # noqa: B027 (optional hook)
        """What the last case ``next_case`` gave did."""

    def summary(self) -> dict[str, Any]:
        """What the stage adds to ``summary.json``."""
        return {}

    def progress_rows(self) -> list[tuple[str, str]]:
        """Rows for the live display: (label, text)."""
        return []
