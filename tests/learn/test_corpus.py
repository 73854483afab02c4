"""``secant learn dataset``: enumeration, duplicates, the split, the manifest, resuming."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from secant.cli.main import app
from secant.compile.semver import parse_version
from secant.learn.corpus import (
    CORPUS_SOLC,
    HELD_OUT,
    PINS,
    enumerate_package,
    pin_of,
    source_files,
    split_of,
)
from secant.learn.dataset import read_dataset
from tests.compile.conftest import needs_node

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "learn" / "corpus"


@needs_node
def test_enumeration_keeps_concrete_contracts_and_finds_duplicates_by_code() -> None:
    seen: dict[str, str] = {}
    entries = enumerate_package("local", "", CORPUS, source_files(CORPUS), seen=seen)
    found = {(e.source, e.contract): e for e in entries}
    # Base is abstract and IVault an interface: neither is a contract of the corpus.
    assert set(found) == {("Counter.sol", "Counter"), ("CounterCopy.sol", "CounterCopy"),
                          ("Vault.sol", "Vault")}
    counter, copy, vault = (found[("Counter.sol", "Counter")],
                            found[("CounterCopy.sol", "CounterCopy")],
                            found[("Vault.sol", "Vault")])
    assert counter.status == vault.status == "kept"  # Vault's constructor argument generated
    # The same code from another file (other metadata): a duplicate of the first.
    assert copy.status == "duplicate" and copy.duplicate_of == counter.key
    assert copy.code_hash == counter.code_hash != vault.code_hash
    assert seen == {counter.code_hash: counter.key, vault.code_hash: vault.key}
    assert {e.split for e in entries} == {split_of("local")}
    # Compiled with the newest release the pragma allows up to the corpus's cap, named.
    assert counter.solc and parse_version(counter.solc) <= CORPUS_SOLC
    # With a limit, enumeration stops once that many are kept.
    limited = enumerate_package("local", "", CORPUS, source_files(CORPUS), seen={}, limit=1)
    assert [e.status for e in limited] == ["kept"]


def test_the_split_groups_by_package_name() -> None:
    for pin in PINS:
        assert split_of(pin.name) == ("held-out" if pin.name in HELD_OUT else "train")
    assert {split_of(pin.name) for pin in PINS} == {"train", "held-out"}
    # Both OpenZeppelin lines land on one side.
    assert len({split_of(pin.name) for pin in PINS if "openzeppelin" in pin.name}) == 1
    assert split_of("anything") == split_of("anything")
    assert [p.version for p in pin_of("@openzeppelin/contracts")] == ["3.4.2", "4.9.6"]
    assert [p.version for p in pin_of("@openzeppelin/contracts@4.9.6")] == ["4.9.6"]
    assert pin_of("left-pad") == []


def test_source_files_leave_out_tests_and_build_folders(tmp_path: Path) -> None:
    for name in ("src/A.sol", "src/test/A.t.sol", "build/B.sol", "src/node_modules/C.sol"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in
            source_files(tmp_path, ("",), ("build", ".t.sol"))] == ["src/A.sol"]


@needs_node
def test_the_command_writes_data_and_manifest_and_resumes(tmp_path: Path) -> None:
    source = tmp_path / "mine"
    shutil.copytree(CORPUS, source)
    out = tmp_path / "out"
    args = ["learn", "dataset", str(out), "--source", str(source), "--transactions", "6",
            "--quiet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    entries = {e["contract"]: e for e in manifest["contracts"]}
    assert set(entries) == {"Counter", "CounterCopy", "Vault"}
    assert entries["CounterCopy"]["status"] == "duplicate"
    for name in ("Counter", "Vault"):
        entry = entries[name]
        assert entry["status"] == "done" and entry["steps"] >= 1
        assert entry["package"] == "mine" and entry["split"] == split_of("mine")
        data = out / "data" / "mine" / f"{name}-{entry['code_hash'][:8]}.jsonl"
        header, steps = read_dataset(data)
        assert header["format"] == 2 and header["package"] == "mine"
        assert header["source"] == entry["source"] == f"{name}.sol"
        assert len(steps) == entry["steps"]
    # A second run finds both done and runs nothing again.
    stamps = {p: p.stat().st_mtime_ns for p in (out / "data").rglob("*.jsonl")}
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert {p: p.stat().st_mtime_ns for p in (out / "data").rglob("*.jsonl")} == stamps
    assert json.loads((out / "manifest.json").read_text())["contracts"] == \
        manifest["contracts"]
    # No clock bounds the expert by default: a build elsewhere writes the same data.
    other = tmp_path / "other"
    assert CliRunner().invoke(app, [*args[:2], str(other), *args[3:]]).exit_code == 0
    assert {p.relative_to(out): p.read_bytes() for p in (out / "data").rglob("*.jsonl")} == \
        {p.relative_to(other): p.read_bytes() for p in (other / "data").rglob("*.jsonl")}


@pytest.mark.parametrize(("extra", "words"), [
    (["--limit", "0"], "--limit must be at least 1"),
    (["--jobs", "0"], "--jobs must be at least 1"),
    (["--seconds", "0"], "--seconds must be more than 0"),
    (["--packages", "left-pad"], "'left-pad' is not a pinned package"),
    (["--source", "/nonexistent-folder"], "is not a folder"),
])
def test_bad_options_are_one_line_errors(tmp_path: Path, extra: list[str], words: str) -> None:
    result = CliRunner().invoke(app, ["learn", "dataset", str(tmp_path / "out"), *extra,
                                      "--quiet"])
    assert result.exit_code == 2
    assert words in result.output and "Traceback" not in result.output


@pytest.mark.slow
@pytest.mark.skipif("os.environ.get('SECANT_SLOW') != '1'", reason="slow: set SECANT_SLOW=1")
@needs_node
def test_one_real_package_enumerates_from_npm() -> None:
    from tests.packages import npm_modules

    modules = npm_modules("@uniswap/v2-core@1.0.1", "uniswap-v2-core-1.0.1",
                          "@uniswap/v2-core/contracts/UniswapV2Pair.sol")
    root = modules / "@uniswap" / "v2-core"
    entries = enumerate_package("@uniswap/v2-core", "1.0.1", root,
                                source_files(root, ("contracts",)), seen={})
    kept = {e.contract for e in entries if e.status == "kept"}
    assert {"UniswapV2Factory", "UniswapV2Pair"} <= kept
    assert all(e.split == "held-out" for e in entries)
