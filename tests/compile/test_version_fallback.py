"""Code the chosen compiler refuses: other releases the pragmas allow, the choice cached."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from secant.chain import TestChain
from secant.compile import CompilationFailed, CompileOptions, SolcManager, compile_files
from secant.compile.artifacts import from_standard_json
from secant.compile.cache import cache_root
from secant.compile.legacy import blank_pragmas, standard_output
from secant.compile.semver import VersionRange
from secant.compile.solc import install
from secant.compile.solidity import (
    FALLBACK_ATTEMPTS,
    before_payable,
    fallback_versions,
    version_dependent,
)
from secant.compile.sources import SourceSet, SourceUnit

from .conftest import SOLIDITY, needs_node


def _series(line: tuple[int, int], last: int) -> set[tuple[int, int, int]]:
    return {(line[0], line[1], patch) for patch in range(last + 1)}


CANDIDATES = _series((0, 4), 26) | _series((0, 5), 17) | _series((0, 6), 12) | \
    _series((0, 7), 6) | _series((0, 8), 30)
BEFORE_PRAGMAS = _series((0, 2), 2) | (_series((0, 3), 6) - {(0, 3, 0)})


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


def test_code_from_before_pragmas_reaches_the_compilers_before_0_4() -> None:
    everything = CANDIDATES | BEFORE_PRAGMAS
    assert fallback_versions(VersionRange.any(), True, (0, 8, 30), everything, set()) == \
        [(0, 7, 6), (0, 6, 12), (0, 5, 17), (0, 4, 26), (0, 3, 6), (0, 2, 2)]
    # A loose bound: the releases from 0.4 on as for any range, then the older lines.
    assert fallback_versions(VersionRange.parse("<0.5.0"), False, (0, 4, 26), everything,
                             set()) == [(0, 4, 0), (0, 4, 13), (0, 3, 6), (0, 2, 2)]
    # A range of old releases only: the same rules among them.
    assert fallback_versions(VersionRange.parse("^0.3.2"), False, (0, 3, 6), everything,
                             set()) == [(0, 3, 2), (0, 3, 4)]
    # Code that takes ether without ever saying `payable` was written before 0.4: the older
    # lines come first, where its functions still take ether.
    assert fallback_versions(VersionRange.any(), True, (0, 8, 30), everything, set(),
                             pre_payable=True) == \
        [(0, 3, 6), (0, 2, 2), (0, 7, 6), (0, 6, 12), (0, 5, 17), (0, 4, 26)]


def _units(*texts: str) -> SourceSet:
    sources = SourceSet(Path("."), [])
    for index, text in enumerate(texts):
        sources.units[f"{index}.sol"] = SourceUnit(f"{index}.sol", Path(f"{index}.sol"), text)
    return sources


def test_code_that_takes_ether_without_payable_is_from_before_0_4() -> None:
    assert before_payable(_units("contract A { function() { x = msg.value; } }"))
    assert not before_payable(_units("contract A { function() payable { x = msg.value; } }"))
    # `payable` in any unit of the set dates all of it; no ether read, nothing to tell.
    assert not before_payable(_units("contract A { uint v = msg.value; }",
                                     "contract B { function f() payable {} }"))
    assert not before_payable(_units("contract A { function f() {} }"))


def test_only_errors_another_release_may_not_have_are_retried() -> None:
    assert version_dependent(CompilationFailed("x", "", ("A.sol:3:4: ParserError: Expected '{'",)))
    assert version_dependent(CompilationFailed("x", "", ("A.sol:1:1: Warning: w",
                                                          "A.sol:9:2: TypeError: t")))
    assert not version_dependent(CompilationFailed("x", "", ("A.sol:1:1: CompilerError: "
                                                              "Stack too deep",)))
    assert version_dependent(CompilationFailed("x", "", ("SyntaxError: no location",)))
    # Releases before 0.4.11 call every error in the source just that.
    assert version_dependent(CompilationFailed("x", "", ("A.sol:6:6: Error: Expected token",)))
    assert not version_dependent(CompilationFailed("solc-js failed internally"))


def test_pragmas_are_blanked_for_compilers_that_predate_them() -> None:
    text = "pragma solidity /* \u00fc */ ^0.3.5;\n// pragma kept;\ncontract A {}\n"
    blanked = blank_pragmas(text)
    assert blanked.startswith(" " * len("pragma solidity /*  */ ^0.3.5;") + " " * 2 + "\n")
    # Byte for byte: the source maps and AST ranges of what follows stay true.
    assert len(blanked.encode()) == len(text.encode())
    assert blanked.endswith("\n// pragma kept;\ncontract A {}\n")


def test_a_legacy_answer_becomes_the_contracts_of_its_sources() -> None:
    text = ("contract Base { function run(); }\n"
            "library Sum { function add(uint a) returns (uint) { return a + 1; } }\n"
            "contract Top is Base { function Top() {} function run() { Sum.add(1); } }\n")

    def node(kind: str, piece: str, ident: int, children: Sequence[object] = (),
             length: int | None = None, **attributes: object) -> dict[str, object]:
        start = text.index(piece)
        if kind == "Contract":  # each contract is one line
            length = text.index("\n", start) - start
        return {"name": kind, "id": ident, "src": f"{start}:{length or len(piece)}:0",
                "attributes": attributes, "children": list(children)}

    # As releases before 0.4 nest it: each contract inside the one before.
    top = node("Contract", "contract Top", 9, [
        node("UserDefinedTypeName", "Base { function Top", 10, length=4, name="Base"),
        node("Function", "function Top() {}", 11, name="Top"),
        node("Function", "function run() { Sum.add(1); }", 12, name="run")], name="Top")
    library = node("Contract", "library Sum", 5, [
        node("Function", "function add(uint a) returns (uint) { return a + 1; }", 6, [top],
             name="add")], name="Sum")
    base = node("Contract", "contract Base", 1, [library], name="Base")
    call = text.index("Sum.add(1)")
    placeholder = "__" + "Sum".ljust(36, "_") + "__"
    legacy = {
        "contracts": {
            "Base": {"interface": "[]", "bytecode": "", "runtimeBytecode": ""},
            "Sum": {"interface": "[]", "bytecode": "6001", "runtimeBytecode": "6001"},
            "Top": {"interface": '[{"type":"function","name":"run","inputs":[],"outputs":[]}]',
                    "bytecode": "73" + placeholder + "00", "runtimeBytecode": "600100",
                    "srcmap": "0:1:0:-", "srcmap-runtime": f"{call}:10:0:-;;",
                    "functionHashes": {"run()": "c0406226"}},
        },
        "errors": ["A.sol:3:55: Warning: Unused local variable.\n  ^\n"],
        "sourceList": ["A.sol", "std"],
        "sources": {"A.sol": {"AST": {"name": "root", "children": [base]}}, "std": {}},
    }
    output = standard_output(legacy, {"A.sol": text})
    assert output["errors"][0]["severity"] == "warning"
    compilation = from_standard_json(output, {"A.sol": text}, {}, ["A.sol"], "solc 0.3.6")
    kinds = {c.name: (c.source, c.kind, c.base_ids) for c in compilation.contracts}
    assert kinds == {"Base": ("A.sol", "abstract", (1,)), "Sum": ("A.sol", "library", (5,)),
                     "Top": ("A.sol", "contract", (9, 1))}
    main = compilation.main_contract()
    assert main.name == "Top" and main.libraries == ("A.sol:Sum",)
    assert main.creation.link_references[0].offsets == (1,)
    where = compilation.locate(main, 0)
    assert where is not None and (where.contract, where.function) == ("Top", "run")
    assert [f.kind for f in compilation.sources[0].outline()[0] if f.contract == "Top"] == \
        ["constructor", "function"]


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
                           r"\"throw\" is deprecated") as raised:
            compile_files([SOLIDITY / "RangeBroken.sol"])
        # One line: the releases tried, and the way out.
        assert re.search(r" \(solc 0\.5\.17; 0\.4\.26(, 0\.5\.\d+)*( and 0\.5\.\d+)? "
                         r"refuses? it too\); .*--solc-version", str(raised.value))


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


KITTY = """\
// Written before pragmas existed: a modifier ends in a bare `_`, which 0.4 refuses.
contract Kitty {
    address owner;
    uint public fed;

    modifier onlyOwner { if (msg.sender != owner) throw; _ }

    function Kitty() { owner = msg.sender; }

    function feed(uint amount) onlyOwner { fed += amount; }
}
"""


@needs_node
def test_code_from_before_pragmas_compiles_with_a_0_3_release(
        solc_installed: list[str], private_outputs: Path, tmp_path: Path) -> None:
    install((0, 3, 6))
    path = tmp_path / "Kitty.sol"
    path.write_text(KITTY)
    with SolcManager() as manager:
        [compilation] = compile_files([path], manager=manager)
        notes = list(manager.notes)
    assert compilation.compiler == "solc 0.3.6"
    assert any(n.endswith("Kitty.sol states no solidity version and does not compile with "
                          "the newest solc; compiled with solc 0.3.6 (pass --solc-version to "
                          "choose)") for n in notes)
    contract = compilation.main_contract()
    assert {f.signature for f in contract.abi.functions} == {"fed()", "feed(uint256)"}
    chain = TestChain.setup(compilation)
    assert chain.main is not None
    assert not chain.call("attacker1", chain.main, "feed", [3]).success  # the modifier
    assert chain.call("deployer", chain.main, "feed", [3]).success
    assert chain.view(chain.main, "fed").value == 3
    # The runtime source map holds: some instruction lies in feed.
    mapper = compilation.mapper(contract)
    places = {(p.contract, p.function) for p in map(mapper.locate, mapper.entries) if p}
    assert ("Kitty", "feed") in places
    with SolcManager() as manager:
        [again] = compile_files([path], manager=manager)
        # From the cached decision: no newer release is started again.
        assert set(manager._compilers) == {("solc-js", (0, 3, 6))}
    assert again.main_contract().creation == contract.creation


@needs_node
def test_a_pragma_of_a_release_before_0_4_is_kept_to(
        solc_installed: list[str], tmp_path: Path) -> None:
    install((0, 3, 6))
    path = tmp_path / "Kitty.sol"
    path.write_text("pragma solidity ^0.3.5;\n" + KITTY)
    [compilation] = compile_files([path])
    assert compilation.compiler == "solc 0.3.6"
    assert compilation.main_contract().name == "Kitty"


JOURNAL = """\
pragma solidity ^0.4.24;

// A struct logged by an event: 0.4.25 and later refuse it without the new ABI encoder.
contract Journal {
    struct Entry { uint256 amount; address payer; }
    event Paid(Entry entry);
    uint256 public total;

    function pay() public payable {
        total += msg.value;
        Paid(Entry(msg.value, msg.sender));
    }
}
"""


@needs_node
def test_a_call_only_an_older_0_4_release_accepts_compiles_with_it(
        solc_installed: list[str], private_outputs: Path, tmp_path: Path) -> None:
    install((0, 4, 24))
    path = tmp_path / "Journal.sol"
    path.write_text(JOURNAL)
    with SolcManager() as manager:
        [compilation] = compile_files([path], manager=manager)
        notes = list(manager.notes)
    assert compilation.compiler == "solc 0.4.24"
    assert any("Journal.sol does not compile with solc 0.4.26, the release its pragmas "
               "chose; compiled with solc 0.4.24" in n for n in notes)
    chain = TestChain.setup(compilation)
    assert chain.main is not None
    assert chain.call("user1", chain.main, "pay", [], value=5).success
