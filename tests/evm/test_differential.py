"""Differential testing against py-evm: generated programs, same results (issue 2 item 6).

Each example builds two contracts from generated snippets (arithmetic on edge values, memory,
storage, transient storage, logs, calls into the other contract, conditional jumps,
RETURN/REVERT, raw random bytes), runs one message call on secant and on py-evm (Cancun) from
the same pre-state with the same warm addresses, and compares success, output, gas left,
refund counter, logs, and the post-state of every account involved.

Expected differences (see ../shared/evm-fixtures/README.md, last section): py-evm diverges on
creation collisions with storage (EIP-7610), senders with code (EIP-3607), blob-transaction
validity, tips above the max fee, a MODEXP 0^0 edge case and the creation-transaction
initcode limit. None of them can arise here: there are no transactions (message calls only),
no CREATE*, no precompile calls and the sender is code-less, so every difference is a bug.

``SECANT_DIFF_EXAMPLES`` (default 150) sets the number of examples.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from secant.evm.env import BlockEnv
from secant.evm.forks import CANCUN
from secant.evm.interpreter import Evm
from secant.evm.opcodes import BY_NAME
from secant.evm.state import WorldState

pyevm = pytest.importorskip("eth", reason="py-evm is a development dependency")

from secant.bench.pyevm_baseline import (  # noqa: E402
    PyEvmRunner,
    pyevm_account,
    pyevm_message,
)

SENDER = 0x1000000000000000000000000000000000000001
A = 0x00000000000000000000000000000000000AAAA1
B = 0x00000000000000000000000000000000000BBBB2
SLOTS = range(8)
EDGE = [0, 1, 2, 31, 32, 255, 256, 2**255, 2**256 - 1, 2**255 - 1, 2**128, 0xFFFFFFFF]
EXAMPLES = int(os.environ.get("SECANT_DIFF_EXAMPLES", "150"))


def op(name: str) -> bytes:
    return bytes([BY_NAME[name]])


def push(value: int) -> bytes:
    width = max(1, (value.bit_length() + 7) // 8)
    return bytes([0x5F + width]) + value.to_bytes(width, "big")


values = st.one_of(st.sampled_from(EDGE), st.integers(0, 300), st.integers(0, 2**256 - 1))
small = st.integers(0, 96)
binary_ops = st.sampled_from([
    "ADD", "MUL", "SUB", "DIV", "SDIV", "MOD", "SMOD", "EXP", "SIGNEXTEND", "LT", "GT", "SLT",
    "SGT", "EQ", "AND", "OR", "XOR", "BYTE", "SHL", "SHR", "SAR",
])


@st.composite
def operand(draw: st.DrawFn) -> bytes:
    """Code pushing one value: a constant (folded by secant) or a runtime value (not)."""
    source = draw(st.integers(0, 3))
    if source == 0:
        return push(draw(values))
    if source == 1:
        return push(draw(st.integers(0, 40))) + op("CALLDATALOAD")
    if source == 2:
        return push(draw(st.sampled_from(SLOTS))) + op("SLOAD")
    return push(draw(values)) + push(draw(st.integers(0, 40))) + op("CALLDATALOAD") + op("XOR")


@st.composite
def snippet(draw: st.DrawFn) -> bytes:
    """A piece of code that leaves the stack as it found it; results land in memory."""
    kind = draw(st.integers(0, 40))  # 12..40 except the raw-bytes branch: arithmetic
    if 13 <= kind <= 40:
        kind = kind % 3 if kind < 39 else 12
    store = push(draw(small)) + op("MSTORE")
    if kind <= 2:
        return draw(operand()) + draw(operand()) + op(draw(binary_ops)) + store
    if kind == 3:
        return (draw(operand()) + draw(operand()) + draw(operand())
                + op(draw(st.sampled_from(["ADDMOD", "MULMOD"]))) + store)
    if kind == 4:
        return push(draw(values)) + push(draw(small)) + op("MSTORE")
    if kind == 5:
        return push(draw(small)) + op("MLOAD") + push(draw(st.sampled_from(SLOTS))) + op("SSTORE")
    if kind == 6:
        return push(draw(values)) + push(draw(st.sampled_from(SLOTS))) + op("SSTORE")
    if kind == 7:
        return (push(draw(st.sampled_from(SLOTS))) + op("SLOAD") + push(draw(values))
                + op("ADD") + push(draw(st.sampled_from(SLOTS))) + op("TSTORE")
                + push(draw(st.sampled_from(SLOTS))) + op("TLOAD") + op("POP"))
    if kind == 8:
        n = draw(st.integers(0, 2))
        topics = b"".join(push(draw(values)) for _ in range(n))
        return topics + push(draw(small)) + push(draw(small)) + op(f"LOG{n}")
    if kind == 9:  # call the other contract, keep the success flag in memory
        call = draw(st.sampled_from(["CALL", "STATICCALL", "DELEGATECALL", "CALLCODE"]))
        args = push(32) + push(0) + push(draw(small)) + push(0)
        if call in ("CALL", "CALLCODE"):
            args += push(draw(st.sampled_from([0, 0, 1, 7])))
        gas = push(draw(st.sampled_from([0, 5000, 30000, 100000])))
        return args + push(B) + gas + op(call) + push(64) + op("MSTORE")
    if kind == 10:  # environment reads folded into memory
        reads = draw(st.lists(st.sampled_from([
            "ADDRESS", "CALLER", "CALLVALUE", "CALLDATASIZE", "CODESIZE", "GASPRICE",
            "RETURNDATASIZE", "MSIZE", "SELFBALANCE", "TIMESTAMP", "NUMBER", "CHAINID",
            "BASEFEE", "COINBASE", "GASLIMIT", "PREVRANDAO", "PC", "ORIGIN",
        ]), min_size=1, max_size=3))
        code = b""
        for name in reads:
            code += op(name) + push(draw(small)) + op("MSTORE")
        return code
    if kind == 11:
        return push(draw(small)) + op("CALLDATALOAD") + push(draw(small)) + op("MSTORE")
    return draw(st.binary(min_size=1, max_size=4))  # raw bytes: invalid opcodes, underflows


@st.composite
def program(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(snippet(), min_size=1, max_size=12))
    code = b"".join(parts)
    # Sometimes a conditional jump over the tail to a trailing JUMPDEST.
    if draw(st.booleans()):
        tail = draw(snippet())
        dest = len(code) + 3 + 1 + 1 + len(tail)  # push(cond)=2, PUSH2 dest=3, JUMPI=1
        code += push(draw(st.sampled_from([0, 1]))) + bytes([0x61]) + dest.to_bytes(2, "big")
        code += op("JUMPI") + tail + op("JUMPDEST")
    end = draw(st.sampled_from(["RETURN", "REVERT", "STOP", "NONE"]))
    if end in ("RETURN", "REVERT"):
        code += push(draw(st.integers(0, 128))) + push(draw(st.integers(0, 32))) + op(end)
    elif end == "STOP":
        code += op("STOP")
    return code


def run_secant(code_a: bytes, code_b: bytes, data: bytes, gas: int, value: int) -> tuple:
    state = WorldState()
    state.set_account(SENDER, balance=10**20)
    state.set_account(A, code=code_a, balance=10**6, storage={0: 5, 3: 9})
    state.set_account(B, code=code_b, balance=0, storage={1: 7})
    state.forget_history()
    env = BlockEnv(coinbase=0xC0FFEE, number=7, timestamp=1_700_000_000, gas_limit=30_000_000,
                   base_fee=3, prev_randao=0x1234, chain_id=1)
    txs = state.begin_transaction()
    txs.warm_addresses.update({SENDER, A})
    evm = Evm(state, env, CANCUN)
    evm.origin = SENDER
    evm.gas_price = 1
    result = evm.call(SENDER, A, data, gas, value)
    accounts = {}
    for address in (SENDER, A, B):
        acct = state.get(address)
        accounts[address] = (
            (acct.nonce, acct.balance, acct.code, {s: v for s, v in acct.storage.items()})
            if acct else (0, 0, b"", {})
        )
    logs = [(a, tuple(t), d) for a, t, d in txs.logs]
    refund = txs.refund if result.success else 0
    return (result.success, result.output, result.gas_left, refund, logs, accounts)


def run_pyevm(code_a: bytes, code_b: bytes, data: bytes, gas: int, value: int) -> tuple:
    runner = PyEvmRunner(
        [(SENDER, 0, 10**20, b"", {}), (A, 0, 10**6, code_a, {0: 5, 3: 9}),
         (B, 0, 0, code_b, {1: 7})],
        timestamp=1_700_000_000, number=7, coinbase=0xC0FFEE, base_fee=3, prev_randao=0x1234,
    )
    outcome = pyevm_message(runner, SENDER, A, data, gas, value, warm=(SENDER, A))
    accounts = {}
    for address in (SENDER, A, B):
        nonce, balance, code, storage = pyevm_account(runner, address, SLOTS)
        accounts[address] = (nonce, balance, code, storage)
    return (outcome.success, outcome.output, outcome.gas_left, outcome.refund, outcome.logs,
            accounts)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(code_a=program(), code_b=program(), data=st.binary(min_size=0, max_size=72),
       gas=st.sampled_from([30_000, 200_000, 1_000_000, 3_000_000]),
       value=st.sampled_from([0, 0, 3]))
def test_secant_matches_pyevm(code_a: bytes, code_b: bytes, data: bytes, gas: int,
                              value: int) -> None:
    ours = run_secant(code_a, code_b, data, gas, value)
    theirs = run_pyevm(code_a, code_b, data, gas, value)
    labels = ("success", "output", "gas left", "refund", "logs", "accounts")
    for label, x, y in zip(labels, ours, theirs):
        assert x == y, (
            f"{label} differs for A={code_a.hex()} B={code_b.hex()} data={data.hex()} "
            f"gas={gas} value={value}: secant {x!r} vs py-evm {y!r}"
        )
