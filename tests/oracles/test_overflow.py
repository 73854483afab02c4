"""The integer-overflow oracle: source types from the AST, wraps on the trace, kept values.

The campaigns over the fixtures are rows of tests/oracles/test_vulnerabilities.py; here
are the parts (the type of each operation, the wrap check, the label flow) and hand-written
cases that run the risky arithmetic of each safe look-alike and of each vulnerable one.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from secant.chain.chain import TestChain
from secant.compile import load
from secant.compile.arith_types import (
    arithmetic_ops,
    checks_arithmetic,
    wrapped,
    wrapping_sites,
)
from secant.evm.opcodes import (
    ADD,
    CALL,
    DUP2,
    EXP,
    GAS,
    MLOAD,
    MSTORE,
    MUL,
    PUSH1,
    SDIV,
    SSTORE,
    SUB,
)
from secant.oracles import flows, registry
from secant.oracles.overflow import OverflowOracle, number
from secant.targets.contract import ContractTarget
from secant.targets.taint import OVERFLOW, WRAP_BITS, Dataflow
from secant.targets.trace import dataflow_of, wraps_of
from secant.targets.wraps import BlockPlan
from secant.types import Finding, Tx
from tests.compile.conftest import needs_node
from tests.oracles.test_vulnerabilities import FIXTURES, Case, chain_of, compiled

WORD = 1 << 256
OVERFLOW_ORACLE = "integer-overflow"
Step = tuple[str, str, tuple[object, ...]]


def case(file: str, contract: str) -> Case:
    return Case(f"overflow/{file}", contract, OVERFLOW_ORACLE)


def run(chain: TestChain, steps: list[Step]) -> tuple[list[Finding], Dataflow, list[bool]]:
    """The oracle's findings on one hand-written case, its dataflow records, the outcomes.

    The target records ``dataflow`` itself, so the oracle judges its records directly; it
    also records ``arithmetic``, whose wraps, judged at each block's entry, must be the
    dataflow recording's at the sites the oracle watches (a site that only decides a
    branch is not watched there: it can never be reported).
    """
    [oracle] = registry.build(chain, [OVERFLOW_ORACLE])
    target = ContractTarget(chain, oracle.needs | {"dataflow", "arithmetic", "panics"})
    txs = tuple(Tx(function, named(chain, args), chain.sender(sender).address)
                for sender, function, args in steps)
    result = target.run(txs)
    flow = dataflow_of(result, target)
    seen = wraps_of(result, target)
    assert flow is not None and seen is not None
    assert all(surely for _, _, _, surely in seen)  # every operand was known
    assert isinstance(oracle, OverflowOracle)
    assert {(tx, code, pc) for tx, code, pc, _ in seen} == {
        (wrap.tx, wrap.code_hash, wrap.pc) for wrap in flow.wraps
        if (wrap.code_hash, wrap.pc) in oracle.watched}
    return oracle.check(result, target), flow, [o.success for o in result.outcomes]


def named(chain: TestChain, value: Any) -> Any:
    """Arguments with the senders' names (``"user1"``) replaced by their addresses."""
    if isinstance(value, str):
        return chain.sender(value).address
    if isinstance(value, tuple):
        return tuple(named(chain, item) for item in value)
    return value


def fixture(file: str, contract: str, steps: list[Step]
            ) -> tuple[list[Finding], Dataflow, list[bool]]:
    return run(chain_of(case(file, contract)), steps)


def line(file: str, marker: str) -> str:
    lines = (FIXTURES / "overflow" / file).read_text().splitlines()
    return f"{file}:{next(i + 1 for i, text in enumerate(lines) if marker in text)}"


# ---------------------------------------------------------------------- the wrap check
def test_a_wrap_is_judged_at_the_width_of_the_source_type() -> None:
    # Unsigned: the true result outside 0 .. 2**bits - 1.
    assert wrapped(ADD, 256, False, WORD - 1, 2) == WORD + 1
    assert wrapped(ADD, 256, False, WORD - 2, 1) is None
    assert wrapped(SUB, 256, False, 0, 5) == -5  # a is the top of the stack: a - b
    assert wrapped(SUB, 256, False, 5, 0) is None
    assert wrapped(MUL, 256, False, 2, 1 << 255) == WORD
    # uint8 wraps at 256 although the EVM's ADD does not.
    assert wrapped(ADD, 8, False, 200, 100) == 300
    assert wrapped(ADD, 8, False, 200, 55) is None
    assert wrapped(MUL, 8, False, 86, 3) == 258
    # Operands are read at the type's width: dirty high bits (solc < 0.8 cleans lazily)
    # count as the value solc's cleanup would give.
    assert wrapped(ADD, 8, False, 0x1_00 + 5, 3) is None
    # Signed: two's complement at the width, both ends.
    assert wrapped(MUL, 8, True, 43, 3) == 129
    assert wrapped(MUL, 8, True, (-43) % WORD, 3) == -129
    assert wrapped(MUL, 8, True, (-42) % WORD, 3) is None
    assert wrapped(SUB, 8, True, 0, (-128) % WORD) == 128  # -(-128)
    assert wrapped(SDIV, 8, True, (-128) % WORD, WORD - 1) == 128
    assert wrapped(SDIV, 8, True, (-128) % WORD, 2) is None
    assert wrapped(SDIV, 256, True, 1 << 255, WORD - 1) == 1 << 255
    assert wrapped(SDIV, 8, True, 5, 0) is None
    # Powers: the exponent is used whole.
    assert wrapped(EXP, 8, False, 2, 8) == 256
    assert wrapped(EXP, 8, False, 2, 7) is None
    assert wrapped(EXP, 8, True, (-5) % WORD, 3) is None  # -125
    assert wrapped(EXP, 8, True, (-2) % WORD, 7) is None  # -128
    assert wrapped(EXP, 8, True, 2, 7) == 128
    assert wrapped(EXP, 256, False, 1, WORD - 1) is None
    assert wrapped(EXP, 256, False, 3, WORD - 1) == 1 << (1 << 16)  # too large to compute


def test_numbers_are_written_as_people_read_them() -> None:
    assert number(258) == "258" and number(-5) == "-5"
    assert number(WORD - 5) == "2**256 - 5"
    assert number(WORD + 1) == "2**256 + 1"
    assert number(1 << 255) == "2**255"
    assert number(-(1 << 255)) == "-2**255"
    assert number(-(1 << 255) - 1) == "-(2**255 + 1)"
    assert number(0x71D3 << 240) == "0x" + format(0x71D3 << 240, "x")


def test_checked_arithmetic_comes_with_solc_0_8() -> None:
    assert not checks_arithmetic("solc 0.4.26") and not checks_arithmetic("solc 0.7.6")
    assert checks_arithmetic("solc 0.8.0") and checks_arithmetic("0.8.26+commit.8a97fa7a")
    assert checks_arithmetic("vyper 0.4.0") and checks_arithmetic("")


# ---------------------------------------------------------------------- types from the AST
def _node(kind: str, operator: str, type_string: str, src: str,
          **extra: Any) -> dict[str, Any]:
    return {"nodeType": kind, "operator": operator, "src": src,
            "typeDescriptions": {"typeString": type_string}, **extra}


def test_each_arithmetic_operation_gets_its_type_and_unchecked_block() -> None:
    ast = {"nodeType": "SourceUnit", "src": "0:500:0", "nodes": [
        _node("BinaryOperation", "+", "uint8", "10:5:0"),
        _node("BinaryOperation", "<", "bool", "20:5:0"),  # a comparison
        _node("BinaryOperation", "+", "int_const 3", "30:5:0"),  # a constant
        _node("BinaryOperation", "/", "uint256", "40:5:0"),  # unsigned: never overflows
        _node("BinaryOperation", "/", "int128", "50:5:0"),
        _node("BinaryOperation", "<<", "uint256", "60:5:0"),  # shifts drop bits by design
        {"nodeType": "UncheckedBlock", "src": "100:90:0", "statements": [
            _node("Assignment", "+=", "uint256", "110:9:0"),
            _node("Assignment", "=", "uint256", "120:9:0"),
            _node("UnaryOperation", "++", "uint64", "130:3:0", prefix=True),
            _node("UnaryOperation", "-", "int8", "140:2:0"),
            _node("UnaryOperation", "-", "uint256", "150:2:0"),  # solc < 0.5's wrap on purpose
            _node("BinaryOperation", "**", "uint256", "160:6:0"),
        ]},
        _node("Assignment", "*=", "uint", "200:9:1"),
    ]}
    found = [(op.start, op.opcode, op.type_name, op.unchecked, op.name)
             for op in arithmetic_ops(ast)]
    assert found == [
        (10, ADD, "uint8", False, "addition"),
        (50, SDIV, "int128", False, "division"),
        (110, ADD, "uint256", True, "addition"),
        (130, ADD, "uint64", True, "increment"),
        (140, SUB, "int8", True, "negation"),
        (160, EXP, "uint256", True, "exponentiation"),
        (200, MUL, "uint256", False, "multiplication"),
    ]
    # solc's legacy AST (before the compact form) says the same with attributes.
    legacy = {"name": "SourceUnit", "src": "0:50:0", "children": [
        {"name": "BinaryOperation", "src": "5:5:0",
         "attributes": {"operator": "-", "type": "uint16"}, "children": []}]}
    [op] = arithmetic_ops(legacy)
    assert (op.start, op.opcode, op.type_name, op.unchecked) == (5, SUB, "uint16", False)


@needs_node
def test_sites_are_the_instructions_that_compute_the_operations() -> None:
    # solc 0.4: every operation, the require's subtraction included.
    [legacy] = compiled("overflow/LegacyToken.sol")
    token = legacy.contract("LegacyToken")
    sites = wrapping_sites(legacy, token)
    code = token.runtime.to_bytes()
    assert sorted((code[pc], site.op.operator) for pc, site in sites.items()) == sorted(
        [(SUB, "-"), (SUB, "-="), (ADD, "+=")])
    # solc 0.8: only what `unchecked` holds (the checked `totalSupply += value` is not).
    [checked] = compiled("overflow/CheckedToken.sol")
    ops = sorted(site.op.operator for site in wrapping_sites(
        checked, checked.contract("CheckedToken")).values())
    assert ops == ["++", "+=", "+=", "+=", "-", "-="]
    # Without an AST there is no type, and no site.
    bare = dataclasses.replace(legacy, sources={
        i: dataclasses.replace(s, ast=None) for i, s in legacy.sources.items()})
    assert wrapping_sites(bare, bare.contract("LegacyToken")) == {}


PACKED = """pragma solidity 0.7.6;

contract Packed {
    uint8 public first;
    uint8 public second; // shares slot 0 with `first`, one byte up

    function set(uint8 value) external {
        second = value;
    }

    function add(uint8 value) external {
        second += value;
    }
}
"""


@needs_node
def test_a_packed_variable_s_arithmetic_is_told_from_its_packing(tmp_path: Path) -> None:
    # `second += value` maps the ADD and the MULs that shift the byte into place to the
    # same range: only the ADD, the first of its copy, is the operation.
    source = tmp_path / "Packed.sol"
    source.write_text(PACKED)
    [compilation] = load([source])
    contract = compilation.contract("Packed")
    code = contract.runtime.to_bytes()
    assert [code[pc] for pc in wrapping_sites(compilation, contract)] == [ADD]
    chain = TestChain.setup([compilation], contract="Packed")
    findings, flow, _ = run(chain, [("attacker1", "set(uint8)", (200,)),
                                    ("attacker1", "add(uint8)", (55,))])
    assert findings == [] and flow.wraps == []
    [finding], _, _ = run(chain, [("attacker1", "set(uint8)", (200,)),
                                  ("attacker1", "add(uint8)", (56,))])
    assert "200 + 56 = 256, which does not fit in uint8 (0 to 255), so it wrapped to 0" in (
        finding.detail)


# ---------------------------------------------------------------------- block entry
def test_a_block_s_sites_are_judged_from_its_entry_without_running_it() -> None:
    # PUSH1 100, ADD (uint8) on the entry stack's top, then GAS, ADD (the same site type).
    plan = BlockPlan(((0, PUSH1, 100), (2, ADD, 0), (3, GAS, 0), (4, ADD, 0)),
                     {2: (ADD, 8, False), 4: (ADD, 8, False)})
    frame = SimpleNamespace(stack=[7, 200], memory=bytearray())
    assert plan.evaluate(frame) == [(2, True), (4, False)]  # 300; GAS is not known
    assert frame.stack == [7, 200]  # the frame is left as it was
    frame.stack = [7, 155]
    assert plan.evaluate(frame) == [(4, False)]  # 255 fits
    # Memory and hashing on a copy: a mapping slot written then read back.
    code = ((0, PUSH1, 0x40), (2, PUSH1, 0), (4, MSTORE, 0), (5, PUSH1, 0), (7, MLOAD, 0),
            (8, DUP2, 0), (9, SUB, 0))
    plan = BlockPlan(code, {9: (SUB, 256, False)})
    frame = SimpleNamespace(stack=[0x3F], memory=bytearray(64))
    assert plan.evaluate(frame) == [(9, True)] and frame.memory == bytearray(64)  # 63 - 64
    frame.stack = [0x40]
    assert plan.evaluate(frame) == []  # 64 - 64
    # An entry stack too short for the block: it would underflow, nothing is judged.
    assert BlockPlan(((0, ADD, 0),), {0: (ADD, 8, False)}).evaluate(
        SimpleNamespace(stack=[1], memory=bytearray())) == []


# ---------------------------------------------------------------------- vulnerable ones
@needs_node
def test_an_underflow_kept_in_storage_is_certain() -> None:
    findings, flow, ok = fixture("LegacyToken.sol", "LegacyToken",
                                 [("attacker1", "transfer(address,uint256)", ("user1", 5))])
    [finding] = findings
    assert ok == [True] and finding.swc == "SWC-101" and finding.kind == OVERFLOW_ORACLE
    assert finding.source is not None and finding.source.endswith(
        line("LegacyToken.sol", "balanceOf[msg.sender] -= value;"))
    assert ("ran the subtraction `balanceOf[msg.sender] -= value` at" in finding.detail
            and "on uint256 (solc 0.4.26 does not check arithmetic): 0 - 5 = -5, which does "
            "not fit in uint256 (0 to 2**256 - 1), so it wrapped to 2**256 - 5" in finding.detail
            and "The wrapped value was written to storage slot" in finding.detail)
    assert "Severity high, confidence certain: attacker1" in finding.detail
    # The require's own subtraction wrapped first, but reached only its comparison.
    assert len(flow.wraps) == 2 and finding.pc == flow.wraps[1].pc
    stored = [s for s in flow.sinks if s.opcode == SSTORE and s.value_labels & OVERFLOW]
    assert len(stored) == 1 and stored[0].value_labels & WRAP_BITS == flow.wraps[1].bit


@needs_node
def test_the_deployer_s_wrap_is_only_likely_and_an_attacker_s_is_reported_again() -> None:
    chain = chain_of(case("LegacyToken.sol", "LegacyToken"))
    [oracle] = registry.build(chain, [OVERFLOW_ORACLE])
    assert isinstance(oracle, OverflowOracle)
    target = ContractTarget(chain, oracle.needs | {"panics"})
    user = chain.sender("user1").address

    def judged(sender: str, value: int) -> list[Finding]:
        tx = Tx("transfer(address,uint256)", (user, value), chain.sender(sender).address)
        return oracle.check(target.run((tx,)), target)

    [likely] = judged("deployer", 10**7)  # more than the deployer's million
    assert "confidence likely: deployer" in likely.detail
    assert judged("deployer", 10**8) == []  # the same site, as surely: known
    [certain] = judged("attacker2", 1)
    assert "confidence certain" in certain.detail and certain.key != likely.key
    # The rating is the findings' own, not only their prose (the reports read it).
    assert (likely.confidence, certain.confidence) == ("likely", "certain")
    assert certain.key[:3] == likely.key[:3]
    assert judged("attacker1", 1) == []


@needs_node
def test_small_and_signed_types_wrap_at_their_own_width() -> None:
    [finding], _, ok = fixture("TicketOffice.sol", "TicketOffice",
                               [("attacker1", "register()", ()),
                                ("attacker1", "buy(uint8)", (86,))])
    assert ok == [True, True]
    assert ("ran the multiplication `count * PRICE`" in finding.detail
            and "on uint8 (solc 0.5.17 does not check arithmetic): 86 * 3 = 258, which does "
            "not fit in uint8 (0 to 255), so it wrapped to 2." in finding.detail)
    assert "transaction 2 of 2" in finding.detail and len(finding.case or ()) == 2
    # 85 tickets cost 255 credits, more than the 100 given: refused, no wrap kept.
    findings, flow, ok = fixture("TicketOffice.sol", "TicketOffice",
                                 [("attacker1", "register()", ()),
                                  ("attacker1", "buy(uint8)", (85,))])
    assert findings == [] and flow.wraps == [] and ok == [True, False]
    [finding], _, _ = fixture("ReviewLedger.sol", "ReviewLedger",
                              [("attacker1", "review(uint256,int8)", (7, -43))])
    assert ("on int8 (solc 0.7.6 does not check arithmetic): -43 * 3 = -129, which does not "
            "fit in int8 (-128 to 127), so it wrapped to 127." in finding.detail)
    findings, _, _ = fixture("ReviewLedger.sol", "ReviewLedger",
                             [("attacker1", "review(uint256,int8)", (7, 42))])
    assert findings == []


@needs_node
def test_an_unchecked_multiplication_in_0_8_is_bec_s_bug() -> None:
    token = "BatchToken.sol"
    batch = "batchTransfer(address[],uint256)"
    [finding], _, ok = fixture(token, "BatchToken",
                               [("attacker1", batch, (("user1", "user2"), 1 << 255))])
    assert ok == [True]
    assert ("`count * value`" in finding.detail and "(inside an `unchecked` block): "
            "2 * 2**255 = 2**256, which does not fit in uint256 (0 to 2**256 - 1), so it "
            "wrapped to 0" in finding.detail)
    assert finding.source is not None and finding.source.endswith(line(token, "count * value"))
    # Outside `unchecked` the same contract's arithmetic reverts (Panic 0x11): no wrap.
    findings, flow, ok = fixture(token, "BatchToken",
                                 [("attacker1", "transfer(address,uint256)", ("user1", 1))])
    assert findings == [] and flow.wraps == [] and ok == [False]


PAYOUT = """pragma solidity 0.5.17;

contract Payout {
    constructor() public payable {}

    function pay(uint8 bonus) external {
        uint8 amount = bonus + 200;
        msg.sender.transfer(amount);
    }
}
"""


@needs_node
def test_a_wrapped_amount_sent_away_is_a_finding(tmp_path: Path) -> None:
    source = tmp_path / "Payout.sol"
    source.write_text(PAYOUT)
    chain = TestChain.setup(load([source]), contract="Payout", value=1000)
    [finding], flow, ok = run(chain, [("attacker1", "pay(uint8)", (100,))])
    assert ok == [True]
    [paid] = [s for s in flow.sinks if s.opcode == CALL]
    assert paid.value == 44 and paid.value_labels & OVERFLOW
    assert "went into the amount of a CALL" in finding.detail
    assert "(44 wei sent to attacker1)" in finding.detail
    findings, _, _ = run(chain, [("attacker1", "pay(uint8)", (55,))])
    assert findings == []


# ---------------------------------------------------------------------- safe look-alikes
@needs_node
def test_safemath_s_wraps_revert_and_are_no_finding() -> None:
    findings, flow, ok = fixture("SafeMathToken.sol", "SafeMathToken", [
        ("attacker1", "mint(uint256)", (WORD - 1,)),
        ("attacker1", "mint(uint256)", (2,)),  # totalSupply.add wraps: require(c >= a)
        ("attacker1", "batchTransfer(address[],uint256)", (("user1", "user2"), 1 << 255)),
        ("attacker1", "transfer(address,uint256)", ("user1", WORD - 1)),
    ])
    assert findings == [] and ok == [True, False, False, True]
    assert {wrap.tx for wrap in flow.wraps} == {1, 2}  # the add and the mul wrapped


@needs_node
def test_a_wrap_that_only_reaches_a_comparison_is_no_finding() -> None:
    findings, flow, ok = fixture("GuardedSums.sol", "GuardedSums", [
        ("attacker1", "deposit(uint256)", (WORD - 1,)),
        ("attacker1", "deposit(uint256)", (5,)),  # `total + amount >= total` wraps
        ("attacker1", "schedule(uint256)", (WORD - 1,)),  # wraps, and is clamped
        ("attacker1", "withdraw(uint256)", (WORD - 1,)),
    ])
    assert findings == [] and ok == [True, False, True, True]
    assert [wrap.tx for wrap in flow.wraps] == [1, 2]
    # schedule's sum wrapped in a successful transaction; the value kept is the clamp.
    [due] = [s for s in flow.sinks if s.opcode == SSTORE and s.tx == 2]
    assert due.value == WORD - 1 and not due.value_labels & OVERFLOW


@pytest.mark.parametrize(("file", "contract", "steps"), [
    ("BoundedCounter.sol", "BoundedCounter", [
        ("attacker1", "book(uint8)", (200,)), ("attacker1", "book(uint8)", (1,)),
        ("attacker1", "cancel(uint8)", (200,)), ("attacker2", "cancel(uint8)", (1,))]),
    ("CheckedToken.sol", "CheckedToken", [
        ("attacker1", "mint(uint256)", (WORD - 1,)), ("attacker2", "mint(uint256)", (1,)),
        ("attacker1", "transfer(address,uint256)", ("attacker2", WORD - 1)),
        ("attacker2", "transfer(address,uint256)", ("user1", 1)),
        ("attacker1", "batchTransfer(address[],uint256)", (("user1", "user2"), 1 << 255))]),
], ids=["BoundedCounter", "CheckedToken"])
@needs_node
def test_arithmetic_that_cannot_wrap_never_does(file: str, contract: str,
                                                steps: list[Step]) -> None:
    findings, flow, ok = fixture(file, contract, steps)
    assert findings == [] and flow.wraps == []
    assert ok.count(True) >= 2  # the unchecked arithmetic did run


@needs_node
def test_the_campaign_s_runs_are_replayed_only_when_a_site_wrapped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    chain = chain_of(case("LegacyToken.sol", "LegacyToken"))
    [oracle] = registry.build(chain, [OVERFLOW_ORACLE])
    assert isinstance(oracle, OverflowOracle)
    # Lazy: the campaign's runs are traced, not stepped; wraps are seen at block entry.
    assert oracle.needs == frozenset({"arithmetic"})
    target = ContractTarget(chain, oracle.needs | {"panics"})
    assert not target.recorder.wants_steps
    replays: list[object] = []
    replay = flows.replayed
    monkeypatch.setattr(flows, "replayed",
                        lambda result, post: replays.append(result) or replay(result, post))
    attacker, user = chain.sender("attacker1").address, chain.sender("user1").address
    owner = chain.deployer.address

    def check(sender: int, to: int, value: int, ether: int = 0) -> list[Finding]:
        tx = Tx("transfer(address,uint256)", (to, value), sender, ether)
        return oracle.check(target.run((tx,)), target)

    assert check(owner, user, 5) == [] and replays == []  # nothing wrapped
    assert check(attacker, user, 1, ether=5) == [] and replays == []  # failed: not payable
    assert len(check(attacker, user, 1)) == 1 and len(replays) == 1
    # The site of the finding is reported; the require's subtraction still wraps, but its
    # value only decides a branch, so it never makes a run worth a replay (the memory of
    # runs judged clean: tests/oracles/test_oracle_cost.py).
    assert len(oracle.reported) == 1
    assert check(attacker, user, 2) == [] and len(replays) == 1
    assert check(attacker, owner, 3) == [] and len(replays) == 1
    # Sending to oneself the wrapped balance wraps the addition too: 2**256 - 1 + 1.
    [addition] = check(attacker, attacker, 1)
    assert len(replays) == 2
    assert "ran the addition `balanceOf[to] += value`" in addition.detail
    assert "2**256 - 1 + 1 = 2**256" in addition.detail


@needs_node
def test_code_without_silent_arithmetic_costs_nothing() -> None:
    # solc 0.8 without `unchecked`: no site, no recording, no replay.
    chain = chain_of(Case("leaking/OwnerWithdraw.sol", "Treasury", OVERFLOW_ORACLE))
    [oracle] = registry.build(chain, [OVERFLOW_ORACLE])
    assert oracle.needs == frozenset()


@needs_node
def test_the_arithmetic_recording_resumes_from_the_prefix_cache() -> None:
    # Cached prefixes restore what the recording saw in their transactions: runs resumed
    # from the cache have the same wraps as runs from the start.
    from tests.targets.test_prefix_cache import containers, equivalence

    legacy = case("LegacyToken.sol", "LegacyToken")
    chain_a, chain_b = chain_of(legacy), chain_of(legacy)
    registry.build(chain_a, [OVERFLOW_ORACLE])  # watches the token's arithmetic
    attacker, user = chain_a.sender("attacker1").address, chain_a.sender("user1").address
    extra = [Tx("transfer(address,uint256)", (user, 5), attacker),
             Tx("transfer(address,uint256)", (attacker, 1), attacker)]
    recordings = frozenset({"arithmetic", "calls"})
    equivalence(chain_a, chain_b, 0, 200, recordings=recordings, extra=extra)
    target = ContractTarget(chain_a, recordings)
    target.run(tuple(extra))
    # `-=` wraps in the first (and the require's subtraction, which only decides a branch
    # and is not watched); the second sends 1 of 2**256 - 5.
    seen = containers(target.recorder)["wrapped"]
    assert [(tx, surely) for tx, _, _, surely in seen] == [(0, True)]
