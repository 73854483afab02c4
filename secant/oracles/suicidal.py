"""Suicidal contracts (SWC-106): an attacker makes a target contract run SELFDESTRUCT.

As in ILF and Maian, the attacker is an untrusted sender that sent no ether during the
test case: a contract that lets its depositors close it is a design, one that lets anyone
close it is a bug. The attacker contracts count as attackers too: a transaction "sent" by
one (relayed from an attacker account through its ``attack``, ``ContractTarget.relays``)
is an attacker's, paid from the relaying account's pocket (a deposit by either is a
deposit by both), and ether a destruction sends them goes to the attacker. A run shows a
suicidal contract when a successful transaction from such an attacker made a target
contract (or code it delegated to, in its context) execute SELFDESTRUCT (the ``accounts``
recording). Since Cancun, SELFDESTRUCT of an old contract no longer deletes its code, but
it still sends the whole balance away, and before Cancun it ends the contract for
everyone: either way the attacker decided it.

A destruction that follows a trusted sender's transaction naming the attacker
(``transferOwnership(attacker1)``) is the trusted sender's choice and not reported. It is
*certain* when no trusted sender's transaction without ether came first, else *likely*
(that transaction may have opened the way on purpose). Key: the contract.

Cost: targets without SELFDESTRUCT that delegate to no code but targets' are never
destroyed, and the oracle then needs no recording; elsewhere only runs in which a contract
the campaign has not reported self-destructed are looked at.
"""

from __future__ import annotations

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.opcodes import SELFDESTRUCT
from secant.oracles.rated import RatedOracle, ether, function_name
from secant.targets.contract import ContractRun
from secant.types import Finding, RunResult, TxOutcome, TxSeq


class SuicidalOracle(RatedOracle):
    """Reports contracts an attacker destroyed (see the module docstring)."""

    name = "suicidal"
    swc = "SWC-106"
    description = "an attacker who sent no ether makes a contract SELFDESTRUCT"
    needs = frozenset({"accounts"})
    severity = "high"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        # An attacker contract's transactions are relayed, and paid, by this account.
        relay = chain.attackers[0].address if chain.attackers else self.deployer
        self._relays = {c.address: relay for c in chain.attacker_contracts}
        # Targets without a SELFDESTRUCT that run no code a scan has not seen are never
        # destroyed: the oracle then needs no recording.
        if SELFDESTRUCT not in self.exit_opcodes() and not self.delegates_unknown():
            self.needs = frozenset()

    def _payer(self, sender: int) -> int:
        """Whose ether a transaction of ``sender`` carries (the relay's, for a contract)."""
        return self._relays.get(sender, sender)

    def trusted_setup(self, case: TxSeq, outcomes: list[TxOutcome], upto: int) -> list[int]:
        """Trusted transactions before ``upto``; an attacker contract's is the attacker's."""
        return [i for i in super().trusted_setup(case, outcomes, upto)
                if case[i].sender not in self.attacker_side]

    def idle(self) -> bool:
        """Idle where no target can self-destruct (its static pre-check)."""
        return not self.needs

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per target contract an attacker's transaction destroyed."""
        if not self.needs or not isinstance(result, ContractRun) or not result.selfdestructs:
            return []
        known = self.known
        if all((self.name, gone.address) in known for gone in result.selfdestructs):
            return []  # the campaign has every contract destroyed here
        case, outcomes = result.case, result.outcomes
        paid = {self._payer(tx.sender) for tx, done in zip(case, outcomes)
                if tx.value and done.success}
        findings: list[Finding] = []
        seen: set[int] = set()
        for gone in result.selfdestructs:
            contract = self.targets.get(gone.address)
            if (contract is None or gone.address in seen or gone.tx >= len(case)
                    or (self.name, gone.address) in known):
                continue
            tx = case[gone.tx]
            if (tx.sender not in self.attacker_side or self._payer(tx.sender) in paid
                    or not outcomes[gone.tx].success
                    or self.granted(case, outcomes, gone.tx)):
                continue
            seen.add(gone.address)
            sites = self.ran_exits(result, gone.address, SELFDESTRUCT)
            at = self.places(sites)
            trusted = self.trusted_setup(case, outcomes, gone.tx)
            if trusted:
                confidence = "likely"
                why = (f"trusted senders sent {len(trusted)} transaction(s) without ether "
                       "first; if one of them gave the attacker this right on purpose, the "
                       "destruction is intended")
            else:
                confidence = "certain"
                why = "only attackers' transactions and payments came before"
            sent = (f"sending its {ether(gone.balance)} to {self.who(gone.beneficiary)}"
                    if gone.balance else "while it held no ether")
            detail = (f"{self.step(case[:gone.tx + 1], gone.tx)} made {contract.name} execute "
                      f"SELFDESTRUCT{at}, {sent}; {self.who(tx.sender)} had sent no ether. "
                      + self.rating(confidence, why))
            site, pc = sites[0] if sites else (contract, 0)
            findings.append(Finding(
                kind=self.name, swc=self.swc or "", contract=contract.name,
                function=function_name(tx), pc=pc,
                source=self.where(site, pc) if sites else None, detail=detail,
                key=(self.name, gone.address), case=case[:gone.tx + 1], oracle=self.name,
                confidence=confidence))
        return self.returned(findings)
