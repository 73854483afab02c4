"""Arbitrary storage writes (SWC-124): an SSTORE lands on a slot no legitimate code writes.

Harvey's oracle. A campaign draws one random 256-bit *target slot* and its search
minimises ``|slot - target|`` over every SSTORE it runs (``secant.engine.feedback``). No
contract lays out a variable at a random 256-bit slot, and a mapping entry's slot is a
hash nobody can aim, so an SSTORE that writes exactly there shows a write whose slot the
inputs steer freely: an array whose length underflowed (solc < 0.6), an index added to a
base without a bounds check, an assembly ``sstore`` of a caller's key. Whoever can do that
can overwrite the owner or any balance.

The oracle needs the campaign's target slot: ``target_slot`` is None (the oracle reports
nothing) until the campaign sets it to the fuzzer's (``Fuzzer.sstore_target``). Writes are
always recorded, so it needs no recording. Only writes of successful transactions count
(a reverted transaction undoes its writes, and code that writes, checks and reverts is
safe). The finding is *possible* when the deployer sent the transaction, or an account
a trusted sender's earlier transaction named (``setAdmin(user1)``): an owner-only "set
any slot" function is a deliberate power. It is *certain* when any other sender (an
attacker, an ordinary user) did. Key: the code and pc of the SSTORE and that confidence
(a certain write is still reported after a possible one at the same site).
"""

from __future__ import annotations

from operator import itemgetter

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.oracles.rated import RatedOracle, function_name
from secant.types import Finding, RunResult

_SLOT = itemgetter(2)  # the slot of a write (code hash, pc, slot)


class ArbitraryWriteOracle(RatedOracle):
    """Reports SSTOREs that hit the campaign's target slot (see the module docstring)."""

    name = "arbitrary-storage-write"
    swc = "SWC-124"
    description = ("an SSTORE writes the campaign's random target slot: the written slot is "
                   "under the sender's control (Harvey)")
    needs = frozenset()
    severity = "high"
    confidence = "certain"

    def __init__(self, chain: TestChain, target_slot: int | None = None) -> None:
        super().__init__(chain)
        self.target_slot = target_slot

    def use_target_slot(self, slot: int | None) -> None:
        """Watch the campaign's random target slot."""
        self.target_slot = slot

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per SSTORE site of a target contract that wrote the target slot."""
        target = self.target_slot
        if target is None or target not in map(_SLOT, result.writes):
            return []  # the usual case, tested without a Python step per write
        findings: list[Finding] = []
        marks = result.write_marks
        case, outcomes = result.case, result.outcomes
        tx = 0
        for index, (code_hash, pc, slot) in enumerate(result.writes):
            if slot != target:
                continue
            while tx + 1 < len(marks) and marks[tx + 1] <= index:
                tx += 1
            contract = self.codes.get(code_hash)
            if contract is None or tx >= len(case) or not outcomes[tx].success:
                continue
            sender = case[tx].sender
            if sender == self.deployer or self.granted(case, outcomes, tx,
                                                       frozenset({sender})):
                confidence = "possible"
                why = (f"{self.who(sender)} wrote it, the deployer or an account a trusted "
                       "sender named before; an owner's way to write any slot may be "
                       "intended")
            else:
                confidence = "certain"
                why = f"{self.who(sender)}, a sender without any granted right, chose the slot"
            source = self.where(contract, pc)
            detail = (f"{self.step(case[:tx + 1], tx)} made the SSTORE at "
                      f"{source or f'pc {pc}'} of {contract.name} write slot 0x{slot:064x}, "
                      "the campaign's random target slot, which no variable of any contract "
                      "occupies: the inputs choose which slot this write overwrites (the "
                      "owner, a balance). " + self.rating(confidence, why))
            findings.append(Finding(
                kind=self.name, swc=self.swc or "", contract=contract.name,
                function=function_name(case[tx]), pc=pc, source=source, detail=detail,
                key=(self.name, code_hash, pc, confidence), case=case[:tx + 1], oracle=self.name,
                confidence=confidence))
        return findings
