"""The symbolic semantics against the interpreter: random straight-line programs.

Each program pushes constants (edge values among them), loads calldata words (aligned and
unaligned), reads the symbolic sources (CALLER, CALLVALUE, ORIGIN, TIMESTAMP, NUMBER,
storage), moves values through memory and storage, and applies random arithmetic, bitwise
and comparison opcodes; some values decide a JUMPI whose both sides lead on. The program
runs in secant's interpreter with the shadow tracker attached; before every instruction
every symbolic item of the shadow stack, evaluated with the run's bindings of the
variables, must equal the live value in its place, and every branch record's condition
must hold exactly when the JUMPI jumped.
"""

from __future__ import annotations

import random
from typing import Any

import z3

from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.frame import Frame
from secant.evm.opcodes import (
    ADD,
    ADDMOD,
    AND,
    BY_NAME,
    BYTE,
    CALLDATACOPY,
    CALLDATALOAD,
    CALLER,
    CALLVALUE,
    DIV,
    EQ,
    EXP,
    GT,
    ISZERO,
    JUMPDEST,
    JUMPI,
    LT,
    MLOAD,
    MOD,
    MSTORE,
    MSTORE8,
    MUL,
    MULMOD,
    NOT,
    NUMBER,
    OR,
    ORIGIN,
    SAR,
    SDIV,
    SGT,
    SHL,
    SHR,
    SIGNEXTEND,
    SLOAD,
    SLT,
    SMOD,
    SSTORE,
    STOP,
    SUB,
    TIMESTAMP,
    XOR,
)
from secant.evm.state import WorldState
from secant.evm.transaction import Transaction, apply_transaction
from secant.symbolic.shadow import ShadowTracker
from secant.targets.trace import TraceRecorder

SENDER = 0x5E17DE2
TARGET = 0xC0DE
M = (1 << 256) - 1
EDGES = [0, 1, 2, 3, 7, 8, 31, 32, 255, 256, 257, (1 << 64) - 1, 1 << 64, (1 << 160) - 1,
         (1 << 255) - 1, 1 << 255, (1 << 255) + 1, M - 1, M]
BINARY = [ADD, MUL, SUB, DIV, SDIV, MOD, SMOD, EXP, SIGNEXTEND, LT, GT, SLT, SGT, EQ, AND,
          OR, XOR, BYTE, SHL, SHR, SAR]
SOURCES = [CALLER, CALLVALUE, ORIGIN, TIMESTAMP, NUMBER]
PROGRAMS = 2500


def value(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.45:
        return rng.choice(EDGES)
    if roll < 0.7:
        return rng.randrange(300)  # shift counts, byte indices, small divisors
    if roll < 0.8:
        return M - rng.randrange(300)  # small negative numbers
    return rng.getrandbits(rng.choice((8, 64, 160, 256)))


class Program:
    """A program under construction, with its pcs (JUMPIs need their targets)."""

    def __init__(self) -> None:
        self.code = bytearray()
        self.height = 0

    def op(self, opcode: int, pops: int = 0, pushes: int = 0) -> None:
        self.code.append(opcode)
        self.height += pushes - pops

    def push(self, number: int) -> None:
        self.code.append(BY_NAME["PUSH32"])
        self.code += number.to_bytes(32, "big")
        self.height += 1


def program(rng: random.Random, words: int) -> bytes:
    p = Program()
    for _ in range(rng.randint(6, 28)):
        roll = rng.random()
        if p.height < 2 or roll < 0.12:
            if rng.random() < 0.5:
                p.push(value(rng))
            else:  # calldata: mostly aligned argument words, sometimes unaligned
                offset = (4 + 32 * rng.randrange(words + 1) if rng.random() < 0.7
                          else rng.randrange(4 + 32 * words + 8))
                p.push(offset)
                p.op(CALLDATALOAD, 1, 1)
        elif roll < 0.18:
            p.op(rng.choice(SOURCES), 0, 1)
        elif roll < 0.58:
            p.op(rng.choice(BINARY), 2, 1)
        elif roll < 0.63:
            p.op(rng.choice((ISZERO, NOT)), 1, 1)
        elif roll < 0.68 and p.height >= 3:
            p.op(rng.choice((ADDMOD, MULMOD)), 3, 1)
        elif roll < 0.76 and p.height < 15:
            p.op(BY_NAME[f"DUP{rng.randint(1, min(p.height, 16))}"], 0, 1)
        elif roll < 0.81:
            p.op(BY_NAME[f"SWAP{rng.randint(1, min(p.height - 1, 16))}"], 0, 0)
        elif roll < 0.87:  # through memory: store at one offset, load at another
            p.push(rng.randrange(96))
            p.op(rng.choice((MSTORE, MSTORE, MSTORE8)), 2, 0)
            p.push(rng.randrange(96))
            p.op(MLOAD, 1, 1)
        elif roll < 0.90:  # calldata into memory, then a word of it
            size, start, dest = rng.randrange(70), rng.randrange(4 + 32 * words), rng.randrange(64)
            p.push(size)
            p.push(start)
            p.push(dest)
            p.op(CALLDATACOPY, 3, 0)
            p.push(rng.randrange(96))
            p.op(MLOAD, 1, 1)
        elif roll < 0.94:  # through storage (slot 3 holds a value before the run)
            slot = rng.randrange(5)
            if rng.random() < 0.5:
                p.push(slot)
                p.op(SSTORE, 2, 0)
            p.push(slot)
            p.op(SLOAD, 1, 1)
        else:  # a JUMPI on the top value; both sides go on at the next instruction
            target = len(p.code) + 33 + 1
            p.push(target)
            p.op(JUMPI, 2, 0)
            p.op(JUMPDEST)
    p.op(STOP)
    return bytes(p.code)


class Checker:
    """Compares the shadow stack with the live one before every instruction."""

    def __init__(self, tracker: ShadowTracker) -> None:
        self.tracker = tracker
        self.checked = 0
        self.seen: dict[tuple[int, int], bool] = {}

    def evaluate(self, term: Any) -> int:
        bindings = self.tracker.run.bindings
        pairs = [(z3.BitVec(name, 256), z3.BitVecVal(number, 256))
                 for name, number in bindings.items()]
        done = z3.simplify(z3.substitute(term, *pairs))
        assert z3.is_bv_value(done), done
        return int(done.as_long())

    def step(self, frame: Frame, pc: int, opcode: int, stack: list[int]) -> None:
        shadow = self.tracker._stack
        assert len(shadow) == len(stack)
        for term, live in zip(shadow, stack):
            if term is None:
                continue
            key = (term.get_id(), live)
            if key in self.seen:
                continue
            got = self.evaluate(term)
            assert got == live, f"pc {pc}: shadow {term} is {got:#x}, live {live:#x}"
            self.seen[key] = True
            self.checked += 1
        self.tracker.step(frame, pc, opcode, stack)


def test_shadow_terms_equal_the_live_values_on_random_programs() -> None:
    rng = random.Random(20261124)
    checked = branches = failures = pins = 0
    for _ in range(PROGRAMS):
        words = rng.randint(1, 4)
        data = rng.randbytes(4) + b"".join(value(rng).to_bytes(32, "big")
                                           for _ in range(words))
        if rng.random() < 0.2:
            data += rng.randbytes(rng.randint(1, 31))  # a partial word stays concrete
        code = program(rng, words)
        state = WorldState()
        state.set_account(SENDER, balance=10**30)
        state.set_account(TARGET, code=code, storage={3: value(rng) or 1})
        env = BlockEnv(coinbase=0xC01B, gas_limit=30_000_000, number=rng.randrange(1, 10**7),
                       timestamp=rng.randrange(1, 2**40), prev_randao=77)
        recorder = TraceRecorder(("symbolic",))
        tracker = recorder._symbolic
        assert tracker is not None
        checker = Checker(tracker)
        recorder.on_step = checker.step  # type: ignore[method-assign]
        recorder.begin_tx(0)
        tx = Transaction(sender=SENDER, to=TARGET, nonce=0, gas_limit=5_000_000,
                         gas_price=10, data=data, value=rng.choice((0, 1, 10**18)))
        done = apply_transaction(state, env, tx, CANCUN, recorder)
        failures += not done.success
        assert tracker.resyncs == 0
        run = recorder.symbolic
        for record in run.branches:
            holds = z3.simplify(z3.substitute(record.condition, *[
                (z3.BitVec(name, 256), z3.BitVecVal(number, 256))
                for name, number in run.bindings.items()]))
            assert z3.is_true(holds) == record.taken
            assert record.branch < len(recorder.branches)
            assert recorder.branches[record.branch][1] == record.pc
            branches += 1
        # Every offset is a constant: only EXP's symbolic exponents and terms too large to
        # keep are concretised.
        assert {pin.reason for pin in run.pins} <= {"exponent", "term too large"}
        pins += len(run.pins)
        checked += checker.checked
    # The programs exercise the semantics: thousands of terms, a few hundred branches.
    print(f"{PROGRAMS} programs: {checked} terms checked, {branches} branch records, "
          f"{pins} concretisations, {failures} programs halted exceptionally")
    assert checked > 5 * PROGRAMS and branches > 100
    assert failures < PROGRAMS // 10
