"""Compile under every supported solc generation through solc-js (live node processes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.compile import CompileOptions, SolcManager, compile_files
from secant.compile.artifacts import Compilation
from secant.compile.cache import cache_root
from secant.compile.solc import SolcJs

from .conftest import FIXTURES, SOLIDITY, needs_node

pytestmark = needs_node

CASES = [
    ("0.4.26", "Simple04.sol", "Simple04", {"deposit()", "withdraw(uint256)", "owner()"}),
    ("0.5.17", "Simple05.sol", "Simple05", {"set(uint256)", "get()", "stored()"}),
    ("0.6.12", "Simple06.sol", "Simple06", {"bump(uint256)", "name()", "counter()"}),
    ("0.7.6", "Simple07.sol", "Simple07", {"add((uint128,uint128))", "sum(uint256[])"}),
    (None, "Simple08.sol", "Simple08", {"set(uint256)", "increment()", "value()"}),
]


def _compile(file: Path, version: str | None, manager: SolcManager | None = None,
             cache: bool = True) -> Compilation:
    options = CompileOptions(solc_version=version, use_cache=cache)
    return compile_files([file], options, manager)[0]


@pytest.mark.parametrize(("version", "file", "main", "functions"), CASES)
def test_compile_each_generation(solc_installed: list[str], version: str | None, file: str,
                                 main: str, functions: set[str]) -> None:
    compilation = _compile(SOLIDITY / file, version, cache=False)
    if version is not None:
        assert compilation.compiler == f"solc {version}"
    else:  # the pragma ^0.8.0 picks the newest 0.8.x
        assert compilation.compiler == f"solc {solc_installed[4]}"
    contract = compilation.main_contract()
    assert contract.name == main
    assert contract.deployable
    assert functions <= {f.signature for f in contract.abi.functions}
    assert contract.creation.size > 0 and contract.runtime.size > 0
    assert contract.creation.source_map and contract.runtime.source_map
    assert contract.ast_id is not None and contract.base_ids[0] == contract.ast_id
    for fn in contract.abi.functions:
        assert contract.method_identifiers[fn.signature] == fn.selector.hex()
    assert compilation.roots == (f"tests/fixtures/solidity/{file}",)
    assert all(s.ast for s in compilation.sources.values())


def test_04_library_link_references(solc_installed: list[str]) -> None:
    compilation = _compile(SOLIDITY / "Simple04.sol", "0.4.26")
    contract = compilation.contract("Simple04")
    assert contract.libraries == ("tests/fixtures/solidity/Simple04.sol:MathLib",)
    assert not contract.runtime.is_linked
    ref = contract.runtime.link_references[0]
    assert ref.library == "MathLib" and ref.length == 20 and ref.offsets
    linked = contract.runtime.link({"MathLib": 0x1234})
    assert linked[ref.offsets[0]:ref.offsets[0] + 20] == (0x1234).to_bytes(20, "big")
    with pytest.raises(ValueError, match="needs linking"):
        contract.runtime.to_bytes()
    assert compilation.contract("MathLib").kind == "library"
    assert not compilation.contract("MathLib").deployable
    # Base04 is a base of Simple04, so the most derived contract is the main one.
    assert compilation.contract("Base04").ast_id in contract.base_ids


def test_08_immutables_storage_layout_and_abstract(solc_installed: list[str]) -> None:
    compilation = _compile(SOLIDITY / "Simple08.sol", None)
    contract = compilation.main_contract()
    assert len(contract.runtime.immutable_references) == 1
    ref = contract.runtime.immutable_references[0]
    assert ref.ranges and all(length == 32 for _, length in ref.ranges)
    assert contract.storage_layout is not None
    assert [s["label"] for s in contract.storage_layout["storage"]] == ["value"]
    assert contract.abi.errors[0].signature == "NotOwner(address)"
    abstract = _compile(SOLIDITY / "Simple06.sol", "0.6.12").contract("Named06")
    assert abstract.kind == "abstract" and not abstract.deployable


def test_one_node_process_per_version(solc_installed: list[str]) -> None:
    files = [SOLIDITY / "Simple08.sol", FIXTURES / "imports/src/Main.sol",
             SOLIDITY / "Simple05.sol"]
    with SolcManager() as manager:
        results = compile_files(files, CompileOptions(use_cache=False), manager)
        compilers = list(manager._compilers.values())
    assert [r.main_contract().name for r in results] == ["Simple08", "Main", "Simple05"]
    assert len(compilers) == 2
    assert all(isinstance(c, SolcJs) and c.starts == 1 for c in compilers)


def test_output_cache_skips_the_compiler(solc_installed: list[str], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    real = cache_root() / "solc"  # reuse the installed compilers, not their outputs
    monkeypatch.setenv("SECANT_CACHE", str(tmp_path))
    (tmp_path / "solc").symlink_to(real)
    with SolcManager() as manager:
        first = _compile(SOLIDITY / "Simple05.sol", "0.5.17", manager)
        assert manager._compilers[("solc-js", (0, 5, 17))].starts == 1
    with SolcManager() as manager:
        second = _compile(SOLIDITY / "Simple05.sol", "0.5.17", manager)
        assert manager._compilers[("solc-js", (0, 5, 17))].starts == 0
    assert first.main_contract().creation == second.main_contract().creation
    assert list((tmp_path / "outputs").rglob("*.json"))


def test_imports_with_remappings_and_include_paths(solc_installed: list[str]) -> None:
    compilation = _compile(FIXTURES / "imports/src/Main.sol", None)
    main = compilation.main_contract()
    assert main.name == "Main"
    assert {"mint(uint256)", "double(uint256)"} <= {f.signature for f in main.abi.functions}
    assert compilation.contract("MathUtil").kind == "library"
    options = CompileOptions(include_paths=(FIXTURES / "imports/extra",))
    included = compile_files([FIXTURES / "imports/src/WithInclude.sol"], options)[0]
    assert included.main_contract().name == "WithInclude"
    assert included.source("Extra.sol") is not None


def test_sources_without_a_pragma_that_the_newest_refuses_get_an_older_line() -> None:
    with SolcManager() as manager:
        [compilation] = compile_files([SOLIDITY / "NoPragma04.sol"], CompileOptions(),
                                      manager)
        notes = list(manager.notes)
    assert compilation.compiler == "solc 0.4.26"
    assert {f.signature for f in compilation.contract("NoPragma04").abi.functions} == {
        "add(uint256)", "total()"}
    assert any("states no solidity version and does not compile with the newest solc; "
               "compiled with solc 0.4.26" in note for note in notes)


def test_a_cap_on_the_newest_release_fixes_the_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus's compilers: the newest release up to the cap, never the machine's solc."""
    from types import SimpleNamespace

    from secant.compile import solc
    from secant.compile.semver import VersionRange

    releases = [(0, 8, 19), (0, 8, 20), (0, 8, 21), (0, 8, 30)]
    monkeypatch.setattr(solc, "remote_versions", lambda refresh=False: releases)
    monkeypatch.setattr(solc, "installed_versions", lambda: [(0, 8, 30)])
    monkeypatch.setattr(solc, "is_installed", lambda version: True)
    monkeypatch.setattr(solc, "find_native", lambda: SimpleNamespace(version=(0, 8, 25)))
    pragma = VersionRange.parse("^0.8.0")
    assert SolcManager().select(pragma) == ("native", (0, 8, 25))
    capped = SolcManager(newest=(0, 8, 20))
    assert capped.select(pragma) == ("solc-js", (0, 8, 20))
    assert capped.candidates() == {(0, 8, 19), (0, 8, 20)}
    with pytest.raises(solc.PragmaUnsatisfiable, match="up to 0.8.20"):
        capped.select(VersionRange.parse(">=0.8.21"))
