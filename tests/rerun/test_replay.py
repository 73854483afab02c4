"""``secant replay``: a campaign rebuilt from its output folder, its findings run again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from secant.abi import PANIC_CODES, AbiParam
from secant.chain.chain import TestChain
from secant.cli.main import app
from secant.compile import load
from secant.engine.values import VType, vtype
from secant.rerun.explain import explain
from secant.rerun.replay import CaseError, case_from_json
from secant.types import Tx, case_to_json
from tests.compile.conftest import needs_node

ROOT = Path(__file__).resolve().parents[2]
BAZ = ROOT / "examples" / "contracts" / "Baz.sol"
SHRINK = ROOT / "tests" / "fixtures" / "shrink" / "Shrink.sol"
AFTER = ROOT / "tests" / "fixtures" / "foundry_style" / "AfterInvariant.t.sol"


def invoke(*args: str) -> Result:
    """``secant ARGS`` in this process."""
    return CliRunner().invoke(app, list(args))


def fuzz(path: Path, out: Path, *options: str, execs: int = 3000) -> Path:
    result = invoke("fuzz", str(path), "--execs", str(execs), "--seed", "0", "--out", str(out),
                    "--quiet", *options)
    assert result.exit_code == 0, result.output
    return out


# ---------------------------------------------------------------------- JSON -> cases
NAMES = {"deployer": 0x1000, "user1": 0x2000, "attacker1": 0x3000, "Pool": 0xCAFE}
TYPES: dict[tuple[int | None, str], tuple[VType, ...]] = {
    (None, "mix(uint256,int16,address,bool,bytes,string,bytes4,uint8[2],(uint256,string)[])"):
        tuple(vtype(p) for p in (
            AbiParam("a", "uint256"), AbiParam("b", "int16"), AbiParam("c", "address"),
            AbiParam("d", "bool"), AbiParam("e", "bytes"), AbiParam("f", "string"),
            AbiParam("g", "bytes4"), AbiParam("h", "uint8[2]"),
            AbiParam("i", "tuple[]", (AbiParam("x", "uint256"), AbiParam("s", "string"))))),
    (0xCAFE, "take(uint256)"): (vtype(AbiParam("n", "uint256")),),
    (None, "receive"): (),
}
MIX = next(sig for _, sig in TYPES if sig.startswith("mix"))


def types_of(to: int | None, signature: str) -> tuple[VType, ...]:
    return TYPES[(to, signature)]


def test_a_json_sequence_reads_back_into_the_same_case() -> None:
    case = (
        Tx(MIX, (2**256 - 1, -300, 0xCAFE, True, b"\x00\xff", "0xnot hex", b"\x01\x02\x03\x04",
                 (7, 255), ((1, "one"), (2, ""))), 0x2000, value=5, blocks=2, time=30),
        Tx("take(uint256)", (0,), 0x3000, to=0xCAFE, storage=((1, 2**255), (0, 9))),
        Tx("receive", (), 0x9999, value=1),  # a sender no name stands for: hex
    )
    sequence = json.loads(json.dumps(case_to_json(case, NAMES)))
    assert sequence[1]["to"] == "Pool" and sequence[2]["sender"] == f"0x{0x9999:040x}"
    assert case_from_json(sequence, NAMES, types_of) == case


@pytest.mark.parametrize("step, message", [
    ({"function": "take(uint256)", "args": [1], "sender": "nobody", "to": "Pool"},
     "'nobody' is neither an address nor a name the chain knows"),
    ({"function": "gone()", "args": [], "sender": "deployer"},
     "calls gone(), which the main contract does not have"),
    ({"function": "take(uint256)", "args": [1, 2], "sender": "deployer", "to": "Pool"},
     "take(uint256) takes 1 argument(s), the case gives 2"),
    ({"function": MIX, "args": [1, 2, 3, True, "zz", "", "0x01020304", [1, 2], []],
      "sender": "deployer"}, "'zz' is not 0x-hex bytes"),
    ({"function": MIX, "args": [1, 2, 3, True, "0x", "", "0x01020304", [1], []],
      "sender": "deployer"}, "uint8[2] has 2 elements, not 1"),
])
def test_a_sequence_that_cannot_be_read_back_is_a_one_line_error(step: dict[str, object],
                                                                 message: str) -> None:
    with pytest.raises(CaseError) as error:
        case_from_json([step], NAMES, types_of)
    assert message in error.value.one_line() and "\n" not in error.value.one_line()


# ---------------------------------------------------------------------- explaining
BOX = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Box {
    event Stored(address indexed who, uint256 value, string note);
    error TooBig(uint256 value, uint256 limit);

    uint256 public stored;

    function store(uint256 value, string calldata note)
        external returns (uint256 previous, bool changed)
    {
        require(value != 7, "seven is reserved");
        if (value > 1000) revert TooBig(value, 1000);
        previous = stored;
        stored = value;
        changed = previous != value;
        emit Stored(msg.sender, value, note);
    }

    function grow(uint8 x) external pure returns (uint8) {
        return x + 250;
    }

    receive() external payable {}
}
"""


@needs_node
def test_a_case_is_explained_in_the_words_of_the_abi(tmp_path: Path) -> None:
    (tmp_path / "Box.sol").write_text(BOX)
    chain = TestChain.setup(load([tmp_path / "Box.sol"]), contract="Box")
    names = chain.names()
    store = "store(uint256,string)"
    case = (Tx(store, (5, "hi"), names["user1"], blocks=1, time=12),
            Tx(store, (7, ""), names["deployer"]),
            Tx(store, (2000, ""), names["deployer"]),
            Tx("grow(uint8)", (10,), names["deployer"]),
            Tx("receive", (), names["attacker1"], value=3))
    steps = explain(chain, case)
    assert [(s.sender, s.contract, s.call) for s in steps] == [
        ("user1", "Box", 'store(value=5, note="hi")'),
        ("deployer", "Box", 'store(value=7, note="")'),
        ("deployer", "Box", 'store(value=2000, note="")'), ("deployer", "Box", "grow(x=10)"),
        ("attacker1", "Box", "receive()")]
    assert (steps[0].blocks, steps[0].time, steps[4].value) == (1, 12, 3)
    assert [s.outcome for s in steps] == [
        "returned previous=0, changed=true",
        "reverted: Error('seven is reserved')",
        "reverted: TooBig(2000, 1000)",
        f"reverted: Panic(0x11: {PANIC_CODES[0x11]})",
        "ok"]
    assert [s.ok for s in steps] == [True, False, False, False, True]
    assert steps[0].events == ['Stored(who=user1, value=5, note="hi") from Box']
    assert all(not s.events for s in steps[1:])


# ---------------------------------------------------------------------- secant replay
@needs_node
@pytest.mark.parametrize("path, options, steps", [
    (BAZ, (), ["deployer -> Baz.baz(a=42, b=3, c=-3)"]),
    (SHRINK, ("--contract", "TwoStep"), ["deployer -> TwoStep.arm(code=51)",
                                          "deployer -> TwoStep.fire(x=52)"]),
    (AFTER, (), ["deployer -> Counter.bump()"] * 3),
], ids=["Baz", "TwoStep", "AfterInvariant"])
def test_every_finding_of_a_campaign_reproduces(tmp_path: Path, path: Path,
                                                options: tuple[str, ...],
                                                steps: list[str]) -> None:
    out = fuzz(path, tmp_path / "out", *options)
    result = invoke("replay", str(out))
    assert result.exit_code == 0, result.output
    assert "reproduced  [" in result.stdout and "1/1 findings reproduced" in result.stdout
    assert " -> " not in result.stdout  # no trace unless asked
    # One finding's file: its trace, by default.
    [finding] = (out / "findings").glob("*.json")
    traced = invoke("replay", str(finding))
    assert traced.exit_code == 0, traced.output
    lines = [line.strip() for line in traced.stdout.splitlines()]
    assert [line.split(". ", 1)[1] for line in lines if " -> " in line] == steps
    source = json.loads(finding.read_text())["source"]
    assert any(line.startswith(f"failing check at {source}: ") for line in lines)


@needs_node
def test_a_fixed_bug_is_reported_as_not_reproduced(tmp_path: Path) -> None:
    source = tmp_path / "Shrink.sol"
    shutil.copy(SHRINK, source)
    out = fuzz(source, tmp_path / "out", "--contract", "TwoStep")
    text = source.read_text()
    assert "assert(false); // line 50" in text
    source.write_text(text.replace("assert(false); // line 50", "shots += 1;"))
    result = invoke("replay", str(out))
    assert result.exit_code == 1
    assert "NOT reproduced  [assertion, medium, certain] TwoStep.fire" in result.stdout
    assert "the case now shows no finding" in result.stdout
    assert "0/1 findings reproduced" in result.stdout


@needs_node
def test_a_case_naming_what_the_chain_does_not_have_is_not_replayed(tmp_path: Path) -> None:
    out = fuzz(SHRINK, tmp_path / "out", "--contract", "TwoStep")
    [finding] = (out / "findings").glob("*.json")
    data = json.loads(finding.read_text())
    data["sequence"][0]["sender"] = "nobody"
    finding.write_text(json.dumps(data))
    result = invoke("replay", str(out))
    assert result.exit_code == 1
    assert "not replayed" in result.stdout and "'nobody' is neither an address" in result.stdout
    # The corpus replays, and says which findings each entry shows.
    corpus = invoke("replay", str(out / "corpus"), "--corpus")
    assert corpus.exit_code == 0, corpus.output
    entries = len(list((out / "corpus").glob("*.json")))
    assert f"{entries}/{entries} corpus entries replayed" in corpus.stdout


@needs_node
def test_replay_failing_exits_3_with_the_traceback_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = fuzz(BAZ, tmp_path / "out", execs=500)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("injected failure")

    monkeypatch.setattr("secant.rerun.replay.replay_file", broken)
    [finding] = (out / "findings").glob("*.json")
    result = invoke("replay", str(finding))
    assert result.exit_code == 3
    saved = out / "replay-traceback.txt"
    assert result.stderr == (f"error: secant failed (RuntimeError: injected failure); the "
                             f"traceback is in {saved}: please report it\n")
    assert "RuntimeError: injected failure" in saved.read_text()


@needs_node
def test_replay_refuses_what_is_not_a_campaign_in_one_line(tmp_path: Path) -> None:
    empty = invoke("replay", str(tmp_path))
    assert empty.exit_code == 2
    assert empty.stderr == (f"error: {tmp_path} has no summary.json; pass the --out folder "
                            "of a secant fuzz run (or a finding's file in its findings/)\n")
    (tmp_path / "summary.json").write_text(json.dumps({"execs": 10, "findings": []}))
    old = invoke("replay", str(tmp_path))
    assert old.exit_code == 2
    assert old.stderr == (f"error: {tmp_path / 'summary.json'} has no manifest (written by "
                          "an older secant); run secant fuzz again to record one\n")
    stray = tmp_path / "finding.json"
    stray.write_text("{}")
    outside = invoke("replay", str(stray))
    assert outside.exit_code == 2 and outside.stderr.count("\n") == 1
    assert "is not in a campaign's findings/ or corpus/" in outside.stderr


@needs_node
def test_each_campaign_of_a_test_contract_is_rebuilt_as_it_ran(tmp_path: Path) -> None:
    vault = ROOT / "tests" / "fixtures" / "foundry_style" / "VaultInvariants.t.sol"
    result = invoke("fuzz", str(vault), "--execs", "600", "--out", str(tmp_path / "out"),
                    "--quiet")
    assert result.exit_code == 0, result.output
    slugs = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert slugs == ["VaultInvariantTest-fuzz-tests", "VaultInvariantTest-invariants"]
    replay = invoke("replay", str(tmp_path / "out"))
    assert replay.exit_code == 0, replay.output
    headers = [line.split(" (")[0] for line in replay.stdout.splitlines()
               if not line.startswith(" ")]
    assert headers == ["VaultInvariantTest fuzz tests", "VaultInvariantTest invariants"]
    # Every finding either campaign reported, on its own chain (one sender, no block moves
    # for the fuzz tests; setUp()'s targets for the invariants).
    found = sum(len(list((tmp_path / "out" / slug / "findings").glob("*.json")))
                for slug in slugs)
    assert found >= 1 and replay.stdout.count("reproduced  [") == found


DEPLOYED = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Deployed {
    uint256 public x = 1;

    function set(uint256 v) external {
        x = v;
    }

    function echidna_zero() external view returns (bool) {
        return x == 0;
    }
}
"""


@needs_node
def test_a_property_failing_on_the_deployed_state_replays_without_transactions(
        tmp_path: Path) -> None:
    (tmp_path / "Deployed.sol").write_text(DEPLOYED)
    out = fuzz(tmp_path / "Deployed.sol", tmp_path / "out", execs=200)
    [finding] = (out / "findings").glob("*.json")
    assert json.loads(finding.read_text())["sequence"] == []
    result = invoke("replay", str(finding))
    assert result.exit_code == 0, result.output
    assert "(no transaction: it fails on the deployed state)" in result.stdout
    assert "function echidna_zero() external view returns (bool) {" in result.stdout
