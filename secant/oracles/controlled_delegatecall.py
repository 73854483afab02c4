"""Controlled delegatecall (SWC-112): the transaction's input chooses the code a contract runs.

ILF's and sFuzz's *dangerous delegatecall*, with the ``dataflow`` recording. A run shows one
when a target contract executed a DELEGATECALL (or CALLCODE) whose target address was
computed from transaction input: an argument of this transaction, or one an earlier
transaction of the case stored (``setImplementation(addr)`` then any call through the
proxy). Whoever chose that address runs arbitrary code with the contract's storage and
balance: take ownership, drain it, self-destruct it.

Forwarding ``msg.data`` to a fixed implementation or a linked library (a proxy) is no
finding: only the *target* counts. The delegated code must have succeeded, in a frame and
a transaction that did: code whose effects were undone did nothing (a proxy that requires
the delegatecall to fail can be pointed anywhere). The finding is *certain* when a sender
without any granted right chose the address in this transaction; *likely* when the address
came out of storage (the transaction that stored it may have been a legitimate upgrade);
*possible* when the deployer, or an account a trusted sender named, sent the transaction,
or when only such accounts stored input before it (an admin's upgrade function is a
deliberate power). It looks only at targets with a DELEGATECALL or CALLCODE, and replays a
run with the dataflow recording only when a target delegated to an address that is among
the case's arguments (an input-chosen address comes from there) and a site that ran may
still get a rating it was not reported with
(``FlowOracle.open_choices``). Key: the code and pc of the DELEGATECALL and the confidence.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.evm.opcodes import CALLCODE, DELEGATECALL, OPS
from secant.oracles.flows import FlowOracle, code_opcodes
from secant.oracles.rated import function_name
from secant.targets.contract import ContractRun
from secant.targets.taint import INPUT, Dataflow
from secant.types import Finding

_DELEGATIONS = frozenset({DELEGATECALL, CALLCODE})


class ControlledDelegatecallOracle(FlowOracle):
    """Reports delegatecalls to an address the input chose (see the module docstring)."""

    name = "controlled-delegatecall"
    swc = "SWC-112"
    description = ("transaction input flows into the target of a DELEGATECALL (ILF's "
                   "controlled delegatecall)")
    severity = "high"
    confidence = "certain"

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target has a DELEGATECALL or CALLCODE."""
        return any(code_opcodes(chain, code, code_hash) & _DELEGATIONS
                   for code_hash, code in codes)

    def candidate(self, result: ContractRun) -> bool:
        """A target delegated to an address among the case's arguments.

        And the run may still rate a site as no finding has (``FlowOracle.open_choices``).
        """
        calls = [call for call in result.calls if call.kind in _DELEGATIONS
                 and self.caller_of(call) in self.targets]
        if not calls or not self.open_choices(result, _DELEGATIONS):
            return False
        ints, blobs = self.case_words(result.case)
        return any(self.chosen(call.code_address, ints, blobs) for call in calls)

    def rating_context(self, result: ContractRun) -> tuple[object, ...]:
        """Who was privileged: it decides the rating, part of the finding's key."""
        return self.chooser_context(result)

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per delegation site of a target whose callee the input chose."""
        findings: list[Finding] = []
        case = result.case
        seen: set[tuple[object, ...]] = set()
        for sink in flow.sinks:
            if sink.opcode not in _DELEGATIONS or not sink.target_labels & INPUT:
                continue
            contract = self.contract(sink.code_hash)
            if (contract is None or sink.tx >= len(case) or not sink.success
                    or not self.judged(flow, result, sink.tx, sink.frame)):
                continue  # delegated code that failed, or whose effects were undone, did nothing
            confidence, why = self.chooser_rating(
                result, sink.tx, sink.target_labels, "it", "an admin's upgrade may be intended",
                "the address came out of storage that a transaction of the case wrote from "
                "its input; if that was a legitimate upgrade, this is intended", flow, sink.target)
            key = (self.name, sink.code_hash, sink.pc, confidence)
            if key in seen:
                continue
            seen.add(key)
            opcode = OPS[sink.opcode].name
            place = self.place(contract, sink.pc)
            detail = (f"{self.step(case[:sink.tx + 1], sink.tx)} made {contract.name} "
                      f"{opcode} into the code at {self.who(sink.target)} at {place}, an "
                      "address computed from transaction input: whoever picks it runs any "
                      f"code with {contract.name}'s storage and ether. "
                      + self.rating(confidence, why))
            findings.append(Finding(
                kind=self.name, swc=self.swc or "", contract=contract.name,
                function=function_name(case[sink.tx]), pc=sink.pc,
                source=self.where(contract, sink.pc), detail=detail, key=key,
                case=case[:sink.tx + 1], oracle=self.name, confidence=confidence))
        return findings
