"""Forced ether (SWC-132): code that needs a balance to equal something fails forever.

No contract can refuse ether for good: a SELFDESTRUCT pays its beneficiary without running
its code, and the address a contract will get from a future CREATE (predictable from its
creator's nonce) can be paid before the contract exists. Code that compares a balance with
``==`` or ``!=`` (``assert(address(this).balance == totalSupply)``, or ``child = new
Child{value: v}(); assert(address(child).balance == v)``) can therefore be broken by anyone
with one wei to spare, and once the equality fails it fails for every later caller.

The oracle shows it happen:

* statically, per target code (``balance_sites``): a BALANCE or SELFBALANCE whose result
  (carried by DUP and SWAP, through ADD and SUB) reaches an EQ, followed from the start of
  its basic block along constant jumps and both sides of branches for a few hundred
  instructions, whose result (through ISZERO) decides a JUMPI with a side that surely
  ends in REVERT or INVALID (a ``require``, an ``assert``; followed along constant jumps
  only). A comparison that decides nothing that fails (a flag stored, an ``if`` around
  bookkeeping) is no site. A target code without a site needs no recording and is never
  looked at again;
* per run: the branch of such a site took its side that goes on (the comparison held,
  the run's edges say), some transaction succeeded, the site is not reported yet, was
  not tried ``_TRIES`` times in vain, and this very run shape was not found clean before;
* then the case runs again as a variant (``PostState.run_variant``) with 1 wei forced onto
  every target whose comparison ran (before the first transaction) and onto every
  contract a target created in the run (before the transaction that creates it: the
  address is the same in the replay). A transaction that succeeded and now fails, while a
  comparison's JUMPI took a side in it that the transaction never took in the run, is a
  finding; with several forcings, the first one that alone makes it fail is named.

*Certain*: the replay proves the failure. What it does not claim: a failure caused by the
forced wei elsewhere than at a strict comparison (checked arithmetic on the balance, say)
is not reported, nor is a comparison with ``>=`` or ``<=``, which forced ether cannot
break, nor a strict comparison whose failure only skips something (a payout that never
comes because the balance never equals a target: nothing fails). Only target code is
looked at, not that of contracts the targets create. Key: the code and pc of the
comparison (the EQ). Severity medium: the contract can be blocked, not robbed.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from secant.chain.chain import TestChain
from secant.engine.oracle import PostState
from secant.evm.constant_stack import step
from secant.evm.opcodes import (
    ADD,
    BALANCE,
    CREATE,
    CREATE2,
    EQ,
    HALTS,
    INVALID,
    ISZERO,
    JUMP,
    JUMPI,
    OPS,
    REVERT,
    SELFBALANCE,
    SUB,
)
from secant.oracles.abstract_paths import follow_paths
from secant.oracles.flows import runtime_ops
from secant.oracles.rated import RatedOracle, function_name
from secant.targets.contract import ContractRun
from secant.types import Finding, RunResult, TxSeq

__all__ = ["BalanceSite", "ForcedEtherOracle", "balance_sites"]

FORCED_WEI = 1
"""What the variant forces onto an account: the least anyone can send."""

_STEPS = 384  # instructions followed from a balance read, over all its paths
_FAIL_STEPS = 256  # instructions followed from a branch's side to see it fail
_PATHS = 8  # paths followed from one balance read
_CREATED = 4  # contracts created in a run that the variant pays in advance, at most
_CLEAN_LIMIT = 1 << 14  # run shapes remembered as clean (then forgotten at once)
_TRIES = 8  # variants a comparison held in with nothing failing before it is left alone
_SITES: dict[tuple[bytes, str], tuple[BalanceSite, ...]] = {}


@dataclass(frozen=True)
class BalanceSite:
    """A strict comparison of a balance: the BALANCE/SELFBALANCE read, the EQ, the JUMPI.

    ``block`` is the start of the EQ's basic block (a run's coverage says whether it ran);
    ``jumpi`` the JUMPI whose condition the comparison is, ``fails`` the side of it that
    surely ends in a REVERT or INVALID (True: the jump).
    """

    read: int
    eq: int
    block: int
    jumpi: int | None
    fails: bool = False


class _Balance:
    """A stack item that is a balance read at ``pc`` (or a sum or difference with one)."""

    __slots__ = ("pc",)

    def __init__(self, pc: int) -> None:
        self.pc = pc


class _Compared:
    """A stack item that is (the negation of) the strict comparison ``site``."""

    __slots__ = ("eq", "read")

    def __init__(self, read: int, eq: int) -> None:
        self.read = read
        self.eq = eq


_Item = int | _Balance | _Compared | None


def balance_sites(chain: TestChain, code: bytes, code_hash: bytes) -> tuple[BalanceSite, ...]:
    """The strict balance comparisons of ``code`` (module docstring; cached per code)."""
    key = (code_hash, chain.fork.name)
    found = _SITES.get(key)
    if found is not None:
        return found
    analysis, end, ops = runtime_ops(chain, code, code_hash)
    starts = sorted(start for start, _ in analysis.blocks if start < end)
    sites: dict[int, BalanceSite] = {}
    for start, instructions in analysis.blocks:
        if start >= end or not any(op in (BALANCE, SELFBALANCE) for _, op, _ in instructions):
            continue
        stack: list[_Item] = []
        for pc, op, value in instructions:
            if op in (BALANCE, SELFBALANCE):
                _apply(stack, op, value)
                stack[-1] = _Balance(pc)
                for site in _follow(ops, analysis.jumpdests, pc + 1, list(stack)):
                    sites.setdefault(site.eq, site)
            _apply(stack, op, value)
    if sites:
        # The block of each EQ, from the sorted block starts.
        found = tuple(BalanceSite(s.read, s.eq, starts[bisect.bisect_right(starts, s.eq) - 1],
                                  s.jumpi, s.fails)
                      for s in sorted(sites.values(), key=lambda s: s.eq))
    else:
        found = ()
    _SITES[key] = found
    return found


def _follow(ops: dict[int, tuple[int, int]], jumpdests: frozenset[int], start: int,
            stack: list[_Item]) -> list[BalanceSite]:
    """The comparisons a balance on ``stack`` reaches from ``start`` (module docstring)."""
    found: list[BalanceSite] = []

    def apply(stack: list[_Item], pc: int, op: int, value: int) -> None:
        if op == EQ:
            a, b = _pop(stack), _pop(stack)
            balance = a if isinstance(a, _Balance) else b if isinstance(b, _Balance) else None
            stack.append(_Compared(balance.pc, pc) if balance is not None else None)
            if balance is not None:
                found.append(BalanceSite(balance.pc, pc, 0, None))
        elif op == ISZERO:
            top = _pop(stack)
            stack.append(top if isinstance(top, _Compared) else None)
        elif op in (ADD, SUB):
            a, b = _pop(stack), _pop(stack)
            stack.append(a if isinstance(a, _Balance) else b if isinstance(b, _Balance)
                         else None)
        else:
            _apply(stack, op, value)

    def decided(pc: int, op: int, dest: _Item, condition: _Item, stack: list[_Item]) -> bool:
        if not isinstance(condition, _Compared):
            return False
        # Only a branch with a side that surely fails can make a transaction fail (a
        # require, an assert): the comparison is a site then.
        jumped = isinstance(dest, int) and _fails(ops, jumpdests, dest, list(stack))
        if jumped or _fails(ops, jumpdests, pc + 1, list(stack)):
            found[:] = [BalanceSite(s.read, s.eq, 0, pc, jumped)
                        if s.eq == condition.eq and s.jumpi is None else s for s in found]
        return True  # the comparison decided a branch: this path is done

    follow_paths(ops, jumpdests, start, stack, _STEPS, _PATHS, apply, decided)
    return [site for site in found if site.jumpi is not None]


def _fails(ops: dict[int, tuple[int, int]], jumpdests: frozenset[int], start: int,
           stack: list[_Item]) -> bool:
    """Whether the path from ``start`` surely ends in REVERT or INVALID.

    Followed with constant jumps only: a branch on anything not constant, another halt or
    the step limit means it may go on.
    """
    pc = start
    for _ in range(_FAIL_STEPS):
        entry = ops.get(pc)
        if entry is None:
            return False
        op, value = entry
        if op == REVERT or op == INVALID or op not in OPS:
            return True
        if op in HALTS:
            return False
        if op == JUMP or op == JUMPI:
            dest = _pop(stack)
            condition = _pop(stack) if op == JUMPI else 1
            if not isinstance(condition, int) or not isinstance(dest, int):
                return False
            if condition:
                if dest not in jumpdests:
                    return True  # an invalid jump halts exceptionally
                pc = dest
                continue
        else:
            _apply(stack, op, value)
        pc += 1 + OPS[op].immediate
    return False


def _pop(stack: list[_Item]) -> _Item:
    return stack.pop() if stack else None


def _apply(stack: list[_Item], op: int, value: int) -> None:
    """One instruction on the abstract stack: constants and tags move, the rest is None.

    ``constant_stack.step`` does exactly that for any item (DUP and SWAP carry an item
    whatever it is); only its annotation knows constants alone.
    """
    step(cast("list[int | None]", stack), op, value)


class ForcedEtherOracle(RatedOracle):
    """Reports strict balance comparisons that forced ether breaks (module docstring)."""

    name = "forced-ether"
    swc = "SWC-132"
    description = ("a transaction that succeeded fails once one wei is forced onto a "
                   "contract (self-destruct, or paid to its address before its creation), "
                   "because code compares a balance with == or !=")
    needs = frozenset({"calls"})
    severity = "medium"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        # The strict balance comparisons of every target code, by code hash.
        self.sites: dict[bytes, tuple[BalanceSite, ...]] = {}
        for code_hash, code in self.code_of.values():
            found = balance_sites(chain, code, code_hash)
            if found:
                self.sites[code_hash] = found
        if not self.sites:
            self.needs = frozenset()
        # Run shapes whose variant showed nothing (``_shape``), and how many variants each
        # comparison held in without a failure.
        self.clean: set[tuple[object, ...]] = set()
        self.tries: dict[tuple[bytes, int], int] = {}

    def idle(self) -> bool:
        """Idle where no target compares its balance strictly (its static pre-check)."""
        return not self.sites

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding when forcing one wei makes a transaction of the run fail."""
        if (not self.sites or post is None or not isinstance(result, ContractRun)
                or not any(o.success for o in result.outcomes)):
            return []
        # The comparisons that held in the run (their branch took the side that goes on),
        # not reported yet and not found clean too often.
        edges = result.edges
        ran = [(code_hash, site) for code_hash, sites in self.sites.items() for site in sites
               if (code_hash, site.jumpi, not site.fails) in edges]
        if not any((self.name, code_hash, site.eq) not in self.known
                   and self.tries.get((code_hash, site.eq), 0) < _TRIES
                   for code_hash, site in ran):
            return []
        shape = self._shape(result, ran)
        if shape in self.clean:
            return []
        forcings = self._forcings(result, {code_hash for code_hash, _ in ran})
        if not forcings:
            return []
        variant = self._variant(post, result.case, forcings)
        failed = self._failure(result, variant, ran)
        if failed is None:
            if len(self.clean) >= _CLEAN_LIMIT:
                self.clean.clear()
            self.clean.add(shape)
            for code_hash, site in ran:
                self.tries[(code_hash, site.eq)] = self.tries.get((code_hash, site.eq), 0) + 1
            return []
        index, code_hash, site = failed
        # Name the forcing that alone makes the transaction fail (the first in order).
        culprit = forcings[0]
        if len(forcings) > 1:
            for forcing in forcings:
                alone = self._variant(post, result.case, [forcing])
                if self._failure(result, alone, ran) is not None:
                    culprit = forcing
                    variant = alone
                    break
        return self.returned([self._finding(result, variant, index, code_hash, site,
                                            culprit)])

    @staticmethod
    def _shape(result: ContractRun, ran: Iterable[tuple[bytes, BalanceSite]]
               ) -> tuple[object, ...]:
        """What decides whether a variant of the run fails, for the clean memo.

        The functions called in order, how each ended, the values sent and the comparisons
        that ran: a run that differs only in other arguments rarely behaves otherwise.
        """
        return (tuple((tx.function, tx.to, tx.sender, tx.value) for tx in result.case),
                tuple(o.success for o in result.outcomes),
                frozenset((code_hash, site.eq) for code_hash, site in ran))

    def _forcings(self, result: ContractRun, codes: set[bytes]
                  ) -> list[tuple[int, int, int | None]]:
        """The wei to force: ``(transaction index, account, its creator in the run)``.

        Every target whose code holds a comparison that ran, before the first transaction;
        every contract a target created in a transaction that succeeded, before that one.
        """
        forcings: list[tuple[int, int, int | None]] = [
            (0, address, None) for address, (code_hash, _) in self.code_of.items()
            if code_hash in codes]
        outcomes = result.outcomes
        created = [call for call in result.calls
                   if call.kind in (CREATE, CREATE2) and call.success
                   and call.sender in self.targets and call.tx < len(outcomes)
                   and outcomes[call.tx].success]
        seen: set[int] = set()
        for call in created:
            if call.target not in seen and len(seen) < _CREATED:
                seen.add(call.target)
                forcings.append((call.tx, call.target, call.sender))
        return forcings

    @staticmethod
    def _variant(post: PostState, case: TxSeq, forcings: list[tuple[int, int, int | None]]
                 ) -> RunResult:
        forced: dict[int, dict[int, int]] = {}
        for index, address, _ in forcings:
            forced.setdefault(index, {})[address] = FORCED_WEI
        return post.run_variant(case, forced, frozenset())

    @staticmethod
    def _failure(result: ContractRun, variant: RunResult,
                 ran: list[tuple[bytes, BalanceSite]]) -> tuple[int, bytes, BalanceSite] | None:
        """The first transaction that succeeded in the run and fails in ``variant``.

        With the comparison whose JUMPI took, in that transaction of the variant, a side
        it never took in the run's; None when there is none.
        """
        for index, (before, after) in enumerate(zip(result.outcomes, variant.outcomes,
                                                    strict=False)):
            if not before.success or after.success:
                continue
            sides = {(b[0], b[1], b[2]) for b in result.tx_branches(index)}
            flipped = {(b[0], b[1]) for b in variant.tx_branches(index)
                       if (b[0], b[1], b[2]) not in sides}
            for code_hash, site in ran:
                if site.jumpi is not None and (code_hash, site.jumpi) in flipped:
                    return index, code_hash, site
        return None

    def _finding(self, result: ContractRun, variant: RunResult, index: int, code_hash: bytes,
                 site: BalanceSite, forcing: tuple[int, int, int | None]) -> Finding:
        case = result.case
        contract = self.codes[code_hash]
        at, account, creator = forcing
        place = self.where(contract, site.eq) or f"{contract.name} pc {site.eq}"
        if creator is not None:
            how = (f"the address of the contract {self.who(creator)} creates in transaction "
                   f"{at + 1}, paid before the contract exists: the address follows from "
                   f"{self.who(creator)}'s nonce")
        else:
            how = f"naming {self.who(account)} as a SELFDESTRUCT's beneficiary"
        outcome = variant.outcomes[index]
        fails = "reverts" if outcome.reverted else "fails (an assertion or invalid opcode)"
        detail = (f"anyone can force {FORCED_WEI} wei onto {self.who(account)} ({how}); "
                  f"replayed with it, {self.step(case, index)}, which succeeded, now {fails}: "
                  f"the strict balance comparison at {place} no longer holds, and no one "
                  "can take the forced wei back, so the transaction fails for good (compare "
                  "with >= or keep the books in a variable). "
                  + self.rating(self.confidence, "the replay with the forced wei ran and "
                                "the transaction failed at the comparison"))
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(case[index]), pc=site.eq,
                       source=self.where(contract, site.eq), detail=detail,
                       key=(self.name, code_hash, site.eq), case=case[:index + 1],
                       oracle=self.name, confidence=self.confidence)
