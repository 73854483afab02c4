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
(a dethroned king's compensation, re-entered harmlessly later) is no drain.

Both come from the ``storage`` recording (frames and their reads and writes, in order),
the ``calls`` recording (the ether each message carried) and the ``balances`` recording.
A re-entry that the target refuses (a ``nonReentrant`` guard reverts it, so the call
fails), a payment with the 2300-gas stipend (the attacker cannot call back) and
checks-effects-interactions (nothing read before the call is used after it) are not
findings. Key: the contract and the pc of the stale use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.opcodes import CALL, CALLCODE
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


def _frames(events: list[AccessEvent], calls: list[CallEvent]) -> list[_Frame]:
    """The frames of one transaction's events, outermost first.

    ``calls`` are the transaction's ``CallEvent`` s, in the order their messages ended: the
    same order as the frames below the transaction's own by their END events (both come
    from the recorder's message hooks), which gives each frame the ether it received.
    """
    frames: list[_Frame] = []
    stack: list[_Frame] = []
    for position, event in enumerate(events):
        if event.kind == START:
            frame = _Frame(event.address, stack[-1] if stack else None, position)
            if stack:
                stack[-1].children.append(frame)
            stack.append(frame)
            frames.append(frame)
        elif event.kind == END:
            if stack:
                done = stack.pop()
                done.end, done.success = position, bool(event.slot)
        elif stack and event.kind in (LOAD, STORE):
            stack[-1].accesses.append((position, event.kind, event.slot, event.pc,
                                        event.value))
    ended = sorted((frame for frame in frames[1:] if frame.end >= 0), key=lambda f: f.end)
    if len(ended) == len(calls) and all(frame.address == call.target
                                        for frame, call in zip(ended, calls)):
        for frame, call in zip(ended, calls):
            frame.paid = call.value if call.success and call.kind in (CALL, CALLCODE) else 0
    return frames


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
        self.base_fee = chain.blocks.settings.base_fee
        # Who pays for an attacker contract's transaction (ContractTarget relays it).
        self.relay = chain.attackers[0].address if chain.attackers else self.deployer

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per stale use (or drain) a re-entering attacker caused."""
        if not isinstance(result, ContractRun) or not result.accesses:
            return []
        case, outcomes = result.case, result.outcomes
        by_tx: dict[int, list[AccessEvent]] = {}
        for event in result.accesses:
            by_tx.setdefault(event.tx, []).append(event)
        calls: dict[int, list[CallEvent]] = {}
        for call in result.calls:
            calls.setdefault(call.tx, []).append(call)
        findings: list[Finding] = []
        seen: set[tuple[object, ...]] = set()  # keys reported by this run
        last: tuple[int, _Frame] | None = None  # the last transaction re-entered
        reentry_paid = 0  # what re-entered runs paid the attacker side
        for index, events in sorted(by_tx.items()):
            if index >= len(case) or not outcomes[index].success:
                continue
            frames = _frames(events, calls.get(index, []))
            if frames:
                frames[0].success = True  # the transaction succeeded
            reentered = [frame for frame in frames
                         if frame.address in self.targets and self._reentered(frame)]
            if not reentered:
                continue
            last = (index, reentered[0])
            reentry_paid += self._reentry_paid(reentered)
            for use in self._stale_uses(reentered):
                key = (self.name, use.frame.address, use.used_pc)
                if key in seen:
                    continue
                seen.add(key)
                findings.append(self._stale_finding(result, index, use, key))
        # The gain is the whole case's: a stale use anywhere in it already explains it, and
        # else it is put on the last re-entered transaction, provided re-entered runs paid
        # the attacker (a gain the game pays anyway, a dethroned king's compensation, is
        # not the re-entry's).
        if last is not None and not findings and reentry_paid > 0:
            gain = self._gain(result, last[0])
            if gain > 0:
                index, frame = last
                findings.append(self._drain_finding(result, index, frame, gain, reentry_paid,
                                                    (self.name, frame.address, "ether")))
        return findings

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
                       case=case[:index + 1], oracle=self.name)

    def _drain_finding(self, result: ContractRun, index: int, frame: _Frame, gain: int,
                       paid: int, key: tuple[object, ...]) -> Finding:
        case = result.case
        contract = self.targets[frame.address]
        tx = case[index]
        detail = (f"{self.step(case[:index + 1], index)}: {self.who(tx.sender)} re-entered "
                  f"{contract.name}, the re-entered runs paid the attacker {ether(paid)}, "
                  "and the attacker side (its accounts and contracts) ended the case with "
                  f"{ether(gain)} more than it paid in, gas aside. "
                  + self.rating("certain", "the attacker's gain is measured, not inferred"))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(tx), pc=0, source=None, detail=detail,
                       key=key, case=case, oracle=self.name)
