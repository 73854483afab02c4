"""Gasless send (sFuzz): a payment with the 2300-gas stipend fails, and nobody notices.

``send`` and ``transfer`` give the recipient only the 2300 gas the EVM adds to a CALL that
carries ether (solc pushes ``2300 * iszero(value)`` as the gas, so the callee gets 2300
either way). A recipient that is a contract whose fallback or ``receive`` does anything
real, writing storage to keep its books, runs out of gas with that, and the payment
fails. ``transfer`` then reverts the whole transaction (a denial of service when one
recipient blocks everybody's transaction, SWC-113, which this oracle does not report);
``send`` returns false, and code that drops the flag goes on as if it had paid: the ether
stays in the contract and the recipient (a dethroned king, an outbid bidder, a member of a
payout loop) is never paid. sFuzz's *gasless send*; the chain's costly attacker contract
(``secant.chain.attackers``, a fallback that writes storage) plays the recipient.

A run shows it when, in a transaction that succeeded, a target's frame that succeeded made
a CALL (or CALLCODE) with ether and at most 4600 gas for the callee (``send``/``transfer``'s
2300-gas stipend, or an explicit ``gas: 2300`` on top of it: the ``calls`` recording's
``gas``), the callee failed without reverting (an exceptional halt: out of gas), and the
frame never tested the call's success flag, stored it or returned it (the ``dataflow``
records, as for ``unchecked-call``). *Certain*: every part of it ran. SWC-104 (unchecked
call return value): the harm comes from the unhandled flag, and checking it is the fix; the
fixed gas (SWC-134) is why a legitimate recipient fails. ``unchecked-call`` reports the same
site too (any failed call whose flag was dropped); this oracle says the cause.

Lazy like the other data-flow detectors (``secant.oracles.flows``): it looks only at targets
with a CALL that may carry ether and whose flag is not provably tested on every path after
it, and replays a run with the dataflow recording only when such a stipend payment from a
target failed by an exceptional halt in a transaction that succeeded, while an unreported
site of that kind ran. Key: the code and pc of the call.

``stipend_payments`` is the static side: the CALL sites that pay with solc's stipend pattern
and whose failure does not surely revert (``send``, not ``transfer``); campaigns add the
costly attacker to their senders only when a target has one
(``secant.campaign.worker.default_senders``).
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.attackers import AttackerKind
from secant.chain.chain import TestChain
from secant.evm.analysis import analyze, code_end
from secant.evm.constant_stack import step
from secant.evm.opcodes import (
    CALL,
    CALLCODE,
    HALTS,
    INVALID,
    ISZERO,
    JUMP,
    JUMPI,
    OPS,
    PUSH1,
    PUSH2,
    PUSH4,
    REVERT,
)
from secant.oracles.flows import CallSite, FlowOracle, call_sites
from secant.oracles.rated import ether
from secant.targets.contract import ContractRun
from secant.targets.taint import Dataflow
from secant.targets.trace import CallEvent
from secant.types import Finding

__all__ = ["STIPEND", "GaslessSendOracle", "failure_reverts", "stipend_payments"]

STIPEND = 2300
"""The gas the EVM adds to a CALL that carries ether; all that ``send``/``transfer`` give."""

_MAX_GAS = 2 * STIPEND  # the stipend plus an explicit ``gas: 2300``
_PAYING = frozenset({CALL, CALLCODE})
_FOLLOW = 64  # instructions followed after a call to see whether its failure reverts
_STIPENDS: dict[tuple[bytes, str], tuple[CallSite, ...]] = {}


def stipend_payments(chain: TestChain, code: bytes, code_hash: bytes) -> tuple[CallSite, ...]:
    """The CALL sites of ``code`` that pay with the 2300-gas stipend and may fail quietly.

    A site qualifies when its value may be non-zero, its gas operand comes from the
    constant 2300 (legacy solc computes ``2300 * iszero(value)`` in the CALL's own basic
    block; via-IR jumps to the CALL from a block that pushes 2300 when the value is zero, and
    unoptimized 0.8 pushes an explicit ``gas: 2300`` with the CALL's block as the return
    address of an encoding helper), and the failure (a zero flag) does not surely end in a
    REVERT or INVALID (``transfer`` does; ``send`` does not). Cached per code.
    """
    key = (code_hash, chain.fork.name)
    found = _STIPENDS.get(key)
    if found is not None:
        return found
    analysis = analyze(code, code_hash, chain.fork)
    end = code_end(code)
    ops = {pc: (op, value) for pc, op, value in analysis.instructions if pc < end}
    blocks = [(start, instructions) for start, instructions in analysis.blocks if start < end]
    # Where a block that pushes 2300 may lead: the code addresses it pushes (a jump's
    # destination, or the return address of a helper it calls on the way to the CALL).
    fed: set[int] = set()
    for _, instructions in blocks:
        pushed = {value for _, op, value in instructions if PUSH1 <= op <= PUSH4}
        if STIPEND in pushed:
            fed |= pushed
    paying = [site for site in call_sites(chain, code, code_hash)
              if site.opcode == CALL and site.value != 0]
    found = tuple(site for site in paying
                  if _stipend_gas(blocks, site, fed)
                  and not failure_reverts(ops, analysis.jumpdests, site.pc + 1))
    _STIPENDS[key] = found
    return found


def _stipend_gas(blocks: list[tuple[int, list[tuple[int, int, int]]]], site: CallSite,
                 fed: set[int]) -> bool:
    """Whether the gas operand of ``site`` looks like solc's stipend pattern (see above)."""
    if site.block in fed:
        return True
    instructions = next((ins for start, ins in blocks if start == site.block), [])
    return any(op == PUSH2 and value == STIPEND for pc, op, value in instructions
               if pc < site.pc)


def failure_reverts(ops: dict[int, tuple[int, int]], jumpdests: frozenset[int],
                    start: int, forks: int = 0, steps: int = _FOLLOW) -> bool:
    """Whether a zero success flag pushed before ``start`` surely leads to REVERT/INVALID.

    Follows the code with the flag as the constant 0 (ISZERO evaluated on constants, DUP,
    SWAP, POP and constant jumps followed). A JUMPI on anything unknown is followed both
    ways while ``forks`` allows, and every path must then end so; one that reaches another
    halt, a jump to an unknown place, or runs past ``steps`` instructions (over all paths)
    means the failure may go on. With ``forks`` 0 one path is followed, and the first JUMPI
    on anything unknown answers no (``stipend_payments``' test).
    """
    pending: list[tuple[int, list[int | None]]] = [(start, [0])]
    budget = steps
    while pending:
        pc, stack = pending.pop()
        while True:
            budget -= 1
            entry = ops.get(pc)
            if budget < 0 or entry is None:
                return False
            op, value = entry
            if op == REVERT or op == INVALID or op not in OPS:
                break
            if op in HALTS:
                return False
            if op == JUMP or op == JUMPI:
                dest = stack.pop() if stack else None
                condition: int | None = 1
                if op == JUMPI:
                    condition = stack.pop() if stack else None
                if dest is None:
                    return False
                if condition is None:
                    if forks <= 0:
                        return False
                    forks -= 1
                    if dest in jumpdests:  # else that side halts exceptionally
                        pending.append((dest, list(stack)))
                    pc += 1
                    continue
                if condition:
                    if dest not in jumpdests:
                        break  # an invalid jump halts exceptionally
                    pc = dest
                    continue
                pc += 1
                continue
            if op == ISZERO:
                top = stack.pop() if stack else None
                stack.append(None if top is None else int(top == 0))
            else:
                step(stack, op, value)
            pc += 1 + OPS[op].immediate
    return True


class GaslessSendOracle(FlowOracle):
    """Reports stipend payments that failed on gas and went unnoticed (module docstring)."""

    name = "gasless-send"
    swc = "SWC-104"
    description = ("a send/transfer-style payment (2300-gas stipend) fails on out of gas at "
                   "a recipient with a costly fallback, and the caller ignores the failure "
                   "(sFuzz's gasless send)")
    severity = "medium"
    confidence = "certain"
    cache_clean = False  # whether the payment fails depends on who is paid, not the path

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        self.costly = frozenset(c.address for c in chain.attacker_contracts
                                if c.kind == AttackerKind.COSTLY)

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some CALL may carry ether and its flag is not tested on every path after it."""
        return any(site.opcode in _PAYING and site.value != 0 and not site.checked
                   for code_hash, code in codes
                   for site in call_sites(chain, code, code_hash))

    def candidate(self, result: ContractRun) -> bool:
        """A stipend payment of a target failed by an exceptional halt; an open site ran."""
        if not any(self._starved(result, call) for call in result.calls):
            return False
        return any(site.opcode in _PAYING and site.value != 0 and not site.checked
                   and (code_hash, site.pc) not in self.reported
                   for code_hash, site in self.sites_ran(result))

    def _starved(self, result: ContractRun, call: CallEvent) -> bool:
        """A target's payment with at most the stipend that failed without reverting."""
        outcomes = result.outcomes
        return (call.kind in _PAYING and call.value > 0 and 0 < call.gas <= _MAX_GAS
                and not call.success and not call.reverted
                and self.caller_of(call) in self.targets
                and call.tx < len(outcomes) and outcomes[call.tx].success)

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per call site whose starved payment failed unnoticed in this run."""
        findings: list[Finding] = []
        case = result.case
        starved = [call for call in result.calls if self._starved(result, call)]
        seen: set[tuple[bytes, int]] = set()
        for call in flow.calls:
            if (call.success or call.checked or not call.value or call.opcode not in _PAYING
                    or (call.code_hash, call.pc) in seen):
                continue
            contract = self.contract(call.code_hash)
            if contract is None or not self.judged(flow, result, call.tx, call.frame):
                continue
            event = next((e for e in starved if e.tx == call.tx and e.sender == call.address
                          and e.target == call.target and e.value == call.value), None)
            if event is None:
                continue
            seen.add((call.code_hash, call.pc))
            self.reported.add((call.code_hash, call.pc))
            place = self.place(contract, call.pc)
            recipient = self.who(call.target)
            halted = ("ran out of gas (its fallback writes storage)"
                      if call.target in self.costly else
                      "halted exceptionally, most likely out of gas")
            stipend = ("the 2300-gas stipend of send/transfer" if event.gas == STIPEND
                       else f"{event.gas} gas")
            detail = (f"{self.step(case[:call.tx + 1], call.tx)} made {contract.name} pay "
                      f"{ether(call.value)} to {recipient} at {place} with only {stipend}; "
                      f"{recipient} {halted}, so the payment failed, yet {contract.name} never "
                      "looked at the call's success flag (no JUMPI tested it, no SSTORE kept "
                      "it, no RETURN passed it on) and the transaction succeeded: "
                      f"{ether(call.value)} stayed with {contract.name} and {recipient} was "
                      "never paid (check the result of send, or let recipients withdraw). "
                      + self.rating(self.confidence, "the starved payment, its failure and "
                                    "the unread flag all ran in a transaction that succeeded"))
            findings.append(self.call_finding(contract, case, call.tx, call.pc,
                                              call.code_hash, detail, self.confidence))
        return findings
