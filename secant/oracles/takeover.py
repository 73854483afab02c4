"""Owner takeover: an attacker puts itself where the deployer's address was kept.

Most contracts keep the account that deployed them in storage (``owner = msg.sender`` in
the constructor) and test it before their privileged actions. Many access-control bugs
end the same way, whatever the path: the attacker's address replaces the deployer's in
that slot. A constructor misnamed into a public function, an unprotected initialiser, a
fallback that delegates calls into a library whose layout differs from the caller's, an
uninitialised storage pointer or an array length underflow in solc 0.4 that writes slot 0:
each lets an attacker own the contract, and from then on do what its owner may, which may
pay nothing in the run itself.

The slots that hold the deployer's address (in their low 20 bytes, where solc puts the
first variable of a slot) are read from every target's storage once deployed. So are the
slots the code compares with ``msg.sender`` (a static scan: a constant slot's SLOAD and
CALLER meet in an EQ, the test of ``onlyOwner`` or ``if (msg.sender == creator)``) that
held no attacker's address when deployed: a misnamed constructor leaves its owner slot at
zero, and whoever calls it first holds the powers that slot guards. A run shows
a takeover when, after it, such a slot of a target holds an address of the attacker side
(an attacker sender or an attacker contract), and the last transaction that wrote that
slot number (a target's code or a library's, in any context) is a successful one of the
attacker side. As for the ether oracles, the attacker is one that sent no ether during
the case: paying to become the king of a game is the game. What follows a trusted
sender's transaction naming the attacker (``transferOwnership(attacker1)``) is that
sender's choice and no finding. Which slot is the owner's is guessed from its value, so a
finding is *likely*: a contract may let anyone claim a role that the deployer held first.
Key: the contract and the slot.

Cost: none on a run that wrote none of those slot numbers; otherwise one read of each
such slot of each target that holds one. The scan runs once per code.
"""

from __future__ import annotations

from typing import cast

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.constant_stack import step
from secant.evm.opcodes import AND, CALLER, DIV, EQ, SHR, SLOAD
from secant.oracles.abstract_paths import follow_paths
from secant.oracles.flows import runtime_ops
from secant.oracles.rated import RatedOracle, function_name
from secant.types import Finding, RunResult

_ADDRESS = (1 << 160) - 1
_GUARD_STEPS = 96  # instructions followed from a block's start, over all its paths
_GUARD_PATHS = 4  # paths followed from one block
_GUARDS: dict[tuple[bytes, str], frozenset[int]] = {}


class _Slot:
    """A stack item read from the constant storage slot ``slot`` (perhaps masked)."""

    __slots__ = ("slot",)

    def __init__(self, slot: int) -> None:
        self.slot = slot


class _Caller:
    """A stack item that is ``msg.sender`` (perhaps masked)."""

    __slots__ = ()


_Item = int | _Slot | _Caller | None


def caller_guard_slots(chain: TestChain, code: bytes, code_hash: bytes) -> frozenset[int]:
    """The constant storage slots ``code`` compares with ``msg.sender`` (cached per code).

    Each block that reads storage or the caller is walked from its start on an abstract
    stack (constants, a constant slot's value, the caller; AND with a mask, solc 0.4's
    DIV by a power of 256 and SHR keep what they mask or shift), along constant jumps and
    both sides of a branch for a few paths: an EQ of a slot's value and the caller names
    the slot. Items from before the block are unknown, so a comparison whose operands were
    loaded in an earlier block than both walks reach is missed (no finding rather than a
    wrong slot).
    """
    key = (code_hash, chain.fork.name)
    found = _GUARDS.get(key)
    if found is not None:
        return found
    analysis, end, ops = runtime_ops(chain, code, code_hash)
    slots: set[int] = set()
    for start, instructions in analysis.blocks:
        if start >= end or not any(op == SLOAD or op == CALLER for _, op, _ in instructions):
            continue
        start_stack: list[_Item] = []
        follow_paths(ops, analysis.jumpdests, start, start_stack, _GUARD_STEPS, _GUARD_PATHS,
                     lambda stack, _, op, value: _guard_step(stack, op, value, slots))
    found = _GUARDS[key] = frozenset(slots)
    return found


def _guard_step(stack: list[_Item], op: int, value: int, slots: set[int]) -> None:
    """One instruction on the abstract stack of :func:`caller_guard_slots`."""
    if op == SLOAD:
        slot = stack.pop() if stack else None
        stack.append(_Slot(slot) if isinstance(slot, int) else None)
    elif op == CALLER:
        stack.append(_Caller())
    elif op in (AND, DIV, SHR, EQ) and len(stack) >= 2:
        a, b = stack.pop(), stack.pop()
        if op == EQ:
            pair = (a, b) if isinstance(a, _Slot) else (b, a)
            if isinstance(pair[0], _Slot) and isinstance(pair[1], _Caller):
                slots.add(pair[0].slot)
            stack.append(None)
        elif op == SHR:  # shift a, value b
            stack.append(b if isinstance(b, _Slot | _Caller) else None)
        elif op == DIV:  # value a, divisor b
            stack.append(a if isinstance(a, _Slot | _Caller) else None)
        else:  # a mask keeps what it masks
            stack.append(a if isinstance(a, _Slot | _Caller) and not isinstance(b, _Slot | _Caller)
                         else b if isinstance(b, _Slot | _Caller)
                         and not isinstance(a, _Slot | _Caller) else None)
    else:
        step(cast("list[int | None]", stack), op, value)


class OwnerTakeoverOracle(RatedOracle):
    """Reports attackers that replaced the deployer's address in storage (module docstring)."""

    name = "owner-takeover"
    swc = None
    description = ("an attacker who sent no ether puts its own address in a storage slot that "
                   "held the deployer's, or that the code tests msg.sender against (an owner "
                   "taken over)")
    severity = "high"
    confidence = "likely"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        state = chain.state
        # (target address, slot) of every slot whose low 20 bytes are the deployer's.
        self.owner_slots: list[tuple[int, int]] = []
        # Those of them that did not hold the deployer's address: slots msg.sender is
        # tested against.
        self.unheld: set[tuple[int, int]] = set()
        for address in self.targets:
            account = state.get(address)
            if account is None:
                continue
            held = [(address, slot) for slot, value in account.storage.items()
                    if value & _ADDRESS == self.deployer]
            self.owner_slots += held
            code = self.code_of.get(address)
            if code is None:
                continue
            # The slots its code tests msg.sender against, though no owner was stored there
            # (a misnamed constructor's owner slot): whoever writes them first holds them.
            taken = {slot for _, slot in held}
            guarded = [
                (address, slot) for slot in sorted(caller_guard_slots(chain, code[1], code[0]))
                if slot not in taken
                and account.storage.get(slot, 0) & _ADDRESS not in self.attacker_side]
            self.owner_slots += guarded
            self.unheld.update(guarded)
        self.slot_numbers = frozenset(slot for _, slot in self.owner_slots)

    def idle(self) -> bool:
        """Idle where no target keeps an owner slot (its static pre-check)."""
        return not self.slot_numbers

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per owner slot an attacker's transaction took over."""
        numbers = self.slot_numbers
        if not numbers or post is None:
            return []
        writes, marks = result.writes, result.write_marks
        last: dict[int, tuple[int, int]] = {}  # slot number -> (its last write, that write's tx)
        writer_tx = 0
        for index, (code_hash, _, slot) in enumerate(writes):
            if slot in numbers and code_hash in self.codes:
                while writer_tx + 1 < len(marks) and marks[writer_tx + 1] <= index:
                    writer_tx += 1
                last[slot] = (index, writer_tx)
        if not last:
            return []
        case, outcomes = result.case, result.outcomes
        paid = {tx.sender for tx, done in zip(case, outcomes) if tx.value and done.success}
        if paid & self.attacker_side:
            return []  # an attacker that paid: what it got it may have bought
        findings: list[Finding] = []
        for address, slot in self.owner_slots:
            key = (self.name, address, slot)
            if slot not in last or key in self.known:
                continue
            now = post.storage_at(address, slot) & _ADDRESS
            if now not in self.attacker_side:
                continue
            write, tx_index = last[slot]
            if tx_index >= len(case):
                continue
            tx = case[tx_index]
            if (tx.sender not in self.attacker_side or not outcomes[tx_index].success
                    or self.granted(case, outcomes, tx_index)):
                continue
            code_hash, pc, _ = writes[write]
            writer = self.codes[code_hash]
            contract = self.targets[address]
            trusted = self.trusted_setup(case, outcomes, tx_index)
            unheld = (address, slot) in self.unheld
            why = (("the code compares msg.sender with the slot, so it likely guards an "
                    "owner's powers (unless anyone may claim the role first); " if unheld
                    else "the slot held the deployer's address, so it is likely the owner's; ")
                   + (f"trusted senders sent {len(trusted)} transaction(s) without ether "
                      "first, one of which may have opened the way on purpose" if trusted
                      else "only attackers' transactions came before"))
            through = "" if writer is contract else f" (through {writer.name}'s code)"
            detail = (f"{self.step(case[:tx_index + 1], tx_index)} wrote "
                      f"{self.who(now)} into {contract.name}'s storage slot 0x{slot:x}"
                      f"{through} at {self.where(writer, pc) or f'pc {pc}'}, "
                      + ("which the code tests msg.sender against and which held no owner: "
                         if unheld else "which held the deployer's address: ")
                      + f"{self.who(tx.sender)}, who sent no ether, now stands where the "
                      "owner stood. " + self.rating(self.confidence, why))
            findings.append(Finding(
                kind=self.name, swc="", contract=contract.name, function=function_name(tx),
                pc=pc, source=self.where(writer, pc), detail=detail, key=key,
                case=case[:tx_index + 1], oracle=self.name, confidence=self.confidence))
        return self.returned(findings)

