"""Rated detectors: a severity, a confidence and a paragraph that tells what happened.

The dynamic detectors (leaking and freezing ether, self-destruction, arbitrary storage
writes) share how they word a finding: who sent which transaction, how much ether moved,
which instruction on which source line, and a closing sentence with the finding's
severity (``high``, ``medium``, ``low``: how bad the bug is when real) and confidence
(``certain``: the run proves it; ``likely``: it is proven unless something outside the
run, such as a trusted sender's earlier transaction or code elsewhere, explains it;
``possible``: a hint to look at), for the reader. The same ratings are the finding's
``severity`` (the oracle's, ``RatedOracle.severity``) and ``confidence`` (set by each
finding; the class attribute is the rating when nothing lowers it), which the reports
read.

They also share the roles of the accounts: the *attacker side* is the chain's attacker
senders and attacker contracts; every other contract is a *target* whose behaviour the
detectors judge. What the attacker does after a trusted sender named it in a call
(``transferOwnership(attacker1)``) is the trusted sender's decision, not a bug
(``granted``); what it does after other trusted transactions is only likely a bug
(``trusted_setup``).
"""

from __future__ import annotations

from decimal import Decimal

from secant.abi import integer_leaves
from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.oracle import Oracle
from secant.evm.crypto import keccak256
from secant.oracles.exits import scan
from secant.types import Finding, RunResult, Tx, TxOutcome, TxSeq

SEVERITIES = ("high", "medium", "low")
"""Severity levels, worst first."""

CONFIDENCES = ("certain", "likely", "possible")
"""Confidence levels, surest first."""

_WEI_PER_ETHER = 10**18


def ether(wei: int) -> str:
    """An amount as people read it: ``1.5 ether`` above a micro-ether, else in wei."""
    if abs(wei) < 10**12:
        return f"{wei} wei"
    text = format((Decimal(wei) / _WEI_PER_ETHER).normalize(), "f")
    return f"{text} ether"


def function_name(tx: Tx) -> str:
    """The name of the function a transaction calls (``fallback``/``receive`` as such)."""
    return tx.function.split("(", 1)[0]


class RatedOracle(Oracle):
    """An oracle whose findings carry a severity and a confidence (module docstring)."""

    severity: str = "medium"
    confidence: str = "certain"

    def __init__(self, chain: TestChain) -> None:
        self.chain = chain
        self.fork = chain.fork
        self.attackers = frozenset(s.address for s in chain.attackers)
        self.attacker_side = self.attackers | frozenset(
            c.address for c in chain.contracts if c.role == "attacker")
        self.targets: dict[int, DeployedContract] = {
            c.address: c for c in chain.contracts if c.role != "attacker"}
        # The runtime code of every target as deployed (a run may destroy it), by address,
        # and the contract that holds each code by its hash (the first, for shared code).
        self.code_of: dict[int, tuple[bytes, bytes]] = {}
        self.codes: dict[bytes, DeployedContract] = {}
        for contract in self.targets.values():
            code = chain.code_at(contract.address)
            if code:
                code_hash = keccak256(code)
                self.code_of[contract.address] = (code_hash, code)
                self.codes.setdefault(code_hash, contract)
        self.deployer = chain.deployer.address
        self._names = {address: name for name, address in chain.names().items()}
        main = chain.main
        self._main = main.address if main is not None else None
        # The keys of the findings this oracle returned: the engine keeps each key once, so
        # a run that can only show these again needs no more work (nothing twice).
        self.known: set[tuple[object, ...]] = set()

    def returned(self, findings: list[Finding]) -> list[Finding]:
        """``findings``, their keys remembered in ``known``."""
        self.known.update(finding.key for finding in findings)
        return findings

    # ------------------------------------------------------------------ wording
    def who(self, address: int) -> str:
        """An account by its name on the chain, else its address."""
        name = self._names.get(address)
        return name if name is not None else f"0x{address:040x}"

    def contract_of(self, tx: Tx) -> int:
        """The address a transaction calls."""
        if tx.to is not None:
            return tx.to
        assert self._main is not None  # a contract target always has a main contract
        return self._main

    def step(self, case: TxSeq, index: int) -> str:
        """``transaction 2 of 3 (attacker1 calling withdraw(uint256) on Bank)``."""
        tx = case[index]
        value = f" with {ether(tx.value)}" if tx.value else ""
        return (f"transaction {index + 1} of {len(case)} ({self.who(tx.sender)} calling "
                f"{tx.function} on {self.who(self.contract_of(tx))}{value})")

    @staticmethod
    def where(contract: DeployedContract | None, pc: int) -> str | None:
        """``file:line`` of ``pc`` in the contract's runtime code, when a source map says."""
        if contract is None:
            return None
        location = contract.locate(pc)
        if location is None:
            return None
        return f"{location.source}:{location.line}"

    def rating(self, confidence: str, why: str) -> str:
        """The closing sentence of a detail: severity, confidence and why."""
        return f"Severity {self.severity}, confidence {confidence}: {why}."

    def ran_exits(self, result: RunResult, address: int,
                  opcode: int) -> list[tuple[DeployedContract, int]]:
        """The target's ``opcode`` exits (``secant.oracles.exits``) that ran, by contract.

        A call or halt ends its basic block, so a site ran when its block is in the run's
        coverage (of the whole case: an earlier transaction may have run it). When none of
        the target's own sites ran, those of the libraries it may have delegated to are
        given (their code runs in the target's context).
        """
        own = self.code_of.get(address)
        sites = self._ran(result, own, opcode)
        if sites or own is None:
            return [(self.targets[address], pc) for pc in sites]
        found = []
        for library in self.targets.values():
            if library.role == "library":
                found += [(library, pc)
                          for pc in self._ran(result, self.code_of.get(library.address),
                                              opcode)]
        return found

    def _ran(self, result: RunResult, known: tuple[bytes, bytes] | None,
             opcode: int) -> list[int]:
        if known is None:
            return []
        code_hash, code = known
        return [site.pc for site in scan(code, code_hash, self.fork).exits
                if site.opcode == opcode and (code_hash, site.block) in result.blocks]

    def places(self, sites: list[tuple[DeployedContract, int]]) -> str:
        """`` at Bank.sol:12`` or `` at one of ...`` for sites found by ``ran_exits``."""
        lines = list(dict.fromkeys(self.where(contract, pc) or f"{contract.name} pc {pc}"
                                   for contract, pc in sites))
        if not lines:
            return ""
        return f" at {lines[0]}" if len(lines) == 1 else f" at one of {', '.join(lines)}"

    # ------------------------------------------------------------------ static facts
    def exit_opcodes(self) -> frozenset[int]:
        """The opcodes of the targets' exits (``secant.oracles.exits``): how they can pay."""
        return frozenset(site.opcode for code_hash, code in self.code_of.values()
                         for site in scan(code, code_hash, self.fork).exits)

    def delegates_unknown(self) -> bool:
        """Whether a target may DELEGATECALL or CALLCODE code that is not a target's.

        Code no scan has seen (a computed delegate, or a constant one without a target's
        code) runs in the target's context and may do anything there: pay, self-destruct.
        """
        known = {code_hash for code_hash, _ in self.code_of.values()}
        for code_hash, code in self.code_of.values():
            for site in scan(code, code_hash, self.fork).delegations:
                if site.operand is None:
                    return True
                delegate = self.chain.code_at(site.operand)
                if delegate and keccak256(delegate) not in known:
                    return True
        return False

    # ------------------------------------------------------------------ roles
    def trusted_setup(self, case: TxSeq, outcomes: list[TxOutcome], upto: int) -> list[int]:
        """Successful transactions before ``upto`` that trusted senders sent without ether.

        Such a transaction may have handed the attacker a right on purpose (opened a sale,
        unpaused a contract): a finding that follows one is only likely. A payment (a
        deposit) grants nothing by itself and does not count.
        """
        return [i for i in range(upto)
                if outcomes[i].success and case[i].sender not in self.attackers
                and not case[i].value]

    def granted(self, case: TxSeq, outcomes: list[TxOutcome], upto: int,
                accounts: frozenset[int] | None = None) -> bool:
        """Whether a trusted sender named one of ``accounts`` before ``upto``.

        ``accounts`` defaults to the attacker side. A successful transaction of a trusted
        sender with such an address among its arguments (``transferOwnership(attacker1)``,
        ``appoint(attacker2)``) hands that account a right deliberately: what the account
        does with it proves nothing.
        """
        named = self.attacker_side if accounts is None else accounts
        return any(outcomes[i].success and case[i].sender not in self.attackers
                   and case[i].sender not in named
                   and any(value in named for value in integer_leaves(case[i].args))
                   for i in range(upto))
