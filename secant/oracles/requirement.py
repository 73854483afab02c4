"""Requirement violation (SWC-123): a contract calls another with input its callee refuses.

A ``require`` states what a function accepts from its caller. When one contract of the
system calls another with arguments written into its own code (``other.check(0)``) and the
callee's ``require`` refuses them, the caller is wrong, not the user: no sender and no input
can make the calling function succeed, so it is dead for everyone (or the callee's
requirement is stronger than it should be).

A run shows one when a transaction of the case failed and, in it, a target's frame made a
CALL or STATICCALL to another target that reverted with a ``require``'s revert (an
``Error(string)`` reason or no data; a ``Panic`` is an assertion's business, the
``assertion`` oracle's), where the call passed at least one argument and the ``dataflow``
recording shows that nothing of its input or ether carries a label: no transaction input,
no sender, no block value, no call result and no value read from storage (the callee's
address may come from storage; its input does not). A call whose arguments come from the
contract's state (``token.transfer(owner, balance)``) fails or not with that state, and a
call whose arguments the sender chose fails only for the inputs the sender chose: neither
is reported. A callee that refuses a constant because of its own state (a paused pool)
looks the same as one that refuses it always, so a finding is *likely*.

Cost: none on targets whose code makes no call with input; otherwise a run is replayed with
the dataflow recording only when a failed transaction holds such a refused call not yet
reported. Key: the calling code, the callee's code and the function selector.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.abi import PANIC_SELECTOR
from secant.chain.chain import TestChain
from secant.evm.opcodes import CALL, STATICCALL
from secant.oracles.flows import FlowOracle, call_sites
from secant.oracles.rated import function_name
from secant.targets.contract import ContractRun
from secant.targets.taint import Dataflow
from secant.targets.trace import CallEvent
from secant.types import Finding

_CALLS = frozenset({CALL, STATICCALL})


class RequirementOracle(FlowOracle):
    """Reports calls whose fixed input the callee's ``require`` refuses (module docstring)."""

    name = "requirement-violation"
    swc = "SWC-123"
    description = ("a contract calls another with arguments written into its code and the "
                   "callee's require refuses them: the calling function fails for everyone")
    severity = "medium"
    confidence = "likely"
    cache_clean = False  # whether the callee refuses depends on values, not on the path

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target's code calls with input that may carry arguments."""
        return any(site.opcode in _CALLS and site.data_size != 4
                   for code_hash, code in codes
                   for site in call_sites(chain, code, code_hash))

    def candidate(self, result: ContractRun) -> bool:
        """A failed transaction holds a refused call between targets not yet reported."""
        return any(self._key(call) not in self.known for call in self._refused(result))

    def _refused(self, result: ContractRun) -> list[CallEvent]:
        """Calls with arguments, between targets, that a require refused in failed txs."""
        outcomes = result.outcomes
        return [call for call in result.calls
                if call.kind in _CALLS and not call.success and call.reverted
                and call.tx < len(outcomes) and not outcomes[call.tx].success
                and len(call.data) > 4 and call.output[:4] != PANIC_SELECTOR
                and call.target != self.caller_of(call)
                and call.target in self.code_of and self.caller_of(call) in self.code_of]

    def _key(self, call: CallEvent) -> tuple[object, ...]:
        """The finding's key: calling code, callee's code, selector."""
        return (self.name, self.code_of[self.caller_of(call)][0], self.code_of[call.target][0],
                call.data[:4])

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per refused call whose input carries no label."""
        refused = {(call.tx, call.target): call for call in self._refused(result)}
        if not refused:
            return []
        findings: list[Finding] = []
        case = result.case
        for sink in flow.sinks:
            if (sink.opcode not in _CALLS or sink.success or sink.data_labels
                    or sink.value_labels):
                continue
            call = refused.get((sink.tx, sink.target))
            if call is None or sink.tx >= len(case):
                continue
            key = self._key(call)
            caller = self.contract(sink.code_hash)
            callee = self.targets.get(call.target)
            if key in self.known or caller is None or callee is None:
                continue
            self.known.add(key)
            function = next((fn for fn in callee.abi.functions
                             if fn.selector == call.data[:4]), None)
            called = (f"{callee.name}.{function.signature}" if function is not None
                      else f"{callee.name} (selector 0x{call.data[:4].hex()})")
            revert = callee.abi.decode_revert(call.output)
            reason = f" with {revert.message!r}" if revert.kind == "error" else ""
            detail = (f"{self.step(case[:sink.tx + 1], sink.tx)} failed: {caller.name} "
                      f"called {called} at {self.place(caller, sink.pc)} with input written "
                      "into its code (no argument comes from the transaction, a sender, "
                      f"the block or storage), and {callee.name} refused it{reason}. No "
                      "sender and no input can make this call pass: the calling function "
                      "fails for everyone, or the callee's requirement is too strong. "
                      + self.rating(self.confidence, "the callee may refuse the same input "
                                    "only in its present state"))
            findings.append(Finding(
                kind=self.name, swc=self.swc or "", contract=caller.name,
                function=function_name(case[sink.tx]), pc=sink.pc,
                source=self.where(caller, sink.pc), detail=detail, key=key,
                case=case[:sink.tx + 1], oracle=self.name, confidence=self.confidence))
        return findings

