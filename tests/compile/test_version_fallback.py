"""Code the chosen compiler refuses: other releases the pragmas allow, the choice cached."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.chain import TestChain
from secant.compile import CompilationFailed, CompileOptions, SolcManager, compile_files
from secant.compile.cache import cache_root
from secant.compile.semver import VersionRange
from secant.compile.solc import install
from secant.compile.solidity import FALLBACK_ATTEMPTS, fallback_versions, version_dependent

from .conftest import SOLIDITY, needs_node


def _series(line: tuple[int, int], last: int) -> set[tuple[int, int, int]]:
    return {(line[0], line[1], patch) for patch in range(last + 1)}


CANDIDATES = _series((0, 4), 26) | _series((0, 5), 17) | _series((0, 6), 12) | \
    _series((0, 7), 6) | _series((0, 8), 30)


def test_a_range_tries_its_oldest_release_then_other_lines_then_installed_ones() -> None:
    pragma = VersionRange.parse(">=0.4.20 <0.7.0")
    picks = fallback_versions(pragma, False, (0, 6, 12), CANDIDATES,
                              installed={(0, 5, 3), (0, 6, 4), (0, 8, 1)})
    # Oldest allowed, the newest of each other line (newest first), the middle installed one.
    assert picks == [(0, 4, 20), (0, 5, 17), (0, 4, 26), (0, 6, 4)]
    assert len(picks) == FALLBACK_ATTEMPTS


def test_in_between_releases_are_installed_ones_or_the_middle_one() -> None:
    pragma = VersionRange.parse("^0.4.9")
    assert fallback_versions(pragma, False, (0, 4, 26), CANDIDATES,
                             installed={(0, 4, 13), (0, 4, 24), (0, 4, 25)}) == \
        [(0, 4, 9), (0, 4, 13), (0, 4, 24), (0, 4, 25)]
    assert fallback_versions(pragma, False, (0, 4, 26), CANDIDATES, installed=set()) == \
        [(0, 4, 9), (0, 4, 18)]
    # A range of one release has nothing else to try.
    assert fallback_versions(VersionRange.parse("=0.4.26"), False, (0, 4, 26), CANDIDATES,
                             installed=set()) == []


def test_sources_without_a_pragma_try_the_newest_of_each_older_line() -> None:
    assert fallback_versions(VersionRange.any(), True, (0, 8, 30), CANDIDATES, set()) == \
        [(0, 7, 6), (0, 6, 12), (0, 5, 17), (0, 4, 26)]


def test_only_errors_another_release_may_not_have_are_retried() -> None:
    assert version_dependent(CompilationFailed("x", "", ("A.sol:3:4: ParserError: Expected '{'",)))
    assert version_dependent(CompilationFailed("x", "", ("A.sol:1:1: Warning: w",
                                                          "A.sol:9:2: TypeError: t")))
    assert not version_dependent(CompilationFailed("x", "", ("A.sol:1:1: CompilerError: "
                                                              "Stack too deep",)))
    assert version_dependent(CompilationFailed("x", "", ("SyntaxError: no location",)))
    assert not version_dependent(CompilationFailed("solc-js failed internally"))


@pytest.fixture
def private_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of outputs and decisions of its own, sharing the installed compilers."""
    real = cache_root() / "solc"
    monkeypatch.setenv("SECANT_CACHE", str(tmp_path))
    (tmp_path / "solc").symlink_to(real)
    return tmp_path


@needs_node
def test_the_oldest_release_of_a_range_compiles_and_the_choice_is_cached(
        solc_installed: list[str], private_outputs: Path) -> None:
    with SolcManager() as manager:
        [compilation] = compile_files([SOLIDITY / "RangeThrow.sol"], manager=manager)
        notes = list(manager.notes)
        assert ("solc-js", (0, 5, 17)) in manager._compilers
    assert compilation.compiler == "solc 0.4.26"
    assert compilation.main_contract().name == "RangeThrow"
    [note] = [n for n in notes if "does not compile" in n]
    assert note.endswith("RangeThrow.sol does not compile with solc 0.5.17, the release its "
                         "pragmas chose; compiled with solc 0.4.26 (pass --solc-version to "
                         "choose)")
    with SolcManager() as manager:
        [again] = compile_files([SOLIDITY / "RangeThrow.sol"], manager=manager)
        # The second run goes straight to the release that compiled, from the cache.
        assert ("solc-js", (0, 5, 17)) not in manager._compilers
        assert manager._compilers[("solc-js", (0, 4, 26))].starts == 0  # type: ignore[attr-defined]
        assert note in manager.notes
    assert again.main_contract().creation == compilation.main_contract().creation


@needs_node
def test_when_no_release_compiles_the_chosen_ones_error_is_shown(
        solc_installed: list[str], private_outputs: Path) -> None:
    for _ in range(2):  # the second time from the cached decision
        with pytest.raises(CompilationFailed, match=r"RangeBroken.sol:7:25: SyntaxError: "
                           r"\"throw\" is deprecated"):
            compile_files([SOLIDITY / "RangeBroken.sol"])


@needs_node
def test_a_pinned_version_is_not_replaced(solc_installed: list[str]) -> None:
    with pytest.raises(CompilationFailed, match="same name as the contract"):
        compile_files([SOLIDITY / "RangeThrow.sol"], CompileOptions(solc_version="0.5.17"))


@needs_node
def test_releases_older_than_standard_json_compile_through_a_newer_wrapper(
        solc_installed: list[str]) -> None:
    install((0, 4, 9))
    with SolcManager() as manager:
        [compilation] = compile_files([SOLIDITY / "Legacy0409.sol"], manager=manager)
        notes = list(manager.notes)
    assert compilation.compiler == "solc 0.4.9"
    assert any("compile with solc 0.4.26, the release its pragmas chose; compiled with solc "
               "0.4.9" in n for n in notes)
    contract = compilation.main_contract()
    assert {f.signature for f in contract.abi.functions} == {"made()", "spawn(bytes)"}
    chain = TestChain.setup(compilation)
    assert chain.main is not None
    # Creating empty code fails the assembly's check: the jump to the invalid label.
    assert not chain.call("deployer", chain.main, "spawn", [b""]).success
    assert chain.call("deployer", chain.main, "spawn", [bytes.fromhex("600160005360016000f3")]
                      ).success
    location = compilation.locate(contract, 0)
    assert location is not None and location.source.endswith("Legacy0409.sol")
