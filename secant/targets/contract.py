"""The contract target: runs test cases (transaction sequences) on a :class:`TestChain`.

Every run starts from the chain's sealed post-deployment snapshot (``TestChain.reset``,
O(changes)), advances the block by each transaction's deltas and sends the transaction
with a :class:`TraceRecorder` attached (a transaction whose sender is an attacker contract
goes from an attacker account through the contract's ``attack``, so the target sees the
contract as ``msg.sender``). The result carries the recorder's containers, the
outcome of each transaction and the path id of the *last* transaction: earlier
transactions only build up state (Harvey §5).

Path ids hash the last transaction's branch edges in order of first occurrence with
AFL-style hit-count buckets (1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+), so a loop that runs
one more time is the same path while one that runs twice as often is a new one.

An optional :class:`~secant.targets.prefix_cache.PrefixCache` skips re-running the
unchanged prefix ``case[:-1]`` when only the last transaction changed.

A target that records ``dataflow`` starts every case's storage labels from those the
deployment left (``deployment_flow``): a constructor that stored a block value (a
lottery's answer drawn from ``blockhash``) hands the label on to the transaction that
reads it, as a transaction of the case would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol, runtime_checkable
from weakref import WeakKeyDictionary

from secant.abi import AbiFunction
from secant.chain.attackers import AttackerKind, attack_calldata
from secant.chain.chain import CallReads, TestChain
from secant.chain.cheatcodes import GLOBAL_FAIL_SLOT, HEVM_ADDRESS
from secant.chain.deploy import DeployedContract
from secant.evm.analysis import analyze, code_end
from secant.evm.crypto import keccak256
from secant.evm.env import BlockEnv
from secant.evm.opcodes import BLOCKHASH, COINBASE, GASLIMIT, NUMBER, PREVRANDAO, TIMESTAMP
from secant.evm.transaction import InvalidTransaction
from secant.targets.calldata import encoder_for
from secant.targets.prefix_cache import PrefixCache
from secant.targets.taint import DEPLOYMENT_LABELS
from secant.targets.trace import (
    AccessEvent,
    CallEvent,
    LogEvent,
    PanicEvent,
    RecorderMark,
    SelfdestructEvent,
    TraceRecorder,
    dataflow_of,
    make_recorder,
    symbolic_of,
    wraps_of,
)
from secant.types import BranchEvent, RunResult, TxOutcome, TxSeq

__all__ = ["ContractRun", "ContractTarget", "bucket", "deployment_flow", "path_hash"]


REPLAY_PREFIXES = 512
"""Prefixes a replaying target keeps (of the rounds that ask for replays)."""

Forced = Mapping[int, Mapping[int, int]]
"""Wei forced onto accounts before transactions: ``{index: {address: wei}}`` (``run``)."""

GasLimits = Mapping[int, int]
"""Gas limits of chosen transactions, ``{index: gas}``, instead of the chain's (``run``)."""

_RECORDS: dict[str, Callable[[RunResult, object], Any]] = {
    "dataflow": dataflow_of, "arithmetic": wraps_of, "symbolic": symbolic_of}
"""How each recording a run may be asked for is read from a result and its target."""


def _own_recording(result: RunResult, target: ContractTarget, name: str) -> Any | None:
    """The ``name`` records ``result`` carries, or ``target``'s recorder holds for it."""
    read = _RECORDS.get(name)
    if read is None:
        raise ValueError(f"no recording {name!r} can be asked for (one of {sorted(_RECORDS)})")
    if name not in target.recordings and name not in getattr(result, "__dict__", ()):
        return None
    return read(result, target)


_BLOCK_OPS = frozenset({TIMESTAMP, NUMBER, COINBASE, PREVRANDAO, BLOCKHASH, GASLIMIT})

# The deployment labels of each chain, with the number of set-up transactions they cover.
_DEPLOYMENT_FLOWS: WeakKeyDictionary[TestChain, tuple[int, Mapping[tuple[int, int], int]]] = (
    WeakKeyDictionary())


def deployment_flow(chain: TestChain) -> Mapping[tuple[int, int], int]:
    """The storage labels the chain's set-up left: (address, slot) -> ``DEPLOYMENT_LABELS``.

    Only slots with such a label are in it. The set-up (every deployment, the constructors
    of the contracts they created, a test contract's ``setUp()``) runs once more, on a
    state of its own, with the ``dataflow`` recording (``TestChain.replay_setup``), the
    first time a chain is asked: once per chain, and never for a campaign whose runs need
    no dataflow. Not even that when no code the set-up may have run holds a block-value
    opcode (``_setup_reads_block``). Empty when the replay did not end as the set-up did.
    """
    count = chain.setup_transactions
    known = _DEPLOYMENT_FLOWS.get(chain)
    if known is not None and known[0] == count:
        return known[1]
    labels: Mapping[tuple[int, int], int] = {}
    if count and _setup_reads_block(chain):
        recorder = TraceRecorder({"dataflow"})
        if chain.replay_setup(recorder, recorder.begin_tx):
            labels = {key: kept for key, value in recorder.flow_storage.items()
                      if (kept := value & DEPLOYMENT_LABELS)}
    _DEPLOYMENT_FLOWS[chain] = (count, labels)
    return labels


def _setup_reads_block(chain: TestChain) -> bool:
    """Whether code the chain's set-up may have run holds a block-value opcode.

    The code of every contract on the chain but the attacker contracts (secant's own): its
    creation code where it is known, its runtime code (a constructor or ``setUp()`` may
    call it). A contract a constructor created from code that matches nothing compiled
    may have read anything.
    """
    fork = chain.fork
    for contract in chain.contracts:
        if contract.role == "attacker":
            continue
        codes = [chain.code_at(contract.address)]
        if contract.compiled is not None:
            codes.append(contract.compiled.creation.analysis_bytes())
        elif contract.role == "created":
            return True
        for code in codes:
            end = code_end(code)
            if any(op in _BLOCK_OPS for pc, op, _ in
                   analyze(code, keccak256(code), fork).instructions if pc < end):
                return True
    return False


def bucket(count: int) -> int:
    """AFL's hit-count bucket of an edge executed ``count`` times."""
    if count <= 3:
        return count
    if count <= 7:
        return 4
    if count <= 15:
        return 5
    if count <= 31:
        return 6
    if count <= 127:
        return 7
    return 8


# ``bucket`` of every count below 128 (every larger count is in bucket 8): path ids look a
# count up for every distinct edge of every run.
_BUCKETS = tuple(bucket(count) for count in range(128))

_CODE_NUMBERS: dict[bytes, int] = {}


def code_number(code_hash: bytes) -> int:
    """A code hash as an int, for hashes that must not depend on the process.

    Python salts the hash of bytes per interpreter (``PYTHONHASHSEED``), not that of ints:
    path ids built from ints are the same in every process, so the workers of one campaign
    on other machines (Ray actors) count the same paths as the same.
    """
    number = _CODE_NUMBERS.get(code_hash)
    if number is None:
        number = _CODE_NUMBERS[code_hash] = int.from_bytes(code_hash[:8], "big")
    return number


def path_hash(branches: Sequence[BranchEvent], outcome: int) -> int:
    """The path id of one transaction's branches (see the module docstring).

    The same in every process (``code_number``).
    """
    counts: dict[tuple[bytes, int, bool], int] = {}
    get = counts.get
    for code_hash, pc, taken, _, _, _ in branches:
        key = (code_hash, pc, taken)
        counts[key] = get(key, 0) + 1
    numbers = _CODE_NUMBERS
    buckets = _BUCKETS
    return hash((outcome, tuple([(numbers.get(code) or code_number(code), pc, taken,
                                  buckets[n] if n < 128 else 8)
                                 for (code, pc, taken), n in counts.items()])))


@runtime_checkable
class StepObserver(Protocol):
    """Watches a run transaction by transaction (a property oracle checks after each).

    ``start`` comes before the first transaction the target runs in every run, on the state
    it starts from (the deployed state in a run from the start); ``after_step`` after each
    transaction the target executes, with the target's post-state in place (a prefix the
    target resumed after, from the prefix cache or its last run, is not executed again: it
    was observed when it ran).
    """

    def start(self, case: TxSeq, target: ContractTarget) -> None:
        """A run of ``case`` begins from the post-deployment state."""
        ...

    def after_step(self, index: int, case: TxSeq, outcome: TxOutcome,
                   target: ContractTarget) -> None:
        """Transaction ``index`` of ``case`` ended with ``outcome``."""
        ...


@dataclass
class ContractRun(RunResult):
    """A run of a test case on the chain: the engine's fields plus the EVM's facts.

    ``writes`` are SSTOREs ``(code hash, pc, slot)``; ``reads`` are the SLOADs
    ``(tx, address, slot, value)`` of the last transaction's called contract. The other
    containers hold what the recordings asked for (``secant.targets.trace``) and stay
    empty otherwise: ``panics``, ``calls``, ``logs``, ``created``, ``selfdestructs``,
    ``balance_changes`` (address -> wei after the case minus before it), ``transitions``,
    ``accesses`` (the ``storage`` recording).
    """

    panics: list[PanicEvent] = field(default_factory=list)
    calls: list[CallEvent] = field(default_factory=list)
    logs: list[LogEvent] = field(default_factory=list)
    created: list[int] = field(default_factory=list)
    selfdestructs: list[SelfdestructEvent] = field(default_factory=list)
    balance_changes: dict[int, int] = field(default_factory=dict)
    transitions: set[tuple[bytes, int, int]] = field(default_factory=set)
    accesses: list[AccessEvent] = field(default_factory=list)


class ContractTarget:
    """Runs test cases on a deployed chain; knows the callable functions by signature.

    ``recordings`` names what the recorder keeps beyond what the engine reads (see
    ``secant.targets.trace.RECORDINGS``); a campaign passes those its oracles need. With
    ``resume`` (the default) a case that shares a prefix with the last one run starts after
    it; without, and without a prefix cache, every transaction of every case runs.
    """

    def __init__(self, chain: TestChain, recordings: frozenset[str] = frozenset({"panics"}),
                 path_scope: str = "last", prefix_cache: PrefixCache | None = None,
                 step_observers: Sequence[StepObserver] = (), resume: bool = True) -> None:
        if chain.main is None:
            raise ValueError("the chain has no main contract")
        self.chain = chain
        self.main: DeployedContract = chain.main
        self.recordings = frozenset(recordings)
        self.step_observers = list(step_observers)
        # Told of an observer that raised, with the error: the observer is dropped and the
        # run goes on (an oracle's bug costs the campaign that oracle alone). None: the
        # error goes on to the caller.
        self.observer_failed: Callable[[StepObserver, Exception], None] | None = None
        self.recorder: TraceRecorder = make_recorder(self.recordings)
        if "dataflow" in self.recordings:
            self.recorder.flow_base = deployment_flow(chain)
        # Targets replaying runs with a recording this one lacks (``recording``), each
        # with the sealed state its cache is valid for, and the last run replayed.
        self._replayers: dict[str, tuple[ContractTarget, object]] = {}
        self._replayed: tuple[RunResult, str, Any] | None = None
        self.replays = 0  # cases run again for a recording (``recording``)
        # The accounts whose balance changes the balances recording reports, with their
        # balances after deployment.
        self._balances_before: dict[int, int] = {}
        if "balances" in self.recordings:
            chain.reset()
            accounts = [s.address for s in chain.senders] + [c.address for c in chain.contracts]
            self._balances_before = {a: chain.state.balance(a) for a in accounts}
        # Entries hold diffs against this chain's base and this recorder's containers, so a
        # cache must not be shared between targets (see ``secant.targets.prefix_cache``).
        self.prefix_cache = prefix_cache
        # The last run's transaction boundaries (index i: the state before its transaction
        # i, None where it has none), the case and the chain's epoch after it: a next case
        # that shares a prefix with it resumes there by rewinding the chain's journal.
        # Only with a recorder whose marks cover everything it records, and unless the
        # caller wants every transaction run (observers that are new for every case).
        self._boundaries: list[_Boundary | None] | None = (
            [] if resume and self.recorder.rewindable else None)
        self._last_case: TxSeq = ()
        self._epoch = -1
        self._clock = (0, 0)  # (block number, timestamp) the last run's last step began at
        self.rewinds = 0  # runs resumed from the last run's boundary
        if path_scope not in ("last", "all"):
            raise ValueError(f"path_scope must be 'last' or 'all', not {path_scope!r}")
        # "last": Harvey's demand-driven path ids; "all": every transaction's branches
        # (Harvey's configuration D, which fuzzes sequences eagerly).
        self.path_scope = path_scope
        # Attacker contracts as senders: their transactions go from an attacker account to
        # the contract's attack(target, data, value), which makes the call, so the target
        # sees the contract as msg.sender (its fallback may call back: sFuzz's attackers).
        relay = chain.attackers[0].address if chain.attackers else chain.deployer.address
        self.relays: dict[int, int] = {c.address: relay for c in chain.attacker_contracts}
        # Their storage is the attackers' own counters: no probe of a call fakes it. The
        # answering attacker's is the word it answers, which a contract that trusts it
        # reads: the probes may fake it and the data flow sees ``answer(word)`` write it.
        self.recorder.unwatched = frozenset(
            c.address for c in chain.attacker_contracts if c.kind != AttackerKind.ANSWERING)
        self._functions: dict[tuple[int, str], AbiFunction] = {}
        # Encoders are compiled on a function's first call: a linked library's ABI may list
        # functions no transaction can call (solc 0.4 gives a storage-struct parameter the
        # type "Lib.Struct storage"), which have no encoder and are never fuzzed.
        self._encoders: dict[tuple[int, str], Callable[[Sequence[Any]], bytes]] = {}
        for contract in chain.contracts:
            for fn in contract.functions(include_read_only=True):
                key = (contract.address, fn.signature if fn.kind == "function" else fn.kind)
                self._functions[key] = fn

    def function(self, signature: str, to: int | None = None) -> AbiFunction:
        """The ABI function ``signature`` of contract ``to`` (default: the main one)."""
        return self._functions[(self.main.address if to is None else to, signature)]

    def calldata(self, signature: str, args: Sequence[Any], to: int | None = None) -> bytes:
        """The calldata of a call (empty for fallback/receive)."""
        key = (self.main.address if to is None else to, signature)
        encoder = self._encoders.get(key)
        if encoder is None:
            fn = self._functions.get(key)
            if fn is None or fn.kind != "function":
                return b""
            encoder = self._encoders[key] = encoder_for(fn)
        return encoder(args)

    def run(self, case: TxSeq, overrides_last: bool = True, forced: Forced | None = None,
            gas: GasLimits | None = None) -> ContractRun:
        """Run ``case`` from the post-deployment state and return what it did.

        A transaction the chain rejects (for instance a value above the sender's balance)
        counts as failed and changes nothing. ``Tx.storage`` overrides apply to the called
        contract's reads (only on the last transaction unless ``overrides_last`` is False).
        ``forced`` adds wei to accounts right before the transactions it names, as a
        self-destruct's beneficiary or a future CREATE address paid in advance gets it: no
        code runs (``run_variant``); ``gas`` gives the transactions it names another gas
        limit than the chain's (one below their intrinsic gas is rejected). The states
        after a forcing or another gas limit are neither cached nor kept for a next case to
        resume from.

        The case's first transactions are not run again when it can resume after them
        (``_resume``): from a boundary of the last run that the case shares, or from the
        prefix cache. Each transaction boundary of this run is kept for the next one, and
        the cache stores the prefixes it expects on the way. The result is the same as a
        run from the start.
        """
        chain = self.chain
        recorder = self.recorder
        outcomes: list[TxOutcome] = []
        cache = self.prefix_cache
        # The states before the first forcing (or other gas limit) are those of the plain
        # case: only they may come from the cache or the last run, and only they are kept
        # for later runs.
        altered = _first_altered(case, forced, gas)
        clean = max(0, min(len(case) - 1, altered))
        key = (_prefix_key(case[:clean], overrides_last)
               if cache is not None and clean > 0 else None)
        start, admitted = self._resume(case, key, outcomes, clean)
        # Observers start on the state the run starts from (the first run's: the deployed
        # state); the transactions resumed over were observed when they ran.
        for observer in self.step_observers:
            try:
                observer.start(case, self)
            except Exception as exc:
                self._drop_observer(observer, exc)
        keep = self._boundaries is not None
        if keep and start:
            self._keep_boundary(start, outcomes)
        last = len(case) - 1
        for index in range(start, len(case)):
            if forced and index in forced:
                for address, wei in forced[index].items():
                    chain.state.add_balance(address, wei)
            self._run_txs(case, index, index + 1, overrides_last, outcomes,
                          gas.get(index) if gas else None)
            if key is not None and index < last:
                assert cache is not None
                head = key[:index + 1]
                if (index + 1 < len(key) and cache.expected(head)) or (
                        index + 1 == len(key) and admitted):
                    cache.put(head, chain.state.changes_since(chain.base_snapshot),
                              chain.env, recorder.checkpoint(), tuple(outcomes))
            # The state after the last transaction resumes a case that extends this one,
            # unless its reads were overridden (the next case's prefix runs plainly) or
            # observers looked at it as the last (a property's afterInvariant call).
            if keep and index < clean + (altered >= len(case)) and (
                    index < last or not (overrides_last and case[last].storage
                                         or self.step_observers)):
                self._keep_boundary(index + 1, outcomes, unread=index == last)
        self._last_case = case
        self._epoch = chain.epoch
        recorder.settle()
        path = self._path_id(outcomes)
        result = ContractRun(case, outcomes, path, recorder.blocks, recorder.edges,
                             recorder.branches, recorder.branch_marks, recorder.sstores,
                             recorder.sstore_marks, recorder.sloads, panics=recorder.panics,
                             calls=recorder.calls, logs=recorder.logs,
                             created=recorder.created, selfdestructs=recorder.selfdestructs,
                             accesses=recorder.accesses)
        result.steps_run = len(case) - start
        result.clock = self._clock
        transitions = getattr(recorder, "transitions", None)
        if transitions is not None:
            result.transitions = transitions
        if self._balances_before:
            balance = chain.state.balance
            result.balance_changes = {
                address: now - before for address, before in self._balances_before.items()
                if (now := balance(address)) != before}
        if recorder.written:
            # Slots written back to their old value leave the state as it was: only the
            # changed ones count (no change at all hashes as the post-deployment state, 0).
            storage_at = chain.state.storage_at
            changed = sorted((address, slot, now) for (address, slot), before
                             in recorder.written.items()
                             if (now := storage_at(address, slot)) != before)
            result.state_hash = hash(tuple(changed)) if changed else 0
            result.stored = tuple(now for _, _, now in changed)
        return result

    def _resume(self, case: TxSeq, key: TxSeq | None, outcomes: list[TxOutcome],
                clean: int) -> tuple[int, bool]:
        """Bring chain and recorder to the state after the longest prefix at hand.

        Returns how many leading transactions of ``case`` need not run (at most ``clean``),
        and whether the cache admits ``key`` (the prefix ``case[:clean]``, ``case[:-1]``
        unless a forcing comes earlier) now that it missed. The candidates:
        a boundary of the last run that ``case`` shares (the chain's journal is rewound
        to it: the cheapest), the cache's entry of ``key`` and its longest cached head.
        Otherwise the run starts from the post-deployment state.
        """
        chain = self.chain
        recorder = self.recorder
        shared = min(self._shared_boundary(case), clean)
        while shared and self._boundaries[shared] is None:  # type: ignore[index]
            shared -= 1
        cache = self.prefix_cache
        admitted = False
        if key is not None and shared < clean:
            assert cache is not None
            entry = cache.get(key)
            length = len(key)
            if entry is None:
                admitted = cache.admit(key)
                length, entry = cache.longest_head(key, shared)
                if entry is not None:
                    cache.partial_hits += 1
            if entry is not None:
                chain.reset()
                chain.state.apply(entry.diff)
                chain.blocks.reset(entry.env)
                recorder.restore(entry.recorder)
                outcomes.extend(entry.outcomes)
                self._restart_boundaries()
                return length, admitted
        if shared:
            boundary = self._boundaries[shared]  # type: ignore[index]
            assert boundary is not None
            chain.state.revert(boundary.snapshot)
            chain.blocks.reset(boundary.env)
            recorder.rewind(boundary.recorder)
            outcomes.extend(boundary.outcomes)
            del self._boundaries[shared + 1:]  # type: ignore[union-attr]
            self.rewinds += 1
            return shared, admitted
        chain.reset()
        recorder.reset()
        self._restart_boundaries()
        return 0, admitted

    def _shared_boundary(self, case: TxSeq) -> int:
        """The longest prefix of ``case`` whose state a boundary of the last run holds.

        0 when there is none, or when the chain was reset since (by another target on
        the same chain: the journal positions are then another run's). At most
        ``len(case) - 1``: the last transaction always runs. A transaction with storage
        overrides ends the shared prefix: whether they applied depends on its place.
        """
        boundaries = self._boundaries
        if not boundaries or self.chain.epoch != self._epoch:
            return 0
        last_case = self._last_case
        most = min(len(case) - 1, len(last_case), len(boundaries) - 1)
        shared = 0
        # Identity first: a mutant shares its seed's Tx objects, and Tx equality compares
        # every field.
        while shared < most:
            tx = case[shared]
            if tx.storage or (tx is not last_case[shared] and tx != last_case[shared]):
                break
            shared += 1
        while shared and boundaries[shared] is None:
            shared -= 1
        return shared

    def _restart_boundaries(self) -> None:
        """Forget the last run's boundaries (the chain was reset or restored)."""
        if self._boundaries is not None:
            self._boundaries = []

    def _keep_boundary(self, index: int, outcomes: list[TxOutcome], unread: bool = False
                       ) -> None:
        """Remember the state before transaction ``index`` (after ``index`` of them).

        A boundary the list has already (the one a rewind resumed from) stays. ``unread``:
        the boundary follows the case's last transaction (``TraceRecorder.mark``).
        """
        boundaries = self._boundaries
        assert boundaries is not None
        while len(boundaries) <= index:
            boundaries.append(None)
        if boundaries[index] is None:
            boundaries[index] = _Boundary(self.chain.state.snapshot(), self.chain.env,
                                          self.recorder.mark(unread), tuple(outcomes))
    def calls(self, calls: Sequence[tuple[int, bytes]], sender: int | None = None,
              record: bool = False, reads: CallReads | None = None) -> list[TxOutcome]:
        """Read-only calls in a row on the state the last run left (see ``call``).

        ``reads``, when given, is filled in with what they read (``CallReads``).
        """
        caller = self.chain.deployer.address if sender is None else sender
        if record:
            with self.recorder.side_call():
                done = self.chain.static_calls(caller, calls, self.recorder, reads)
        else:
            done = self.chain.static_calls(caller, calls, reads=reads)
        return [TxOutcome(d.success, d.reverted, d.output, d.gas_used, d.error) for d in done]

    def branches_logged(self) -> int:
        """How many comparisons the run has recorded so far (for ``branches_since``)."""
        return len(self.recorder.branches)

    def branches_since(self, count: int) -> tuple[BranchEvent, ...]:
        """The comparisons recorded since ``branches_logged`` said ``count``."""
        return tuple(self.recorder.branches[count:])

    def log_branches(self, events: Sequence[BranchEvent]) -> None:
        """Record ``events`` again, as the side call that recorded them would.

        For an oracle that knows a read-only call would do exactly what it did before (the
        same state where it looked, the same block): the run's record is then the one the
        call would have made, at no cost.
        """
        self.recorder.branches.extend(events)

    def objective(self, site: bytes, pc: int, taken: bool, relation: str, lhs: int,
                  rhs: int) -> None:
        """Add an objective to the current run: a comparison no JUMPI made, as a branch.

        An oracle's way to steer the search (a property's distance to a new best value):
        ``site`` names it (never a 32-byte code hash, so it cannot collide with code), and
        the engine treats it as any branch of the transaction being observed, an edge to
        cover and a cost to minimise.
        """
        self.recorder.objective(site, pc, taken, relation, lhs, rhs)

    def recording(self, result: RunResult, name: str, replay: bool = True) -> Any | None:
        """The ``name`` records of ``result`` (``dataflow``, ``arithmetic``, ``symbolic``).

        This target's own while its recorder records ``name`` and still holds that very
        run; otherwise, with ``replay``, the case runs again on a target of this one's with
        that recording. None when there are none: no replay asked, a result of no contract
        run, or a replay that did not end as the run did (same successes, same gas).

        One replay serves every oracle that asks about the same run. A replaying target
        keeps a prefix cache of its own, valid for the chain's sealed state: the candidates
        of one of Harvey's rounds share the seed's prefix and differ in the last
        transaction, so each replay steps that transaction only.
        """
        own = _own_recording(result, self, name)
        if own is not None or not replay or not isinstance(result, ContractRun):
            return own
        memo = self._replayed
        if memo is not None and memo[0] is result and memo[1] == name:
            return memo[2]
        base = self.chain.base_snapshot
        known = self._replayers.get(name)
        if known is None or known[1] != base:  # a cache is valid for one sealed state only
            replayer = ContractTarget(self.chain, frozenset({name}), path_scope=self.path_scope,
                                      prefix_cache=PrefixCache(max_entries=REPLAY_PREFIXES))
            self._replayers[name] = (replayer, base)
        else:
            replayer = known[0]
        if replayer.prefix_cache is not None and len(result.case) > 1:
            replayer.prefix_cache.expect(result.case[:-1])
        again = replayer.run(result.case)
        self.replays += 1
        same = [(o.success, o.gas_used) for o in again.outcomes] == [
            (o.success, o.gas_used) for o in result.outcomes]
        found = _own_recording(again, replayer, name) if same else None
        self._replayed = (result, name, found)
        return found

    def run_variant(self, case: TxSeq, forced: Forced | None = None,
                    recordings: frozenset[str] = frozenset({"calls"}),
                    gas: GasLimits | None = None) -> ContractRun:
        """A run of ``case``, a variant of a run's case, on a target of this one's.

        For an oracle that asks what would have happened otherwise: the same transactions
        in another order, with wei forced onto accounts right before some of them
        (``forced``: ``{index: {address: wei}}``, see ``run``), or with other gas limits
        for some of them (``gas``: ``{index: gas}``, as the sender of a transaction
        chooses its gas). The run records ``recordings``, and the result is what ``run``
        gives (its outcomes, coverage, branches, writes and the recordings).

        Like ``recording``'s replays it runs on a target of its own (one per set of
        recordings, with a prefix cache valid for the chain's sealed state: variants of
        one round's candidates share their prefix), counts in ``replays`` and is as
        deterministic as any run. The chain is left in the state this target's last run
        left (restored at the cost of that run's changes), so ``call`` and
        ``storage_at`` still answer about the run being judged.
        """
        chain = self.chain
        base = chain.base_snapshot
        # What this target's run left, to put back afterwards (before a new replaying
        # target is built: one that records balances resets the chain to read them).
        left, env = chain.state.changes_since(base), chain.env
        name = "variant:" + ",".join(sorted(recordings))
        known = self._replayers.get(name)
        if known is None or known[1] != base:  # a cache is valid for one sealed state only
            replayer = ContractTarget(chain, recordings, path_scope=self.path_scope,
                                      prefix_cache=PrefixCache(max_entries=REPLAY_PREFIXES))
            self._replayers[name] = (replayer, base)
        else:
            replayer = known[0]
        clean = _first_altered(case, forced, gas)
        if replayer.prefix_cache is not None and 1 < clean:
            replayer.prefix_cache.expect(case[:min(clean, len(case) - 1)])
        try:
            found = replayer.run(case, forced=forced, gas=gas)
        finally:
            chain.reset()
            chain.state.apply(left)
            chain.blocks.reset(env)
            # Another target ran on the chain: this one's boundaries are another state's.
            self._restart_boundaries()
        self.replays += 1
        return found

    def storage_at(self, address: int, slot: int) -> int:
        """The word the last run left in ``slot`` of ``address``'s storage."""
        return self.chain.state.storage_at(address, slot)

    def call(self, to: int, data: bytes, sender: int | None = None,
             record: bool = False, reads: CallReads | None = None) -> TxOutcome:
        """A read-only call on the state the last run left (nothing it does persists).

        Oracles use it to ask the post-state questions (a property's value, a balance
        getter); the next ``run`` starts from the post-deployment state as always. With
        ``record``, the call's blocks and comparisons join the current transaction's in
        the run's result (``TraceRecorder.side_call``).
        """
        return self.calls([(to, data)], sender, record, reads)[0]

    def _path_id(self, outcomes: list[TxOutcome]) -> int:
        """The path id of the last transaction (or of all of them, with path_scope all)."""
        branches, marks = self.recorder.branches, self.recorder.branch_marks
        if not marks:
            return path_hash([], 0)
        if self.path_scope == "last":
            return path_hash(branches[marks[-1]:], _status(outcomes[-1]))
        ends = [*marks[1:], len(branches)]
        return hash(tuple(path_hash(branches[start:end], _status(outcome))
                          for start, end, outcome in zip(marks, ends, outcomes)))

    def _run_txs(self, case: TxSeq, start: int, stop: int, overrides_last: bool,
                 outcomes: list[TxOutcome], gas_limit: int | None = None) -> None:
        """Run ``case[start:stop]`` on the current state, appending their outcomes.

        ``gas_limit``: each one's, instead of the chain's (None).
        """
        chain = self.chain
        recorder = self.recorder
        main = self.main.address
        last = len(case) - 1
        for index in range(start, stop):
            tx = case[index]
            to = main if tx.to is None else tx.to
            overrides = (dict(tx.storage) if tx.storage and (index == last or not overrides_last)
                         else None)
            # The last transaction's reads of its contract are recorded (aggressive mode
            # turns them into inputs); earlier ones only when they carry overrides.
            recorder.begin_tx(index, overrides, to if overrides or index == last else None)
            if tx.blocks or tx.time:
                chain.advance(tx.blocks, tx.time)
            if index == last:
                env = chain.env
                self._clock = (env.number, env.timestamp)
            data = self.calldata(tx.function, tx.args, to)
            sender, called = tx.sender, to
            relay = self.relays.get(sender)
            if relay is not None:
                data = attack_calldata(to, data, tx.value)
                sender, called = relay, tx.sender
            try:
                done = chain.transact(sender, called, data, tx.value, gas_limit=gas_limit,
                                      inspector=recorder)
            except InvalidTransaction as exc:
                outcomes.append(TxOutcome(False, False, b"", 0, str(exc), invalid=True))
            else:
                outcomes.append(TxOutcome(done.success, done.reverted, done.output,
                                          done.gas_used, done.error))
                cheats = chain.cheatcodes
                if cheats is not None and cheats.flagged:
                    # A handler's assertion failed without reverting: it is recorded as the
                    # handler's (the assertion oracle), so forge's failure flag is cleared
                    # rather than left to fail every invariant checked after it.
                    chain.state.set_storage(HEVM_ADDRESS, GLOBAL_FAIL_SLOT, 0)
            for observer in self.step_observers:
                try:
                    observer.after_step(index, case, outcomes[-1], self)
                except Exception as exc:
                    self._drop_observer(observer, exc)

    def _drop_observer(self, observer: StepObserver, error: Exception) -> None:
        """Stop calling ``observer`` (it raised ``error``) and tell ``observer_failed``.

        Without ``observer_failed`` the error goes on to the caller.
        """
        if self.observer_failed is None:
            raise error
        # A new list: the caller is iterating over the old one.
        self.step_observers = [other for other in self.step_observers if other is not observer]
        self.observer_failed(observer, error)


class _Boundary(NamedTuple):
    """The state between two transactions of a run: journal position, block, recorder."""

    snapshot: int
    env: BlockEnv
    recorder: RecorderMark
    outcomes: tuple[TxOutcome, ...]


def _first_altered(case: TxSeq, forced: Forced | None, gas: GasLimits | None) -> int:
    """The first transaction a forcing or another gas limit alters (``len(case)``: none)."""
    if not forced and not gas:
        return len(case)
    return min([*(forced or ()), *(gas or ())], default=len(case))


def _status(outcome: TxOutcome) -> int:
    """How a transaction ended, as part of its path id."""
    return 0 if outcome.success else 1 if outcome.reverted else 3 if outcome.invalid else 2


def _prefix_key(prefix: TxSeq, overrides_last: bool) -> TxSeq | None:
    """The cache key of ``prefix``, or None when its run must not be cached.

    Storage overrides of a prefix transaction apply only when ``overrides_last`` is False:
    then the prefix's run depends on them (aggressive mode), so it bypasses the cache.
    Otherwise they are ignored, and dropping them from the key lets the prefix of a case
    that grew from an aggressive-mode one share the entry of the plain prefix.
    """
    if not any(tx.storage for tx in prefix):
        return prefix
    if not overrides_last:
        return None
    return tuple(replace(tx, storage=()) if tx.storage else tx for tx in prefix)
