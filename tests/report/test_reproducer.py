"""Foundry reproducers: ABI values as Solidity literals, and the tests they make under forge.

The forge test runs forge 1.7.1 from npm (installed once into secant's cache) on the
reproducers of five campaigns (an assertion, a two-step assertion, a Medusa property, a
Foundry ``afterInvariant``, a contract that leaks its ether and self-destructs) in one
scratch project, with forge-std from npm, and checks
that each test fails with the reason secant saw, and that two of them pass once the bug
is fixed in a copy of the source.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from secant.abi import AbiFunction, AbiParam
from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig, TestChain
from secant.compile import CompileOptions, load
from secant.compile.cache import cache_root
from secant.engine.config import FuzzConfig
from secant.engine.oracle import Oracle
from secant.oracles import registry
from secant.report.findings import write_finding_reports
from secant.report.forge import FORGE_VERSION, ForgeUnavailable, install_forge, solc_wrapper
from secant.report.reproducer import reproducer_source
from secant.report.solidity import Builder, Inexpressible, checksum
from secant.targets.contract import ContractTarget
from secant.types import Finding, Tx
from tests.compile.conftest import needs_node
from tests.packages import npm_modules

ROOT = Path(__file__).resolve().parents[2]
SOLC = "0.8.26"
"""The compiler of both secant's campaigns and forge's build here: the same bytecode."""

FORGE_STD = ("@layerzerolabs/toolbox-foundry@0.1.13", "toolbox-foundry-0.1.13",
             "@layerzerolabs/toolbox-foundry/lib/forge-std/Test.sol")
"""An npm package that ships forge-std 1.9.7 (the package named forge-std is an old copy
without the ds-test its Test.sol imports)."""


# ------------------------------------------------------------------ literals


def expression(type_text: str, value: object, names: dict[int, str] | None = None
               ) -> tuple[str, list[str]]:
    builder = Builder(names or {})
    return builder.expression(type_text, value), builder.statements


def test_checksummed_addresses_follow_eip55() -> None:
    # EIP-55's own examples.
    for text in ("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
                 "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
                 "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"):
        assert checksum(int(text, 16)) == text


@pytest.mark.parametrize(("type_text", "value", "expected"), [
    ("uint8", 255, "uint8(255)"),
    ("uint256", 2**256 - 1, f"uint256({2**256 - 1})"),
    ("int16", -3, "int16(-3)"),
    ("int256", -(2**255), "type(int256).min"),
    ("int8", -128, "type(int8).min"),
    ("bool", True, "true"),
    ("address", 0, "address(0)"),
    ("address", 0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED,
     "address(0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed)"),
    ("address", 0x1234, "HOLDER"),
    ("bytes4", b"\x01\x02\x03\x04", 'bytes4(hex"01020304")'),
    ("bytes", b"", 'bytes(hex"")'),
    ("bytes", b"\x00\xff", 'bytes(hex"00ff")'),
    ("string", 'a "b" \\ c', '"a \\"b\\" \\\\ c"'),
    ("string", "h\u00e9\n", 'string(hex"68c3a90a")'),
    ("uint8[2]", (1, 2), "[uint8(1), uint8(2)]"),
])
def test_scalars_and_static_arrays_are_typed_literals(type_text: str, value: object,
                                                      expected: str) -> None:
    assert expression(type_text, value, {0x1234: "HOLDER"}) == (expected, [])


def test_other_arrays_are_memory_variables_filled_element_by_element() -> None:
    text, statements = expression("uint256[][]", ((1, 2), ()))
    assert text == "v1"
    assert statements == ["uint256[][] memory v1 = new uint256[][](2);",
                          "uint256[] memory v2 = new uint256[](2);",
                          "v2[0] = uint256(1);", "v2[1] = uint256(2);", "v1[0] = v2;",
                          "uint256[] memory v3 = new uint256[](0);", "v1[1] = v3;"]
    text, statements = expression("string[2]", ("x", "y"))
    assert (text, statements) == ("v1", ["string[2] memory v1;", 'v1[0] = "x";',
                                         'v1[1] = "y";'])


@pytest.mark.parametrize(("type_text", "value"), [
    ("tuple", (1, 2)), ("tuple[]", ((1, 2),)), ("function", b"\x00" * 24),
    ("bytes4", b"\x01"), ("uint8", "7"),
])
def test_structs_and_wrong_values_have_no_literal(type_text: str, value: object) -> None:
    with pytest.raises(Inexpressible):
        expression(type_text, value)


ENCODINGS: list[tuple[str, tuple[str, ...], tuple[Any, ...]]] = [
    ("f", ("uint8", "int16", "int256", "uint256", "int8"),
     (255, -3, -(2**255), 2**256 - 1, -1)),
    ("g", ("address", "bool", "bytes4", "bytes32", "address"),
     (0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED, True, b"\x01\x02\x03\x04", bytes(range(32)),
      0x1234)),
    ("h", ("bytes", "string", "string", "bytes"),
     (b"\x00\xff", 'a "q" \\ z', "h\u00e9llo \u2603", b"")),
    ("i", ("uint8[2]", "int256[]", "bytes[]", "string[2]"),
     ((1, 2), (-1, 5), (b"", b"\x01"), ("x", "\u00ff"))),
    ("j", ("uint256[][]", "address[2][]", "bool[3]", "bytes3[]"),
     (((1, 2), (), (3,)), ((0x01, 0x1234),), (True, False, True), (b"abc",))),
]


@needs_node
def test_every_literal_encodes_as_secant_encodes(tmp_path: Path) -> None:
    """solc compiles the expressions; their abi.encodeWithSignature is secant's calldata."""
    names = {0x1234: "HOLDER"}
    functions = []
    for name, types, values in ENCODINGS:
        builder = Builder(names, prefix=f"{name}_")
        args = [builder.expression(t, v) for t, v in zip(types, values)]
        signature = f"{name}({','.join(types)})"
        body = "".join(f"        {s}\n" for s in builder.statements)
        functions.append(
            f"    function enc_{name}() external pure returns (bytes memory) {{\n{body}"
            f'        return abi.encodeWithSignature("{signature}", {", ".join(args)});\n'
            "    }\n")
    source = tmp_path / "Literals.sol"
    source.write_text("// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n"
                      "contract Literals {\n    address internal constant HOLDER = "
                      f"{checksum(0x1234)};\n" + "".join(functions) + "}\n")
    chain = TestChain.setup(load([source], CompileOptions(solc_version=SOLC)), "Literals")
    for name, types, values in ENCODINGS:
        function = AbiFunction(name, tuple(AbiParam("", t) for t in types), (), "nonpayable")
        result = chain.view("Literals", f"enc_{name}")
        assert result.success, name
        assert result.value == function.encode_call(values), name


# ------------------------------------------------------------------ reproducer text


def finished(path: Path, contract: str | None, execs: int = 3000, value: int = 0) -> Campaign:
    """A finished campaign (seed 0, ``execs`` executions) on a fixture, shrunk, no output."""
    compilations = load([path], CompileOptions(solc_version=SOLC))
    [chosen] = plan(compilations, Selection(contract=contract, value=value), ChainConfig(),
                    CampaignConfig(FuzzConfig(seed=0, max_execs=execs)), project=False)
    campaign = Campaign(chosen.make_chain(), chosen.config, oracles=chosen.oracles,
                        functions=chosen.functions, senders=chosen.senders,
                        block_steps=chosen.block_steps)
    campaign.run()
    return campaign


def reentrancy_finding(path: Path, contract: str
                       ) -> tuple[TestChain, list[Finding], list[Oracle]]:
    """A bank's chain, the reentrancy oracle's ether finding on a re-entered withdraw."""
    chain = finished(path, contract, 10).chain
    [oracle] = registry.build(chain, ["reentrancy"])
    target = ContractTarget(chain, oracle.needs)
    attacker = chain.attacker("reentrancy").address
    user = chain.sender("user1").address
    result = target.run((Tx("deposit()", (), user, 5000), Tx("deposit()", (), attacker, 1000),
                         Tx("withdraw()", (), attacker)))
    [finding] = [f for f in oracle.check(result, target) if f.key[-1] == "ether"]
    finding.oracle, finding.case = "reentrancy", result.case
    return chain, [finding], [oracle]


@needs_node
def test_a_reproducer_names_accounts_moves_blocks_and_tolerates_reverts() -> None:
    campaign = finished(ROOT / "tests" / "fixtures" / "shrink" / "Shrink.sol", "TwoStep", 10)
    chain = campaign.chain
    user, attacker = chain.sender("user1").address, chain.attackers[0].address
    relay = chain.attacker("reentrancy").address
    case = (Tx("arm(uint256)", (51,), user, blocks=2, time=30),
            Tx("reload(uint256)", (3,), relay),
            Tx("fire(uint256)", (2**255,), attacker))
    finding = Finding("assertion", "SWC-110", "TwoStep", "fire", 0, None, "Panic(0x01)",
                      ("assertion", chain.main.address if chain.main else 0, 0, 1),
                      case=case, oracle="assertion")
    source = reproducer_source(chain, [finding])
    assert source is not None
    assert 'import {TwoStep} from "tests/fixtures/shrink/Shrink.sol";' in source
    first = chain.blocks.settings
    # The first transaction runs two blocks and 30 s after the first block.
    assert f"_block({first.number + 2}, {first.timestamp + 30}, 0x" in source
    # The attacker contract is installed and relays the call made in its name.
    assert "vm.etch(REENTRANCY_ATTACKER" in source
    assert "vm.prank(ATTACKER1, ATTACKER1);\n        _call(REENTRANCY_ATTACKER, 0, " \
           "abi.encodeWithSelector(bytes4(0x" in source
    # fire(2**255) panics: replayed up to there, as a plain call.
    assert source.count("_call(TWO_STEP, 0, abi.encodeWithSignature(\"fire(uint256)\"") == 1
    assert "vm.prank(USER1, USER1);\n        _call(TWO_STEP, 0, abi.encodeWithSignature(" \
           '"arm(uint256)", uint256(51)));' in source


@needs_node
def test_set_up_is_called_only_when_the_contract_ran_as_a_test_contract(tmp_path: Path
                                                                        ) -> None:
    # --harness decides how a contract with setUp() runs; its reproducer follows the choice.
    source_file = tmp_path / "Both.sol"
    source_file.write_text("pragma solidity ^0.8.20;\ncontract Both {\n    uint256 public n;\n"
                           "    function setUp() public { n = 1; }\n"
                           "    function bump() public { n += 1; }\n"
                           "    function invariant_small() public view returns (bool) "
                           "{ return n < 9; }\n}\n")
    chain = TestChain.setup(load([source_file]), contract="Both")
    assert chain.main is not None
    finding = Finding("assertion", "SWC-110", "Both", "bump", 0, None, "Panic(0x01)",
                      ("assertion", chain.main.address, 0, 1),
                      case=(Tx("bump()", (), chain.deployer.address),), oracle="assertion")
    call = 'abi.encodeWithSignature("setUp()")'
    guessed = reproducer_source(chain, [finding])
    assert guessed is not None and call in guessed  # setUp() and an invariant: forge's
    harness = reproducer_source(chain, [finding], test_contract=False)
    assert harness is not None and call not in harness


@needs_node
def test_sources_forge_std_cannot_sit_beside_are_deployed_from_their_creation_code() -> None:
    jar = ROOT / "tests" / "fixtures" / "vulnerabilities" / "leaking" / "MisnamedConstructor.sol"
    chain = TestChain.setup(load([jar]), contract="SavingsJar")  # solc 0.4.26
    main = chain.main
    assert main is not None and main.compiled is not None
    finding = Finding("leaking-ether", "SWC-105", "SavingsJar", "f", 0, None, "leak",
                      ("leaking-ether", main.address, "f"), case=(), oracle="leaking-ether")
    source = reproducer_source(chain, [finding])
    assert source is not None
    assert "MisnamedConstructor.sol" not in source
    assert f'_deployAt(SAVINGS_JAR, 0, hex"{main.compiled.creation.hex}", 0);' in source
    # The leak's check compares the attacker side's ether before and after the case.
    assert "uint256 attackerSideBefore = _attackerSide();" in source
    assert "function _attackerSide() internal view returns (uint256) {" in source


# ------------------------------------------------------------------ forge


def forge_or_skip() -> Path:
    try:
        return install_forge(cache_root() / "forge", FORGE_VERSION)
    except ForgeUnavailable as exc:
        pytest.skip(f"forge {FORGE_VERSION} is not available: {exc.message}")


def place(project: Path, unit: str, text: str) -> None:
    path = project / unit
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fixed_copy(project: Path, reproducer: str, unit: str, fixed: str) -> None:
    """The source fixed under ``fixed/<unit>``, with a copy of its reproducer importing it."""
    place(project, f"fixed/{unit}", fixed)
    text = reproducer.replace(f'from "{unit}";', f'from "fixed/{unit}";')
    text = text.replace("Reproducer is Test", "ReproducerFixed is Test")
    stem = Path(unit).name.split(".")[0]
    place(project, f"test/{stem}Fixed.t.sol", text)


def forge_results(stdout: str) -> dict[str, dict[str, Any]]:
    """``{Contract.test: result}`` from ``forge test --json``."""
    lines = [line for line in stdout.splitlines()
             if line.startswith("{") and '"test_results"' in line]
    report = json.loads(lines[-1])
    return {f"{suite.split(':')[-1]}.{name.split('(')[0]}": result
            for suite, body in report.items()
            for name, result in body["test_results"].items()}


@needs_node
def test_reproducers_fail_under_forge_as_the_findings_did(tmp_path: Path) -> None:
    forge = forge_or_skip()
    modules = npm_modules(*FORGE_STD)
    forge_std = modules / "@layerzerolabs" / "toolbox-foundry" / "lib" / "forge-std"
    # unit -> (contract, executions, wei sent to the constructor)
    fixtures = {
        "examples/contracts/Baz.sol": ("Baz", 3000, 0),
        "tests/fixtures/shrink/Shrink.sol": ("TwoStep", 3000, 0),
        "tests/fixtures/harnesses/MedusaStyle.sol": (None, 3000, 0),
        "tests/fixtures/foundry_style/AfterInvariant.t.sol": (None, 3000, 0),
        # Ether sent at deployment; two findings: leaking-ether and suicidal.
        "tests/fixtures/vulnerabilities/suicidal/SecretPin.sol": ("Pool", 500, 1000),
    }
    project = tmp_path / "project"
    written: dict[str, str] = {}
    for unit, (contract, execs, value) in fixtures.items():
        campaign = finished(ROOT / unit, contract, execs, value)
        out = tmp_path / "out" / Path(unit).stem
        reports = write_finding_reports(out, campaign.chain, list(campaign.findings.values()),
                                        campaign.oracles)
        file = reports["reproducers"][0].split(":")[0]
        written[unit] = (out / file).read_text()
        place(project, unit, (ROOT / unit).read_text())
        place(project, f"test/{Path(file).name}", written[unit])
    # Reentrancy that pays the attacker contract more than it brought in (the oracle's own
    # verdict on a hand-written case: campaigns find it too, in more executions).
    banks = "tests/fixtures/vulnerabilities/reentrancy/LedgerBank.sol"
    bank = reentrancy_finding(ROOT / banks, "LedgerBank")
    reports = write_finding_reports(tmp_path / "out" / "LedgerBank", *bank)
    file = reports["reproducers"][0].split(":")[0]
    written[banks] = (tmp_path / "out" / "LedgerBank" / file).read_text()
    place(project, banks, (ROOT / banks).read_text())
    place(project, f"test/{Path(file).name}", written[banks])
    baz, machine = "examples/contracts/Baz.sol", "tests/fixtures/harnesses/MedusaStyle.sol"
    fixed_copy(project, written[baz], baz,
               (ROOT / baz).read_text().replace("assert(false);", ""))
    fixed_copy(project, written[machine], machine,
               (ROOT / machine).read_text().replace("stage = 3;", "stage = 2;"))
    (project / "foundry.toml").write_text(
        '[profile.default]\nsrc = "src"\ntest = "test"\nlibs = []\n'
        f'remappings = ["forge-std/={forge_std}/"]\n')
    solc = solc_wrapper(cache_root() / "forge", SOLC)
    env = dict(os.environ, FOUNDRY_DISABLE_NIGHTLY_WARNING="1")
    proc = subprocess.run([str(forge), "test", "--offline", "--use", str(solc), "-j", "1",
                           "--match-contract", "Reproducer", "--json"], cwd=project,
                          capture_output=True, text=True, timeout=600, check=False, env=env)
    assert '"test_results"' in proc.stdout, proc.stderr[-3000:]
    results = forge_results(proc.stdout)
    outcome = {name: (r["status"], (r.get("reason") or "").split(":")[0])
               for name, r in results.items()}
    assert outcome == {
        "BazReproducer.test_assertion_baz": ("Failure", "panic"),
        "TwoStepReproducer.test_assertion_fire": ("Failure", "panic"),
        "MachineReproducer.test_property_property_never_stage_three":
            ("Failure", "property_never_stage_three() failed"),
        "AfterInvariantTestReproducer.test_property_afterInvariant":
            ("Failure", "three bumps in one run"),
        "PoolReproducer.test_leaking_ether_emergencyStop":
            ("Failure", "the attacker side ended richer without paying (leaking-ether)"),
        "PoolReproducer.test_suicidal_emergencyStop":
            ("Failure", "an attacker made Pool SELFDESTRUCT (suicidal)"),
        "LedgerBankReproducer.test_reentrancy_withdraw":
            ("Failure", "the attacker side ended richer without paying (reentrancy)"),
        "BazReproducerFixed.test_assertion_baz": ("Success", ""),
        "MachineReproducerFixed.test_property_property_never_stage_three": ("Success", ""),
    }
    reasons = {name: r.get("reason") for name, r in results.items()}
    assert reasons["BazReproducer.test_assertion_baz"] == "panic: assertion failed (0x01)"
    assert reasons["TwoStepReproducer.test_assertion_fire"] == "panic: assertion failed (0x01)"
