"""Arbitrary jump (SWC-127): the sender chooses where the contract's code jumps.

Solidity jumps only to destinations written into the code: a branch's target, an internal
function's entry, the return address a call pushed, or an internal function pointer, which
holds one of those constants. Code that computes a destination from what the sender sends
(assembly arithmetic on a function pointer, ``mstore(f, add(mload(f), callvalue()))``)
lets the sender jump to any JUMPDEST of the contract: into the middle of a function, past
its ``require``s, to a transfer meant for the owner.

A run shows one when, in a target's frame, a JUMP or JUMPI's destination carries
transaction input or the ether the transaction sent (the ``dataflow`` recording's
``JUMP_SOURCES``). Almost every value the sender picks points at no JUMPDEST, so such a
transaction fails with an invalid jump: that failure is the per-run trigger, and the run
is then replayed with the dataflow recording to see where the destination came from. A
jump through a pointer chosen among constants (``f = flag ? a : b``, a table of handlers
indexed by input) carries no label: the destination is one of the code's own, the input
only picked it. The finding is *certain*. Key: the code and pc of the jump.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.evm.errors import InvalidJump
from secant.evm.opcodes import JUMP, JUMPI, OPS
from secant.oracles.flows import FlowOracle
from secant.targets.contract import ContractRun
from secant.targets.taint import JUMP_SOURCES, Dataflow, label_names
from secant.types import Finding

_JUMPS = frozenset({JUMP, JUMPI})


class ArbitraryJumpOracle(FlowOracle):
    """Reports jumps to destinations the sender chose (see the module docstring)."""

    name = "arbitrary-jump"
    swc = "SWC-127"
    description = ("the destination of a JUMP is computed from transaction input or the "
                   "ether sent: the sender can jump anywhere in the code (arbitrary jump "
                   "with a function type variable)")
    severity = "high"
    confidence = "certain"

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Any code can compute a destination; the per-run trigger keeps the cost down."""
        return True

    def candidate(self, result: ContractRun) -> bool:
        """A transaction of the case failed on an invalid jump destination."""
        reason = InvalidJump.reason
        return any(outcome.error == reason for outcome in result.outcomes)

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per jump site of a target whose destination the sender chose."""
        findings: list[Finding] = []
        case = result.case
        seen: set[tuple[object, ...]] = set()
        for sink in flow.sinks:
            if sink.opcode not in _JUMPS or not sink.target_labels & JUMP_SOURCES \
                    or sink.tx >= len(case):
                continue
            contract = self.contract(sink.code_hash)
            key = (self.name, sink.code_hash, sink.pc)
            if contract is None or key in seen:
                continue
            seen.add(key)
            sources = " and ".join(label_names(sink.target_labels & JUMP_SOURCES))
            detail = (f"{self.step(case[:sink.tx + 1], sink.tx)} made {contract.name} "
                      f"{OPS[sink.opcode].name} to {sink.target:#x} at "
                      f"{self.place(contract, sink.pc)}, a destination computed from "
                      f"{sources}: choosing it, a sender jumps to any JUMPDEST of the code, "
                      "past the checks before it. " + self.rating(
                          "certain", "compiled Solidity never computes a destination from "
                          "what the sender sends"))
            findings.append(self.call_finding(contract, case, sink.tx, sink.pc,
                                              sink.code_hash, detail, "certain"))
        return findings
