"""``secant fuzz`` as a user runs it: summary.json, on-disk findings, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secant.campaign.options import parse_duration
from secant.errors import SecantError
from secant.oracles.registry import available
from tests.compile.conftest import needs_node, run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"


@needs_node
def test_fuzz_writes_summary_and_findings(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(EXAMPLES / "DerivedConstant.sol"), "--execs", "500",
                   "--seed", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    for key in ("execs", "elapsed_s", "paths", "branches_covered", "instructions_covered",
                "findings", "prediction"):
        assert key in summary
    assert summary["execs"] == 500
    assert set(summary["prediction"]) >= {"attempts", "success", "fail"}
    # The concolic stage is on by default, with a tenth of the work.
    assert summary["symbolic"]["share"] == 0.1
    [finding] = summary["findings"]
    assert set(finding) == {"oracle", "kind", "swc", "contract", "function", "pc", "source",
                            "sequence", "execs_to_find", "time_to_find_s", "detail",
                            "severity", "confidence",
                            "original_sequence", "shrink"}  # shrunk: test_shrink.py
    assert (finding["severity"], finding["confidence"]) == ("medium", "certain")
    assert finding["swc"] == "SWC-110" and finding["contract"] == "DerivedConstant"
    assert len(list((out / "findings").glob("*.json"))) == 1
    assert list((out / "corpus").glob("*.json"))
    assert "1 finding(s)" in proc.stdout
    failing = run_cli("fuzz", str(EXAMPLES / "DerivedConstant.sol"), "--execs", "500",
                      "--seed", "3", "--out", str(out), "--fail-on-findings", "--force")
    assert failing.returncode == 1


@needs_node
@pytest.mark.parametrize("args, message", [
    (["--schedule", "aflgo"], "the aflgo schedule needs a target"),
    (["--schedule", "fast"], "unknown schedule 'fast'"),
    (["--time", "5 minutes"], "cannot read the duration"),
    (["--target", "Nope.sol:3"], "no source file 'Nope.sol'"),
    (["--target", "Baz.sol:1"], "line 1 of"),
    (["--execs", "0"], "--execs must be positive"),
    (["--sequences", "lazy"], "unknown sequence mode 'lazy'"),
    (["--aggressive-probability", "2"], "--aggressive-probability must be between 0 and 1"),
    (["--adaptive-share", "1.5"], "--adaptive-share must be between 0 and 1"),
    (["--max-sequence-length", "0"], "--max-sequence-length must be at least 1"),
    (["--shrink-limit", "-1"], "--shrink-limit must be 0 or more"),
    (["--sender", "alice"], "--sender 'alice' is not an address"),
    (["--sender", "0x" + "1" * 41], "is not an address"),
    (["--block-number", "-1"], "--block-number must be between 0 and 2**64 - 1"),
    (["--block-time", str(1 << 64)], "--block-time must be between 0 and 2**64 - 1"),
    (["--max-time-delay", "-5"], "--max-time-delay must be between 0 and 2**64 - 1"),
])
def test_bad_options_fail_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    proc = run_cli("fuzz", str(EXAMPLES / "Baz.sol"), "--out", str(tmp_path), *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_durations() -> None:
    assert parse_duration("90") == 90
    assert parse_duration("30s") == 30
    assert parse_duration("5m") == 300
    assert parse_duration("1.5h") == 5400
    assert parse_duration("500ms") == 0.5
    with pytest.raises(SecantError):
        parse_duration("soon")


@needs_node
def test_readme_main_command_finds_the_baz_assertion(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text().splitlines()
    command = readme[readme.index("```bash") + 1].split()
    assert command[:2] == ["bin/secant", "fuzz"]
    root = Path(__file__).resolve().parents[2]
    args = [str(root / a) if a.endswith(".sol") else a for a in command[1:]]
    proc = run_cli(*args, "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["paths"] >= 5
    assert [(f["kind"], f["function"]) for f in summary["findings"]] == [("assertion", "baz")]
    assert "Baz.sol:18" in proc.stdout


@needs_node
def test_sequence_options_reach_the_summary(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(EXAMPLES / "HarveyFoo.sol"), "--execs", "400", "--seed", "1",
                   "--sequences", "eager", "--no-adaptive", "--no-prefix-cache",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sequences"]["mode"] == "eager"
    assert summary["sequences"]["aggressive_probes"] == 0  # no aggressive mode in D
    assert summary["adaptive"]["enabled"] is False and "prefix_cache" not in summary
    assert max(int(n) for n in summary["sequences"]["lengths"]) > 1


@needs_node
def test_sequence_length_bound_and_adaptive_share_are_applied(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(EXAMPLES / "HarveyFoo.sol"), "--execs", "600", "--seed", "2",
                   "--sequences", "eager", "--max-sequence-length", "3",
                   "--adaptive-share", "0.5", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    lengths = {int(n) for n in summary["sequences"]["lengths"]}
    assert max(lengths) == 3
    assert summary["adaptive"]["share"] == 0.5 and summary["adaptive"]["picks"] > 0


def test_list_oracles_names_each_with_its_swc() -> None:
    proc = run_cli("fuzz", "--list-oracles")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["assertion", "SWC-110"]


@needs_node
def test_oracles_option_chooses_the_detectors(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(EXAMPLES / "DerivedConstant.sol"), "--execs", "500",
                   "--seed", "3", "--oracles", "", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["oracles"] == [] and summary["findings"] == []  # the assert goes unseen
    bad = run_cli("fuzz", str(EXAMPLES / "DerivedConstant.sol"), "--execs", "10",
                  "--oracles", "assertion,reentrance", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "error: unknown oracle 'reentrance'; choose from " + ", ".join(available())
        + " (see --list-oracles)"]


@needs_node
def test_a_test_contract_gives_one_output_folder_per_campaign(tmp_path: Path) -> None:
    out = tmp_path / "out"
    test_file = Path(__file__).resolve().parents[1] / "fixtures" / "foundry_style" / \
        "VaultInvariants.t.sol"
    proc = run_cli("fuzz", str(test_file), "--execs", "400", "--out", str(out),
                   "--match-test", "skim|decoy")
    assert proc.returncode == 0, proc.stderr
    assert "== VaultInvariantTest invariants" in proc.stdout
    assert "== VaultInvariantTest fuzz tests" in proc.stdout
    invariants = json.loads((out / "VaultInvariantTest-invariants" / "summary.json").read_text())
    assert [p["function"] for p in invariants["properties"]] == ["invariant_decoy_untouched"]
    fuzz = json.loads((out / "VaultInvariantTest-fuzz-tests" / "summary.json").read_text())
    assert fuzz["oracles"] == ["fuzz-test"]
    bad = run_cli("fuzz", str(test_file), "--execs", "10", "--match-test", "(",
                  "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and bad.stderr.startswith("error: --match-test '(' is not")


@needs_node
def test_property_prefixes_choose_the_properties(tmp_path: Path) -> None:
    source = tmp_path / "Prefixed.sol"
    harness = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "MedusaStyle.sol"
    source.write_text(harness.read_text().replace("property_", "check_"))
    proc = run_cli("fuzz", str(source), "--execs", "3000", "--property-prefix", "check_",
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {p["function"]: p["status"] for p in summary["properties"]} == {
        "check_never_stage_three": "failed", "check_stage_at_most_three": "passed"}
    # The properties are evaluated, never called as transactions.
    assert all("check_" not in tx["function"] for f in summary["findings"]
               for tx in f["sequence"])


@needs_node
def test_contracts_deployed_in_order_with_arguments(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "Deployments.sol"
    out = tmp_path / "out"
    minter = "0x00000000000000000000000000000000000000aa"
    proc = run_cli("fuzz", str(source), "--contract", "Bank", "--arg", "Points", "--arg", "500",
                   "--deploy", "Points", "--deploy-arg", f"Points={minter}",
                   "--execs", "2000", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    [finding] = summary["findings"]
    assert finding["function"] == "echidna_nobody_above_cap"
    # Points was deployed first and fuzzed as part of the system (its address was Bank's
    # argument); awarding the deployer more than the cap breaks the property.
    last = finding["sequence"][-1]
    assert (last["function"], last["to"]) == ("award(address,uint256)", "Points")
    assert last["args"][1] > 500
    bad = run_cli("fuzz", str(source), "--deploy-arg", "Nope=1", "--out", str(tmp_path / "b"))
    assert bad.returncode == 2 and "names no --deploy contract" in bad.stderr


@needs_node
def test_all_contracts_senders_and_first_block_reach_the_campaign(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "WholeSystem.sol"
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(source), "--all-contracts", "--sender", "0x1234",
                   "--block-number", "100", "--block-time", "200", "--execs", "2000",
                   "--seed", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    [finding] = json.loads((out / "summary.json").read_text())["findings"]
    assert finding["function"] == "echidna_pool_not_empty"
    last = finding["sequence"][-1]
    assert (last["function"], last["to"]) == ("take(uint256)", "Pool")
    assert {tx["sender"] for tx in finding["sequence"]} == {f"0x{0x1234:040x}"}


@needs_node
def test_a_corpus_folder_carries_the_coverage_from_one_run_to_the_next(tmp_path: Path
                                                                       ) -> None:
    shared = tmp_path / "corpus"
    first = tmp_path / "first"
    proc = run_cli("fuzz", str(EXAMPLES / "Baz.sol"), "--execs", "600", "--seed", "0",
                   "--corpus", str(shared), "--out", str(first), "--quiet")
    assert proc.returncode == 0, proc.stderr
    before = json.loads((first / "summary.json").read_text())
    entries = sorted(path.name for path in shared.glob("*.json"))
    assert entries == sorted(path.name for path in (first / "corpus").glob("*.json"))
    assert len(entries) == before["corpus"] > 1
    # The next run, another seed and a budget that only just runs them: it starts where
    # the first ended.
    second = tmp_path / "second"
    proc = run_cli("fuzz", str(EXAMPLES / "Baz.sol"), "--execs", str(len(entries)),
                   "--seed", "1", "--corpus", str(shared), "--out", str(second), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"corpus {shared}: {len(entries)} of {len(entries)} entries run first"]
    after = json.loads((second / "summary.json").read_text())
    assert after["shared_corpus"]["run"] == len(entries)
    assert after["branches_covered"] == before["branches_covered"]
    assert sorted(path.name for path in shared.glob("*.json")) == entries  # none new, none lost
    # A file where the folder should be is one line naming the fix.
    (tmp_path / "file").write_text("")
    proc = run_cli("fuzz", str(EXAMPLES / "Baz.sol"), "--execs", "10",
                   "--corpus", str(tmp_path / "file"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"error: --corpus {tmp_path / 'file'} is a file; "
                                        "give a folder (it is created when missing)"]
