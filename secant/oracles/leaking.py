"""Leaking ether (SWC-105): an attacker who never sent ether gets ether out of a contract.

The definition is ILF's and Maian's (*prodigal* contracts): an untrusted sender that sent
no ether to anyone during the test case ends it richer, because a target contract paid it
in a transaction the attacker sent. The attacker is the whole *attacker side*: the attacker
accounts and the attacker contracts. A transaction "sent" by an attacker contract (relayed
from an attacker account through the contract's ``attack``, ``ContractTarget.relays``) is
the attacker's, and so is the ether the attacker contracts receive. A run shows a leak when

* no successful transaction of the case from the attacker side carried ether, and no
  attacker contract made a call with ether (the ``calls`` recording);
* in a successful transaction of the attacker side, a target contract sent ether to the
  attacker side (a successful CALL with value to an attacker account or attacker contract,
  or a SELFDESTRUCT naming one as beneficiary);
* the attacker side's balances grew over the case by more than the gas its transactions
  paid (the ``balances`` recording; an attacker account pays for the transactions it
  relays), so no later transaction took the ether back. Ether a contract sent it in a
  transaction it did not send (an owner's ``migrateTo(attacker1)``) is not counted: that
  was the sender's choice, and the case cut at the leak would not show it.

The finding names the paying contract, the transaction that paid, how much, and the CALL
or SELFDESTRUCT sites of the contract that ran in the case (the recordings do not say
which instruction paid; every candidate that ran is listed). A payment that follows a
trusted sender's transaction naming the attacker (``transferOwnership(attacker1)``) is
the trusted sender's choice and not reported. It is *certain* when no trusted sender's
transaction without ether came first, else *likely*: that transaction may have opened
the way on purpose. Key: the paying contract and the function of the paying transaction.

Cost: targets that can pay nobody (no CALL whose value may be non-zero, no SELFDESTRUCT,
no DELEGATECALL or CALLCODE of code that is not a target's) need none of its recordings;
elsewhere a run is looked at only when a target paid the attacker side in it, and not
when the campaign has every key its paying transactions could give.
"""

from __future__ import annotations

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.opcodes import CALL, SELFDESTRUCT
from secant.oracles.rated import RatedOracle, ether, function_name
from secant.targets.contract import ContractRun
from secant.types import Finding, RunResult, TxOutcome, TxSeq


class LeakingEtherOracle(RatedOracle):
    """Reports attackers that took ether they never paid (see the module docstring)."""

    name = "leaking-ether"
    swc = "SWC-105"
    description = ("an attacker who sent no ether gets ether from a contract (ILF's and "
                   "Maian's leaking/prodigal contracts)")
    needs = frozenset({"balances", "calls", "accounts"})
    severity = "high"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        self.base_fee = chain.blocks.settings.base_fee
        self.attacker_contracts = self.attacker_side - self.attackers
        # Who pays the gas of an attacker contract's transaction (ContractTarget relays it).
        self.relay = chain.attackers[0].address if chain.attackers else self.deployer
        # Targets that have no CALL that may carry ether, no SELFDESTRUCT and run no code a
        # scan has not seen can pay nobody: the oracle then needs no recording.
        if not self.exit_opcodes() & {CALL, SELFDESTRUCT} and not self.delegates_unknown():
            self.needs = frozenset()

    def trusted_setup(self, case: TxSeq, outcomes: list[TxOutcome], upto: int) -> list[int]:
        """Trusted transactions before ``upto``; an attacker contract's is the attacker's."""
        return [i for i in super().trusted_setup(case, outcomes, upto)
                if case[i].sender not in self.attacker_side]

    def idle(self) -> bool:
        """Idle where no target can pay out ether (its static pre-check)."""
        return not self.needs

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding when the run shows a leak."""
        if not self.needs or not isinstance(result, ContractRun) or not result.balance_changes:
            return []
        case, outcomes = result.case, result.outcomes
        side = self.attacker_side
        # Payments from target contracts to the attacker side, by transaction: without one
        # there is no leak (checked first: most runs pay the attacker nothing).
        paid: dict[int, list[tuple[int, int, int, int]]] = {}
        for call in result.calls:
            if (call.kind == CALL and call.value and call.success and call.target in side
                    and call.sender in self.targets):
                paid.setdefault(call.tx, []).append((call.sender, call.target, call.value,
                                                     CALL))
        for gone in result.selfdestructs:
            if gone.beneficiary in side and gone.balance and gone.address in self.targets:
                paid.setdefault(gone.tx, []).append((gone.address, gone.beneficiary,
                                                     gone.balance, SELFDESTRUCT))
        # The finding's key is the payer and the function of an attacker's paying
        # transaction: when the campaign has every such key, nothing here is new.
        if all((self.name, payments[0][0], case[index].function) in self.known
               for index, payments in paid.items()
               if index < len(case) and case[index].sender in side):
            return []
        changes = result.balance_changes
        if not any(address in changes for address in side):
            return []
        attacker_txs = [i for i, tx in enumerate(case) if tx.sender in side]
        if not attacker_txs:
            return []
        # What the attacker side paid in: its transactions' ether, and what its contracts
        # sent on (a relayed transaction's value passes through the attacker contract).
        paid_in = sum(case[i].value for i in attacker_txs if outcomes[i].success)
        if any(call.sender in side and call.value and call.success
               and call.target not in side for call in result.calls):
            paid_in = max(paid_in, sum(call.value for call in result.calls
                                       if call.sender in side and call.value
                                       and call.success and call.target not in side))
        relayed = self.relay in side
        gas = sum(outcomes[i].gas_used for i in attacker_txs if not outcomes[i].invalid
                  and (relayed or case[i].sender not in self.attacker_contracts))
        # Ether the attacker side got in transactions it did not send (an owner's
        # ``migrateTo(attacker1)``) is the sender's choice, not taken: it does not count.
        given = sum(call.value for call in result.calls
                    if call.kind == CALL and call.value and call.success and call.target in side
                    and call.sender not in side and call.tx < len(case)
                    and case[call.tx].sender not in side and outcomes[call.tx].success)
        given += sum(gone.balance for gone in result.selfdestructs
                     if gone.beneficiary in side and gone.balance and gone.tx < len(case)
                     and case[gone.tx].sender not in side and outcomes[gone.tx].success)
        gain = (sum(changes.get(address, 0) for address in side) + gas * self.base_fee
                - given)
        if gain <= 0:
            return []
        leaks = [i for i in attacker_txs if i in paid and outcomes[i].success
                 and not self.granted(case, outcomes, i)]
        if not leaks:
            return []
        index = leaks[-1]
        payer, receiver, _, opcode = paid[index][0]
        if (self.name, payer, case[index].function) in self.known:
            return []
        amount = sum(value for sender, _, value, _ in paid[index] if sender == payer)
        return self.returned([self._finding(result, index, payer, receiver, amount, opcode,
                                            paid_in, gain)])

    def _finding(self, result: ContractRun, index: int, payer: int, receiver: int,
                 amount: int, opcode: int, paid_in: int = 0, gain: int = 0) -> Finding:
        case = result.case
        contract = self.targets[payer]
        sites = self.ran_exits(result, payer, opcode)
        how = "a CALL" if opcode == CALL else "its SELFDESTRUCT"
        at = self.places(sites)
        trusted = self.trusted_setup(case, result.outcomes, index)
        if paid_in:
            # It paid in and took out more: ether others paid, or the contract's own. A
            # contract may mean to pay a profit (a prize, interest), hence only likely.
            confidence = "likely"
            why = (f"the attacker side paid in {ether(paid_in)} and ended {ether(gain)} "
                   "richer, gas included; unless the contract means to pay it a profit "
                   "(a prize, interest), it took ether that was not its own")
        elif trusted:
            confidence = "likely"
            why = (f"trusted senders sent {len(trusted)} transaction(s) without ether first "
                   f"(transaction {', '.join(str(i + 1) for i in trusted)}); if one of them "
                   "gave the attacker this right on purpose, the payment is intended")
        else:
            confidence = "certain"
            why = "only attackers and payments into the contract came before the leak"
        tx = case[index]
        opening = (f"{self.who(tx.sender)} never sent ether, yet " if not paid_in else
                   f"the attacker side paid in {ether(paid_in)}, then ")
        detail = (opening +
                  f"{self.step(case[:index + 1], index)} made {contract.name} pay "
                  f"{ether(amount)} to {self.who(receiver)} through {how}{at}, and the "
                  "attacker side ended the test case richer by more than the gas it paid. "
                  + self.rating(confidence, why))
        site, pc = sites[0] if sites else (contract, 0)
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(tx), pc=pc,
                       source=self.where(site, pc) if sites else None, detail=detail,
                       key=(self.name, payer, tx.function), case=case[:index + 1],
                       oracle=self.name, confidence=confidence)
