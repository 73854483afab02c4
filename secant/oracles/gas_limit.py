"""Denial of service by the block gas limit (SWC-128): state anyone grows, a loop over it.

A transaction can use at most the gas of a block (the chain's block gas limit, 30 million
by default; a fork's cap on a transaction's gas where there is one). A function whose gas
grows with state that anyone can grow without bound (a list of participants anyone may
join, then a loop that refunds them all or a ``delete`` that clears them at once) works
while the list is short, and once an attacker has made it long enough it can no longer run
at all: the refunds, the clearing, whatever the loop guards, are stuck for everybody.

The oracle shows it by running the case again with the growth repeated. On a run whose
last transaction ``f`` (the *victim*) succeeded, after an earlier successful transaction
``g`` that wrote a storage slot ``f`` read, it runs variants of the case
(``PostState.run_variant``): the transactions before ``f``, then ``g`` sent ``k`` times by
an attacker (``g`` as it was when an attacker sent it, else from attacker1; no ether, in
the same block), then ``f`` (from its sender, or from user1 when an attacker sent it: the
victim is someone else). ``k`` doubles from 1 up to ``PROBE_LIMIT`` while ``f``'s gas grows
(a cap within reach shows as a plateau, or as ``g`` failing); when the last two slopes
agree (linear growth), the number of repetitions ``k*`` that takes ``f``'s gas to the limit
is extrapolated, and the variant with ``k*`` repetitions is run to *verify* it: a finding
only when every repetition succeeded and ``f`` then fails for lack of gas (out of gas, or a
revert with under 1/64 of the gas left: a callee starved first). A probe in which ``f``
already fails that way after growing is a verification too.

A victim that reverted is judged too when it did so before any loop went round, at an
ordering comparison of a small value read from such a slot (``require(count > 1500)``: a
threshold more repetitions cross); its growth counts from the first probe in which it
succeeds.

Gas measured after a transaction is net of its refund (clearing storage refunds up to a
fifth of the gas, ``Fork.refund_quotient``) while running out of gas happens before it:
``k*`` is first the repetitions that bring the net gas to the least that can fail (four
fifths of the limit), then, if ``f`` still fits, those that bring it to the limit.

What an attacker is assumed to afford: at most ``MAX_REPETITIONS`` transactions whose gas
is at most ``MAX_BLOCKS`` blocks' worth; beyond that nothing is reported. A growth that
stops (a list capped at a size whose worst case fits in a block, or reset past a size) is
not reported: the verifying run shows ``f`` still fitting, or the repeated ``g`` failing.
A verification is at most ``VERIFY_WORK`` branches' worth of execution (a few seconds; a
transaction counts ``TX_WORK`` branches besides its own): when ``k*`` is more than that,
the variant with as many repetitions as it allows must still show ``f`` growing at the
measured rate, and the finding is *likely*, the limit extrapolated.

The case the finding names is the run's own (the victim last), which the shrinker
shrinks: each replay of it by a fresh oracle probes again (a few short runs), and the
verdict of the long verifying run is shared by the oracle's fresh copies, keyed by the
victim, the repeated transaction and the gas of every probe (the same growth gives the
same verdict). A case of thousands of transactions is never one the shrinker must cut
down.

Not reported by design: a function whose gas grows with its own arguments (the caller
hurting itself: ``f`` is run with the arguments it had), growth an attacker can only make
with ether or with a fresh account per entry (a list that admits each sender once: the
chain has a few senders), growth that a trusted sender's earlier transaction made the
attacker able to make (it named the attacker: ``RatedOracle.granted``).

Cost: off where no target's control-flow graph has a cycle (``has_loop``), and otherwise
only runs that meet the conditions above are probed: the victim read a slot an earlier
successful transaction wrote, and used more gas than its function ever did, or read a
larger small value (a length, a counter) from such a slot than it ever saw. At most
``PAIR_LIMIT`` judgements per pair of functions (victim, repeated) when the victim's loop
went round (a JUMPI ran more than once), one when it did not (a threshold the case did not
reach), ``GUARD_LIMIT`` for reverted thresholds and ``SHUT_LIMIT`` more for thresholds no
probe opened. Key: the contract and the victim function.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, replace

from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.oracle import PostState
from secant.evm.analysis import analyze
from secant.evm.cfg import ControlFlowGraph
from secant.oracles.rated import RatedOracle, function_name
from secant.targets.contract import ContractRun
from secant.types import (
    BranchEvent,
    Finding,
    RunResult,
    Tx,
    TxSeq,
    storage_slot,
)

__all__ = ["GasLimitOracle", "has_loop", "transaction_gas"]

PAIR_LIMIT = 3
"""Judgements of one pair (victim function, repeated function) before it is left alone."""
PROBE_LIMIT = 256
"""Most repetitions a probe runs (k doubles up to it)."""
PROBE_WORK = 60_000
"""Branches' worth of execution the probes of one judgement may run."""
MAX_REPETITIONS = 10_000
"""Most transactions an attacker is assumed to send to grow the state."""
MAX_BLOCKS = 40
"""Most gas those transactions may take, in blocks' worth."""
VERIFY_WORK = 250_000
"""Branches' worth of execution a verifying run may take (a few seconds)."""
TX_WORK = 8
"""What a transaction costs besides its branches, in branches (the EVM's set-up)."""
GUARD_LIMIT = 4
"""Judgements of one pair on runs whose victim reverted at a threshold on grown state."""
SHUT_LIMIT = 16
"""Of those, judgements in which no probe opened the threshold (they count apart)."""
_SMALL = 1 << 64  # a value read below this may be a length or a counter
_ORDERINGS = frozenset({"lt", "gt", "le", "ge", "slt", "sgt", "sle", "sge"})
_VERDICTS = 4096  # verdicts remembered before the memo starts afresh
_LOOPS: dict[bytes, bool] = {}


def has_loop(code: bytes, code_hash: bytes, chain: TestChain) -> bool:
    """Whether ``code`` may loop: its control-flow graph has a cycle.

    The graph's edges (``secant.evm.cfg``) are the fall-throughs and the jumps to pushed
    destinations, with an internal function's call summarised by an edge to where it
    returns: a cycle is a loop (or a recursion), not a function called from two places.
    A jump whose destination no constant gives has no edge, so a loop made only of such
    jumps is missed. Cached per code.
    """
    found = _LOOPS.get(code_hash)
    if found is None:
        successors = ControlFlowGraph.from_code(code, chain.fork).successors
        found = _LOOPS[code_hash] = _cyclic(successors)
    return found


def _cyclic(successors: dict[int, set[int]]) -> bool:
    """Whether the graph has a cycle (an iterative depth-first search, three colours)."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for root in successors:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(sorted(successors.get(root, ()))))]
        while stack:
            node, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                return True
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(sorted(successors.get(child, ())))))
    return False


def transaction_gas(chain: TestChain) -> int:
    """The gas a fuzzed transaction gets: the chain's, else the block's (the fork's cap)."""
    if chain.config.gas_limit is not None:
        return chain.config.gas_limit
    cap = chain.fork.tx_gas_limit_cap
    limit = chain.env.gas_limit
    return min(limit, cap) if cap else limit


@dataclass(frozen=True)
class _Probe:
    """The victim's transaction after ``k`` repetitions (one variant run)."""

    k: int
    repeated: bool  # every repetition succeeded
    success: bool
    starved: bool  # failed for lack of gas
    gas: int
    rep_gas: int  # the gas of one repetition (the largest)
    rep_work: int  # the branches of one repetition (the largest)
    victim_work: int  # the branches of the victim's transaction
    loop: tuple[bytes, int, bool] | None  # where its loop is (``_loop_site``)


@dataclass(frozen=True)
class _Verdict:
    """What verifying a growth showed.

    The victim starved after ``k`` repetitions (``gas``: what it used), or, when
    ``extrapolated``, would after about ``k`` (``gas``: the longest run made, still
    growing, ``longest`` repetitions); ``loop`` is where its loop is (``_loop_site``).
    """

    k: int
    gas: int
    extrapolated: bool
    loop: tuple[bytes, int, bool] | None
    longest: int = 0


class _Memo:
    """What the campaign's oracle and its fresh copies share.

    ``Oracle.fresh`` copies the containers an oracle holds, not this object. The copies
    that judge the shrinker's replays find a verdict the campaign's oracle already paid
    for (``verdicts``), and the judgement budgets and novelty records are the campaign's
    (``pairs``, ``shut``, ``best_gas``, ``best_read``): thousands of replays that shrink
    other findings would otherwise each start with a fresh budget. A replay of the case of
    a finding the campaign reported (``reported``: its key) is judged regardless, so that
    the finding shrinks.
    """

    def __init__(self) -> None:
        self.verdicts: dict[tuple[object, ...], _Verdict | None] = {}
        # The most gas each victim function used, and the largest small value it read from
        # each slot an earlier transaction wrote: a run is judged when it beats one.
        self.best_gas: dict[tuple[int, str], int] = {}
        self.best_read: dict[tuple[int, str, int], int] = {}
        self.pairs: dict[tuple[object, ...], int] = {}  # judgements per pair
        self.shut: dict[tuple[object, ...], int] = {}  # ... in which the victim never ran
        self.reported: set[tuple[object, ...]] = set()


class GasLimitOracle(RatedOracle):
    """Reports functions an attacker's repeated transactions push past a block's gas.

    See the module docstring.
    """

    name = "dos-gas-limit"
    swc = "SWC-128"
    description = ("a function's gas grows with state anyone can grow, until it no longer "
                   "fits in a block (denial of service by the block gas limit)")
    severity = "medium"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        self.active = any(has_loop(code, code_hash, chain)
                          for code_hash, code in self.code_of.values())
        self.limit = transaction_gas(chain)
        self.refund_quotient = chain.fork.refund_quotient
        attackers = [s.address for s in chain.attackers]
        self.attacker = attackers[0] if attackers else None
        users = [s.address for s in chain.users]
        self.victim = users[0] if users else self.deployer
        self.owners = {address: code_hash for address, (code_hash, _) in self.code_of.items()}
        self._opened = False  # whether a probe of the last judgement saw the victim succeed
        # Per code: its control-flow graph, the predecessors of each block and each
        # block's last pc; and the statements found for loop sites (``_entered_from``).
        self._graphs: dict[bytes, tuple[ControlFlowGraph, dict[int, set[int]],
                                        dict[int, int]]] = {}
        self._entries: dict[tuple[bytes, int], int | None] = {}
        self.memo = _Memo()

    # ------------------------------------------------------------------ the trigger
    def idle(self) -> bool:
        """Idle where no target has a loop (its static pre-check)."""
        return not self.active

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding when repeating an earlier transaction starves the last one.

        Repeated by an attacker, the earlier transaction pushes the last one past the gas
        a block holds (module docstring).
        """
        if not self.active or post is None or not isinstance(result, ContractRun):
            return []
        case, outcomes = result.case, result.outcomes
        last = len(case) - 1
        if last < 1 or len(outcomes) != len(case):
            return []
        outcome = outcomes[last]
        opened = outcome.success
        if not opened and not outcome.reverted:
            return []
        victim = case[last]
        contract = self.contract_of(victim)
        if contract not in self.targets:
            return []
        key = (self.name, contract, victim.function)
        if key in self.known:
            return []
        memo = self.memo
        again = key in memo.reported  # a replay of a reported finding's case: judged
        read = self._novel(result, contract, victim.function, opened, again)
        if not read:
            return []
        if opened:
            # A loop that did not go round may be behind a threshold the case did not
            # reach (a list cleared once it is long): one judgement per pair goes to such
            # runs.
            limit = PAIR_LIMIT if self._looped(result, last) else 1
        elif not self._looped(result, last) and self._guarded(result, last, read):
            limit = GUARD_LIMIT
        else:
            return []
        candidates = self._growers(result, set(read))
        if not candidates or self.granted(case, outcomes, last):
            return []
        for index in candidates:
            grower = case[index]
            pair = (contract, victim.function, self.contract_of(grower), grower.function,
                    opened)
            if not again and (memo.pairs.get(pair, 0) >= limit
                              or memo.shut.get(pair, 0) >= SHUT_LIMIT):
                continue
            finding = self._judge(result, post, index, key, opened)
            if finding is not None:
                memo.reported.add(key)
                return self.returned([finding])
            if again:
                continue
            # A threshold that no probe opened says little about the growth behind it:
            # such judgements have a budget of their own.
            counts = memo.pairs if opened or self._opened else memo.shut
            counts[pair] = counts.get(pair, 0) + 1
        return []

    def _novel(self, result: ContractRun, contract: int, function: str,
               opened: bool, again: bool = False) -> dict[int, int]:
        """The slots the victim read that earlier transactions wrote, when the run is new.

        By slot, the largest value read from it. New: the victim used more gas than its
        function ever did when it succeeded (``opened``), or read a larger small value
        from one of those slots (a longer list, a higher counter). Empty otherwise.
        """
        last = len(result.case) - 1
        read: dict[int, int] = {}
        for step, address, read_key, value in result.reads:
            if step == last and (read_key >> 256 or address) in self.owners:
                slot = storage_slot(read_key)
                read[slot] = max(read.get(slot, -1), value)
        if not read:
            return {}
        marks = result.write_marks
        writes = result.writes[:marks[last]] if last < len(marks) else result.writes
        written = {slot for _, _, slot in writes}
        read = {slot: value for slot, value in read.items() if slot in written}
        if not read:
            return {}
        new = again
        best_gas, best_read = self.memo.best_gas, self.memo.best_read
        if opened:
            gas = result.outcomes[last].gas_used
            best = (contract, function)
            if gas > best_gas.get(best, 0):
                best_gas[best] = gas
                new = True
        for slot, value in read.items():
            if value < _SMALL:
                seen = (contract, function, slot)
                if value > best_read.get(seen, 0):
                    best_read[seen] = value
                    new = True
        return read if new else {}

    @staticmethod
    def _guarded(result: ContractRun, index: int, read: dict[int, int]) -> bool:
        """Whether transaction ``index`` compared a small value it read with a bound.

        An ordering (``<``, ``>``, ...) with one of ``read``'s small values on a side: a
        threshold on the state the earlier transactions grew (``require(count > 1500)``),
        which more of them may cross. The caller asks only of a transaction that reverted
        before any loop went round (a revert inside a loop is no threshold).
        """
        values = {value for value in read.values() if value < _SMALL}
        return any(relation in _ORDERINGS and (lhs in values or rhs in values)
                   for _, _, _, relation, lhs, rhs in result.tx_branches(index))

    @staticmethod
    def _looped(result: ContractRun, index: int) -> bool:
        """Whether transaction ``index`` ran some JUMPI more than once (a loop went round)."""
        seen: set[tuple[bytes, int]] = set()
        for code_hash, pc, *_ in result.tx_branches(index):
            site = (code_hash, pc)
            if site in seen:
                return True
            seen.add(site)
        return False

    def _growers(self, result: ContractRun, slots: set[int]) -> list[int]:
        """Earlier successful transactions that wrote one of ``slots``, latest first.

        One per function and contract (the latest): repeating it is what grows the state.
        """
        case, outcomes = result.case, result.outcomes
        marks = result.write_marks
        last = len(case) - 1
        found: list[int] = []
        functions: set[tuple[int, str]] = set()
        for index in range(last - 1, -1, -1):
            if not outcomes[index].success or index >= len(marks):
                continue
            end = marks[index + 1] if index + 1 < len(marks) else len(result.writes)
            if not any(slot in slots for _, _, slot in result.writes[marks[index]:end]):
                continue
            tx = case[index]
            which = (self.contract_of(tx), tx.function)
            if which not in functions:
                functions.add(which)
                found.append(index)
        return found

    # ------------------------------------------------------------------ the judgement
    def _judge(self, result: ContractRun, post: PostState, index: int,
               key: tuple[object, ...], opened: bool) -> Finding | None:
        """Probe the growth of the victim with transaction ``index`` repeated; verify it.

        A victim that reverted in the run (not ``opened``, at a threshold) counts from
        the first probe in which it succeeds.
        """
        case = result.case
        prefix = tuple(replace(tx, storage=()) if tx.storage else tx for tx in case[:-1])
        grower = self._attacker_tx(case[index])
        victim = case[-1]
        if victim.sender in self.attacker_side:
            victim = replace(victim, sender=self.victim)
        victim = replace(victim, storage=())
        if grower is None:
            return None
        points: list[_Probe] = []
        work = 0
        k = 1
        self._opened = False
        while True:
            probe = self._probe(post, prefix, grower, victim, k)
            if probe is None or not probe.repeated:
                return None
            work += k * (probe.rep_work + TX_WORK) + probe.victim_work
            if probe.success:
                self._opened = True
                points.append(probe)
                if len(points) >= 3 and points[-1].gas <= points[-2].gas:
                    return None  # no growth (any more)
            elif probe.starved and len(points) >= 2 and points[-1].gas > points[-2].gas:
                verdict = _Verdict(k, probe.gas, False, probe.loop or points[-1].loop)
                return self._finding(result, grower, victim, points, verdict, key)
            elif points or opened or probe.starved:
                return None
            if k * 2 > PROBE_LIMIT or work + 2 * k * (probe.rep_work + TX_WORK) > PROBE_WORK:
                break
            k *= 2
        # Doubled as far as the probes go (a cap within reach shows as a plateau): the
        # last two slopes must agree for the growth to be extrapolated.
        if len(points) < 3:
            return None
        before, middle, after = points[-3:]
        slope = (after.gas - middle.gas) / (after.k - middle.k)
        earlier = (middle.gas - before.gas) / (middle.k - before.k)
        if not (earlier > 0 and 3 * earlier <= 4 * slope and 3 * slope <= 4 * earlier):
            return None
        memo_key = (grower, victim, tuple((p.k, p.gas) for p in points))
        verdicts = self.memo.verdicts
        if memo_key in verdicts:
            known = verdicts[memo_key]
        else:
            known = self._verify(post, prefix, grower, victim, points)
            if len(verdicts) >= _VERDICTS:
                verdicts.clear()
            verdicts[memo_key] = known
        if known is None:
            return None
        return self._finding(result, grower, victim, points, known, key)

    def _attacker_tx(self, tx: Tx) -> Tx | None:
        """``tx`` as the attacker sends it (None: the chain has no attacker).

        From its sender when that is on the attacker side, else attacker1; no ether, no
        block advance, no overrides.
        """
        sender = tx.sender if tx.sender in self.attacker_side else self.attacker
        if sender is None:
            return None
        return Tx(tx.function, tx.args, sender, 0, 0, 0, tx.to)

    def _probe(self, post: PostState, prefix: TxSeq, grower: Tx, victim: Tx,
               k: int) -> _Probe | None:
        """Run ``prefix``, ``grower`` ``k`` times, then ``victim``; None if it did not run."""
        case = (*prefix, *([grower] * k), victim)
        # An empty forcing before the repetitions: the states after a forcing are neither
        # cached nor kept, and a variant of thousands of transactions would otherwise
        # store the state after each of its heads. The case's own prefix is cached as usual.
        run = post.run_variant(case, forced={len(prefix): {}}, recordings=frozenset())
        outcomes = run.outcomes
        if len(outcomes) != len(case) or not isinstance(run, ContractRun):
            return None
        start, last = len(prefix), len(case) - 1
        repeated = all(o.success for o in outcomes[start:last])
        marks = run.branch_marks
        rep_work = max((marks[i + 1] - marks[i] for i in range(start, last)
                        if i + 1 < len(marks)), default=0)
        branches = run.tx_branches(last) if last < len(marks) else []
        outcome = outcomes[last]
        starved = not outcome.success and (
            outcome.error == "out of gas" or 64 * outcome.gas_used >= 63 * self.limit)
        return _Probe(k, repeated, outcome.success, starved, outcome.gas_used,
                      max((o.gas_used for o in outcomes[start:last]), default=0), rep_work,
                      len(branches), self._loop_site(branches))

    def _loop_site(self, branches: list[BranchEvent]) -> tuple[bytes, int, bool] | None:
        """Where the victim's loop is: ``(code hash, pc, generated)``, or None.

        The JUMPI of a target's code that the victim ran most, when the source map places
        it in a function. A loop the compiler generates (clearing a deleted array) has no
        such place: then the statement that leads to it, the nearest block of a function
        before it in the control-flow graph (``generated`` True). None when there is
        neither (the finding names the function).
        """
        sites = [(code_hash, pc) for code_hash, pc, *_ in branches if code_hash in self.codes]
        if not sites:
            return None
        top, count = Counter(sites).most_common(1)[0]
        if count < 2 or self._in_function(top):
            return (*top, False)
        statement = self._entered_from(*top)
        return None if statement is None else (top[0], statement, True)

    def _entered_from(self, code_hash: bytes, pc: int) -> int | None:
        """The last pc of the nearest block placed in a function that leads to ``pc``."""
        site = (code_hash, pc)
        if site in self._entries:
            return self._entries[site]
        self._entries[site] = found = self._search_entry(code_hash, pc)
        return found

    def _search_entry(self, code_hash: bytes, pc: int) -> int | None:
        """``_entered_from``, searched: breadth first over the blocks before ``pc``'s."""
        known = self._graphs.get(code_hash)
        if known is None:
            contract = self.codes[code_hash]
            graph = ControlFlowGraph.from_code(self.code_of[contract.address][1], self.fork)
            before: dict[int, set[int]] = {}
            for source, targets in graph.successors.items():
                for target in targets:
                    before.setdefault(target, set()).add(source)
            block_ends = {start: instructions[-1][0] for start, instructions in graph.blocks
                          if instructions}
            known = self._graphs[code_hash] = (graph, before, block_ends)
        cfg, preds, ends = known
        first = cfg.block_of(pc)
        seen, queue = {first}, deque([first])
        while queue:
            block = queue.popleft()
            end = ends.get(block)
            if block != first and end is not None and self._in_function((code_hash, end)):
                return end
            for earlier in sorted(preds.get(block, ())):
                if earlier not in seen:
                    seen.add(earlier)
                    queue.append(earlier)
        return None

    def _in_function(self, site: tuple[bytes, int]) -> bool:
        """Whether the source map places ``site`` in a function."""
        location = self.codes[site[0]].locate(site[1])
        return location is not None and location.function is not None

    def _verify(self, post: PostState, prefix: TxSeq, grower: Tx, victim: Tx,
                points: list[_Probe]) -> _Verdict | None:
        """Run the extrapolated number of repetitions: a verdict when the victim starves.

        First the repetitions that bring the victim's net gas to the least that can fail
        (refunds come after running out of gas), then, if it still fits, those that bring
        it to the limit. Beyond what a verification may run, the longest run it may must
        still show the victim growing at the measured rate (then extrapolated).
        """
        middle, after = points[-2], points[-1]
        slope = (after.gas - middle.gas) / (after.k - middle.k)
        quotient = self.refund_quotient
        goals = [self.limit * (quotient - 1) // quotient, self.limit]
        ks = []
        for goal in goals:
            more = max(1, -(-(goal - after.gas) // int(max(1, slope))))
            if after.k + more not in ks:
                ks.append(after.k + more)
        first = ks[0]
        rep_gas = max(p.rep_gas for p in points)
        if first > MAX_REPETITIONS or first * rep_gas > MAX_BLOCKS * self.limit:
            return None  # more than an attacker is assumed to afford
        rep_work = max(p.rep_work for p in points) + TX_WORK
        victim_rate = max(0.0, (after.victim_work - middle.victim_work)
                          / (after.k - middle.k))
        for k in ks:
            if k > MAX_REPETITIONS:
                break
            if k * rep_work + after.victim_work + victim_rate * (k - after.k) > VERIFY_WORK:
                return self._extrapolate(post, prefix, grower, victim, points, slope, k,
                                         rep_work, victim_rate)
            probe = self._probe(post, prefix, grower, victim, k)
            if probe is None or not probe.repeated:
                return None
            if probe.starved:
                return _Verdict(k, probe.gas, False, after.loop or probe.loop)
            if not probe.success or 4 * (probe.gas - after.gas) < 3 * slope * (k - after.k):
                return None  # the growth slowed down or stopped: it fits
        return None  # it still fits

    def _extrapolate(self, post: PostState, prefix: TxSeq, grower: Tx, victim: Tx,
                     points: list[_Probe], slope: float, goal: int, rep_work: int,
                     victim_rate: float) -> _Verdict | None:
        """A verdict extrapolated to ``goal`` repetitions, or None.

        The longest run a verification may take must still grow at about ``slope`` (or
        starve the victim already: then verified).
        """
        after = points[-1]
        # The most repetitions whose run stays within what a verification may take (the
        # victim's own work grows with them too).
        k = int((VERIFY_WORK - after.victim_work + victim_rate * after.k)
                / (rep_work + victim_rate))
        if k <= after.k:
            return None
        probe = self._probe(post, prefix, grower, victim, k)
        if probe is None or not probe.repeated:
            return None
        if probe.starved:
            return _Verdict(k, probe.gas, False, after.loop or probe.loop)
        if not probe.success or 4 * (probe.gas - after.gas) < 3 * slope * (k - after.k):
            return None  # the growth slowed down: it may stop before the limit
        return _Verdict(goal, probe.gas, True, after.loop or probe.loop, k)

    # ------------------------------------------------------------------ wording
    def _finding(self, result: ContractRun, grower: Tx, victim: Tx,
                 points: list[_Probe], verdict: _Verdict,
                 key: tuple[object, ...]) -> Finding:
        """The finding: which function stops fitting, after what, and the measurements."""
        case = result.case
        contract = self.targets[self.contract_of(victim)]
        name = function_name(victim)
        pc: int | None
        if verdict.loop is not None:
            code_hash, pc, generated = verdict.loop
            place = self.where(self.codes.get(code_hash, contract), pc)
            at = (f" (the loop the compiler made for {place})" if generated
                  else f" (its loop at {place})") if place else ""
        else:
            pc = self._function_pc(contract, name)
            place = self.where(contract, pc) if pc is not None else None
            at = f" (at {place})" if place else ""
        growth = (points[-1].gas - points[-2].gas) / (points[-1].k - points[-2].k)
        measured = ", ".join(f"{p.gas:,} after {p.k}" for p in points[1:])
        first = points[0]
        measured = (f"{first.gas:,} gas after {first.k} call{'s' if first.k > 1 else ''}, "
                    f"{measured} (about {growth:,.0f} more per call)")
        repeated = function_name(grower)
        attacker = self.who(grower.sender)
        before = (f"after the case's first {len(case) - 1} transactions"
                  if len(case) > 2 else "after the case's first transaction")
        sender = self.who(victim.sender)
        if verdict.extrapolated:
            confidence = "likely"
            what = (f"{before}, then about {verdict.k:,} calls of {grower.function} by "
                    f"{attacker} (no ether), {sender} calling {victim.function} on "
                    f"{contract.name}{at} would need more than the {self.limit:,} gas a "
                    f"transaction can use in a block; extrapolated: the longest run made, "
                    f"{verdict.longest:,} calls, still grew at that rate ({verdict.gas:,} gas)")
            why = ("the growth was measured and extrapolated, not run to the limit, and may "
                   "stop before it")
        else:
            confidence = "certain"
            what = (f"{before}, then {verdict.k:,} calls of {grower.function} by {attacker} "
                    f"(no ether), {sender} calling {victim.function} on {contract.name}{at} "
                    f"needs more than the {self.limit:,} gas a transaction can use in a block "
                    "and fails for lack of gas")
            why = "the run with those calls shows the function failing"
        detail = (f"{name} of {contract.name} stops fitting in a block: {what}. Its gas grows "
                  f"with every call of {repeated}: {measured}. {attacker} can make those calls "
                  f"at will, so {name} can be blocked for good; bound what one transaction "
                  "walks (a cap on the list whose worst case fits in a block, pages, or pull "
                  "payments that each participant claims). " + self.rating(confidence, why))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=name, pc=pc or 0, source=place, detail=detail, key=key,
                       case=case, oracle=self.name, confidence=confidence)

    def _function_pc(self, contract: DeployedContract, name: str) -> int | None:
        """A pc the source map places in function ``name`` (its widest: the definition)."""
        known = self.code_of.get(contract.address)
        if known is None:
            return None
        best: tuple[int, int] | None = None
        for pc, _, _ in analyze(known[1], known[0], self.fork).instructions:
            location = contract.locate(pc)
            if location is not None and location.function == name and (
                    best is None or location.length > best[0]):
                best = (location.length, pc)
        return best[1] if best is not None else None
