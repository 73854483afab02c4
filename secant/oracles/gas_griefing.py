"""Insufficient gas griefing (SWC-126): the submitter's gas limit decides a forwarded call.

A relayer (a meta-transaction forwarder, a job runner, a multisig's executor) marks a
request as done in storage, then forwards it with a call and goes on whether the call
worked or not. Whoever submits the transaction chooses its gas limit, and a call gets at
most 63/64 of the gas left when it starts (EIP-150): with just enough gas for the
relayer's own work, the forwarded call runs out, the relayer's transaction succeeds, and
the request stays marked done for good. Its owner is censored by whoever submitted it.
The fix is to check the gas (``require(gasleft() > gasLimit / 63)`` after forwarding a
requested ``gasLimit``, or enough left before the call) or to require the call's success.

The oracle shows it happen:

* statically, per target code (``griefable_calls``): a CALL, CALLCODE, DELEGATECALL or
  STATICCALL whose failure does not surely end in REVERT or INVALID (its flag ignored,
  stored or merely returned: ``failure_reverts`` of ``secant.oracles.gasless_send``
  over the paths after it), that is not a stipend payment (``send``, at most 4600 gas: the
  ``gasless-send`` oracle's), in code where an SSTORE may run in the same function (the
  control-flow graph, ``secant.evm.cfg``: a store on the way to the call or after it). A
  code without one needs no recording and is never looked at again;
* per run, from the ``calls`` recording: the run's last transaction succeeded, a target
  made a call in it that succeeded with more than the stipend, to a contract with code
  that is not the attacker side's, and the caller's code wrote storage in it, while a
  site of that code that may have made the call ran (its kind, and its constant callee or
  value if it has one, are the call's), not reported yet nor tried ``_TRIES`` times in
  vain, and the run shape (``_shape``) is not one judged clean before;
* then the case runs again as variants (``PostState.run_variant``) recording ``calls`` and
  ``storage``: once as it was, then with the last transaction's gas limit lowered, a
  search for the highest limit at which the call fails (at most ``_PROBES`` runs: up from
  about the gas the transaction used until the call succeeds, then halving the gap). A
  variant in which the transaction still succeeds, the call failed for lack of gas (it or
  a message below it halted exceptionally: out of gas, not a deliberate revert), and
  every storage write of the transaction outside the call (each slot and its last value)
  is what it was with the gas the transaction had, is the finding.

Not reported, by design: a call whose failure reverts (``require(ok)``, ``transfer``, a
high-level call), a failure the caller records (the request reopened, a retry queued: its
writes differ), a caller that checks the gas left (the variant reverts), a callee that
checks it itself and reverts (a deliberate revert is not running out of gas), a stipend
payment, and a callee on the attacker side: starving the attacker's own contract censors
no one else's request. *Likely*: the replay proves that the call's outcome depends only on
the gas the submitter chose, not that the call is more than a best-effort notification
the contract means to be skippable. Key: the code and pc of the call (the dataflow replay
names it when more than one such site of the code ran). Severity medium: requests are
censored, nothing is stolen.

Cost: nothing where no target has such a call; elsewhere the cheap ``calls`` recording and,
per run, a look at the last transaction's calls. A judgement costs at most ``_PROBES`` + 1
runs of the last transaction (the prefix comes from the variants' prefix cache), and a site
at most ``_TRIES`` judgements that show nothing. Coverage is the whole case's, so a call
made by another site of the same code (a checked high-level call next to a griefable one)
may be judged in the griefable site's name: its variants fail the transaction, and the
site's budget bounds what that costs.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.cfg import ControlFlowGraph
from secant.evm.opcodes import CALL, CALLCODE, DELEGATECALL, OPS, SSTORE, STATICCALL
from secant.oracles.flows import CallSite, call_sites, replayed, runtime_ops
from secant.oracles.gas_limit import transaction_gas
from secant.oracles.gasless_send import STIPEND, failure_reverts, stipend_payments
from secant.oracles.rated import RatedOracle, function_name
from secant.targets.contract import ContractRun
from secant.targets.trace import END, START, STORE, CallEvent
from secant.types import Finding, RunResult

__all__ = ["GasGriefingOracle", "griefable_calls"]

_KINDS = frozenset({CALL, CALLCODE, DELEGATECALL, STATICCALL})
_PAYING = frozenset({CALL, CALLCODE})  # the kinds whose value is their own operand
_ADDRESS = (1 << 160) - 1
_STIPEND_GAS = 2 * STIPEND  # the stipend plus an explicit ``gas: 2300``: gasless-send's
_FORKS = 16  # JUMPIs on unknown values followed both ways after a failed call
_STEPS = 1024  # instructions followed after it, over all paths
_REACH = 4096  # blocks visited looking for a store in the call's function
_PROBES = 7  # gas limits tried per judgement (besides the run as it was)
_TRIES = 8  # judgements of a site that showed nothing before it is left alone
_CLEAN_LIMIT = 1 << 14  # run shapes remembered as clean (then forgotten at once)
_INTRINSIC = 21000  # no transaction runs with less gas
_RECORDINGS = frozenset({"calls", "storage"})
_SITES: dict[tuple[bytes, str], tuple[CallSite, ...]] = {}

Writes = dict[tuple[int, int], int]
"""The storage writes a transaction kept: (address, slot) -> the last value written."""


def griefable_calls(chain: TestChain, code: bytes, code_hash: bytes) -> tuple[CallSite, ...]:
    """The call sites of ``code`` a starved callee cannot make revert, near a store.

    A CALL, CALLCODE, DELEGATECALL or STATICCALL whose failure does not surely end in
    REVERT or INVALID on every path after it, that is not a stipend payment (a gas operand
    of at most 4600, or solc's ``send`` pattern), and in whose function an SSTORE may run
    (``_store_nearby``). Cached per code.
    """
    key = (code_hash, chain.fork.name)
    found = _SITES.get(key)
    if found is not None:
        return found
    sites = [site for site in call_sites(chain, code, code_hash)
             if site.opcode in _KINDS
             and (site.gas is None or site.gas > _STIPEND_GAS)]
    if sites:
        analysis, end, ops = runtime_ops(chain, code, code_hash)
        stipends = {site.pc for site in stipend_payments(chain, code, code_hash)}
        sites = [site for site in sites if site.pc not in stipends
                 and not failure_reverts(ops, analysis.jumpdests, site.pc + 1, _FORKS, _STEPS)]
        if sites:
            blocks = [(start, instructions) for start, instructions in analysis.blocks
                      if start < end]
            stores = frozenset(start for start, instructions in blocks
                               if any(op == SSTORE for _, op, _ in instructions))
            if not stores:
                sites = []
            else:
                graph = ControlFlowGraph(blocks, analysis.jumpdests)
                sites = [site for site in sites if _store_nearby(graph, site.block, stores)]
    found = _SITES[key] = tuple(sites)
    return found


def _store_nearby(graph: ControlFlowGraph, block: int, stores: frozenset[int]) -> bool:
    """Whether a block of ``stores`` may run in the same function as ``block``.

    The blocks that lead to ``block`` (its function's entry, the dispatcher, the callers
    of an internal function it is in), and those that follow it or follow an internal
    call on the way to it (the control-flow graph's summary edges to the places a call
    returns to: a store after a helper returned). A call the graph does not reach from the
    code's start (a jump it could not resolve) may be anywhere: yes.
    """
    successors = graph.successors
    predecessors: dict[int, set[int]] = {}
    for source, targets in successors.items():
        for target in targets:
            predecessors.setdefault(target, set()).add(source)
    before = _closure([block], predecessors)
    if graph.starts and graph.starts[0] not in before:
        return True
    resumed = [target for source in before for target in successors.get(source, ())
               if target in graph.continuations]
    after = _closure([block, *resumed], successors)
    return not stores.isdisjoint(before) or not stores.isdisjoint(after)


def _closure(starts: Iterable[int], edges: dict[int, set[int]]) -> set[int]:
    """The blocks reachable from ``starts`` along ``edges`` (at most ``_REACH`` of them)."""
    seen = set(starts)
    pending = list(seen)
    while pending and len(seen) < _REACH:
        for target in edges.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


class GasGriefingOracle(RatedOracle):
    """Reports forwarded calls a submitter can starve while the request is kept done."""

    name = "gas-griefing"
    swc = "SWC-126"
    description = ("a transaction marks a request done and forwards it with a call whose "
                   "failure it does not revert; sent with less gas, the call runs out while "
                   "the transaction succeeds (insufficient gas griefing)")
    needs = frozenset({"calls"})
    severity = "medium"
    confidence = "likely"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        # The griefable call sites of every target code, by code hash.
        self.sites: dict[bytes, tuple[CallSite, ...]] = {}
        for code_hash, code in self.code_of.values():
            found = griefable_calls(chain, code, code_hash)
            if found:
                self.sites[code_hash] = found
        if not self.sites:
            self.needs = frozenset()
        self.limit = transaction_gas(chain)
        # Run shapes judged clean, and how many judgements each site ran in vain.
        self.clean: set[tuple[object, ...]] = set()
        self.tries: dict[tuple[bytes, int], int] = {}

    def idle(self) -> bool:
        """Idle where no target has a griefable call site (its static pre-check)."""
        return not self.sites

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding when less gas starves a call the last transaction forwarded."""
        if not self.sites or post is None or not isinstance(result, ContractRun):
            return []
        case, outcomes = result.case, result.outcomes
        last = len(case) - 1
        if last < 0 or len(outcomes) != len(case) or not outcomes[last].success:
            return []
        calls = result.calls
        first = len(calls)
        while first and calls[first - 1].tx == last:
            first -= 1
        for position in range(first, len(calls)):
            call = calls[position]
            if not call.success or call.gas <= _STIPEND_GAS or call.kind not in _KINDS:
                continue
            caller = call.target if call.kind == DELEGATECALL else call.sender
            known = self.code_of.get(caller)
            if known is None or known[0] not in self.sites:
                continue
            code_hash = known[0]
            if (call.code_address in self.attacker_side or call.target in self.attacker_side
                    or not self.chain.code_at(call.code_address)
                    or not self._wrote(result, last, code_hash)):
                continue
            sites = self._open(result, code_hash, call)
            if not sites:
                continue
            shape = self._shape(result, call, sites)
            if shape in self.clean:
                continue
            ordinal = sum(1 for earlier in calls[first:position] if _same(earlier, call))
            found = self._judge(result, post, call, ordinal, code_hash, sites)
            if found is not None:
                return self.returned([found])
            if len(self.clean) >= _CLEAN_LIMIT:
                self.clean.clear()
            self.clean.add(shape)
            for site in sites:
                self.tries[(code_hash, site.pc)] = self.tries.get((code_hash, site.pc), 0) + 1
        return []

    # ------------------------------------------------------------------ preconditions
    @staticmethod
    def _wrote(result: ContractRun, index: int, code_hash: bytes) -> bool:
        """Whether code ``code_hash`` wrote storage in transaction ``index``."""
        marks = result.write_marks
        if index >= len(marks):
            return False
        end = marks[index + 1] if index + 1 < len(marks) else len(result.writes)
        return any(write[0] == code_hash for write in result.writes[marks[index]:end])

    def _open(self, result: ContractRun, code_hash: bytes, call: CallEvent) -> list[CallSite]:
        """The code's sites that may have made ``call``, not reported nor tried too often.

        A site ran in the case (its block is covered: coverage is the whole case's), is of
        the call's kind, and its constants (callee, value) do not contradict the call's.
        """
        blocks = result.blocks
        return [site for site in self.sites[code_hash]
                if site.opcode == call.kind and (code_hash, site.block) in blocks
                and (site.target is None or site.target & _ADDRESS == call.code_address)
                and (site.value is None or site.value == call.value
                     or call.kind not in _PAYING)  # a DELEGATECALL passes its caller's on
                and (self.name, code_hash, site.pc) not in self.known
                and self.tries.get((code_hash, site.pc), 0) < _TRIES]

    @staticmethod
    def _shape(result: ContractRun, call: CallEvent, sites: list[CallSite]
               ) -> tuple[object, ...]:
        """What decides whether less gas starves the call, for the clean memo.

        The last transaction's function, contract, sender and value, the call (its kind,
        the two accounts and the callee's selector) and the sites that may have made it:
        a run that differs in other arguments rarely behaves otherwise.
        """
        tx = result.case[-1]
        return (tx.function, tx.to, tx.sender, tx.value, call.kind, call.sender,
                call.code_address, call.data[:4], tuple(site.pc for site in sites))

    # ------------------------------------------------------------------ the variants
    def _judge(self, result: ContractRun, post: PostState, call: CallEvent, ordinal: int,
               code_hash: bytes, sites: list[CallSite]) -> Finding | None:
        """Search for a gas limit that starves ``call`` and keeps the writes (docstring)."""
        case = result.case
        last = len(case) - 1
        caller = call.target if call.kind == DELEGATECALL else call.sender
        # The writes as the run made them: its own records when the campaign records
        # storage (a reentrancy oracle may ask for it), else a replay's.
        accesses = result.accesses
        base: RunResult = (result if accesses and accesses[-1].tx == last
                           else post.run_variant(case, recordings=_RECORDINGS))
        if not isinstance(base, ContractRun) or not base.outcomes[last].success:
            return None
        matched = _match(base, last, call, ordinal)
        if matched is None or not matched[1].success:
            return None
        kept = _kept_writes(base, last, matched[0])
        if kept is None or not any(address == caller for address, _ in kept):
            return None
        low, high = _INTRINSIC, self.limit  # the call fails at ``low``, succeeds at ``high``
        probe = min(high - 1, max(low + 1, result.outcomes[last].gas_used * 4 // 3 + 10000))
        growing = True  # up from the gas used until the call succeeds, then bisect
        for _ in range(_PROBES):
            if high - low <= 1:
                break
            variant = post.run_variant(case, recordings=_RECORDINGS, gas={last: probe})
            if not isinstance(variant, ContractRun):
                return None
            found = _match(variant, last, call, ordinal)
            if found is not None and found[1].success:
                high = probe
                growing = False
            else:
                low = probe
                if found is not None and variant.outcomes[last].success and _starved(
                        variant, last, found[0]):
                    writes = _kept_writes(variant, last, found[0])
                    if writes != kept:
                        return None  # the caller records the failure: no censorship
                    return self._finding(result, post, call, ordinal, code_hash, sites,
                                         probe, found[1], kept)
            probe = min(high - 1, probe * 2) if growing else (low + high) // 2
        return None

    # ------------------------------------------------------------------ wording
    def _finding(self, result: ContractRun, post: PostState, call: CallEvent, ordinal: int,
                 code_hash: bytes, sites: list[CallSite], gas: int, starved: CallEvent,
                 kept: Writes) -> Finding:
        case = result.case
        last = len(case) - 1
        contract = self.codes[code_hash]
        pc = self._pc(result, post, call, ordinal, code_hash, sites)
        place = self.where(contract, pc) or f"pc {pc} of {contract.name}"
        callee = self.who(call.code_address)
        opcode = OPS[call.kind].name
        used = result.outcomes[last].gas_used
        caller = call.target if call.kind == DELEGATECALL else call.sender
        own = sum(1 for address, _ in kept if address == caller)
        detail = (f"{self.step(case, last)} made {contract.name} {opcode} {callee} at "
                  f"{place}, and the call succeeded with the {self.limit} gas the "
                  f"transaction had (it used {used}); sent with a gas limit of {gas} "
                  f"instead, {callee} got {starved.gas} gas and ran out, yet "
                  f"{contract.name} went on and the transaction succeeded with the same "
                  f"storage writes outside the call ({own} slot{'s' if own != 1 else ''} of "
                  f"{contract.name}: the request is kept as done). Whoever submits the "
                  "transaction chooses its gas and so whether the forwarded call runs "
                  "(insufficient gas griefing); check that the call got the gas it needs "
                  "(gasleft() against a gas limit the request names) or require its "
                  "success. "
                  + self.rating(self.confidence, "the replay with less gas starved the call "
                                "while the transaction succeeded and kept its writes, "
                                "unless the call is a best-effort notification meant to be "
                                "skippable"))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(case[last]), pc=pc,
                       source=self.where(contract, pc), detail=detail,
                       key=(self.name, code_hash, pc), case=case, oracle=self.name,
                       confidence=self.confidence)

    def _pc(self, result: ContractRun, post: PostState, call: CallEvent, ordinal: int,
            code_hash: bytes, sites: list[CallSite]) -> int:
        """The pc of the site that made ``call``: the only open one, else the dataflow's."""
        pcs = [site.pc for site in sites]
        if len(pcs) > 1:
            flow = replayed(result, post)
            if flow is not None:
                last = len(result.case) - 1
                made = [record.pc for record in flow.calls
                        if record.tx == last and record.code_hash == code_hash
                        and record.opcode == call.kind and record.target == call.target
                        and record.success]
                if ordinal < len(made) and made[ordinal] in pcs:
                    return made[ordinal]
        return pcs[0]


def _same(one: CallEvent, other: CallEvent) -> bool:
    """Whether two messages are the same call made again (kind, depth, accounts)."""
    return (one.kind == other.kind and one.depth == other.depth and one.sender == other.sender
            and one.target == other.target and one.code_address == other.code_address)


def _match(run: ContractRun, index: int, call: CallEvent, ordinal: int
           ) -> tuple[int, CallEvent] | None:
    """The ``ordinal``-th message of transaction ``index`` like ``call``, with its place.

    The place counts the transaction's messages below its own in the order they ended,
    as the ``storage`` recording's message ends do.
    """
    seen = 0
    place = 0
    for event in run.calls:
        if event.tx != index:
            continue
        if _same(event, call):
            if seen == ordinal:
                return place, event
            seen += 1
        place += 1
    return None


def _starved(run: ContractRun, index: int, place: int) -> bool:
    """Whether message ``place`` of transaction ``index`` failed for lack of gas.

    It halted exceptionally (not a REVERT: a callee that checked the gas and refused is
    no starved callee), or it reverted after a message it made halted so.
    """
    events = [event for event in run.calls if event.tx == index]
    message = events[place]
    if message.success:
        return False
    if not message.reverted:
        return True
    # The messages it made ended before it, deeper, right before it in this order.
    below = place - 1
    while below >= 0 and events[below].depth > message.depth:
        if not events[below].success and not events[below].reverted:
            return True
        below -= 1
    return False


def _kept_writes(run: ContractRun, index: int, place: int) -> Writes | None:
    """The writes transaction ``index`` kept outside message ``place`` and below it.

    From the ``storage`` recording: each message's writes join its caller's when it
    succeeds and are dropped when it fails, and those of message ``place`` (with all it
    called) are dropped either way. None when the transaction failed or the records do
    not pair up.
    """
    frames: list[Writes] = []
    ended = 0
    kept: Writes | None = None
    for event in run.accesses:
        if event.tx != index:
            continue
        if event.kind == START:
            frames.append({})
        elif event.kind == STORE:
            if frames:
                frames[-1][(event.address, event.slot)] = event.value
        elif event.kind == END:
            if not frames:
                return None
            frame = frames.pop()
            dropped = False
            if event.depth > 0:
                dropped = ended == place
                ended += 1
            # A message's end carries its success in ``slot`` (as the recorder writes it).
            if not event.slot or dropped:
                continue
            if frames:
                frames[-1].update(frame)
            else:
                kept = frame
    return kept if not frames else None
