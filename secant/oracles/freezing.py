"""Freezing ether (locked ether): a contract takes ether but has no way to send it out.

sFuzz's *freezing ether* and Maian's *greedy* contracts. The oracle is half dynamic, half
static: a run proves the contract *received* ether (a successful transaction to it
carried ether, another contract's call sent it ether, or a SELFDESTRUCT named it: the
``calls`` and ``accounts`` recordings; a balance set by a cheatcode is no receipt), and a
scan of the bytecode (``secant.oracles.exits``) says there is no way out: no CALL or
CALLCODE whose value may be non-zero, no CREATE with an endowment, no SELFDESTRUCT, in
its runtime code nor in the code of the libraries it delegates to (address constants in
its code that hold code on the chain, and every account the runs saw it DELEGATECALL or
CALLCODE: the ``calls`` recording).

Reported once per contract, with the receiving run's case. The confidence is *likely*
when some code it runs has a DELEGATECALL or CALLCODE whose target the scan could not tie
to a constant and no linked library explains it (a proxy: the logic, and a way out, may
live in code the runs have not reached, or be installed later); *certain* otherwise,
since the scan sees every instruction that could move ether.

Cost: a contract with a way out is never reported, so the oracle looks only for the
receipts of the others (``_open``), needs no recording when there are none, and none
either when no target can pay or delegate (ether then only arrives with transactions,
which the case says).
"""

from __future__ import annotations

from dataclasses import dataclass

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL, CALLCODE, DELEGATECALL
from secant.oracles.exits import scan
from secant.oracles.rated import RatedOracle, ether, function_name
from secant.targets.contract import ContractRun
from secant.types import Finding, RunResult


@dataclass(frozen=True)
class Verdict:
    """What the scan of all the code a contract runs says.

    ``exit`` names a way out (``CALL at pc 120 of Lib``), None when there is none;
    ``delegates`` names the other code scanned; ``unresolved`` whether some delegation's
    target stays unknown.
    """

    exit: str | None
    delegates: tuple[str, ...]
    unresolved: bool


class FreezingEtherOracle(RatedOracle):
    """Reports contracts that received ether they can never send (module docstring)."""

    name = "freezing-ether"
    swc = None
    description = ("a contract receives ether but no code it runs can send ether out "
                   "(sFuzz's freezing ether, Maian's greedy contracts)")
    needs = frozenset({"calls", "accounts"})
    severity = "medium"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        # Code each contract was seen delegating to in runs, beyond the static libraries.
        self._seen: dict[int, set[int]] = {}
        self._verdicts: dict[int, Verdict] = {}
        self._reported: set[int] = set()
        # The targets that may still be reported: not yet, and no way out found. A way out
        # stays (more code seen delegated to only adds exits), so this only shrinks.
        self._open = {address for address in self.targets
                      if self.verdict(address).exit is None}
        if not self._open:
            self.needs = frozenset()  # every target can send ether: nothing to look at
        elif not self.exit_opcodes() and not any(
                scan(code, code_hash, self.fork).delegations
                for code_hash, code in self.code_of.values()):
            # No target can pay another or delegate: ether only arrives with transactions,
            # which the case says (a relayed one carries its value in the case too).
            self.needs = frozenset()

    def idle(self) -> bool:
        """Idle where every target can send ether (its static pre-check)."""
        return not self._open

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per target that received ether in this run and cannot send it."""
        if not self._open or not isinstance(result, ContractRun):
            return []
        for call in result.calls:
            if call.kind in (DELEGATECALL, CALLCODE) and call.target in self.targets:
                seen = self._seen.setdefault(call.target, set())
                if call.code_address not in seen:
                    seen.add(call.code_address)
                    self._verdicts.pop(call.target, None)
                    if call.target in self._open and self.verdict(call.target).exit:
                        self._open.discard(call.target)
        findings = []
        for address, (how, index) in self._receipts(result).items():
            verdict = self.verdict(address)
            if verdict.exit is not None:
                continue
            self._reported.add(address)
            self._open.discard(address)
            findings.append(self._finding(result, address, how, index, verdict))
        return findings

    def _receipts(self, result: ContractRun) -> dict[int, tuple[str, int]]:
        """Targets that may be reported (``_open``) that received ether: how, and where.

        Ether arrives with a transaction, with a call from another contract, or as the
        balance of a contract that self-destructed naming it, in a successful transaction.
        A balance that merely grew is not enough: a cheatcode (``vm.deal``) sets balances
        without any transfer.
        """
        found: dict[int, tuple[str, int]] = {}
        case, outcomes = result.case, result.outcomes

        open_ = self._open

        def note(address: int, index: int, how: str) -> None:
            if (address in open_ and address not in found and index < len(case)
                    and outcomes[index].success):
                found[address] = (f"received {how} in {self.step(case[:index + 1], index)}",
                                  index)

        for index, tx in enumerate(case):
            if tx.value:
                note(self.contract_of(tx), index, ether(tx.value))
        for call in result.calls:
            if call.kind == CALL and call.value and call.success:
                note(call.target, call.tx, f"{ether(call.value)} from {self.who(call.sender)}")
        for gone in result.selfdestructs:
            if gone.balance:
                note(gone.beneficiary, gone.tx,
                     f"{ether(gone.balance)} from {self.who(gone.address)}'s SELFDESTRUCT")
        return found

    def verdict(self, address: int) -> Verdict:
        """Whether the contract at ``address`` has a way to send ether out (cached)."""
        verdict = self._verdicts.get(address)
        if verdict is None:
            verdict = self._verdicts[address] = self._judge(address)
        return verdict

    def _judge(self, address: int) -> Verdict:
        """Scan the contract's code and, transitively, the code it may delegate to."""
        pending = [address]
        done: set[int] = set()
        delegates: list[str] = []
        unresolved = False
        while pending:
            current = pending.pop()
            if current in done:
                continue
            done.add(current)
            known = self.code_of.get(current)
            code = known[1] if known is not None else self.chain.code_at(current)
            if not code:
                continue
            code_hash = known[0] if known is not None else keccak256(code)
            if current != address:
                delegates.append(self.who(current))
            found = scan(code, code_hash, self.fork)
            if found.exits:
                site = found.exits[0]
                return Verdict(f"{site.name} at pc {site.pc} of {self.who(current)}",
                               tuple(delegates), unresolved)
            if not found.delegations:
                continue
            libraries = [value for value in found.addresses
                         if value != current and value not in self.attacker_side
                         and (value in self.code_of or self.chain.code_at(value))]
            constant = [site.operand for site in found.delegations
                        if site.operand is not None]
            if found.unresolved_delegations() and not libraries:
                unresolved = True
            pending += libraries + [c for c in constant if c not in self.attacker_side]
            pending += sorted(self._seen.get(current, ()))
        return Verdict(None, tuple(delegates), unresolved)

    def _finding(self, result: ContractRun, address: int, how: str, index: int,
                 verdict: Verdict) -> Finding:
        contract = self.targets[address]
        scanned = (f"its runtime code and the code it delegates to "
                   f"({', '.join(verdict.delegates)})" if verdict.delegates
                   else "its runtime code")
        if verdict.unresolved:
            confidence = "likely"
            why = ("it DELEGATECALLs a target the scan cannot tie to a constant, so the "
                   "logic, and a way out, may live in code no run has reached yet")
        else:
            confidence = "certain"
            why = ("the scan saw every instruction that runs with its balance, and none "
                   "can move ether")
        detail = (f"{contract.name} {how}, but nothing in {scanned} can send ether out: no "
                  "CALL or CALLCODE with a possibly non-zero value, no CREATE with an "
                  "endowment, no SELFDESTRUCT. The ether it holds is locked for good. "
                  + self.rating(confidence, why))
        case = result.case[:index + 1]
        return Finding(kind=self.name, swc="", contract=contract.name,
                       function=function_name(case[-1]) if case else "", pc=0,
                       source=None, detail=detail, key=(self.name, address), case=case,
                       oracle=self.name, confidence=confidence)
