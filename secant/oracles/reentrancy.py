"""Reentrancy (SWC-107): an attacker re-enters a contract that acts on state it read before.

sFuzz's reentrancy attacker (``secant.chain.attackers``) calls a target back, with the same
calldata, from its fallback whenever the target calls it with enough gas. Campaigns send
transactions as that contract when a target can call a computed address
(``secant.campaign.worker.default_senders``). Re-entering is not a bug by itself; what the
DAO did wrong is that the outer call went on with a value the re-entered call had changed
underneath it. A run shows reentrancy when, within one successful transaction, a frame F of
a target contract

1. read a storage slot,
2. then made a call that gave the attacker contract control (F called it),
3. during which the target was entered again (a frame on the same storage) and that
   re-entered run wrote the same slot, its writes survived (every frame up to the
   transaction's own succeeded), and they left the slot holding another value than the
   one F last saw before the call (its own read or write),
4. and after the call returned, F read or wrote the slot again: what it decided before
   the call rested on a value that no longer held.

A re-entered run that writes a slot back to the value F saw (adds 0 to a total, zeroes a
balance F had zeroed already) changed nothing F relied on: when F reads the slot again
after the call, it reads what it saw before, and nothing is stale.

It is also reported when the attacker contract re-entered a target, the re-entered runs
paid the attacker side ether, and the attacker side (the attacker accounts and the
attacker contracts together) ended the case with more ether than it paid in, gas aside (a
drain that needs no stale slot the trace can show, such as a balance kept in another
contract). The whole side counts: an attacker account's deposit refunded to an attacker
contract is the attacker's own ether coming back; and a gain the re-entries did not pay
(a dethroned king's compensation, re-entered harmlessly later) is no drain, nor is one in
a case where a trusted sender's transaction named the attacker (a donation credited to
it: what it takes back may be what it was given).

Both come from the ``storage`` recording (frames and their reads and writes, in order),
the ``calls`` recording (the ether each message carried) and the ``balances`` recording.
A re-entry that the target refuses (a ``nonReentrant`` guard reverts it, so the call
fails), a payment with the 2300-gas stipend (the attacker cannot call back) and
checks-effects-interactions (nothing read before the call is used after it) are not
findings. Key: the contract and the pc of the stale use.

Cost: code that cannot hand the attacker contract control with gas to call back
(``hands_over``: no CALL to a computed address that may forward more than ``send`` or
``transfer`` give, no DELEGATECALL of unknown code) is never re-entered, and code that
neither reads nor writes storage nor pays can come to no harm by it: the oracle then
needs no recording. Elsewhere only the transactions in which the attacker contract
called out while being called are rebuilt, and not those whose accesses and calls equal
those of a transaction judged before whose stale uses the campaign has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from secant.chain.attackers import REENTRY_MIN_GAS
from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL, CALLCODE, DELEGATECALL, SLOAD, SSTORE
from secant.oracles.flows import call_sites, code_opcodes
from secant.oracles.rated import RatedOracle, ether, function_name
from secant.targets.contract import ContractRun
from secant.targets.trace import END, LOAD, START, STORE, AccessEvent, CallEvent
from secant.types import Finding, RunResult


@dataclass(eq=False)
class _Frame:
    """One message of a transaction, rebuilt from the ``storage`` recording."""

    address: int
    parent: _Frame | None
    start: int
    end: int = -1
    success: bool = False
    # (position in the transaction's events, LOAD or STORE, slot, pc, value read or
    # written) of its own accesses.
    accesses: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    children: list[_Frame] = field(default_factory=list)
    paid: int = 0  # the ether its message carried, when it succeeded (the calls recording)

    def survived(self) -> bool:
        """Whether its writes stayed: it and every frame above it succeeded."""
        frame: _Frame | None = self
        while frame is not None:
            if not frame.success:
                return False
            frame = frame.parent
        return True

    def subtree(self) -> list[_Frame]:
        """The frame itself and every frame below it."""
        found, todo = [], [self]
        while todo:
            frame = todo.pop()
            found.append(frame)
            todo.extend(frame.children)
        return found


def _frames(events: list[AccessEvent], calls: list[CallEvent],
            watched: frozenset[int]) -> list[_Frame]:
    """The frames of one transaction's events, outermost first.

    ``calls`` are the transaction's ``CallEvent`` s, in the order their messages ended: the
    same order as the frames below the transaction's own by their END events (both come
    from the recorder's message hooks), which gives each frame the ether it received.
    Only frames on the storage of ``watched`` accounts (the targets) keep their accesses:
    nothing reads the others'.
    """
    frames: list[_Frame] = []
    stack: list[_Frame] = []
    top: _Frame | None = None
    keep = False  # whether the running frame's accesses are kept
    for position, (_, kind, _, address, slot, pc, value) in enumerate(events):
        if kind == START:
            frame = _Frame(address, top, position)
            if top is not None:
                top.children.append(frame)
            stack.append(frame)
            frames.append(frame)
            top, keep = frame, address in watched
        elif kind == END:
            if stack:
                done = stack.pop()
                done.end, done.success = position, bool(slot)
                top = stack[-1] if stack else None
                keep = top is not None and top.address in watched
        elif keep and top is not None:  # LOAD or STORE
            top.accesses.append((position, kind, slot, pc, value))
    ended = sorted((frame for frame in frames[1:] if frame.end >= 0), key=lambda f: f.end)
    if len(ended) == len(calls) and all(frame.address == call.target
                                        for frame, call in zip(ended, calls)):
        for frame, call in zip(ended, calls):
            frame.paid = call.value if call.success and call.kind in (CALL, CALLCODE) else 0
    return frames


def hands_over(chain: TestChain, code: bytes, code_hash: bytes, known: frozenset[bytes],
               attackers: frozenset[int]) -> bool:
    """Whether ``code`` may give the attacker contract control with gas to call back.

    A CALL or CALLCODE to an address that is not a constant (or is an attacker contract)
    does, unless the same straight-line code proves that it asks for so little gas that,
    with the stipend, the callee has less than the attacker needs to re-enter
    (``REENTRY_MIN_GAS``; ``send`` and ``transfer`` ask for 2300 at most). So does a
    DELEGATECALL or CALLCODE of code whose hash is not in ``known`` (the targets' code,
    scanned too): code no scan has seen may call anything. A STATICCALL does not: a static
    re-entry can neither write storage nor pay.
    """
    for site in call_sites(chain, code, code_hash):
        if site.opcode in (CALL, CALLCODE) and (site.target is None
                                                or site.target in attackers):
            if site.gas is None or site.gas + _STIPEND >= REENTRY_MIN_GAS:
                return True
        if site.opcode in (DELEGATECALL, CALLCODE):
            if site.target is None:
                return True
            delegate = chain.code_at(site.target)
            if delegate and keccak256(delegate) not in known:
                return True
    return False


_STIPEND = 2300  # the gas a CALL with value adds for its callee
_JUDGED_LIMIT = 1 << 16  # transactions remembered (then forgotten at once)


@dataclass(frozen=True)
class _StaleUse:
    """A slot the outer frame read, the re-entered run wrote, and the outer frame used."""

    frame: _Frame
    slot: int
    read_pc: int
    used_pc: int
    wrote_pc: int


class ReentrancyOracle(RatedOracle):
    """Reports targets that an attacker re-entered to their harm (module docstring)."""

    name = "reentrancy"
    swc = "SWC-107"
    description = ("the attacker contract re-enters a target that then uses state it read "
                   "before the call, or drains ether by re-entering")
    needs = frozenset({"storage", "balances", "calls"})
    severity = "high"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        self.attacker_contracts = frozenset(c.address for c in chain.attacker_contracts)
        self.target_addresses = frozenset(self.targets)
        # Transactions judged (by the hash of their accesses and calls) whose every stale
        # use the campaign has: their stale uses, re-entry payments and re-entered target.
        self._judged: dict[int, tuple[frozenset[tuple[object, ...]], int, int | None]] = {}
        self.base_fee = chain.blocks.settings.base_fee
        # Who pays for an attacker contract's transaction (ContractTarget relays it).
        self.relay = chain.attackers[0].address if chain.attackers else self.deployer
        # Code that cannot hand the attacker contract control with gas to spare is never
        # re-entered, and a re-entry can only harm code that keeps state (a stale use
        # needs the frame's own SLOAD or SSTORE) or pays (a drain needs a CALL with
        # ether): otherwise the oracle needs no recording and looks at no run.
        codes = self.code_of.values()
        known = frozenset(code_hash for code_hash, _ in codes)
        handed = any(hands_over(chain, code, code_hash, known, self.attacker_contracts)
                     for code_hash, code in codes)
        harmed = (any(code_opcodes(chain, code, code_hash) & {SLOAD, SSTORE}
                      for code_hash, code in codes)
                  or bool(self.exit_opcodes() & {CALL, CALLCODE}) or self.delegates_unknown())
        if not (handed and harmed):
            self.needs = frozenset()

    def idle(self) -> bool:
        """Idle where no target hands control to an attacker with state to harm (static)."""
        return not self.needs

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per stale use (or drain) a re-entering attacker caused."""
        if not self.needs or not isinstance(result, ContractRun) or not result.accesses:
            return []
        # A re-entry is a call the attacker contract makes while it is itself being called
        # (at depth 2 or more: the relay's own call of its target is at depth 1): only the
        # transactions with one can show anything, and only theirs are rebuilt.
        attackers = self.attacker_contracts
        reentered_txs = {call.tx for call in result.calls
                         if call.depth >= 2 and call.sender in attackers}
        if not reentered_txs:
            return []
        case, outcomes = result.case, result.outcomes
        by_tx: dict[int, list[AccessEvent]] = {index: [] for index in reentered_txs}
        for event in result.accesses:
            events = by_tx.get(event.tx)
            if events is not None:
                events.append(event)
        calls: dict[int, list[CallEvent]] = {}
        for call in result.calls:
            if call.tx in reentered_txs:
                calls.setdefault(call.tx, []).append(call)
        findings: list[Finding] = []
        seen: set[tuple[object, ...]] = set()  # stale uses shown by this run
        last: tuple[int, int] | None = None  # the last transaction re-entered, its target
        reentry_paid = 0  # what re-entered runs paid the attacker side
        judged = self._judged
        for index, events in sorted(by_tx.items()):
            if index >= len(case) or not outcomes[index].success:
                continue
            mine = calls.get(index, [])
            # What a transaction shows is a function of its accesses and calls alone:
            # one judged before with nothing new to word is not rebuilt.
            trace = hash((tuple(events), tuple(mine)))
            verdict = judged.get(trace)
            if verdict is None:
                verdict = self._judge_tx(result, index, events, mine, findings)
                if verdict[0] <= self.known | {f.key for f in findings}:
                    if len(judged) >= _JUDGED_LIMIT:
                        judged.clear()
                    judged[trace] = verdict
            keys, paid, address = verdict
            if address is None:
                continue
            last = (index, address)
            reentry_paid += paid
            seen |= keys
        # The gain is the whole case's: a stale use anywhere in it already explains it, and
        # else it is put on the last re-entered transaction, provided re-entered runs paid
        # the attacker (a gain the game pays anyway, a dethroned king's compensation, is
        # not the re-entry's).
        # A trusted sender that named the attacker in the case (``donate(attacker)``
        # crediting it) chose to give it ether: the gain, measured over the whole case,
        # may be that, and is no drain.
        if last is not None and not seen and reentry_paid > 0:
            index, address = last
            drained: tuple[object, ...] = (self.name, address, "ether")
            if drained not in self.known and not self.granted(case, outcomes, len(case)):
                gain = self._gain(result, index)
                if gain > 0:
                    findings.append(self._drain_finding(result, index, address, gain,
                                                        reentry_paid, drained))
        return self.returned(findings)

    def _judge_tx(self, result: ContractRun, index: int, events: list[AccessEvent],
                  calls: list[CallEvent], findings: list[Finding]
                  ) -> tuple[frozenset[tuple[object, ...]], int, int | None]:
        """What transaction ``index`` shows: stale uses, re-entry payments, re-entered target.

        The keys of its stale uses, what its re-entries paid the attacker side, and the
        target of its first re-entered frame (None: none was re-entered). The findings of
        stale uses that neither this run nor the campaign has yet are added to ``findings``.
        """
        frames = _frames(events, calls, self.target_addresses)
        if frames:
            frames[0].success = True  # the transaction succeeded
        reentered = [frame for frame in frames
                     if frame.address in self.targets and self._reentered(frame)]
        if not reentered:
            return frozenset(), 0, None
        keys: set[tuple[object, ...]] = set()
        shown = {finding.key for finding in findings}
        for use in self._stale_uses(reentered):
            key = (self.name, use.frame.address, use.used_pc)
            if key in keys:
                continue
            keys.add(key)
            if key not in self.known and key not in shown:  # not worded twice
                shown.add(key)
                findings.append(self._stale_finding(result, index, use, key))
        return frozenset(keys), self._reentry_paid(reentered), reentered[0].address

    # ------------------------------------------------------------------ the trace
    def _reentered(self, frame: _Frame) -> bool:
        """Whether a call from ``frame`` to the attacker contract entered it again."""
        return any(self._reentries(frame, child) for child in frame.children
                   if child.address in self.attacker_contracts)

    def _reentry_paid(self, frames: list[_Frame]) -> int:
        """Wei the re-entered runs under ``frames``' calls to the attacker paid the side."""
        side = self.attacker_side
        payments = {id(child): child.paid for frame in frames for call in frame.children
                    if call.address in self.attacker_contracts
                    for inner in self._reentries(frame, call)
                    for child in inner.children if child.address in side}
        return sum(payments.values())  # nested re-entries are counted once

    @staticmethod
    def _reentries(frame: _Frame, call: _Frame) -> list[_Frame]:
        """The frames on ``frame``'s storage inside ``call`` whose writes stayed."""
        return [inner for inner in call.subtree()
                if inner.address == frame.address and inner.survived()]

    def _stale_uses(self, frames: list[_Frame]) -> list[_StaleUse]:
        """Slots read before a call to the attacker, changed inside it, used after it."""
        uses: list[_StaleUse] = []
        for frame in frames:
            for call in frame.children:
                if call.address not in self.attacker_contracts:
                    continue
                # The surviving writes of the re-entered runs, in the order they ran: the
                # value each slot holds when the call returns, and where it was written.
                stores = sorted((position, slot, pc, value)
                                for other in self._reentries(frame, call)
                                for position, kind, slot, pc, value in other.accesses
                                if kind == STORE)
                written = {slot: (pc, value) for _, slot, pc, value in stores}
                # What the frame last saw of each slot before the call (read or wrote).
                seen: dict[int, int] = {}
                read: dict[int, int] = {}
                for position, kind, slot, pc, value in frame.accesses:
                    if position > call.start:
                        break
                    seen[slot] = value
                    if kind == LOAD:
                        read[slot] = pc
                stale = {slot: pc for slot, pc in read.items()
                         if slot in written and written[slot][1] != seen[slot]}
                for position, _, slot, pc, _ in frame.accesses:
                    if position > call.end and slot in stale:
                        uses.append(_StaleUse(frame, slot, stale.pop(slot), pc,
                                              written[slot][0]))
        return uses

    def _gain(self, result: ContractRun, upto: int) -> int:
        """Wei the attacker side holds beyond what it paid in (the gas it paid aside).

        The balances of the attacker accounts and the attacker contracts together, plus
        the gas the side paid: an attacker account pays for its own transactions and,
        as their relay, for the attacker contracts'.
        """
        side = self.attacker_side
        held = sum(result.balance_changes.get(a, 0) for a in side)
        gas = sum(done.gas_used for tx, done in zip(result.case, result.outcomes)
                  if not done.invalid and (tx.sender in self.attackers or (
                      tx.sender in self.attacker_contracts and self.relay in side)))
        return held + gas * self.base_fee

    # ------------------------------------------------------------------ wording
    def _stale_finding(self, result: ContractRun, index: int, use: _StaleUse,
                       key: tuple[object, ...]) -> Finding:
        case = result.case
        contract = self.targets[use.frame.address]
        read_at, used_at = (self.where(contract, pc) or f"pc {pc}"
                            for pc in (use.read_pc, use.used_pc))
        tx = case[index]
        detail = (f"{self.step(case[:index + 1], index)}: {contract.name} read storage slot "
                  f"{use.slot:#x} at {read_at}, then called {self.who(tx.sender)}, which "
                  f"re-entered {contract.name} and rewrote that slot; after the call "
                  f"{contract.name} used the slot again at {used_at}, acting on the value "
                  "from before the re-entry (the DAO's bug: update state before calling "
                  "out, or guard the function against re-entry). "
                  + self.rating("certain", "the re-entered writes survived in a transaction "
                                "that succeeded"))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(tx), pc=use.used_pc,
                       source=self.where(contract, use.used_pc), detail=detail, key=key,
                       case=case[:index + 1], oracle=self.name, confidence="certain")

    def _drain_finding(self, result: ContractRun, index: int, address: int, gain: int,
                       paid: int, key: tuple[object, ...]) -> Finding:
        case = result.case
        contract = self.targets[address]
        tx = case[index]
        detail = (f"{self.step(case[:index + 1], index)}: {self.who(tx.sender)} re-entered "
                  f"{contract.name}, the re-entered runs paid the attacker {ether(paid)}, "
                  "and the attacker side (its accounts and contracts) ended the case with "
                  f"{ether(gain)} more than it paid in, gas aside. "
                  + self.rating("certain", "the attacker's gain is measured, not inferred"))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(tx), pc=0, source=None, detail=detail,
                       key=key, case=case, oracle=self.name, confidence="certain")
