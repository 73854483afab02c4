"""ILF's symbolic expert (π_expert) as a fuzzing policy of its own.

ILF (He et al., CCS 2019, §5.2) trains its fuzzing policy to imitate an *expert*: given the
concrete chain state a sequence of transactions reached, the expert explores what one more
transaction can do there symbolically, picks the feasible path that covers the most new
code, solves for a concrete transaction (function, arguments, sender, amount) along it and
returns it, or ⊥ when no transaction adds coverage. Algorithm 1 runs it depth first from
the deployed state (``DfsFuzz``: each transaction strictly adds coverage, the state it
leads to is explored next) and keeps every state it passed in a priority queue, ranked by
the coverage the expert could still add there, until no state can add any.

**One transaction ahead, concolically.** ILF used VerX's symbolic executor; secant's
symbolic layer is concolic (``secant.symbolic``: concrete values drive a run, z3 terms
shadow the inputs). The expert explores a state's next transaction as a generational
search (SAGE's) restricted to that transaction: every function is run once from the state
with zero arguments (a dynamic array with one element, so its elements are inputs), the
first sender, no ether and no block delay; then, for every branch of the last transaction
whose other side is covered neither by the campaign nor by a path already explored from
this state, the branch is negated on that run's path condition and z3 solves for the last
transaction's inputs (``flip_branch`` with ``vary`` = the last transaction: the arguments,
the sender among the campaign's senders, the ether, the block deltas); each solution is run
and its own branches join the search. The state stays concrete: storage the transaction
reads keeps the value the prefix left (``pin_storage``), and the prefix's inputs are kept.
The search of one state ends when nothing is left to flip or after ``max_queries``
queries; a side whose queries ran out of resources ``max_unknown`` times (in any states)
is not tried again, and a query found unsat over the transaction's own inputs alone
(``state_free_key``) is not asked again in another state. Every explored path is a
candidate; the expert picks the one that adds the most edges and blocks to the
campaign's coverage (the earliest of equals).

**Beyond ILF: coverage-neutral steps.** ILF's expert stops where no transaction adds
coverage. Code behind a state that takes several coverage-neutral transactions to reach
(a position in a maze, a counter, a deadline) then stays out of its reach, so where no
candidate adds coverage, the expert takes the first one that leaves a state no sequence
reached before (``RunResult.state_hash``) and goes on from there, up to the depth limit
(``state_moves`` counts these). Only when no candidate does either is the state a dead end.

Checks the compiler inserts (ABI decoding, non-payable guards, 0.8's arithmetic checks)
and conditions no input of the last transaction enters (the state's alone) are not
flipped: the frontier's ``why_unflippable`` rule, as the concolic stage uses it.

**As a policy.** Each chosen transaction is proposed as the case ``state + (tx,)``; the
fuzzer runs it concretely, so coverage, corpus, oracles, findings and reports are those of
any campaign. The symbolic runs and queries that chose it are not executions of the
campaign (``summary``: ``symbolic_runs``, ``queries``). A state is explored once; when the
priority queue hands it out again its candidates are re-ranked against the coverage of
that moment. With z3's deterministic resource limit (``rlimit``) and an execution budget,
a campaign is a function of its seed; the time limit per query is only a safety net.

**The dataset.** With a ``sink``, every choice is recorded for learning (ILF §4.2, §5.2):
the feature matrix of the state (``secant.learn.features``), the case that reached it
and the chosen transaction, once it ran (how it ended, the instructions it covered first).
``secant.learn.dataset`` has the records and the file format. The header, with the
campaign's ``ContractView`` (``secant.learn.view``), is written before the first step,
once the deployed state's symbolic runs have shown the main contract's address (else at
the end): its address candidates list the deployed targets main contract first.

**Which inputs the solver chose.** Each candidate carries the inputs a z3 model chose
(``Candidate.solved``): none for a function's first run (zero arguments, the first sender,
no ether, no delay); for a ``flip_branch`` answer, those of the candidate it was solved
from plus every variable of the last transaction the model assigns and the query left
free (``_solved_inputs``): the sender, the ether, the clock and block deltas, and argument
words that are not part of the calldata layout (an argument counts when any of its words
does). Comparing with the defaults would miss a model that chose 0; inputs the query kept
(substituted as constants, or fixed layout words) are never in it.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from secant.engine.policy import (
    InputSpace,
    LoopState,
    Novelty,
    Policy,
    PolicyContext,
    Proposal,
    SymbolicTracer,
)
from secant.engine.values import VType, from_int
from secant.learn.dataset import (
    DatasetChoice,
    DatasetHeader,
    DatasetSink,
    DatasetStep,
    SolvedInputs,
    address_arguments,
    integer_arguments,
)
from secant.learn.features import (
    FunctionInfo,
    Step,
    code_sizes,
    ended_as,
    feature_matrix,
    function_infos,
)
from secant.learn.view import ContractView, contract_view
from secant.types import BlockSet, RunResult, Tx, TxSeq

if TYPE_CHECKING:
    from secant.symbolic.records import SymbolicRun

Edge = tuple[bytes, int, bool]
Block = tuple[bytes, int]

DEFAULT_RLIMIT = 5_000_000
"""z3's resource limit per query: about three seconds of one core here (z3 counts about
1.5 million units a second), deterministic. Each narrowed try gets 40 % of what is left
(``secant.symbolic.solve.DEFAULT_NARROW_SHARE``); a maze cell's product behind solc's
overflow check, solved at its constant's width (``secant.symbolic.narrow``), takes a
small part of that."""

DEFAULT_TIMEOUT_MS = 30_000
"""The time limit per query, a safety net behind the resource limit."""

DEFAULT_MAX_QUERIES = 64
"""Queries at most while exploring one state's next transaction."""

DEFAULT_MAX_UNKNOWN = 2
"""Queries that ran out of resources after which a branch side is no longer tried: the
same nest of conditions comes back in every state that reaches it, and a query z3 could
not finish twice rarely finishes the third time within the same limit."""

@dataclass(frozen=True)
class ExpertConfig:
    """How hard the expert searches (see the module docstring)."""

    rlimit: int | None = DEFAULT_RLIMIT
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_queries: int = DEFAULT_MAX_QUERIES
    max_unknown: int = DEFAULT_MAX_UNKNOWN
    max_depth: int | None = None
    """Most transactions in a state the expert extends (None: the campaign's
    ``max_sequence_length``)."""


@dataclass
class ExpertStats:
    """The expert's counters (``summary.json``'s ``expert`` and the progress display)."""

    states: int = 0
    """States explored (one transaction ahead)."""
    symbolic_runs: int = 0
    queries: int = 0
    sat: int = 0
    unsat: int = 0
    unknown: int = 0
    chosen: int = 0
    """Transactions the expert chose (each one a proposal)."""
    sequences: int = 0
    """Depth-first runs (``DfsFuzz``), each from a state the queue handed out."""
    dead_ends: int = 0
    """States where no transaction added coverage or reached a new state (π_expert = ⊥)."""
    state_moves: int = 0
    """Transactions chosen because they reached a new state, none adding coverage."""
    given_up: int = 0
    """Branch sides no longer tried: their queries ran out of resources too often."""
    remembered: int = 0
    """Queries skipped: the same state-free query was unsat in another state."""
    finished: bool = False
    """No state could add coverage any more: the expert stopped."""
    run_seconds: float = 0.0
    solve_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The counters as JSON."""
        return {"states": self.states, "symbolic_runs": self.symbolic_runs,
                "queries": self.queries, "sat": self.sat, "unsat": self.unsat,
                "unknown": self.unknown, "chosen": self.chosen,
                "sequences": self.sequences, "dead_ends": self.dead_ends,
                "state_moves": self.state_moves, "given_up": self.given_up,
                "remembered": self.remembered,
                "finished": self.finished, "run_seconds": round(self.run_seconds, 3),
                "solve_seconds": round(self.solve_seconds, 3)}


@dataclass(frozen=True)
class Candidate:
    """One explored path of a state's next transaction."""

    tx: Tx
    edges: frozenset[Edge]
    """The branch sides the transaction took."""
    blocks: frozenset[Block]
    """The blocks the whole case covered (the state's own are covered already)."""
    queries: int
    """Queries made in this state before this candidate was found."""
    state: int
    """The digest of the state the case left (``RunResult.state_hash``)."""
    solved: frozenset[str] = frozenset()
    """The inputs a z3 model chose (module docstring): ``sender``, ``value``, ``time``,
    ``blocks`` and ``arg{i}`` for top-level argument ``i``."""
    ended: str = ""
    """How the transaction ended in its symbolic run (``features.ended_as``): what a label
    that is not run concretely records (``label``)."""

    def gain(self, edges: Collection[Edge], blocks: Collection[Block]) -> int:
        """What running it would add to coverage ``edges`` and ``blocks``."""
        return (sum(1 for edge in self.edges if edge not in edges)
                + sum(1 for block in self.blocks if block not in blocks))


@dataclass
class _State:
    """A state the expert reached: the case that leads there and what it found there."""

    case: TxSeq
    history: tuple[Step, ...]
    order: int
    candidates: list[Candidate] | None = None  # None: not explored yet
    queries: int = 0
    digest: int = 0  # RunResult.state_hash of the case
    # Candidates proposed from here: never again (a concrete run that did not cover what
    # the symbolic one did would otherwise be proposed forever).
    proposed: set[Tx] = field(default_factory=set)

    def open_candidates(self) -> list[Candidate]:
        """The explored candidates not proposed yet."""
        return [c for c in self.candidates or () if c.tx not in self.proposed]


class ExpertPolicy(Policy):
    """ILF's expert: depth-first, one symbolically explored transaction at a time."""

    name = "expert"

    def __init__(self, space: InputSpace, config: ExpertConfig | None = None,
                 sink: DatasetSink | None = None) -> None:
        self.space = space
        self.settings = config or ExpertConfig()
        self.sink = sink
        self.stats = ExpertStats()
        self.trace: SymbolicTracer | None = None
        self.infos: list[FunctionInfo] = []
        self.code_sizes: Mapping[bytes, tuple[int, int]] = {}
        self.worth: Callable[[Edge], bool] = lambda side: True
        self._states: dict[TxSeq, _State] = {}
        self._digests: set[int] = set()  # the states reached, by RunResult.state_hash
        self._unknown: Counter[Edge] = Counter()  # sides whose queries ran out, how often
        self._unsat: set[str] = set()  # state-free queries found unsat (state_free_key)
        self._current: _State | None = None
        self._outstanding: Proposal | None = None
        self._contract = ""
        self._view_of: Callable[[Sequence[int]], ContractView] | None = None
        self._header_written = False
        self._view: ContractView | None = None
        self._main: int | None = None  # the main contract's address, once a run showed it
        self._pending: _Pending | None = None  # the step of the outstanding proposal
        self._block_sizes: dict[bytes, Mapping[int, int]] = {}

    @classmethod
    def from_context(cls, context: PolicyContext, config: ExpertConfig | None = None,
                     sink: DatasetSink | None = None) -> ExpertPolicy:
        """The expert of a campaign's context, attached to what the context offers.

        Its cached symbolic replays, the features of its functions and its filter of the
        sides worth solving (``attach``).
        """
        expert = cls(context.space, config, sink)
        if context.symbolic is None or context.fork is None:
            raise ValueError("the expert needs a campaign that replays cases symbolically")
        fork = context.fork
        infos = function_infos(context.space.functions, context.function_codes, fork)

        # The campaign's own list of deployed targets wins; without it, what the expert's
        # runs showed (the main contract's address) stands in.
        known = tuple(context.targets)

        def view(targets: Sequence[int]) -> ContractView:
            return contract_view(context.space, infos, context.function_codes,
                                 context.codes, fork, known or targets)

        expert.attach(context.symbolic(True), infos, code_sizes(context.codes, fork),
                      context.worth, contract=context.contract, view=view)
        return expert

    def attach(self, trace: SymbolicTracer, infos: Sequence[FunctionInfo],
               code_sizes: Mapping[bytes, tuple[int, int]],
               worth: Callable[[Edge], bool] | None = None,
               contract: str = "",
               view: Callable[[Sequence[int]], ContractView] | None = None) -> None:
        """Give the expert its symbolic runs, the functions' features and the flip filter.

        ``trace`` runs a case with the ``symbolic`` recording; ``infos`` are the static
        features of ``space.functions`` (same order); ``worth`` says whether a branch side
        is a condition of the source (default: every side); ``view`` makes the campaign's
        ``ContractView`` for the deployed targets' addresses, main contract first (None:
        the header has no view). The dataset's header is written before the first step.
        """
        self.trace = trace
        self.infos = list(infos)
        self.code_sizes = code_sizes
        self._contract = contract
        self._view_of = view
        self._block_sizes = {info.code_hash: info.code_blocks for info in self.infos
                             if info.code_hash}
        if worth is not None:
            self.worth = worth

    def bind(self, fuzzer: LoopState) -> None:
        """Attach to the fuzzer; the deployed state is the first to explore."""
        super().bind(fuzzer)
        depth = self.settings.max_depth
        self.max_depth = depth if depth is not None else fuzzer.config.max_sequence_length
        self._states = {}
        self._digests = set()
        self._add_state((), ())

    # ------------------------------------------------------------------ the policy seam
    def propose(self) -> Proposal | None:
        """The expert's next transaction after the current state, or None when done."""
        if self.trace is None:
            raise RuntimeError("the expert needs attach() before it can propose")
        fuzzer = self.fuzzer
        while not fuzzer.exhausted():
            state = self._current
            if state is None:
                state = self._current = self._pop()
                if state is None:
                    self.stats.finished = True
                    return None
                self.stats.sequences += 1
            if len(state.case) >= self.max_depth:
                self._current = None
                continue
            candidates = self._explore(state)
            best = self._best(state.open_candidates())
            if best is None:
                if not fuzzer.exhausted():  # a cut-short search is no dead end
                    self.stats.dead_ends += 1
                self._current = None
                continue
            self.stats.chosen += 1
            state.proposed.add(best.tx)
            if self.sink is not None:
                self._pending = self._step_before(state, best, len(candidates))
            proposal = Proposal(state.case + (best.tx,), "expert")
            self._outstanding = proposal
            return proposal
        return None

    def observe(self, proposal: Proposal, result: RunResult, novelty: Novelty) -> None:
        """The chosen transaction ran: the state it reached is explored next (DfsFuzz)."""
        if proposal is not self._outstanding:
            return
        self._outstanding = None
        case = proposal.case
        tx = case[-1]
        parent = self._states.get(case[:-1])
        ended = ended_as(result.outcomes[-1])
        if self._pending is not None:
            self._record(self._pending, result, ended)
            self._pending = None
        step = Step(tx.function, tx.to, ended)
        if parent is not None and ended != "return" and not tx.time and not tx.blocks:
            # A failed transaction that moved no clock left the parent's state: the search
            # goes on there (its candidates re-ranked), not from a longer copy of it. The
            # call stays in the history the features see.
            parent.history += (step,)
            self._current = parent
            return
        history = (parent.history if parent is not None else ()) + (step,)
        self._current = self._add_state(case, history, result.state_hash)

    def choose_from(self, case: TxSeq, history: tuple[Step, ...]) -> Tx | None:
        """The expert's next transaction after ``case`` (None: none adds coverage or a state).

        One choice of π_expert from a state another policy reached (ILF's π_mix): the state
        is explored as the depth-first search would (once; later calls re-rank its
        candidates), and the chosen candidate is not offered again from it. No dataset
        step is recorded: the choice is not run through :meth:`propose`.
        """
        if self.trace is None:
            raise RuntimeError("the expert needs attach() before it can choose")
        state = self._add_state(case, history)
        self._explore(state)
        best = self._best(state.open_candidates())
        if best is None:
            return None
        self.stats.chosen += 1
        state.proposed.add(best.tx)
        return best.tx

    def label(self, case: TxSeq, history: tuple[Step, ...], digest: int = 0
              ) -> tuple[Candidate, int, int] | None:
        """π_expert's choice from a state another policy reached, not taken (DAgger).

        As :meth:`choose_from`, but the chosen candidate stays open: a label is not run, so
        what it would add is still to be added when the state comes back. ``digest`` (the
        state's ``RunResult.state_hash``) joins the states reached, against which a
        candidate adding no coverage counts as reaching a new state. Returns the candidate,
        the number of candidates the state's search found and the queries it made; None
        when no candidate adds coverage or reaches a new state.
        """
        if self.trace is None:
            raise RuntimeError("the expert needs attach() before it can label")
        state = self._add_state(case, history, digest)
        candidates = self._explore(state)
        best = self._best(state.open_candidates())
        if best is None:
            return None
        return best, len(candidates), state.queries

    def summary(self) -> dict[str, Any]:
        """The expert's counters (a dataset without steps gets its header here)."""
        self._write_header()
        return {"expert": self.stats.to_json()}

    def progress_rows(self) -> list[tuple[str, str]]:
        """The live display's expert row."""
        stats = self.stats
        return [("expert", f"{stats.chosen} chosen, {stats.states} states, "
                           f"{stats.queries} queries ({stats.sat} sat)")]

    # ------------------------------------------------------------------ the search
    def _add_state(self, case: TxSeq, history: tuple[Step, ...], digest: int = 0) -> _State:
        state = self._states.get(case)
        if state is None:
            state = self._states[case] = _State(case, history, len(self._states),
                                                digest=digest)
            self._digests.add(digest)
        return state

    def _pop(self) -> _State | None:
        """The state where the expert can add the most coverage (the first of equals).

        An unexplored state (only the deployed one, at first) comes first: what it can add
        is unknown until it is explored. When no state can add coverage, the first with a
        candidate that reaches a new state (see the module docstring).
        """
        coverage = self.fuzzer.coverage
        best: tuple[int, int, _State] | None = None
        moving: _State | None = None
        for state in self._states.values():
            if len(state.case) >= self.max_depth:
                continue
            if state.candidates is None:
                return state
            open_candidates = state.open_candidates()
            gain = max((c.gain(coverage.edges, coverage.blocks) for c in open_candidates),
                       default=0)
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, state.order, state)
            elif moving is None and any(c.state not in self._digests
                                        for c in open_candidates):
                moving = state
        return moving if best is None else best[2]

    def _best(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """The candidate adding the most coverage; else the first reaching a new state."""
        coverage = self.fuzzer.coverage
        best: tuple[int, Candidate] | None = None
        for candidate in candidates:
            gain = candidate.gain(coverage.edges, coverage.blocks)
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, candidate)
        if best is not None:
            return best[1]
        # No transaction adds coverage here: ILF's expert stops (⊥). Code behind a state
        # that takes several coverage-neutral steps to reach (a position in a maze, a
        # counter) would stay out of reach, so the search goes on through a transaction
        # that leaves a state no sequence reached before, up to the depth limit.
        digests = self._digests
        novel = next((c for c in candidates if c.state not in digests), None)
        if novel is not None:
            self.stats.state_moves += 1
        return novel

    def _explore(self, state: _State) -> list[Candidate]:
        """Every path of the state's next transaction the search finds (module docstring)."""
        if state.candidates is not None:
            return state.candidates
        # z3 loads only when the expert runs.
        from secant.symbolic.solve import (
            DEFAULT_MAX_BLOCKS_DELTA,
            DEFAULT_MAX_TIME_DELTA,
            flip_branch,
        )

        assert self.trace is not None
        stats = self.stats
        stats.states += 1
        fuzzer = self.fuzzer
        config = fuzzer.config
        settings = self.settings
        coverage = fuzzer.coverage
        position = len(state.case)
        time_limit = (DEFAULT_MAX_TIME_DELTA if config.max_time_delay is None
                      else config.max_time_delay)
        block_limit = (DEFAULT_MAX_BLOCKS_DELTA if config.max_block_delay is None
                       else config.max_block_delay)
        prefix = f"tx{position}_"
        candidates: list[Candidate] = []
        state.candidates = candidates
        seen: set[Edge] = set()
        tried: set[tuple[Edge, int]] = set()  # flipped records: side, condition
        queue: list[tuple[Tx, frozenset[str]]] = [
            (self._first_tx(index), frozenset()) for index in range(len(self.space.functions))]
        queries = 0
        while queue and not fuzzer.exhausted():
            tx, solved = queue.pop(0)
            case = state.case + (tx,)
            started = time.perf_counter()
            result, run = self.trace(case)
            stats.run_seconds += time.perf_counter() - started
            stats.symbolic_runs += 1
            if self._main is None and tx.to is None and run is not None \
                    and position in run.txs:
                self._main = run.txs[position].to
            mark = result.branch_marks[position] if position < len(result.branch_marks) \
                else len(result.branches)
            edges = frozenset((site, pc, taken) for site, pc, taken, *_ in
                              result.branches[mark:])
            ended = ended_as(result.outcomes[position]) \
                if position < len(result.outcomes) else ""
            candidates.append(Candidate(tx, edges, frozenset(result.blocks), queries,
                                        result.state_hash, solved, ended))
            seen |= edges
            if run is None:
                continue
            for index, record in enumerate(run.branches):
                if record.tx != position or queries >= settings.max_queries:
                    continue
                side = record.other_edge
                if side in seen or side in coverage.edges or \
                        self._unknown[side] >= settings.max_unknown:
                    continue
                if not any(name.startswith(prefix) for name in record.variables):
                    continue  # the state decides it; this transaction's inputs cannot
                if not self.worth(side):
                    continue
                # The earliest record of the same condition in this transaction is the one
                # to flip, once per state (``a``'s, then ``b``'s once ``a`` holds).
                first = run.first_copy(index, same_tx=True)
                flipped = run.branches[first]
                attempt = (flipped.other_edge, flipped.condition.hash())
                if attempt in tried:
                    continue
                tried.add(attempt)
                key = state_free_key(run, first, position)
                if key is not None and key in self._unsat:
                    # The same query, over this transaction's inputs alone, was unsat in
                    # another state: it is here too.
                    stats.remembered += 1
                    continue
                queries += 1
                stats.queries += 1
                started = time.perf_counter()
                answer = flip_branch(
                    case, run, first, senders=self.space.senders,
                    timeout_ms=settings.timeout_ms, rlimit=settings.rlimit,
                    vary={position}, max_time_delta=time_limit, max_blocks_delta=block_limit)
                stats.solve_seconds += time.perf_counter() - started
                if answer.status == "sat" and answer.case is not None:
                    stats.sat += 1
                    queue.append((answer.case[-1],
                                  solved | _solved_inputs(tx, answer.assignment, position)))
                elif answer.status == "unsat":
                    stats.unsat += 1
                    if key is not None:
                        self._unsat.add(key)
                else:
                    stats.unknown += 1
                    self._unknown[side] += 1
                    if self._unknown[side] == settings.max_unknown:
                        stats.given_up += 1
        state.queries = queries
        return candidates

    def _first_tx(self, index: int) -> Tx:
        """Function ``index`` called with zero arguments by the first sender."""
        spec = self.space.functions[index]
        args = tuple(zero_value(vt) for vt in spec.types)
        return Tx(spec.signature, args, self.space.senders[0], 0, to=spec.to)

    # ------------------------------------------------------------------ the dataset
    def _write_header(self) -> None:
        """Write the dataset's header once (module docstring: when)."""
        if self.sink is None or self._header_written:
            return
        self._header_written = True
        view = None
        if self._view_of is not None:
            targets: list[int] = []
            if self._main is not None:
                targets.append(self._main)
                targets += [spec.to for spec in self.space.functions
                            if spec.to is not None and spec.to not in targets]
            view = self._view_of(targets)
        self.sink(DatasetHeader(self._contract, tuple(self.infos), tuple(self.space.senders),
                                view))
        self._view = view

    def _step_before(self, state: _State, chosen: Candidate, explored: int) -> _Pending:
        """What the step of ``chosen`` records before it runs (features, expected gain)."""
        coverage = self.fuzzer.coverage
        features = feature_matrix(self.infos, state.history, coverage.blocks, self.code_sizes)
        return _Pending(state, chosen, explored, features,
                        chosen.gain(coverage.edges, coverage.blocks), coverage.blocks.copy())

    def _record(self, pending: _Pending, result: RunResult, ended: str) -> None:
        assert self.sink is not None
        self._write_header()
        view = self._view
        tx = pending.chosen.tx
        function = next((i for i, spec in enumerate(self.space.functions)
                         if spec.signature == tx.function and spec.to == tx.to), -1)
        senders = list(self.space.senders)
        choice = DatasetChoice(function, tx, senders.index(tx.sender)
                               if tx.sender in senders else -1)
        types = self.space.functions[function].types if function >= 0 else ()
        solved = pending.chosen.solved
        mask = SolvedInputs("sender" in solved, "value" in solved, "blocks" in solved,
                            "time" in solved,
                            tuple(f"arg{i}" in solved for i in range(len(tx.args))))
        addresses = view.addresses if view is not None else tuple(senders)
        new = 0
        for code_hash, pc in result.blocks:
            if (code_hash, pc) not in pending.covered:
                new += self._block_sizes.get(code_hash, {}).get(pc, 0)
        self.sink(DatasetStep(self.stats.sequences, pending.state.case, choice,
                              pending.features, pending.gain, pending.explored,
                              pending.state.queries, mask,
                              address_arguments(types, tx.args, addresses),
                              integer_arguments(types, tx.args), ended, new))


@dataclass(frozen=True)
class _Pending:
    """A chosen transaction's step, waiting for its run (``ExpertPolicy.observe``)."""

    state: _State
    chosen: Candidate
    explored: int
    features: list[list[float]]
    gain: int
    covered: BlockSet
    """The campaign's blocks before it ran."""


_INPUT = re.compile(r"^tx(\d+)_(?:w(\d+)|(value|sender|time|blocks))$")


def _solved_inputs(tx: Tx, assignment: Mapping[str, int], position: int) -> frozenset[str]:
    """The inputs of ``tx`` (transaction ``position``) a model's ``assignment`` chose.

    A model assigns the variables its query left free, and also the calldata layout words
    the query kept by a fact: words whose ABI slot is part of the layout (offsets, lengths,
    string contents) are left out, as are the other transactions' variables and the state.
    """
    from secant.symbolic.abi_words import FIXED_LAYOUT, word_slots

    chosen: set[str] = set()
    slots = None
    for name in assignment:
        match = _INPUT.match(name)
        if match is None or int(match.group(1)) != position:
            continue
        if match.group(3) is not None:
            chosen.add(match.group(3))
            continue
        if slots is None:
            slots = {slot.word: slot for slot in word_slots(tx.function, tx.args)}
        slot = slots.get(int(match.group(2)))
        if slot is not None and slot.kind != FIXED_LAYOUT and slot.path:
            chosen.add(f"arg{slot.path[0]}")
    return frozenset(chosen)


def state_free_key(run: SymbolicRun, index: int, position: int) -> str | None:
    """A key of the query flipping record ``index`` if its answer cannot depend on the state.

    The constraints that matter to the flip are those linked to its condition through
    shared variables: the others share no variable with them and hold for the run's values,
    so the query is unsat exactly when the linked part is. When all of those are over
    transaction ``position``'s own calldata, sender and block deltas, that part is the same
    in every state the same code passes, up to the transaction's number: the key is the
    branch with the constraints' text, numbered alike, and an unsat answer holds in every
    state with the same key. The ether sent is left out (its domain is the sender's
    balance, which the state sets), and so is anything over storage or earlier
    transactions: None.
    """
    target = run.branches[index]
    own = f"tx{position}_"
    constraints = [(record.path_condition, record.variables) for record in run.branches[:index]]
    constraints += [(pin.constraint, pin.variables) for pin in run.pins_before(target.seq)]
    linked = set(target.variables)
    chosen: list[Any] = []
    remaining = constraints
    grew = True
    while grew:
        grew = False
        rest = []
        for constraint, names in remaining:
            if names & linked:
                linked |= names
                chosen.append(constraint)
                grew = True
            else:
                rest.append((constraint, names))
        remaining = rest
    if any(not name.startswith(own) or name == f"{own}value" for name in linked):
        return None
    texts = sorted(re.sub(rf"\b{own}", "tx_", term.sexpr()) for term in chosen)
    goal = re.sub(rf"\b{own}", "tx_", target.condition.sexpr())
    digest = hashlib.sha256("\n".join([*texts, goal]).encode()).hexdigest()
    return f"{target.code_hash.hex()}:{target.pc}:{target.taken}:{digest}"


def zero_value(vt: VType) -> Any:
    """The expert's starting value of type ``vt``: zeros, with room for the solver.

    The calldata layout, lengths included, is part of a path: the solver chooses words,
    not lengths. So a dynamic array gets one element and ``bytes`` one word of zero bytes,
    whose contents the solver may then choose (``crashme("bad!")`` needs four bytes);
    strings stay empty (their contents are kept, not solved).
    """
    kind = vt.kind
    if kind in ("uint", "int", "fbytes", "address"):
        return from_int(vt, 0)
    if kind == "bool":
        return False
    if kind == "bytes":
        return bytes(32)
    if kind == "string":
        return ""
    if kind == "array":
        assert vt.elem is not None
        count = vt.length if vt.length is not None else 1
        return tuple(zero_value(vt.elem) for _ in range(count))
    return tuple(zero_value(f) for f in vt.fields)


__all__ = ["DEFAULT_MAX_QUERIES", "DEFAULT_MAX_UNKNOWN", "DEFAULT_RLIMIT", "DEFAULT_TIMEOUT_MS",
           "Candidate", "ExpertConfig", "ExpertPolicy", "ExpertStats",
           "state_free_key", "zero_value"]
