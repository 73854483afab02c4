"""Block state dependency (SWC-116, SWC-120): an ether transfer decided by block values.

ILF's and ContractFuzzer's *block dependency*, sFuzz's *timestamp* and *block number
dependency*, made precise with the ``dataflow`` recording. A run shows one when a target
contract sent ether (a successful CALL or CALLCODE with a value, in a frame and a
transaction that succeeded) and

* the amount was computed from ``block.timestamp``, ``block.number``, ``block.coinbase``,
  ``block.prevrandao`` (DIFFICULTY), ``blockhash`` or ``block.gaslimit``, or
* a JUMPI guarding the transfer (``secant.targets.taint``: a ``require`` before it, an
  ``if`` around it) has a condition computed from one of them,

directly or through storage written earlier in the same test case (``lastDraw =
block.timestamp`` in one transaction, ``if (now > lastDraw + 1 days) pay()`` in the next)
or by the deployment (a constructor draws ``door = uint256(blockhash(block.number - 1)) %
3``, later ``if (choice == door) pay()``: the dataflow recording starts from the labels the
deployment left in storage, ``secant.targets.contract.deployment_flow``).
A block value that is only stored, logged or tested by code that does not decide the
transfer is no finding (the false positive sFuzz reports for timestamps that merely record
when something happened). Block producers choose or influence these values, so they can
decide who gets paid (a lottery drawing from ``blockhash``) or when.

SWC-120 (weak randomness from chain attributes) when the coinbase, prevrandao, a block
hash or the gas limit take part, else SWC-116 (block values as a proxy for time). A
dependency of the amount is *certain*; one through a guard is *likely* (guards approximate
control dependence from the trace). A time lock (``require(now >= releaseTime)``) is
reported too, as is a schedule that pays an amount linear in the time (a reward per
second staked, a vesting wallet's release): whether a few seconds of a validator's leeway
matter is the reader's call.

It looks only at targets that can send ether and read a block value somewhere or hold one
the deployment stored, and replays a run with the dataflow recording only when a target
paid ether in it from a site not yet reported. Key: the code and pc of the transfer.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.evm.opcodes import (
    BLOCKHASH,
    CALL,
    CALLCODE,
    COINBASE,
    GASLIMIT,
    NUMBER,
    PREVRANDAO,
    TIMESTAMP,
)
from secant.oracles.exits import scan
from secant.oracles.flows import FlowOracle, code_opcodes
from secant.oracles.rated import ether, function_name
from secant.targets.contract import ContractRun, deployment_flow
from secant.targets.taint import (
    BLOCK,
    BLOCKHASH_LABEL,
    COINBASE_LABEL,
    GASLIMIT_LABEL,
    PREVRANDAO_LABEL,
    Dataflow,
    label_names,
)
from secant.types import Finding

_BLOCK_OPS = frozenset({TIMESTAMP, NUMBER, COINBASE, PREVRANDAO, BLOCKHASH, GASLIMIT})
_RANDOMNESS = COINBASE_LABEL | PREVRANDAO_LABEL | BLOCKHASH_LABEL | GASLIMIT_LABEL


class BlockDependencyOracle(FlowOracle):
    """Reports ether transfers that block values decide (see the module docstring)."""

    name = "block-dependency"
    swc = "SWC-116"
    description = ("an ether transfer whose amount or guarding condition depends on block "
                   "values (timestamp, number, coinbase, prevrandao, blockhash, gaslimit)")
    severity = "medium"
    confidence = "certain"

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target can send ether, and reads a block value or holds one in storage.

        Held: a constructor stored a block value in a target's slot (the deployment's
        labels, ``deployment_flow``, asked only when no runtime code reads one).
        """
        listed = list(codes)
        sends = any(site.opcode in (CALL, CALLCODE)
                    for code_hash, code in listed
                    for site in scan(code, code_hash, chain.fork).exits)
        if not sends:
            return False
        if any(code_opcodes(chain, code, code_hash) & _BLOCK_OPS for code_hash, code in listed):
            return True
        return any(address in self.targets for address, _ in deployment_flow(chain))

    def candidate(self, result: ContractRun) -> bool:
        """A target paid ether, and a paying site not yet reported ran."""
        if not any(call.kind in (CALL, CALLCODE) and call.value and call.success
                   and self.caller_of(call) in self.targets for call in result.calls):
            return False
        blocks = result.blocks
        return any((code_hash, site.block) in blocks and (code_hash, site.pc) not in self.reported
                   for code_hash, code in self.code_of.values()
                   for site in scan(code, code_hash, self.fork).exits
                   if site.opcode in (CALL, CALLCODE))

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per transfer site of a target that block values decided in this run."""
        findings: list[Finding] = []
        case = result.case
        seen: set[tuple[bytes, int]] = set()
        for sink in flow.sinks:
            if (sink.opcode not in (CALL, CALLCODE) or not sink.value or not sink.success
                    or (sink.code_hash, sink.pc) in seen):
                continue
            contract = self.contract(sink.code_hash)
            if contract is None or not self.judged(flow, result, sink.tx, sink.frame):
                continue
            amount = sink.value_labels & BLOCK
            guards = flow.guards_with(sink, BLOCK)
            if not amount and not guards:
                continue
            seen.add((sink.code_hash, sink.pc))
            self.reported.add((sink.code_hash, sink.pc))
            labels = amount
            for guard in guards:
                labels |= guard.labels & BLOCK
            swc = "SWC-120" if labels & _RANDOMNESS else "SWC-116"
            reasons = []
            if amount:
                reasons.append(f"the amount is computed from {', '.join(label_names(amount))}")
            if guards:
                reasons.append(f"whether it is sent is decided by "
                               f"{self.branch_places(guards, BLOCK)}")
            if amount:
                confidence = "certain"
                why = "the amount itself is derived from the block value"
            else:
                confidence = "likely"
                why = ("a guarding branch tests the block value (guards approximate control "
                       "dependence; a time lock allowing a payout after a deadline is "
                       "reported too)")
            place = self.place(contract, sink.pc)
            detail = (f"{self.step(case[:sink.tx + 1], sink.tx)} made {contract.name} send "
                      f"{ether(sink.value)} to {self.who(sink.target)} with the CALL at "
                      f"{place}, and {'; '.join(reasons)}: the block producer chooses or "
                      f"influences {', '.join(label_names(labels))}, so it can steer this "
                      "payment. " + self.rating(confidence, why))
            findings.append(Finding(
                kind=self.name, swc=swc, contract=contract.name,
                function=function_name(case[sink.tx]), pc=sink.pc,
                source=self.where(contract, sink.pc), detail=detail,
                key=(self.name, sink.code_hash, sink.pc), case=case[:sink.tx + 1],
                oracle=self.name, confidence=confidence))
        return findings
