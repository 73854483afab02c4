from pathlib import Path

from secant.compile.sources import (
    Remapping,
    apply_remappings,
    collect_sources,
    find_imports,
    find_pragmas,
    resolve_unit_name,
    strip_comments,
)

from .conftest import FIXTURES


def test_import_forms_and_comments() -> None:
    text = '''
    // import "commented.sol";
    /* import "block.sol"; */
    import "./A.sol";
    import 'B.sol' as B;
    import * as C from "./c/C.sol";
    import {D, E as F} from "@dep/D.sol";
    string constant s = "import \\"no.sol\\";";
    pragma solidity >=0.6.0 <0.9.0; // pragma solidity ^0.4.0;
    '''
    assert find_imports(text) == ["./A.sol", "B.sol", "./c/C.sol", "@dep/D.sol"]
    assert find_pragmas(text) == [">=0.6.0 <0.9.0"]
    assert "commented" not in strip_comments(text)


def test_unit_name_resolution_like_solc() -> None:
    assert resolve_unit_name("./B.sol", "src/A.sol") == "src/B.sol"
    assert resolve_unit_name("../lib/C.sol", "src/util/A.sol") == "src/lib/C.sol"
    assert resolve_unit_name("../../lib/C.sol", "src/util/A.sol") == "lib/C.sol"
    assert resolve_unit_name("@oz/X.sol", "src/A.sol") == "@oz/X.sol"


def test_remapping_longest_prefix_and_context() -> None:
    remaps = (
        Remapping.parse("@oz/=lib/oz/"),
        Remapping.parse("@oz/token/=lib/oz-token/"),
        Remapping.parse("src/legacy:@oz/=lib/oz-old/"),
    )
    remappings = tuple(r for r in remaps if r is not None)
    assert apply_remappings("@oz/a.sol", "src/A.sol", remappings) == "lib/oz/a.sol"
    assert apply_remappings("@oz/token/T.sol", "src/A.sol", remappings) == "lib/oz-token/T.sol"
    assert apply_remappings("@oz/a.sol", "src/legacy/A.sol", remappings) == "lib/oz-old/a.sol"
    assert str(remappings[2]) == "src/legacy:@oz/=lib/oz-old/"
    assert Remapping.parse("# comment") is None


def test_collect_follows_relative_and_remapped_imports() -> None:
    root = FIXTURES / "imports"
    sources = collect_sources([root / "src/Main.sol"])
    assert sources.base == root.resolve()
    assert sources.roots == ["src/Main.sol"]
    assert sorted(sources.units) == [
        "deps/dep-src/Token.sol", "lib/Shared.sol", "src/Main.sol", "src/util/Math.sol"]
    pragma, where = sources.pragma()
    assert pragma.contains((0, 8, 19)) and not pragma.contains((0, 7, 6))
    assert "src/util/Math.sol" in where
    std = sources.standard_input({"optimizer": {"enabled": False}})
    assert std["settings"]["remappings"] == ["@dep/=deps/dep-src/"]
    assert set(std["sources"]) == set(sources.units)


def test_include_paths(tmp_path: Path) -> None:
    root = FIXTURES / "imports"
    sources = collect_sources([root / "src/WithInclude.sol"], include_paths=(root / "extra",))
    assert "Extra.sol" in sources.units
    assert str((root / "extra").resolve()) in sources.search_roots()


def test_escaping_relative_import_uses_absolute_names(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "a" / ".git").mkdir()
    (tmp_path / "a" / "Main.sol").write_text('import "../shared/S.sol";\ncontract M {}\n')
    (tmp_path / "shared" / "S.sol").write_text("contract S {}\n")
    sources = collect_sources([tmp_path / "a" / "Main.sol"])
    assert sources.base == Path("/")
    names = sorted(sources.units)
    assert any(n.endswith("shared/S.sol") for n in names)
    assert all(not n.startswith("/") for n in names)
