"""ILF's per-function features (Table 2): regions, opcode counts, names, endings, rows."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import pytest

from secant.abi import PANIC_SELECTOR, encode, function_selector, keccak256
from secant.chain.chain import TestChain
from secant.compile import Compilation, CompiledContract, CompileOptions, load
from secant.engine.mutators import FunctionSpec
from secant.engine.values import VType, vtype
from secant.evm.analysis import analyze
from secant.evm.forks import DEFAULT_FORK
from secant.evm.opcodes import BY_NAME, OPS
from secant.learn.features import (
    FEATURE_NAMES,
    FEATURE_OPCODES,
    OPCODE_NAMES,
    FunctionInfo,
    Step,
    code_sizes,
    ended_as,
    feature_matrix,
    function_infos,
    split_name,
)
from secant.targets.contract import ContractRun, ContractTarget
from secant.types import Tx, TxOutcome
from tests.compile.conftest import needs_node

VAULT = """\
// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

interface IOracle {
    function price() external view returns (uint256);
}

contract Vault {
    event Deposited(address indexed who, uint256 amount);

    mapping(address => uint256) private balances;
    uint256 private total;
    address private oracle;

    function deposit(uint256 amount) external payable {
        balances[msg.sender] += amount;
        total += amount;
        emit Deposited(msg.sender, amount);
    }

    function balanceOfOwner(address who) external view returns (uint256) {
        return balances[who];
    }

    function quote(uint256 amount) external view returns (uint256) {
        return amount * IOracle(oracle).price();
    }

    function pay(address payable to, uint256 amount) external {
        (bool ok, ) = to.call{value: amount}("");
        require(ok, "transfer failed");
    }

    function setOracle(address newOracle) external {
        oracle = newOracle;
    }

    function mustBeSmall(uint8 x) external pure returns (uint8) {
        assert(x < 200);
        return x;
    }

    function inc(uint8 x) external pure returns (uint8) {
        return x + 1;
    }
}
"""

OLD = """\
pragma solidity 0.4.26;

contract Old {
    uint256 total;

    function add(uint256 x) public {
        total += x;
        assert(total >= x);
    }

    function get() public view returns (uint256) {
        return total;
    }

    function check(uint256 x) public pure {
        assert(x != 7);
    }
}
"""

SETTINGS = {
    "0.8 legacy": (VAULT, "Vault", CompileOptions(optimize=False)),
    "0.8 legacy optimized": (VAULT, "Vault", CompileOptions(optimize=True)),
    "0.8 via-IR": (VAULT, "Vault", CompileOptions(optimize=False, via_ir=True)),
    "0.8 via-IR optimized": (VAULT, "Vault", CompileOptions(optimize=True, via_ir=True)),
    "0.4 legacy": (OLD, "Old", CompileOptions(optimize=False)),
}


@functools.cache
def compiled(setting: str, folder: Path) -> tuple[Compilation, CompiledContract]:
    source, name, options = SETTINGS[setting]
    path = folder / f"{name}.sol"
    if not path.exists():
        path.write_text(source, encoding="utf-8")
    compilation = load([path], options)[0]
    return compilation, compilation.contract(name)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("features")


def specs_of(contract: CompiledContract) -> list[FunctionSpec]:
    return [FunctionSpec(f.signature, None, tuple(vtype(p) for p in f.inputs), f.payable)
            for f in contract.abi.functions]


def infos_of(setting: str, folder: Path) -> tuple[TestChain, bytes, dict[str, FunctionInfo]]:
    """The deployed chain, the main contract's code hash and its functions' infos."""
    compilation, contract = compiled(setting, folder)
    chain = TestChain.setup(compilation, contract=contract.name)
    assert chain.main is not None
    code = chain.code_at(chain.main.address)
    code_hash = keccak256(code)
    infos = function_infos(specs_of(contract), {None: (code_hash, code)}, DEFAULT_FORK)
    return chain, code_hash, {info.signature: info for info in infos}


def count(info: FunctionInfo, *names: str) -> int:
    return sum(info.opcodes[OPCODE_NAMES.index(name)] for name in names)


# The opcode list ---------------------------------------------------------------------------

def test_the_feature_opcodes_are_fifty_distinct_distinctive_opcodes() -> None:
    assert len(FEATURE_OPCODES) == 50 == len(set(FEATURE_OPCODES))
    assert OPCODE_NAMES == tuple(OPS[op].name for op in FEATURE_OPCODES)
    excluded = {"ADD", "MUL", "SUB", "DIV", "EXP", "LT", "GT", "EQ", "ISZERO", "AND", "OR",
                "XOR", "NOT", "SHL", "SHR", "SAR", "BYTE", "POP", "MLOAD", "MSTORE",
                "MSTORE8", "JUMP", "JUMPI", "JUMPDEST", "STOP", "PC"}
    assert not excluded & set(OPCODE_NAMES)
    assert not any(name.startswith(("PUSH", "DUP", "SWAP")) for name in OPCODE_NAMES)
    for name in ("SSTORE", "SLOAD", "CALL", "STATICCALL", "DELEGATECALL", "LOG0", "LOG4",
                 "KECCAK256", "INVALID", "REVERT", "SELFDESTRUCT", "TIMESTAMP"):
        assert BY_NAME[name] in FEATURE_OPCODES


def test_feature_names_are_thirteen_columns_then_one_per_opcode() -> None:
    assert len(FEATURE_NAMES) == 13 + 50 == len(set(FEATURE_NAMES))
    assert FEATURE_NAMES[:2] == ("revert_last", "revert_fraction")
    assert FEATURE_NAMES[11:13] == ("arguments", "address_arguments")
    assert FEATURE_NAMES[13:] == tuple("op_" + name for name in OPCODE_NAMES)


# Names -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "tokens"), [
    ("getOwnerBalance2", ("get", "owner", "balance", "2")),
    ("ERC20Transfer", ("erc", "20", "transfer")),
    ("_mint", ("mint",)),
    ("transferFrom", ("transfer", "from")),
    ("set_fee_rate", ("set", "fee", "rate")),
    ("getHTTPResponse", ("get", "http", "response")),
    ("withdrawAll__", ("withdraw", "all")),
    ("OWNER", ("owner",)),
    ("fallback", ("fallback",)),
])
def test_names_split_into_lower_case_sub_tokens(name: str, tokens: tuple[str, ...]) -> None:
    assert split_name(name) == tokens


# Endings -----------------------------------------------------------------------------------

def panic(code: int) -> bytes:
    return PANIC_SELECTOR + code.to_bytes(32, "big")


@pytest.mark.parametrize(("outcome", "ended"), [
    (TxOutcome(True, False, b"", 21000), "return"),
    (TxOutcome(True, False, encode(["uint256"], [1]), 21000), "return"),
    (TxOutcome(False, True, b"", 21000), "revert"),
    (TxOutcome(False, True, bytes.fromhex("08c379a0") + encode(["string"], ["no"]), 0),
     "revert"),
    (TxOutcome(False, True, panic(0x01), 21000), "assert"),
    (TxOutcome(False, True, panic(0x11), 21000), "revert"),
    (TxOutcome(False, True, panic(0x01) + b"\x00", 21000), "revert"),
    (TxOutcome(False, False, b"", 30000, "invalid opcode"), "assert"),
    (TxOutcome(False, False, b"", 30000, "out of gas"), "revert"),
    (TxOutcome(False, False, b"", 30000, "invalid jump destination"), "revert"),
    (TxOutcome(False, False, b"", 0, "sender balance too low", invalid=True), "revert"),
])
def test_ended_as(outcome: TxOutcome, ended: str) -> None:
    assert ended_as(outcome) == ended


# Regions of compiled contracts -------------------------------------------------------------

@needs_node
@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.startswith("0.8")])
def test_every_function_of_a_compiled_contract_gets_a_region(setting: str,
                                                             folder: Path) -> None:
    _, code_hash, infos = infos_of(setting, folder)
    assert set(infos) == {"deposit(uint256)", "balanceOfOwner(address)", "quote(uint256)",
                          "pay(address,uint256)", "setOracle(address)", "mustBeSmall(uint8)",
                          "inc(uint8)"}
    for info in infos.values():
        assert info.blocks and info.instructions >= len(info.blocks), info.signature
        assert info.code_hash == code_hash
        assert sum(info.code_blocks[pc] for pc in info.blocks) == info.instructions
    # No region takes in all the others (the dispatcher, which leads to all, is in none).
    everything = frozenset().union(*(info.blocks for info in infos.values()))
    assert all(info.blocks < everything for info in infos.values())


@needs_node
@pytest.mark.parametrize("setting", [s for s in SETTINGS if s.startswith("0.8")])
def test_opcode_counts_tell_writers_readers_and_callers_apart(setting: str,
                                                             folder: Path) -> None:
    _, _, infos = infos_of(setting, folder)
    deposit, getter = infos["deposit(uint256)"], infos["balanceOfOwner(address)"]
    assert count(deposit, "SSTORE") > 0 and count(deposit, "LOG2") > 0
    assert count(deposit, "CALLER") > 0
    assert count(getter, "SLOAD") > 0
    assert count(getter, "SSTORE", "LOG0", "LOG1", "LOG2", "LOG3", "LOG4") == 0
    assert count(infos["setOracle(address)"], "SSTORE") > 0
    assert count(infos["quote(uint256)"], "STATICCALL") > 0
    assert count(infos["pay(address,uint256)"], "CALL") > 0
    for pure in ("mustBeSmall(uint8)", "inc(uint8)"):
        assert count(infos[pure], "SSTORE", "SLOAD", "CALL", "STATICCALL", "LOG2") == 0
    for signature in infos:
        if signature not in ("quote(uint256)", "pay(address,uint256)"):
            assert count(infos[signature], "CALL", "STATICCALL") == 0, signature


@needs_node
def test_solc_0_4_asserts_are_invalid_opcodes_in_the_region(folder: Path) -> None:
    _, _, infos = infos_of("0.4 legacy", folder)
    add, get = infos["add(uint256)"], infos["get()"]
    assert count(add, "SSTORE") > 0 and count(add, "INVALID") > 0
    assert count(get, "SLOAD") > 0 and count(get, "SSTORE", "INVALID") == 0
    assert count(infos["check(uint256)"], "INVALID") > 0


def run(chain: TestChain, *txs: Tx) -> ContractRun:
    return ContractTarget(chain, frozenset({"transitions"})).run(txs)


def assert_regions_hold_runs(chain: TestChain, code_hash: bytes,
                             infos: dict[str, FunctionInfo]) -> None:
    """Call every function; the blocks a call runs from its region on stay in the region.

    The transitions the call took, followed from the region's blocks that ran, reach only
    region blocks (the dispatcher blocks before the entry are not reached that way).
    """
    user = chain.senders[0].address
    arguments = {"address": user, "uint256": 3, "uint8": 5}
    for info in infos.values():
        types = info.signature[info.signature.index("(") + 1:-1]
        args = tuple(arguments[t] for t in types.split(",") if t)
        result = run(chain, Tx(info.signature, args, user))
        moves: dict[int, set[int]] = {}
        for owner, source, target in result.transitions:
            if owner == code_hash:
                moves.setdefault(source, set()).add(target)
        ran = {pc for pc in info.blocks if (code_hash, pc) in result.blocks}
        assert len(ran) >= 2, info.signature
        todo = list(ran)
        while todo:
            for target in moves.get(todo.pop(), ()):
                if target not in ran:
                    ran.add(target)
                    todo.append(target)
        assert ran <= info.blocks, (info.signature, sorted(ran - info.blocks))


@needs_node
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_a_region_holds_every_block_its_function_runs_after_the_entry(setting: str,
                                                                      folder: Path) -> None:
    chain, code_hash, infos = infos_of(setting, folder)
    assert_regions_hold_runs(chain, code_hash, infos)


MANY = "pragma solidity 0.8.26;\ncontract Many {\n    mapping(uint256 => uint256) s;\n" + "".join(
    f"    function f{i}(uint256 x) external {{ s[{i}] = x + {i}; }}\n" for i in range(14)
) + "    function g(address a) external view returns (uint256) { return a.balance; }\n}\n"


@needs_node
@pytest.mark.parametrize(("options", "splits"), [
    (CompileOptions(optimize=True), True),
    (CompileOptions(optimize=True, via_ir=True), False),
], ids=["legacy", "via-IR"])
def test_a_dispatcher_split_by_binary_search_still_finds_every_entry(
        options: CompileOptions, splits: bool, tmp_path: Path) -> None:
    path = tmp_path / "Many.sol"
    path.write_text(MANY, encoding="utf-8")
    contract = load([path], options)[0].contract("Many")
    code = bytes.fromhex(contract.runtime.hex)
    flat = analyze(code, keccak256(code), DEFAULT_FORK).instructions
    pivots = {value for (_, op1, value), (_, op2, _) in zip(flat, flat[1:])
              if op1 == op("PUSH4") and op2 == op("GT")}
    specs = specs_of(contract)
    # Legacy's optimizer splits the dispatcher (a GT on a pivot selector); via-IR does not.
    assert bool(pivots & {selector(s.signature) for s in specs}) == splits
    infos = function_infos(specs, {None: (keccak256(code), code)}, DEFAULT_FORK)
    assert len(infos) == 15 and all(info.blocks for info in infos)
    for info in infos:
        writes = count(info, "SSTORE")
        assert (writes, count(info, "BALANCE")) == ((0, 1) if info.signature[0] == "g" else (1, 0))


def test_vyper_selector_buckets_are_found() -> None:
    pytest.importorskip("vyper", reason="the vyper package is not installed")
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "vyper" / "Counter.vy"
    [compilation] = load([fixture])
    chain = TestChain.setup(compilation, contract="Counter")
    assert chain.main is not None
    code = chain.code_at(chain.main.address)
    code_hash = keccak256(code)
    contract = compilation.contract("Counter")
    infos = {info.signature: info for info in function_infos(
        specs_of(contract), {None: (code_hash, code)}, DEFAULT_FORK)}
    assert count(infos["add(uint256)"], "SSTORE") > 0
    assert count(infos["counter()"], "SLOAD") > 0 and count(infos["counter()"], "SSTORE") == 0
    assert_regions_hold_runs(chain, code_hash, infos)


@needs_node
def test_how_compiled_transactions_end(folder: Path) -> None:
    chain, _, _ = infos_of("0.8 legacy", folder)
    user = chain.senders[0].address
    ends = [ended_as(run(chain, tx).outcomes[-1]) for tx in (
        Tx("mustBeSmall(uint8)", (5,), user), Tx("mustBeSmall(uint8)", (250,), user),
        Tx("inc(uint8)", (255,), user), Tx("pay(address,uint256)", (user, 10**30), user))]
    assert ends == ["return", "assert", "revert", "revert"]
    old, _, _ = infos_of("0.4 legacy", folder)
    user = old.senders[0].address
    outcome = run(old, Tx("check(uint256)", (7,), user)).outcomes[-1]
    # solc 0.4's assert is the INVALID opcode: an exceptional halt, not a REVERT.
    assert (outcome.success, outcome.reverted, outcome.error) == (False, False, "invalid opcode")
    assert ended_as(outcome) == "assert"
    assert ended_as(run(old, Tx("check(uint256)", (6,), user)).outcomes[-1]) == "return"


@needs_node
def test_contract_coverage_of_a_compiled_contract(folder: Path) -> None:
    chain, code_hash, infos = infos_of("0.8 legacy optimized", folder)
    code = chain.code_at(chain.main.address) if chain.main else b""
    sizes = code_sizes([(code_hash, code)], DEFAULT_FORK)
    blocks, instructions = sizes[code_hash]
    # solc's metadata is left out: fewer blocks than the analysis cuts the whole code into.
    assert 0 < blocks < len(analyze(code, code_hash, DEFAULT_FORK).blocks)
    user = chain.senders[0].address
    result = run(chain, Tx("deposit(uint256)", (4,), user))
    deposit = infos["deposit(uint256)"]
    row = feature_matrix([deposit], [Step(deposit.signature, None, "return")], result.blocks,
                         sizes)[0]
    column = dict(zip(FEATURE_NAMES, row, strict=True))
    assert 0 < column["contract_block_coverage"] < 1
    assert 0 < column["contract_instruction_coverage"] < 1
    assert 0 < column["function_block_coverage"] <= 1
    assert column["return_last"] == column["return_fraction"] == 1.0
    assert column["op_SSTORE"] == count(deposit, "SSTORE")


# Hand-made code ----------------------------------------------------------------------------

def assemble(items: Sequence[int | str | tuple[int, int | str]]) -> tuple[bytes, dict[str, int]]:
    """Opcodes (int), labels ("name:") and pushes ((width, value or label)), in two passes."""
    labels: dict[str, int] = {}
    pc = 0
    for item in items:
        if isinstance(item, str):
            labels[item.rstrip(":")] = pc
        else:
            pc += 1 + item[0] if isinstance(item, tuple) else 1
    out = bytearray()
    for item in items:
        if isinstance(item, tuple):
            width, value = item
            number = labels[value] if isinstance(value, str) else value
            out += bytes([0x5F + width]) + number.to_bytes(width, "big")
        elif isinstance(item, int):
            out.append(item)
    return bytes(out), labels


def op(name: str) -> int:
    return BY_NAME[name]


def selector(signature: str) -> int:
    return int.from_bytes(function_selector(signature), "big")


A, B, C, D = "a()", "b()", "c()", "d()"
HAND, LABELS = assemble([
    (1, 0), op("CALLDATALOAD"), (1, 0xE0), op("SHR"),
    op("DUP1"), (4, selector(D)), op("GT"), (1, "fail"), op("JUMPI"),   # a split, not a match
    op("DUP1"), (4, selector(A)), op("EQ"), (1, "a"), op("JUMPI"),      # EQ: jump to the body
    op("DUP1"), (4, selector(C)), op("EQ"), op("ISZERO"), (1, "after_c"), op("JUMPI"),
    "c:", op("TIMESTAMP"), op("POP"), op("STOP"),                       # EQ ISZERO: fall in
    "after_c:", op("JUMPDEST"), (4, selector(B)), op("SUB"), (1, "fail"), op("JUMPI"),
    "b:", (1, "a"), op("MLOAD"), op("POP"),                             # data, not a jump
    (1, "ret"), (1, "helper"), op("JUMP"),                              # an internal call
    "ret:", op("JUMPDEST"), op("STOP"),
    "helper:", op("JUMPDEST"), (1, 1), (1, 0), op("SSTORE"), op("JUMP"),  # returns by stack
    "a:", op("JUMPDEST"), op("CALLER"), (1, 0), op("SLOAD"), op("POP"), op("STOP"),
    "fail:", op("JUMPDEST"), (1, 0), op("DUP1"), op("REVERT"),
])
HAND_HASH = keccak256(HAND)


def spec(signature: str, *types: VType, to: int | None = None) -> FunctionSpec:
    return FunctionSpec(signature, to, types, False)


def hand_infos(*specs: FunctionSpec) -> dict[str, FunctionInfo]:
    infos = function_infos(specs, {None: (HAND_HASH, HAND)}, DEFAULT_FORK)
    return {info.signature: info for info in infos}


def test_dispatcher_patterns_and_stack_carried_jumps_in_hand_made_code() -> None:
    infos = hand_infos(spec(A), spec(B), spec(C), spec(D))
    after_sstore = LABELS["helper"] + 1 + 2 + 2 + 1  # the JUMP after SSTORE starts a block
    assert infos[A].blocks == {LABELS["a"]}
    assert infos[B].blocks == {LABELS["b"], LABELS["ret"], LABELS["helper"], after_sstore}
    assert infos[C].blocks == {LABELS["c"]}
    assert infos[D].blocks == frozenset()
    assert count(infos[A], "CALLER") == count(infos[A], "SLOAD") == 1
    assert count(infos[B], "SSTORE") == 1 and count(infos[B], "SLOAD") == 0
    assert count(infos[C], "TIMESTAMP") == 1
    assert infos[A].instructions == 6 and infos[C].instructions == 3


@pytest.mark.parametrize(("code", "codes_for"), [
    (bytes.fromhex("6001600055"), None),        # no dispatcher at all
    (b"", None),                                # no code
    (HAND, 0xABC),                              # a contract the codes do not know
])
def test_no_entry_gives_an_empty_region(code: bytes, codes_for: int | None) -> None:
    signature = "transfer(address,uint256)"
    address = VType("address", bits=160)
    specs = [spec(signature, address, VType("uint", bits=256), to=codes_for),
             FunctionSpec("fallback", None, (), True)]
    infos = function_infos(specs, {None: (keccak256(code), code)}, DEFAULT_FORK)
    for info in infos:
        assert (info.blocks, info.instructions) == (frozenset(), 0)
        assert info.opcodes == (0,) * 50
    transfer = infos[0]
    assert (transfer.arguments, transfer.address_arguments) == (2, 1)
    assert transfer.name_tokens == ("transfer",) and transfer.to == codes_for
    assert transfer.code_hash == (b"" if codes_for is not None else keccak256(code))
    assert infos[1].payable and infos[1].name_tokens == ("fallback",)


def test_address_arguments_count_each_parameter_holding_an_address_once() -> None:
    address, number = VType("address", bits=160), VType("uint", bits=256)
    types = (address, VType("array", elem=address), number,
             VType("tuple", fields=(number, VType("array", length=2, elem=address))),
             VType("array", elem=number), VType("bool"))
    info = hand_infos(spec("mix(address,address[],uint256,(uint256,address[2]),uint256[],bool)",
                           *types))
    (only,) = info.values()
    assert (only.arguments, only.address_arguments) == (6, 3)


def test_code_sizes_count_blocks_and_instructions() -> None:
    analysis = analyze(HAND, HAND_HASH, DEFAULT_FORK)
    sizes = code_sizes([(HAND_HASH, HAND), (HAND_HASH, HAND)], DEFAULT_FORK)
    assert sizes == {HAND_HASH: (len(analysis.blocks), len(analysis.instructions))}
    assert code_sizes([(keccak256(b""), b"")], DEFAULT_FORK) == {keccak256(b""): (0, 0)}


# Rows --------------------------------------------------------------------------------------

H, H2 = b"\x01" * 32, b"\x02" * 32
SIZES = {0: 5, 10: 3, 20: 2, 30: 10}


def made(signature: str, blocks: set[int], to: int | None = None, code_hash: bytes = H,
         sizes: dict[int, int] | None = None, arguments: int = 0,
         opcodes: tuple[int, ...] = (0,) * 50) -> FunctionInfo:
    table = SIZES if sizes is None else sizes
    return FunctionInfo(signature, to, arguments, min(arguments, 1), False, (), opcodes,
                        frozenset(blocks), sum(table[pc] for pc in blocks), code_hash, table)


F = made("f(address,uint256)", {10, 20}, arguments=2, opcodes=tuple(range(50)))
G = made("g()", set())
F_ELSEWHERE = made("f(address,uint256)", {5}, to=0xABC, code_hash=H2, sizes={5: 4})
HISTORY = [Step(F.signature, None, "revert"), Step(G.signature, None, "return"),
           Step(F.signature, None, "return"), Step("h()", None, "return"),
           Step(F.signature, None, "assert")]
COVERED = {(H, 0), (H, 10), (H2, 5), (b"\x03" * 32, 10)}


@pytest.mark.parametrize(("info", "expected"), [
    (F, {"revert_last": 0.0, "revert_fraction": 1 / 3, "assert_last": 1.0,
         "assert_fraction": 1 / 3, "return_last": 0.0, "return_fraction": 1 / 3,
         "transaction_fraction": 3 / 5, "contract_instruction_coverage": 8 / 20,
         "contract_block_coverage": 2 / 4, "function_instruction_coverage": 3 / 5,
         "function_block_coverage": 1 / 2, "arguments": 2.0, "address_arguments": 1.0}),
    (G, {"revert_last": 0.0, "revert_fraction": 0.0, "assert_last": 0.0,
         "assert_fraction": 0.0, "return_last": 1.0, "return_fraction": 1.0,
         "transaction_fraction": 1 / 5, "contract_instruction_coverage": 8 / 20,
         "contract_block_coverage": 2 / 4, "function_instruction_coverage": 0.0,
         "function_block_coverage": 0.0, "arguments": 0.0, "address_arguments": 0.0}),
    # Same signature on another contract: its own calls (none), a code of unknown size.
    (F_ELSEWHERE, {"revert_last": 0.0, "revert_fraction": 0.0, "assert_last": 0.0,
                   "assert_fraction": 0.0, "return_last": 0.0, "return_fraction": 0.0,
                   "transaction_fraction": 0.0, "contract_instruction_coverage": 0.0,
                   "contract_block_coverage": 0.0, "function_instruction_coverage": 1.0,
                   "function_block_coverage": 1.0, "arguments": 0.0,
                   "address_arguments": 0.0}),
])
def test_feature_rows_of_a_hand_made_history(info: FunctionInfo,
                                             expected: dict[str, float]) -> None:
    rows = feature_matrix([F, G, F_ELSEWHERE], HISTORY, COVERED, {H: (4, 20)})
    assert len(rows) == 3 and all(len(row) == len(FEATURE_NAMES) == 63 for row in rows)
    row = rows[[F, G, F_ELSEWHERE].index(info)]
    assert dict(zip(FEATURE_NAMES[:13], row[:13], strict=True)) == pytest.approx(expected)
    assert row[13:] == [float(n) for n in info.opcodes]


def test_an_empty_history_gives_zero_history_features() -> None:
    (row,) = feature_matrix([F], [], set(), {H: (4, 20)})
    assert row[:11] == [0.0] * 11
    assert row[11:13] == [2.0, 1.0]
    assert feature_matrix([], HISTORY, COVERED, {}) == []


def test_parameter_names_reach_the_infos_and_the_dataset_header() -> None:
    from secant.abi import AbiFunction
    from secant.campaign.worker import spec_of
    from secant.learn.dataset import DatasetHeader

    fn = AbiFunction.from_json({
        "type": "function", "name": "lockUntil", "stateMutability": "nonpayable",
        "inputs": [{"name": "_amountIn", "type": "uint256"},
                   {"name": "unlockTime", "type": "uint64"}, {"name": "", "type": "address"}],
        "outputs": []})
    spec = spec_of(fn, None, [])
    assert spec is not None and spec.names == ("_amountIn", "unlockTime", "")
    # Names are not part of what a function is.
    assert spec == FunctionSpec(spec.signature, None, spec.types, spec.payable)
    [info] = function_infos([spec], {}, DEFAULT_FORK)
    assert info.param_tokens == (("amount", "in"), ("unlock", "time"), ())
    line = DatasetHeader("C", (info,), (1,)).to_json()["functions"][0]
    assert line["param_tokens"] == [["amount", "in"], ["unlock", "time"], []]
