"""Controlled call: the transaction's input chooses both whom a contract calls and what.

The CALL counterpart of the controlled delegatecall (``secant.oracles.controlled_delegatecall``;
the SWC registry has no entry of its own for it). A run shows one when a target contract
executed a CALL or CALLCODE whose target address *and* function selector (the first four
bytes of its input) were computed from transaction input: ``target.call(data)`` with both
from the caller. Anyone who can do that makes the contract call any function of any
contract in its own name: ``token.transfer(attacker, balance)`` on tokens the contract
holds, ``approve``, or a call back into contracts that trust it.

A call to an input address with a fixed selector (``IERC20(token).transferFrom(...)``) or
with no data (paying a chosen account) is no finding, nor is a call with input data to a
fixed address. Ratings as for the delegatecall: *certain* for a sender without any granted
right, *likely* when the address or selector came out of storage, *possible* for the
deployer or an account a trusted sender named (a multisig's or an owner's ``execute`` is a
deliberate power). It looks only at targets with a CALL to a computed address with input
that may not be empty, and replays a run with the dataflow recording only when a target
called an address among the case's arguments with a selector found in one of its byte
strings or equal to the first four bytes of the keccak256 of one (a signature string the
contract hashes), at a site that may still get a rating it was not reported with
(``FlowOracle.open_choices``). Key: the code and pc of the CALL and the confidence.

SWC-107: the SWC registry has no entry for an arbitrary external call. Of its entries,
SWC-107 is the one tools file a call to a caller-chosen address under (Mythril's "External
Call To User-Supplied Address"): the chosen callee gets control in the contract's name,
the root of both re-entry and, when the selector is chosen too, of spending what the
contract owns. SWC-112 names DELEGATECALL only, which hands over the storage as well.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL, CALLCODE, OPS
from secant.oracles.flows import FlowOracle, call_sites
from secant.oracles.rated import ether, function_name
from secant.targets.contract import ContractRun
from secant.targets.taint import INPUT, Dataflow
from secant.types import Finding

_CALLS = frozenset({CALL, CALLCODE})


class ControlledCallOracle(FlowOracle):
    """Reports calls whose callee and selector the input chose (see the module docstring)."""

    name = "controlled-call"
    swc = "SWC-107"
    description = ("transaction input flows into both the target and the function selector "
                   "of a CALL (an arbitrary external call)")
    severity = "high"
    confidence = "certain"

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target CALLs a callee that is not a constant with input that may not be empty."""
        return any(site.opcode in _CALLS and site.target is None and site.data_size != 0
                   for code_hash, code in codes
                   for site in call_sites(chain, code, code_hash))

    def candidate(self, result: ContractRun) -> bool:
        """A target called an argument of the case with a selector from the case.

        And the run may still rate a site as no finding has (``FlowOracle.open_choices``).
        The selector comes from the case when its four bytes are inside one of the case's
        byte strings (``target.call(data)``) or are the first four bytes of the hash of
        one (``abi.encodeWithSignature(signature, ...)`` with ``signature`` a string
        argument: solc hashes the string's bytes, which are the argument as encoded).
        """
        calls = [call for call in result.calls if call.kind in _CALLS
                 and len(call.data) >= 4 and self.caller_of(call) in self.targets]
        if not calls or not self.open_choices(result, _CALLS):
            return False
        ints, blobs = self.case_words(result.case)
        chosen = [call for call in calls if self.chosen(call.target, ints, blobs)]
        if not chosen:
            return False
        if any(call.data[:4] in blob for call in chosen for blob in blobs):
            return True
        hashed = {keccak256(blob)[:4] for blob in blobs}
        return any(call.data[:4] in hashed for call in chosen)

    def rating_context(self, result: ContractRun) -> tuple[object, ...]:
        """Who was privileged: it decides the rating, part of the finding's key."""
        return self.chooser_context(result)

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per call site of a target whose callee and selector the input chose."""
        findings: list[Finding] = []
        case = result.case
        seen: set[tuple[object, ...]] = set()
        for sink in flow.sinks:
            if (sink.opcode not in _CALLS or not sink.target_labels & INPUT
                    or not sink.selector_labels & INPUT):
                continue
            contract = self.contract(sink.code_hash)
            if contract is None or sink.tx >= len(case):
                continue
            confidence, why = self.chooser_rating(
                result, sink.tx, sink.target_labels | sink.selector_labels, "them",
                "an owner's or a multisig's execute function is a deliberate power",
                "part of it came out of storage that a transaction of the case wrote from "
                "its input", flow, sink.target)
            key = (self.name, sink.code_hash, sink.pc, confidence)
            if key in seen:
                continue
            seen.add(key)
            opcode = OPS[sink.opcode].name
            paid = f" with {ether(sink.value)}" if sink.value else ""
            place = self.place(contract, sink.pc)
            detail = (f"{self.step(case[:sink.tx + 1], sink.tx)} made {contract.name} "
                      f"{opcode} {self.who(sink.target)}{paid} at {place}, with both the "
                      "callee and the function selector computed from transaction input: "
                      f"the sender makes {contract.name} call any function of any contract "
                      "in its name (move its tokens, approve spenders). "
                      + self.rating(confidence, why))
            findings.append(Finding(
                kind=self.name, swc=self.swc or "", contract=contract.name,
                function=function_name(case[sink.tx]), pc=sink.pc,
                source=self.where(contract, sink.pc), detail=detail, key=key,
                case=case[:sink.tx + 1], oracle=self.name, confidence=confidence))
        return findings
