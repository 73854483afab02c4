"""Transaction order dependence (SWC-114): who goes first decides what a sender is paid.

Transactions wait in a public pool before they are mined, and their order is whoever pays
the most gas's (or the miner's) to choose. When the ether a contract pays a sender depends
on whether another sender's transaction ran just before, that other sender can watch the
pool and get in first: an owner lowers the reward while a claim of it is pending, a seller
is paid less because the price changed ahead of the sale, a bounty's terms change under
its solver.

The oracle shows it on a run whose last two transactions (the *other* and then the
*victim*) come from different senders and both succeeded, when

* a target paid the victim's sender in the victim's transaction, or called it with no
  ether (``msg.sender.transfer(reward)`` with a reward of 0 is still a call: what it would
  pay otherwise is the question), or self-destructed to it; the victim sent no ether
  itself (a payment that buys something, tokens or a place, has a worth in ether the
  oracle cannot tell: a refund that shrinks because the other bought first is no loss);
* the other transaction wrote a storage slot the victim's transaction read, or moved
  ether into or out of the paying contract (the cheap facts every run records: the writes
  of each transaction, the reads of the last);
* and the case run again with the two swapped (``PostState.run_variant``), the victim
  first, with the victim at the very block and time it had in the run (the two
  transactions' block advances go before it, the other runs in the same block after it),
  pays the victim's sender more, and the victim's transaction still succeeds (the other
  may fail in that order: a claim that closes the game).

So the other transaction, sent first, cut what the victim was paid, and nothing but the
order changed. A later transaction that is paid *more* because of the one before it (the
refund an outbid bidder can now withdraw, an excess refunded because a sale filled up) is
no loss to its sender and is not reported; nor are withdrawals that do not depend on each
other (a bank's), which pay the same in both orders.

What it does not claim: that the change was not meant (a price the owner may set, a game
whose rules say first come first served), hence *likely*; ether only, not tokens (an
ERC-20 ``approve`` race moves tokens). Key: the paying contract and the two functions.

Cost: targets that can pay nobody (no CALL that may carry ether, no SELFDESTRUCT, no code
a scan has not seen run by DELEGATECALL) need no recording; elsewhere only runs that meet
the conditions above before the replay are replayed, once per run shape (the two
functions, the amount paid), and at most ``_PAIR_LIMIT`` times per pair of functions
that showed nothing.
"""

from __future__ import annotations

from dataclasses import replace

from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.oracle import PostState
from secant.evm.opcodes import CALL, SELFDESTRUCT
from secant.oracles.rated import RatedOracle, ether, function_name
from secant.targets.contract import ContractRun
from secant.types import Finding, RunResult, TxSeq, storage_slot

__all__ = ["OrderDependenceOracle"]

_PAIR_LIMIT = 32  # clean replays of one pair of functions before the pair is left alone
_CLEAN_LIMIT = 1 << 14  # run shapes remembered as clean (then forgotten at once)
_NEAR = 64  # bytes after a CALL within which the JUMPI testing its success sits


class OrderDependenceOracle(RatedOracle):
    """Reports payouts that another sender's transaction cut by going first (docstring)."""

    name = "order-dependence"
    swc = "SWC-114"
    description = ("the ether a transaction pays its sender is less because another "
                   "sender's transaction ran just before it (front-running, transaction "
                   "order dependence)")
    needs = frozenset({"calls", "accounts"})
    severity = "medium"
    confidence = "likely"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        exits, unknown = self.exit_opcodes(), self.delegates_unknown()
        if not exits & {CALL, SELFDESTRUCT} and not unknown:
            self.needs = frozenset()
        elif SELFDESTRUCT not in exits and not unknown:
            self.needs = frozenset({"calls"})  # no self-destruct can pay anyone
        self.clean: set[tuple[object, ...]] = set()
        self.pairs: dict[tuple[object, ...], int] = {}  # clean replays per function pair

    def idle(self) -> bool:
        """Idle where no target can send ether or self-destruct (its static pre-check)."""
        return not self.needs

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding when swapping the run's last two transactions pays the last more."""
        if not self.needs or post is None or not isinstance(result, ContractRun):
            return []
        case, outcomes = result.case, result.outcomes
        victim = len(case) - 1
        other = victim - 1
        if (other < 0 or len(outcomes) != len(case) or not outcomes[victim].success
                or not outcomes[other].success or case[victim].value
                or case[victim].sender == case[other].sender):
            return []
        sender = case[victim].sender
        payers = self._payers(result, victim, sender)
        if not payers:
            return []
        payer = payers[0]
        pair = (case[other].function, case[other].to, case[victim].function, case[victim].to)
        key = (self.name, payer, case[victim].function, case[other].function)
        if key in self.known or self.pairs.get(pair, 0) >= _PAIR_LIMIT:
            return []
        if not self._depends(result, other, victim, set(payers)):
            return []
        paid = self._paid(result, victim, sender)
        shape = (*pair, paid)
        if shape in self.clean:
            return []
        swapped = self._swapped(case, other)
        variant = post.run_variant(swapped, recordings=self.needs)
        if (len(variant.outcomes) == len(case) and variant.outcomes[other].success
                and isinstance(variant, ContractRun)):
            alone = self._paid(variant, other, sender)
            if alone > paid:
                return self.returned([self._finding(result, variant, payer, paid, alone,
                                                    key)])
        if len(self.clean) >= _CLEAN_LIMIT:
            self.clean.clear()
        self.clean.add(shape)
        self.pairs[pair] = self.pairs.get(pair, 0) + 1
        return []

    def _payers(self, result: ContractRun, index: int, sender: int) -> list[int]:
        """The targets that called or self-destructed to ``sender`` in transaction ``index``."""
        payers = [call.sender for call in result.calls
                  if call.tx == index and call.kind == CALL and call.target == sender
                  and call.sender in self.targets]
        payers += [gone.address for gone in result.selfdestructs
                   if gone.tx == index and gone.beneficiary == sender
                   and gone.address in self.targets]
        return list(dict.fromkeys(payers))

    @staticmethod
    def _paid(result: ContractRun, index: int, sender: int) -> int:
        """The wei ``sender`` received in transaction ``index`` (calls and self-destructs)."""
        return (sum(call.value for call in result.calls
                    if call.tx == index and call.target == sender and call.success
                    and call.kind == CALL and call.value)
                + sum(gone.balance for gone in result.selfdestructs
                      if gone.tx == index and gone.beneficiary == sender))

    def _depends(self, result: ContractRun, other: int, victim: int,
                 payers: set[int]) -> bool:
        """Whether transaction ``other`` may have changed what ``victim`` pays.

        It wrote a slot (of the same code) that the victim's transaction read, or moved
        ether into or out of a paying contract.
        """
        marks = result.write_marks
        if other < len(marks):
            end = marks[other + 1] if other + 1 < len(marks) else len(result.writes)
            written = {(code_hash, slot)
                       for code_hash, _, slot in result.writes[marks[other]:end]}
            if written:
                for step, address, read_key, _ in result.reads:
                    if step != victim:
                        continue
                    owner = read_key >> 256 or address
                    code = self.code_of.get(owner)
                    if code is not None and (code[0], storage_slot(read_key)) in written:
                        return True
        first = result.case[other]
        if first.value and self.contract_of(first) in payers:
            return True
        return any(call.tx == other and call.value and call.success
                   and (call.sender in payers or call.target in payers)
                   for call in result.calls)

    def _victim_sites(self, result: ContractRun, payer: int, victim: int
                      ) -> list[tuple[DeployedContract, int]]:
        """The payer's CALL (else SELFDESTRUCT) sites that ran, those of the victim first.

        Coverage is the whole case's; a site whose call's success a JUMPI of the victim's
        transaction tested right after it (``transfer``, ``require(ok)``) ran in it.
        """
        sites = self.ran_exits(result, payer, CALL) or self.ran_exits(result, payer,
                                                                      SELFDESTRUCT)
        tested = {pc for code_hash, pc, *_ in result.tx_branches(victim)
                  if code_hash == self.code_of.get(payer, (b"",))[0]}
        near = [(contract, pc) for contract, pc in sites
                if any(pc < branch <= pc + _NEAR for branch in tested)]
        return near or sites

    @staticmethod
    def _swapped(case: TxSeq, other: int) -> TxSeq:
        """``case`` with transactions ``other`` and ``other + 1`` swapped.

        The victim keeps the block and time it ran at (both advances go before it); the
        other runs in the same block right after it.
        """
        first, second = case[other], case[other + 1]
        victim = replace(second, blocks=first.blocks + second.blocks,
                         time=first.time + second.time, storage=())
        later = replace(first, blocks=0, time=0, storage=())
        return (*case[:other], victim, later, *case[other + 2:])

    def _finding(self, result: ContractRun, variant: ContractRun, payer: int, paid: int,
                 alone: int, key: tuple[object, ...]) -> Finding:
        case = result.case
        victim = len(case) - 1
        other = victim - 1
        contract = self.targets[payer]
        tx, first = case[victim], case[other]
        sites = self._victim_sites(result, payer, victim)
        after = "failed" if not variant.outcomes[victim].success else "succeeded"
        detail = (f"{self.step(case, other)} ran just before {self.step(case, victim)}, "
                  f"and {contract.name} paid {self.who(tx.sender)} {ether(paid)}"
                  f"{self.places(sites)}; with the two swapped and nothing else changed, "
                  f"{function_name(tx)} ran first and was paid {ether(alone)} (then "
                  f"{function_name(first)} {after}). {self.who(first.sender)} can watch "
                  f"the pending {function_name(tx)} and get {function_name(first)} mined "
                  f"first to cut the payout by {ether(alone - paid)} (front-running); make "
                  "the payout a parameter the sender names and checks, or commit to the "
                  "terms before the claim. "
                  + self.rating(self.confidence, "the replay shows the payout depends on the "
                                "order, unless the contract means the other sender to be "
                                "able to change it"))
        site, pc = sites[0] if sites else (contract, 0)
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(tx), pc=pc,
                       source=self.where(site, pc) if sites else None, detail=detail,
                       key=key,
                       case=case, oracle=self.name, confidence=self.confidence)
