"""Unchecked call return values (SWC-104): a failed call whose outcome the caller ignored.

ILF's and ContractFuzzer's *unhandled exception*, made precise with the ``dataflow``
recording. A run shows one when, in a transaction that succeeded,

* a target contract's frame (that itself completed) made a CALL, CALLCODE, DELEGATECALL
  or STATICCALL that failed (the callee reverted or ran out of gas, or the call could not
  start: not enough ether, too deep);
* the call's success flag reached no JUMPI condition of that frame, was not written to
  storage and was not returned: the contract went on as if the call had worked.

``send`` and low-level ``call`` whose result is dropped are the typical sites (a payout to
a contract whose fallback reverts, or a ``send`` that runs out of its 2300 gas: sFuzz's
*gasless send* is one case of it). A failed call that sent ether is *certain* (the
contract's books now say it paid what it still holds); one without ether is *likely*: a
best-effort notification may be allowed to fail.

A contract whose every call site provably tests its flag (Solidity's high-level calls,
``transfer``, ``require(ok)`` after a low-level call: ``secant.oracles.flows.call_sites``)
is never looked at again; otherwise a run is replayed with the dataflow recording when it
executed such a site not yet reported and either a message from a target failed or the site
may send ether (a payment above the balance fails without any message). Key: the code and
pc of the call.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.evm.opcodes import OPS
from secant.oracles.flows import FlowOracle, call_sites
from secant.oracles.rated import ether
from secant.targets.contract import ContractRun
from secant.targets.taint import Dataflow
from secant.types import Finding


class UncheckedCallOracle(FlowOracle):
    """Reports failed calls whose success flag nothing looked at (module docstring)."""

    name = "unchecked-call"
    swc = "SWC-104"
    description = ("a call failed, the transaction still succeeded, and the caller never "
                   "tested the call's success flag (ILF's unhandled exception)")
    severity = "medium"
    confidence = "certain"
    cache_clean = False  # whether a call fails depends on values, not on the path alone

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some call site's flag is not tested right after the call."""
        return any(not site.checked for code_hash, code in codes
                   for site in call_sites(chain, code, code_hash))

    def candidate(self, result: ContractRun) -> bool:
        """An unreported site without a provable test ran, and a call failed or paid."""
        open_sites = [site for code_hash, site in self.sites_ran(result)
                      if not site.checked and (code_hash, site.pc) not in self.reported]
        if not open_sites:
            return False
        if any(site.value != 0 for site in open_sites):
            return True
        return any(not call.success and self.caller_of(call) in self.targets
                   for call in result.calls)

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per call site of a target that failed unnoticed in this run."""
        findings: list[Finding] = []
        case = result.case
        seen: set[tuple[bytes, int]] = set()
        for call in flow.calls:
            if call.success or call.checked or (call.code_hash, call.pc) in seen:
                continue
            contract = self.contract(call.code_hash)
            if contract is None or not self.judged(flow, result, call.tx, call.frame):
                continue
            seen.add((call.code_hash, call.pc))
            self.reported.add((call.code_hash, call.pc))
            if call.value:
                confidence = "certain"
                why = (f"{ether(call.value)} stayed with {contract.name}, which carried on "
                       "as if it had been paid out")
            else:
                confidence = "likely"
                why = ("the call sent no ether; if its failure is meant to be harmless (a "
                       "best-effort notification), this is by design")
            opcode = OPS[call.opcode].name
            paid = f" with {ether(call.value)}" if call.value else ""
            place = self.place(contract, call.pc)
            detail = (f"{self.step(case[:call.tx + 1], call.tx)} made {contract.name} "
                      f"{opcode} {self.who(call.target)}{paid} at {place}; the call failed, "
                      f"yet {contract.name} never looked at its success flag (no JUMPI "
                      "tested it, no SSTORE kept it, no RETURN passed it on) and the "
                      "transaction succeeded. " + self.rating(confidence, why))
            findings.append(self.call_finding(contract, case, call.tx, call.pc,
                                              call.code_hash, detail, confidence))
        return findings
