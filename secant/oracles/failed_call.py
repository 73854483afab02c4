"""Denial of service by a failed call (SWC-113): a refusing recipient blocks a function.

A contract that pays (or calls) an address it keeps in storage and requires the call to
succeed (``transfer``, ``require(leader.send(refund))``, ``require(ok)`` after a low-level
call) hands that address a veto: when it is a contract that refuses the call, the whole
transaction reverts, every time. An auction that refunds the outbid leader inside ``bid``
can no longer be outbid once the leader refuses ether; a loop that requires every refund
stops at the first refusing recipient, and nobody behind it is ever paid.

A run shows it when, in a transaction of a sender that is not on the attacker side (the
deployer or a user) that reverted,

* a target's frame made a CALL, CALLCODE or STATICCALL to an attacker contract, the
  message ran and failed (the normal attacker reverts on every call and payment; the
  costly one runs out of the stipend's gas), and a static look proves that a failure of
  that call site surely ends in REVERT or INVALID (``failure_reverts`` of
  ``secant.oracles.gasless_send``, every path followed), while that frame and every frame
  above it failed: the failed call decided the revert;
* the callee came out of storage (the ``dataflow`` recording's STORED label on it) and the
  victim did not name it among its own arguments, and an earlier successful transaction
  of the attacker side (an attacker account, or an attacker contract relayed through one)
  wrote that address into a target's storage: the attacker put itself there, as the
  leader, a player, a payee. A trusted sender that named the address itself chose it
  (reported nothing, as for the ether oracles).

*Likely*: the run proves that the refusal decided the revert, not that the transaction
would have gone through with a recipient that accepts (it might have reverted later for
another reason); the detail adds it when an earlier transaction of the case ran the same
call site with a recipient that took the call and succeeded. That evidence does not raise
the rating: the shrunk case drops such a transaction, and one rating per site keeps the
shrunk finding's words and rating the same. Key: the code and pc of the call; the
finding's case ends with the blocked transaction.

Lazy like the other data-flow detectors (``secant.oracles.flows``): only targets with such
a call site (a callee that is not a constant, that a stored value may reach, whose
failure surely reverts: ``refusable_calls``) need the ``calls`` recording, and a run is
replayed with the ``dataflow`` recording only when a transaction of the deployer or a
user reverted while a target's call to an attacker contract failed in it, and an
unreported site ran. ``refusable_payments`` is the part that decides whether campaigns
send transactions as the normal attacker (``secant.campaign.worker.default_senders``).
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.evm.opcodes import (
    CALL,
    CALLCODE,
    CALLER,
    HALTS,
    INVALID,
    JUMP,
    JUMPI,
    KECCAK256,
    MLOAD,
    MSTORE,
    MSTORE8,
    OPS,
    REVERT,
    SSTORE,
    STATICCALL,
)
from secant.oracles.flows import CallSite, FlowOracle, call_sites, flag_step, runtime_ops
from secant.oracles.gasless_send import failure_reverts
from secant.oracles.rated import ether
from secant.oracles.static_labels import stored_reach
from secant.targets.contract import ContractRun
from secant.targets.taint import STORED, Dataflow, FlowCall, FlowSink
from secant.targets.trace import CallEvent
from secant.types import Finding

__all__ = ["FailedCallOracle", "refusable_calls", "refusable_payments", "stores_caller"]

_KINDS = frozenset({CALL, CALLCODE, STATICCALL})
_FORKS = 16  # JUMPIs on unknown values followed both ways after a failed call
_STEPS = 1024  # instructions followed after it, over all paths
_CALLER_STEPS = 2048  # instructions followed from a CALLER, over all paths
_CALLER_FORKS = 32
_ADDRESS = (1 << 160) - 1
_ADDRESS_BITS = 160
_WORD_BITS = 256
_REFUSABLE: dict[tuple[bytes, str], tuple[CallSite, ...]] = {}
_STORES_CALLER: dict[tuple[bytes, str], bool] = {}


def refusable_calls(chain: TestChain, code: bytes, code_hash: bytes) -> tuple[CallSite, ...]:
    """The call sites of ``code`` a refusing callee out of storage can make revert.

    A CALL, CALLCODE or STATICCALL whose callee is not a constant, may be a value read from
    storage in a frame a transaction opens (``static_labels.stored_reach``), and whose
    failure surely ends in REVERT or INVALID on every path after it (``transfer``,
    ``require(x.send(v))``, a high-level call, ``require(ok)`` after a low-level call).
    Cached per code.
    """
    key = (code_hash, chain.fork.name)
    found = _REFUSABLE.get(key)
    if found is not None:
        return found
    analysis, end, ops = runtime_ops(chain, code, code_hash)
    sites = [site for site in call_sites(chain, code, code_hash)
             if site.opcode in _KINDS and site.target is None
             and failure_reverts(ops, analysis.jumpdests, site.pc + 1, _FORKS, _STEPS)]
    reach = stored_reach(code, code_hash, chain.fork) if sites else {}
    found = tuple(site for site in sites if site.pc not in reach or reach[site.pc].callee)
    _REFUSABLE[key] = found
    return found


def refusable_payments(chain: TestChain, code: bytes, code_hash: bytes
                       ) -> tuple[CallSite, ...]:
    """Those of ``refusable_calls`` that may carry ether, in code that may store the caller.

    Where an attacker contract must be the *sender* to get there: the code keeps
    ``msg.sender`` (``leader = msg.sender``, ``players.push(msg.sender)``) and pays a stored
    address in a way whose failure reverts. An address the code stores from its input is
    reached without it (the attacker contracts are in the address dictionary).
    """
    sites = tuple(site for site in refusable_calls(chain, code, code_hash)
                  if site.opcode != STATICCALL and site.value != 0)
    if not sites or not stores_caller(chain, code, code_hash):
        return ()
    return sites


Item = tuple[int | None, bool]  # (constant or None, computed from msg.sender)


def stores_caller(chain: TestChain, code: bytes, code_hash: bytes) -> bool:
    """Whether some path of ``code`` may SSTORE a value computed from ``msg.sender``.

    From every CALLER the code is followed with an abstract stack (constants for jumps, and
    whether each item comes from the caller; memory is one such bit, and a KECCAK256 is a
    slot, not the caller), both sides of a JUMPI, until an SSTORE writes a value from the
    caller (yes) or the limits (no more paths: no). A mapping keyed by the sender
    (``balances[msg.sender] = x``) stores no caller. Cached per code.
    """
    key = (code_hash, chain.fork.name)
    found = _STORES_CALLER.get(key)
    if found is not None:
        return found
    analysis, end, ops = runtime_ops(chain, code, code_hash)
    starts = [pc for pc, (op, _) in ops.items() if op == CALLER]
    found = any(_caller_reaches_sstore(ops, analysis.jumpdests, pc) for pc in starts)
    _STORES_CALLER[key] = found
    return found


def _caller_reaches_sstore(ops: dict[int, tuple[int, int]], jumpdests: frozenset[int],
                           start: int) -> bool:
    """Whether the caller pushed at ``start`` may reach an SSTORE's value (see above)."""
    pending: list[tuple[int, list[Item], bool]] = [(start, [], False)]
    budget, forks = _CALLER_STEPS, _CALLER_FORKS
    seen: set[tuple[int, int, bool]] = set()
    while pending:
        pc, stack, memory = pending.pop()
        while budget > 0:
            budget -= 1
            entry = ops.get(pc)
            if entry is None:
                break
            op, value = entry
            if op == REVERT or op == INVALID or op in HALTS or op not in OPS:
                break
            if op == SSTORE:
                if len(stack) >= 2 and stack[-2][1]:
                    return True
            elif op == JUMP or op == JUMPI:
                dest = stack.pop()[0] if stack else None
                if op == JUMP:
                    if dest is None or dest not in jumpdests:
                        break
                    pc = dest
                    continue
                if stack:
                    stack.pop()
                if dest is not None and dest in jumpdests and forks > 0 and (
                        dest, len(stack), memory) not in seen:
                    forks -= 1
                    seen.add((dest, len(stack), memory))
                    pending.append((dest, list(stack), memory))
                pc += 1
                continue
            memory = _caller_step(stack, memory, op, value)
            pc += 1 + OPS[op].immediate
    return False


def _caller_step(stack: list[Item], memory: bool, op: int, value: int) -> bool:
    """Apply ``op`` to the abstract stack; what memory holds after it."""
    if op == CALLER:
        stack.append((None, True))
    elif op == MSTORE or op == MSTORE8:
        written = stack[-2][1] if len(stack) >= 2 else False
        del stack[max(0, len(stack) - 2):]
        return memory or written
    elif op == MLOAD or op == KECCAK256 or op in _KINDS:
        # What memory holds; a hash is a slot and a call's flag is no address.
        info = OPS[op]
        del stack[max(0, len(stack) - info.pops):]
        stack.extend([(None, op == MLOAD and memory)] * info.pushes)
    else:
        flag_step(stack, op, value)
    return memory


class FailedCallOracle(FlowOracle):
    """Reports a user's transaction that a refusing attacker contract made revert."""

    name = "dos-failed-call"
    swc = "SWC-113"
    description = ("a user's transaction reverts because a call it requires to succeed went "
                   "to a contract the attacker placed there, which refuses it (denial of "
                   "service by a failed call)")
    severity = "medium"
    confidence = "likely"
    cache_clean = False  # whether the call fails depends on who is called, not the path

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        self.refusers = frozenset(c.address for c in chain.attacker_contracts)
        self._refusable = [(code_hash, site) for code_hash, code in self.code_of.values()
                           for site in refusable_calls(chain, code, code_hash)]
        self._refusable_at = {(code_hash, site.pc) for code_hash, site in self._refusable}

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target calls a stored callee in a way whose failure reverts."""
        return any(refusable_calls(chain, code, code_hash) for code_hash, code in codes)

    def candidate(self, result: ContractRun) -> bool:
        """A user's transaction reverted with a failed call to an attacker contract in it."""
        if not any(self._refused(result, call) for call in result.calls):
            return False
        return any((code_hash, site.pc) not in self.reported
                   for code_hash, site in self._that_ran(result, self._refusable))

    def _refused(self, result: ContractRun, call: CallEvent) -> bool:
        """A target's call to an attacker contract failed in a victim's reverted transaction."""
        case, outcomes = result.case, result.outcomes
        return (call.kind in _KINDS and not call.success and call.target in self.refusers
                and self.caller_of(call) in self.targets
                and call.tx < len(outcomes) and not outcomes[call.tx].success
                and case[call.tx].sender not in self.attacker_side)

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per refusable site whose refused call blocked a victim's transaction."""
        findings: list[Finding] = []
        case, outcomes = result.case, result.outcomes
        refused = [call for call in result.calls if self._refused(result, call)]
        seen: set[tuple[bytes, int]] = set()
        for call in flow.calls:
            site = (call.code_hash, call.pc)
            if (call.success or call.opcode not in _KINDS or call.target not in self.refusers
                    or site not in self._refusable_at or site in seen):
                continue
            contract = self.contract(call.code_hash)
            tx = call.tx
            if (contract is None or tx >= len(outcomes) or outcomes[tx].success
                    or case[tx].sender in self.attacker_side
                    or not self._reverted_upwards(flow, call.frame)):
                continue
            # The callee ran and refused (not a payment above the balance, which fails
            # without a message): the calls recording has its failed message.
            event = next((e for e in refused if e.tx == tx and e.sender == call.address
                          and e.target == call.target and e.value == call.value), None)
            sink = self._sink_of(flow, call)
            if event is None or sink is None or not sink.target_labels & STORED:
                continue
            ints, blobs = self.case_words(case[tx:tx + 1])
            if self.chosen(call.target, ints, blobs):
                continue  # the victim named the recipient itself
            writer = self._placed_by(result, flow, call.target, tx)
            if writer is None or self.granted(case, outcomes, tx, frozenset({call.target})):
                continue
            seen.add(site)
            self.reported.add(site)
            findings.append(self._finding(result, flow, call, event, writer))
        return findings

    def _finding(self, result: ContractRun, flow: Dataflow, call: FlowCall, event: CallEvent,
                 writer: int) -> Finding:
        """The finding for a refused call that blocked transaction ``call.tx``."""
        case = result.case
        contract = self.contract(call.code_hash)
        assert contract is not None
        tx = call.tx
        place = self.place(contract, call.pc)
        refuser = self.who(call.target)
        paid = f"pay {ether(call.value)} to" if call.value else "call"
        how = "reverted" if event.reverted else "halted exceptionally (out of gas)"
        function = case[tx].function
        why = ("the refused call decided the revert, but no run with a recipient that "
               "accepts shows the transaction going through")
        earlier = self._went_through(result, flow, call)
        if earlier is not None:
            why += (f" (the same call went through to {self.who(earlier[1])} in transaction "
                    f"{earlier[0] + 1} of the case, which succeeded)")
        detail = (f"{self.step(case[:tx + 1], tx)} reverted: {contract.name} tried to "
                  f"{paid} {refuser} at {place}, {refuser} {how}, and a failure of that "
                  f"call surely ends in a revert. {refuser} got there in "
                  f"{self.step(case[:tx + 1], writer)}, which stored its address. As long "
                  f"as it stays there, every call of {function} that reaches this call "
                  f"reverts: the attacker blocks {function} for everyone (pay with pull "
                  "payments: credit the amount and let each recipient withdraw it, or go on "
                  "when a payment fails). " + self.rating(self.confidence, why))
        return self.call_finding(contract, case, tx, call.pc, call.code_hash, detail,
                                 self.confidence)

    @staticmethod
    def _reverted_upwards(flow: Dataflow, frame: int) -> bool:
        """Whether frame ``frame`` and every frame above it in its transaction failed."""
        frames = flow.frames
        if frame >= len(frames):
            return False
        current = frames[frame]
        if current.success:
            return False
        depth = current.depth
        for index in range(frame - 1, -1, -1):
            above = frames[index]
            if above.tx != current.tx:
                break
            if above.depth < depth:
                if above.success:
                    return False
                depth = above.depth
        return True

    @staticmethod
    def _sink_of(flow: Dataflow, call: FlowCall) -> FlowSink | None:
        """The dataflow sink of ``call`` (the labels of its callee)."""
        return next((sink for sink in flow.sinks
                     if sink.tx == call.tx and sink.frame == call.frame and sink.pc == call.pc
                     and sink.opcode == call.opcode and sink.target == call.target
                     and not sink.success), None)

    def _placed_by(self, result: ContractRun, flow: Dataflow, address: int, upto: int
                   ) -> int | None:
        """The last transaction before ``upto`` of the attacker side that stored ``address``.

        A successful one, whose SSTORE's frame completed, into a target's storage; the
        address in any byte-aligned 20-byte window of the word (packed with other fields).
        """
        case, outcomes = result.case, result.outcomes
        found = None
        for sink in flow.sinks:
            tx = sink.tx
            if (sink.opcode != SSTORE or tx >= upto or not outcomes[tx].success
                    or case[tx].sender not in self.attacker_side
                    or sink.address not in self.targets or not flow.completed(sink.frame)):
                continue
            if any((sink.value >> shift) & _ADDRESS == address
                   for shift in range(0, _WORD_BITS - _ADDRESS_BITS + 1, 8)):
                found = tx if found is None else max(found, tx)
        return found

    def _went_through(self, result: ContractRun, flow: Dataflow, call: FlowCall
                      ) -> tuple[int, int] | None:
        """An earlier successful transaction in which the same site's call succeeded.

        (transaction, recipient), the recipient not the refusing one.
        """
        outcomes = result.outcomes
        for other in flow.calls:
            if (other.tx < call.tx and other.code_hash == call.code_hash
                    and other.pc == call.pc and other.success and other.target != call.target
                    and outcomes[other.tx].success and flow.completed(other.frame)):
                return other.tx, other.target
        return None
