"""Users' properties: boolean properties, Foundry invariants and optimization targets.

A *property* is a function of a target contract with no parameters whose name starts with
one of the configured prefixes (Echidna's ``echidna_``, Medusa's ``property_``, Foundry's
``invariant_``, ``statefulFuzz_``). As Echidna does, every property is evaluated on the
deployed state and again after every transaction of every test case, by a read-only call
from the deployer on the state the transaction left:

* a boolean property (it returns ``bool``) fails when it returns false or reverts, except
  that one named ``echidna_revert_*`` must revert and fails when it returns (Echidna's
  convention; ``REVERT_PREFIX``);
* a Foundry invariant (``invariant_``) fails when it reverts (a forge-std assertion reverts),
  returns false, or leaves DSTest's ``failed()`` flag set (old DSTest assertions and
  forge-std's ``fail()`` set it instead of reverting);
* an optimization target (``echidna_opt_``, ``optimize_``; it returns ``int256``) never
  fails: the oracle keeps the largest value seen and the case that reached it;
* Foundry's ``afterInvariant()`` is evaluated after the last transaction of every case (the
  end of a run, in forge's words) and fails when it reverts.

A failure is a finding keyed by the property, whose case is the prefix after which it
failed (empty when the deployed state already breaks it). Properties that never failed are
listed as passing in the summary.

The search treats properties as objectives: each evaluation runs under the trace recorder
(``ContractTarget.call(record=True)``), so the comparisons inside a property feed the cost
metrics, prediction and the adaptive just-missed seeds like any branch of the transaction
before it. A prefix restored from the prefix cache was evaluated when it first ran.
A property that failed is still evaluated (and not reported again): its comparisons are
part of every run's path, and the path of a case must not change because some other case
broke a property (the corpus's path frequencies, which the power schedules divide by,
would orphan every earlier seed). They also carry the state's shape into the path id,
which measurably speeds up invariant campaigns.

A property is called again only when its value may have changed (``_evaluate``): each value
is kept with what its call read (``CallReads``), and stands while the transactions after
it write none of those slots, change none of those accounts, and leave the block as it was
when the call read a block value; its recorded comparisons are then logged again, so the
run's record is the call's. Values are also kept by the prefix whose state they were taken
on, for runs that resume after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from secant.abi import ERROR_SELECTOR, AbiFunction, decode_revert, encode, function_selector
from secant.chain.chain import CallReads, TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.oracle import Oracle, PostState
from secant.evm.env import BlockEnv
from secant.targets.contract import ContractTarget
from secant.types import BranchEvent, Finding, RunResult, TxOutcome, TxSeq, case_to_json

PROPERTY_PREFIXES = ("echidna_", "property_", "invariant_", "statefulFuzz_")
"""Name prefixes of properties, by default."""

OPTIMIZATION_PREFIXES = ("echidna_opt_", "optimize_")
"""Name prefixes of optimization targets (checked before the property prefixes)."""

REVERT_PREFIX = "echidna_revert_"
"""Echidna's prefix of properties that hold when they revert."""

_INT256_SIGN = 1 << 255
_FAILED = function_selector("failed()")
_FAILED_FLAG_MESSAGE = ERROR_SELECTOR + encode(["string"], ["the test's failed() flag was set"])
"""What an invariant that set DSTest's failed() flag is reported as reverting with."""


@dataclass
class Property:
    """One property of a deployed contract."""

    contract: DeployedContract
    function: AbiFunction
    kind: str  # "boolean", "must-revert", "invariant", "after" (afterInvariant), "optimization"
    source: str | None = None
    flags_failure: bool = False  # the contract has DSTest's failed() flag

    @property
    def name(self) -> str:
        """The function's name."""
        return self.function.name

    @property
    def key(self) -> tuple[object, ...]:
        """The key of its finding."""
        return ("property", self.contract.address, self.name)


def is_property_name(name: str, prefixes: Sequence[str] = PROPERTY_PREFIXES) -> bool:
    """Whether a function named ``name`` is a property or an optimization target."""
    return name.startswith(tuple(prefixes)) or name.startswith(OPTIMIZATION_PREFIXES)


def find_properties(contracts: Sequence[DeployedContract],
                    prefixes: Sequence[str] = PROPERTY_PREFIXES) -> list[Property]:
    """The properties of ``contracts``: parameterless functions named with a prefix."""
    found = []
    for contract in contracts:
        for function in contract.abi.functions:
            if function.inputs or not (is_property_name(function.name, prefixes)
                                       or function.name == "afterInvariant"):
                continue
            outputs = [p.type for p in function.outputs]
            if function.name == "afterInvariant":
                kind = "after"
            elif function.name.startswith(OPTIMIZATION_PREFIXES):
                if outputs != ["int256"]:
                    continue
                kind = "optimization"
            elif function.name.startswith("invariant_"):
                kind = "invariant"
            elif outputs == ["bool"]:
                kind = "must-revert" if function.name.startswith(REVERT_PREFIX) else "boolean"
            else:
                continue
            has_flag = any(f.name == "failed" and not f.inputs
                           and [p.type for p in f.outputs] == ["bool"]
                           for f in contract.abi.functions)
            found.append(Property(contract, function, kind,
                                  _definition(contract, function.name), has_flag))
    return found


def _definition(contract: DeployedContract, name: str) -> str | None:
    """``file:line`` of the function's definition in the contract or one of its bases."""
    compilation = contract.compilation
    if compilation is None:
        return None
    for source in compilation.sources.values():
        if source.content is None and source.path is None:
            continue
        functions, _ = source.outline()
        for function in functions:
            if function.name == name and function.kind == "function":
                line, _ = source.position(function.start)
                return f"{source.name}:{line}"
    return None


class _Value(NamedTuple):
    """One property's evaluation on one state, and what it depended on."""

    outcome: TxOutcome
    logged: tuple[BranchEvent, ...]  # the comparisons its call recorded
    reads: CallReads
    block: tuple[int, ...]  # the block it ran in (``_block_key``)


_MEMO_LIMIT = 512
"""Prefixes whose properties' values are remembered (the least recently used go first)."""


def _block_key(env: BlockEnv) -> tuple[int, ...]:
    """The block values a call can read."""
    return (env.number, env.timestamp, env.coinbase, env.prev_randao, env.base_fee,
            env.gas_limit, env.chain_id, env.excess_blob_gas)


class PropertyOracle(Oracle):
    """Evaluates properties after every transaction (see the module docstring)."""

    name = "property"
    swc = None
    description = ("users' properties (echidna_, property_, invariant_, statefulFuzz_) fail; "
                   "optimization targets (echidna_opt_, optimize_) are maximised")
    needs = frozenset()
    keeps_values = True  # False: every property is called after every transaction

    def __init__(self, chain: TestChain, prefixes: Sequence[str] = PROPERTY_PREFIXES) -> None:
        self._contracts = [c for c in chain.contracts if c.role != "attacker"]
        self.properties = find_properties(self._contracts, prefixes)
        self.sender = chain.deployer.address
        self.names = chain.names()
        self.failed: dict[tuple[object, ...], Finding] = {}
        self.best: dict[str, tuple[int, TxSeq]] = {}
        self._pending: list[tuple[int, Finding]] = []
        self._case: TxSeq = ()
        self._initial_checked = False
        # Values kept across transactions that did not touch what a property read
        # (``_evaluate``): those valid on the state at journal position ``_at`` by property
        # key, and by the prefix whose state they were taken on (plain dicts: a fresh copy
        # of the oracle has its own).
        self._values: dict[tuple[object, ...], _Value] = {}
        self._memo: dict[TxSeq, dict[tuple[object, ...], _Value]] = {}
        self._memo_of: list[object] = []  # the target and base state the memo is for
        self._at = 0
        self._start: TxSeq | None = None  # the prefix the run resumed after, when keyed
        self._keyed = False  # whether this run's prefixes so far may key the memo
        self._first = True
        self.objective_sites: set[tuple[bytes, int]] = set()
        """The branches (code hash, pc) a property's call ran: a revert there fails it."""

    def use_prefixes(self, prefixes: Sequence[str]) -> None:
        """Find the properties again with other name prefixes."""
        self.properties = find_properties(self._contracts, prefixes)

    def watches_steps(self) -> bool:
        """Whether there is anything to evaluate after transactions."""
        return bool(self.properties)

    def holds_invariants(self) -> bool:
        """Whether a property must hold after every transaction (not only be maximised).

        The campaign is then an invariant suite, and its sequences grow as such suites need.
        """
        return any(p.kind != "optimization" for p in self.properties)

    # ------------------------------------------------------------------ target hooks
    def start(self, case: TxSeq, target: ContractTarget) -> None:
        """A run begins: evaluate the deployed state once; settle the last run's failures.

        A run the engine did not check (an aggressive probe fakes its last transaction's
        storage reads) still showed real failures after its earlier transactions: those
        are kept for the next check.
        """
        last = len(self._case) - 1
        self._pending = [(step, finding) for step, finding in self._pending if step < last]
        self._case = case
        if not self._initial_checked:
            self._initial_checked = True
            self._evaluate((), -1, target, record=False)
        chain = target.chain
        memo_of = [target, chain.seals]
        if self._memo_of != memo_of:
            self._memo.clear()
            self._memo_of = memo_of
        self._values = {}
        self._at = len(chain.state.journal)
        self._first = True

    def after_step(self, index: int, case: TxSeq, outcome: TxOutcome,
                   target: ContractTarget) -> None:
        """Evaluate every property on the state transaction ``index`` left.

        A transaction that reverted (or was rejected) without moving the block left the
        state as it found it, but for the gas its sender paid: the properties are not
        evaluated again (a property that reads a sender's ether balance to the wei is the
        one case this can miss).
        """
        tx = case[index]
        last = index == len(case) - 1
        if self._first:
            # The run resumed after case[:index]: the values taken on that state when a
            # run got there are good on it (the same transactions from the same state).
            self._first = False
            self._keyed = not any(t.storage for t in case[:index])
            self._start = case[:index] if self._keyed and index else None
        # A transaction with storage overrides leaves a state its prefix does not decide
        # (they apply or not by its place in the case): no memo from there on.
        self._keyed = self._keyed and not tx.storage
        if outcome.success or tx.blocks or tx.time:
            self._evaluate(case[:index + 1], index, target, record=True)
        if last:
            self._evaluate(case, index, target, record=True, after=True)

    def _evaluate(self, prefix: TxSeq, step: int, target: ContractTarget,
                  record: bool, after: bool = False) -> None:
        """Evaluate the properties of one kind (``after``: afterInvariant) on this state.

        A property is not called again when nothing it read changed since a call that
        gave its value: the transactions since then wrote none of the slots it loaded
        and changed no account it looked at, and the block is the same or the call read
        no block value. Its recorded comparisons are then logged again, so the run's
        record is what the call would have made (properties are objectives of the
        search, and part of the path). Large suites check dozens of properties, each
        over many contracts, after every transaction, and a handler touches a few slots.
        """
        if not record:  # the deployed state, once: nothing to keep
            for prop in self.properties:
                if (prop.kind == "after") == after:
                    self._judge(prop, self._call(prop, target, False, None), prefix, step,
                                target, False)
            return
        chain = target.chain
        values = self._values
        if self._start is not None:
            values = self._memo.get(self._start, {})
            self._start = None
        block = _block_key(chain.env)
        if values and self.keeps_values:
            accounts, slots = chain.state.touched_since(self._at)
            values = {key: value for key, value in values.items()
                      if value.reads.accounts.isdisjoint(accounts)
                      and value.reads.slots.isdisjoint(slots)
                      and (not value.reads.block or value.block == block)}
        else:
            values = {}
        for prop in self.properties:
            if (prop.kind == "after") != after:
                continue
            value = values.get(prop.key)
            if value is None:
                reads = CallReads()
                logged = target.branches_logged()
                outcome = self._call(prop, target, True, reads)
                branches = target.branches_since(logged)
                self.objective_sites.update(event[:2] for event in branches)
                if not reads.opaque:
                    values[prop.key] = _Value(outcome, branches, reads, block)
            else:
                outcome = value.outcome
                target.log_branches(value.logged)
            self._judge(prop, outcome, prefix, step, target, True)
        self._values = values
        self._at = len(chain.state.journal)
        if self._keyed:
            memo = self._memo
            memo.pop(prefix, None)
            memo[prefix] = values
            if len(memo) > _MEMO_LIMIT:
                del memo[next(iter(memo))]

    def _call(self, prop: Property, target: ContractTarget, record: bool,
              reads: CallReads | None) -> TxOutcome:
        """Call one property on the current state."""
        selector = prop.function.selector
        if prop.kind in ("invariant", "after") and prop.flags_failure:
            # DSTest's assertions and forge-std's fail() set a failed flag instead of
            # reverting: ask failed() right after, before the call is undone.
            outcome, flag = target.calls([(prop.contract.address, selector),
                                          (prop.contract.address, _FAILED)],
                                         self.sender, record, reads)
            if outcome.success and flag.success and flag.output[:32].strip(b"\0"):
                outcome = replace(outcome, success=False, reverted=True,
                                  output=_FAILED_FLAG_MESSAGE)
            return outcome
        return target.call(prop.contract.address, selector, self.sender, record, reads)

    def _judge(self, prop: Property, outcome: TxOutcome, prefix: TxSeq, step: int,
               target: ContractTarget, record: bool) -> None:
        """What one property's value on the state after ``prefix`` means."""
        if prop.kind == "optimization":
            if outcome.success and len(outcome.output) >= 32:
                value = int.from_bytes(outcome.output[:32], "big")
                value -= (value & _INT256_SIGN) << 1
                best = self.best.get(prop.name)
                if record:
                    self._objective(prop, value, best[0] if best else None, target)
                if best is None or value > best[0]:
                    self.best[prop.name] = (value, prefix)
            return
        if prop.key in self.failed:
            return  # reported already: no need to read why it failed again
        failure = _failure(prop, outcome)
        if failure is not None:
            self._pending.append((step, self._finding(prop, failure, prefix)))

    @staticmethod
    def _objective(prop: Property, value: int, best: int | None,
                   target: ContractTarget) -> None:
        """Show the search how far a value is from beating the best one.

        One comparison ``value > best`` per evaluation (its cost is the distance to a new
        best), at a site per order of magnitude of the value, so every larger magnitude
        is new coverage and its case joins the corpus.
        """
        magnitude = value.bit_length() if value >= 0 else -value.bit_length()
        bias = _INT256_SIGN
        rhs = (best if best is not None else value - 1) + bias
        target.objective(b"optimize:" + prop.name.encode(), magnitude + 512,
                         value + bias > rhs, "gt", value + bias, rhs)

    def _finding(self, prop: Property, failure: str, prefix: TxSeq) -> Finding:
        after = (f"after {len(prefix)} transaction{'s' if len(prefix) != 1 else ''}"
                 if prefix else "on the deployed state")
        return Finding(kind="property", swc="", contract=prop.contract.name,
                       function=prop.name, pc=0, source=prop.source,
                       detail=f"{prop.name}() {failure} {after}", key=prop.key, case=prefix,
                       oracle=self.name)

    # ------------------------------------------------------------------ the oracle
    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        """The failures seen during this run (and real ones of an unchecked run before)."""
        if not self._pending:
            return []
        pending, self._pending = self._pending, []
        findings = []
        for _, finding in pending:
            if finding.key not in self.failed:
                self.failed[finding.key] = finding
                findings.append(finding)
        return findings

    def summary(self, findings: Mapping[tuple[Any, ...], Finding]) -> dict[str, Any]:
        """Every property with its status, and the optimization targets' best values."""
        rows = []
        for prop in self.properties:
            row: dict[str, Any] = {"contract": prop.contract.name, "function": prop.name,
                                   "kind": prop.kind, "source": prop.source}
            if prop.kind == "optimization":
                best = self.best.get(prop.name)
                row["status"] = "optimized"
                row["best"] = best[0] if best else None
                row["sequence"] = case_to_json(best[1], self.names) if best else None
            elif prop.key in findings:
                row["status"] = "failed"
            else:  # not failed: held on every run, unless the oracle stopped checking
                row["status"] = "unchecked" if self.switched_off else "passed"
            rows.append(row)
        return {"properties": rows} if rows else {}


def _failure(prop: Property, outcome: TxOutcome) -> str | None:
    """How the evaluation failed (None: it holds)."""
    if prop.kind == "must-revert":
        return None if not outcome.success else "did not revert"
    if not outcome.success:
        if not outcome.reverted:
            return f"failed ({outcome.error or 'error'})"
        if not outcome.output:
            return "reverted"
        reason = decode_revert(outcome.output)
        return f"reverted: {reason.message if reason.kind == 'error' else reason}"
    returns_bool = [p.type for p in prop.function.outputs] == ["bool"]
    if returns_bool and int.from_bytes(outcome.output[:32], "big") == 0:
        return "returned false"
    return None
