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
   re-entered run wrote the same slot, and its writes survived (every frame up to the
   transaction's own succeeded),
4. and after the call returned, F read or wrote the slot again: it used a stale value.

It is also reported when the attacker contract re-entered a target and ended the case with
more ether than the transactions it sent brought in (a drain that needs no stale slot the
trace can show, such as a balance kept in another contract).

Both come from the ``storage`` recording (frames and their reads and writes, in order) and
the ``balances`` recording. A re-entry that the target refuses (a ``nonReentrant`` guard
reverts it, so the call fails), a payment with the 2300-gas stipend (the attacker cannot
call back) and checks-effects-interactions (nothing read before the call is used after it)
are not findings. Key: the contract and the pc of the stale use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.oracles.rated import RatedOracle, ether, function_name
from secant.targets.contract import ContractRun
from secant.targets.trace import END, LOAD, START, STORE, AccessEvent
from secant.types import Finding, RunResult


@dataclass(eq=False)
class _Frame:
    """One message of a transaction, rebuilt from the ``storage`` recording."""

    address: int
    parent: _Frame | None
    start: int
    end: int = -1
    success: bool = False
    # (position in the transaction's events, LOAD or STORE, slot, pc) of its own accesses.
    accesses: list[tuple[int, int, int, int]] = field(default_factory=list)
    children: list[_Frame] = field(default_factory=list)

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


def _frames(events: list[AccessEvent]) -> list[_Frame]:
    """The frames of one transaction's events, outermost first."""
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
            stack[-1].accesses.append((position, event.kind, event.slot, event.pc))
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
    needs = frozenset({"storage", "balances"})
    severity = "high"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        self.attacker_contracts = frozenset(c.address for c in chain.attacker_contracts)

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per stale use (or drain) a re-entering attacker caused."""
        if not isinstance(result, ContractRun) or not result.accesses:
            return []
        case, outcomes = result.case, result.outcomes
        by_tx: dict[int, list[AccessEvent]] = {}
        for event in result.accesses:
            by_tx.setdefault(event.tx, []).append(event)
        findings: list[Finding] = []
        seen: set[tuple[object, ...]] = set()  # keys reported by this run
        drained = False
        for index, events in sorted(by_tx.items()):
            if index >= len(case) or not outcomes[index].success:
                continue
            frames = _frames(events)
            if frames:
                frames[0].success = True  # the transaction succeeded
            reentered = [frame for frame in frames
                         if frame.address in self.targets and self._reentered(frame)]
            if not reentered:
                continue
            for use in self._stale_uses(reentered):
                key = (self.name, use.frame.address, use.used_pc)
                if key in seen:
                    continue
                seen.add(key)
                findings.append(self._stale_finding(result, index, use, key))
            if not drained and not findings:  # a stale use already explains a drain
                gain = self._gain(result, index)
                if gain > 0:
                    drained = True
                    findings.append(self._drain_finding(
                        result, index, reentered[0], gain,
                        (self.name, reentered[0].address, "ether")))
        return findings

    # ------------------------------------------------------------------ the trace
    def _reentered(self, frame: _Frame) -> bool:
        """Whether a call from ``frame`` to the attacker contract entered it again."""
        return any(self._reentries(frame, child) for child in frame.children
                   if child.address in self.attacker_contracts)

    @staticmethod
    def _reentries(frame: _Frame, call: _Frame) -> list[_Frame]:
        """The frames on ``frame``'s storage inside ``call`` whose writes stayed."""
        return [inner for inner in call.subtree()
                if inner.address == frame.address and inner.survived()]

    def _stale_uses(self, frames: list[_Frame]) -> list[_StaleUse]:
        """Slots read before a call to the attacker, rewritten inside it, used after it."""
        uses: list[_StaleUse] = []
        for frame in frames:
            for call in frame.children:
                if call.address not in self.attacker_contracts:
                    continue
                inner = self._reentries(frame, call)
                written = {slot: pc for other in inner
                           for _, kind, slot, pc in other.accesses if kind == STORE}
                read = {slot: pc for position, kind, slot, pc in frame.accesses
                        if kind == LOAD and position < call.start and slot in written}
                for position, _, slot, pc in frame.accesses:
                    if position > call.end and slot in read:
                        uses.append(_StaleUse(frame, slot, read[slot], pc, written[slot]))
                        read.pop(slot)
        return uses

    def _gain(self, result: ContractRun, upto: int) -> int:
        """Wei the attacker contracts hold beyond what their transactions brought in."""
        brought = sum(tx.value for tx, done in zip(result.case, result.outcomes)
                      if tx.sender in self.attacker_contracts and done.success)
        held = sum(result.balance_changes.get(a, 0) for a in self.attacker_contracts)
        return held - brought

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
                       key: tuple[object, ...]) -> Finding:
        case = result.case
        contract = self.targets[frame.address]
        tx = case[index]
        detail = (f"{self.step(case[:index + 1], index)}: {self.who(tx.sender)} re-entered "
                  f"{contract.name} and the attacker contracts ended the case with "
                  f"{ether(gain)} more than their transactions brought in. "
                  + self.rating("certain", "the attacker's gain is measured, not inferred"))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(tx), pc=0, source=None, detail=detail,
                       key=key, case=case, oracle=self.name)
