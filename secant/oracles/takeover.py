"""Owner takeover: an attacker puts itself where the deployer's address was kept.

Most contracts keep the account that deployed them in storage (``owner = msg.sender`` in
the constructor) and test it before their privileged actions. Many access-control bugs
end the same way, whatever the path: the attacker's address replaces the deployer's in
that slot. A constructor misnamed into a public function, an unprotected initialiser, a
fallback that delegates calls into a library whose layout differs from the caller's, an
uninitialised storage pointer or an array length underflow in solc 0.4 that writes slot 0:
each lets an attacker own the contract, and from then on do what its owner may, which may
pay nothing in the run itself.

The slots that hold the deployer's address (in their low 20 bytes, where solc puts the
first variable of a slot) are read from every target's storage once deployed. A run shows
a takeover when, after it, such a slot of a target holds an address of the attacker side
(an attacker sender or an attacker contract), and the last transaction that wrote that
slot number (a target's code or a library's, in any context) is a successful one of the
attacker side. As for the ether oracles, the attacker is one that sent no ether during
the case: paying to become the king of a game is the game. What follows a trusted
sender's transaction naming the attacker (``transferOwnership(attacker1)``) is that
sender's choice and no finding. Which slot is the owner's is guessed from its value, so a
finding is *likely*: a contract may let anyone claim a role that the deployer held first.
Key: the contract and the slot.

Cost: none on a run that wrote none of those slot numbers; otherwise one read of each
such slot of each target that holds one.
"""

from __future__ import annotations

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.oracles.rated import RatedOracle, function_name
from secant.types import Finding, RunResult

_ADDRESS = (1 << 160) - 1


class OwnerTakeoverOracle(RatedOracle):
    """Reports attackers that replaced the deployer's address in storage (module docstring)."""

    name = "owner-takeover"
    swc = None
    description = ("an attacker who sent no ether puts its own address in a storage slot that "
                   "held the deployer's (an owner taken over)")
    severity = "high"
    confidence = "likely"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        state = chain.state
        # (target address, slot) of every slot whose low 20 bytes are the deployer's.
        self.owner_slots: list[tuple[int, int]] = []
        for address in self.targets:
            account = state.get(address)
            if account is None:
                continue
            self.owner_slots += [(address, slot) for slot, value in account.storage.items()
                                 if value & _ADDRESS == self.deployer]
        self.slot_numbers = frozenset(slot for _, slot in self.owner_slots)

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per owner slot an attacker's transaction took over."""
        numbers = self.slot_numbers
        if not numbers or post is None:
            return []
        writes, marks = result.writes, result.write_marks
        last: dict[int, tuple[int, int]] = {}  # slot number -> (its last write, that write's tx)
        writer_tx = 0
        for index, (code_hash, _, slot) in enumerate(writes):
            if slot in numbers and code_hash in self.codes:
                while writer_tx + 1 < len(marks) and marks[writer_tx + 1] <= index:
                    writer_tx += 1
                last[slot] = (index, writer_tx)
        if not last:
            return []
        case, outcomes = result.case, result.outcomes
        paid = {tx.sender for tx, done in zip(case, outcomes) if tx.value and done.success}
        if paid & self.attacker_side:
            return []  # an attacker that paid: what it got it may have bought
        findings: list[Finding] = []
        for address, slot in self.owner_slots:
            key = (self.name, address, slot)
            if slot not in last or key in self.known:
                continue
            now = post.storage_at(address, slot) & _ADDRESS
            if now not in self.attacker_side:
                continue
            write, tx_index = last[slot]
            if tx_index >= len(case):
                continue
            tx = case[tx_index]
            if (tx.sender not in self.attacker_side or not outcomes[tx_index].success
                    or self.granted(case, outcomes, tx_index)):
                continue
            code_hash, pc, _ = writes[write]
            writer = self.codes[code_hash]
            contract = self.targets[address]
            trusted = self.trusted_setup(case, outcomes, tx_index)
            why = ("the slot held the deployer's address, so it is likely the owner's; "
                   + (f"trusted senders sent {len(trusted)} transaction(s) without ether "
                      "first, one of which may have opened the way on purpose" if trusted
                      else "only attackers' transactions came before"))
            through = "" if writer is contract else f" (through {writer.name}'s code)"
            detail = (f"{self.step(case[:tx_index + 1], tx_index)} wrote "
                      f"{self.who(now)} into {contract.name}'s storage slot 0x{slot:x}"
                      f"{through} at {self.where(writer, pc) or f'pc {pc}'}, which held "
                      f"the deployer's address: {self.who(tx.sender)}, who sent no ether, "
                      "now stands where the owner stood. " + self.rating(self.confidence, why))
            findings.append(Finding(
                kind=self.name, swc="", contract=contract.name, function=function_name(tx),
                pc=pc, source=self.where(writer, pc), detail=detail, key=key,
                case=case[:tx_index + 1], oracle=self.name, confidence=self.confidence))
        return self.returned(findings)

