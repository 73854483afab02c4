"""Foundry and Hardhat projects compiled from source (no forge, no hardhat), remappings,
project compiler settings and the flags that override them."""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from secant.compile import (
    Compilation,
    CompilationFailed,
    CompileOptions,
    InputError,
    PragmaUnsatisfiable,
    load,
)
from secant.compile.config import (
    CompilerSettings,
    parse_hardhat_config,
    read_foundry,
    read_hardhat,
    read_project,
)
from secant.compile.evm_versions import evm_version_for
from secant.compile.project import (
    artifacts_fresh,
    check_options,
    compile_options_for,
    plan_groups,
)
from secant.compile.semver import VersionRange
from secant.compile.solc import SolcManager
from tests.packages import openzeppelin_modules

from .conftest import FIXTURES, needs_node, newest_08, run_cli

PROJECTS = FIXTURES / "projects"
FOUNDRY = PROJECTS / "foundry"
HARDHAT = PROJECTS / "hardhat"
PLAIN = PROJECTS / "plain"


@contextmanager
def foundry_profile(name: str | None) -> Iterator[None]:
    """Run with ``FOUNDRY_PROFILE`` set to ``name`` (unset for None)."""
    old = os.environ.pop("FOUNDRY_PROFILE", None)
    if name is not None:
        os.environ["FOUNDRY_PROFILE"] = name
    try:
        yield
    finally:
        os.environ.pop("FOUNDRY_PROFILE", None)
        if old is not None:
            os.environ["FOUNDRY_PROFILE"] = old


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def copy_hardhat(target: Path) -> Path:
    """The Hardhat fixture with its packages where npm puts them (git ignores node_modules/)."""
    shutil.copytree(HARDHAT, target)
    (target / "_node_modules").rename(target / "node_modules")
    return target


# --- configuration, no compiler ------------------------------------------------------------


@pytest.mark.parametrize(("profile", "settings", "note"), [
    (None, CompilerSettings(), ""),
    ("default", CompilerSettings(), ""),
    ("optimized", CompilerSettings(optimize=True, optimize_runs=10000, evm_version="paris"), ""),
    ("nope", CompilerSettings(), "FOUNDRY_PROFILE=nope names no profile in foundry.toml"),
])
def test_foundry_profiles(profile: str | None, settings: CompilerSettings, note: str) -> None:
    with foundry_profile(profile):
        project = read_foundry(FOUNDRY)
    assert project.settings == settings
    assert project.profile == (profile if profile in ("default", "optimized") else "default")
    if note:
        assert note in project.notes[0]
    else:
        assert project.notes == ()
    # a profile inherits what it does not set from [profile.default]
    assert project.source_dirs == ("src", "test", "script")
    assert project.main_dirs == ("src",) and project.libs == ("lib",)
    assert "utils/=src/utils/" in [str(r) for r in project.remappings]


@pytest.mark.parametrize(("toml", "expected"), [
    ('solc = "0.8.20"\nvia-ir = true', CompilerSettings(solc_version="0.8.20", via_ir=True)),
    ('solc_version = "0.8.21"\noptimizer = false',
     CompilerSettings(solc_version="0.8.21", optimize=False)),
    ('evm_version = "Cancun"\noptimizer_runs = 1', CompilerSettings(optimize_runs=1,
                                                                     evm_version="cancun")),
    ('solc = "/usr/local/bin/solc"', CompilerSettings()),
    ('optimizer_runs = "many"', "optimizer_runs in foundry.toml must be a number"),
    ("optimizer_runs = true", "optimizer_runs in foundry.toml must be a number"),
    ('optimizer = "yes"', "optimizer in foundry.toml must be true or false"),
    ('evm_version = "frontier2"', "unknown EVM version 'frontier2' in foundry.toml"),
    ("src = [", "cannot read"),
])
def test_foundry_toml_keys(tmp_path: Path, toml: str,
                           expected: CompilerSettings | str) -> None:
    (tmp_path / "foundry.toml").write_text(f"[profile.default]\n{toml}\n")
    if isinstance(expected, str):
        with pytest.raises(InputError, match=expected) as caught:
            read_foundry(tmp_path)
        assert "\n" not in str(caught.value) and caught.value.hint
    else:
        project = read_foundry(tmp_path)
        assert project.settings == expected
        assert bool(project.notes) == ("/usr/local" in toml)


@pytest.mark.parametrize(("text", "settings", "versions", "sources"), [
    ('module.exports = { solidity: "0.8.20" };', CompilerSettings("0.8.20"), ("0.8.20",), None),
    ("module.exports = {\n  // solidity: '0.5.0',\n  solidity: '0.8.21',\n"
     "  paths: { sources: './src', tests: './t' },\n};",
     CompilerSettings("0.8.21"), ("0.8.21",), "./src"),
    ("module.exports = { solidity: { version: '0.8.20', settings: {\n"
     "  optimizer: { enabled: true, runs: 200 } } } };",
     CompilerSettings("0.8.20", True, 200), ("0.8.20",), None),
    ("import { HardhatUserConfig } from 'hardhat/config';\n"
     "const config: HardhatUserConfig = {\n  solidity: {\n    version: \"0.8.24\",\n"
     "    settings: { viaIR: true, evmVersion: `cancun`, optimizer: { runs: 1_000 } },\n"
     "  },\n};\nexport default config;",
     CompilerSettings("0.8.24", None, 1000, True, "cancun"), ("0.8.24",), None),
    ("module.exports = { solidity: { compilers: [\n"
     "  { version: '0.8.20', settings: { optimizer: { enabled: true, runs: 50 } } },\n"
     "  { version: '0.7.6' },\n] } };",
     CompilerSettings(None, True, 50), ("0.8.20", "0.7.6"), None),
    ("export default { solidity: { profiles: {\n"
     "  default: { version: '0.8.28' },\n"
     "  production: { version: '0.8.28', settings: { optimizer: { enabled: true } } },\n"
     "} } };",
     CompilerSettings("0.8.28"), ("0.8.28",), None),
    ("module.exports = { solidity: process.env.SOLC };", CompilerSettings(), (), None),
])
def test_hardhat_config_literals(text: str, settings: CompilerSettings,
                                 versions: tuple[str, ...], sources: str | None) -> None:
    assert parse_hardhat_config(text) == (settings, versions, sources)


def test_hardhat_project_reading(tmp_path: Path) -> None:
    project = read_hardhat(HARDHAT)
    assert project.kind == "hardhat" and project.config_file == "hardhat.config.js"
    assert project.settings == CompilerSettings("0.8.19", True, 777, None, "paris")
    assert project.source_dirs == ("contracts",) and not project.notes
    assert [p.name for p in project.files()] == ["Shop.sol", "Prices.sol"]
    (tmp_path / "hardhat.config.ts").write_text(
        "export default { solidity: SOLC, paths: { sources: 'src' } };")
    (tmp_path / "src").mkdir()
    odd = read_hardhat(tmp_path)
    assert odd.source_dirs == ("src",) and odd.settings == CompilerSettings()
    assert "not a plain literal" in odd.notes[0]


_FOUNDRY_TOML = "[profile.default]\n"


@pytest.mark.parametrize(("files", "expected"), [
    # a library with src/ maps to it, one without to its folder
    ({"lib/forge-std/src/Test.sol": "", "lib/solmate/tokens/ERC20.sol": ""},
     ["forge-std/=lib/forge-std/src/", "solmate/=lib/solmate/"]),
    # forge-std from npm; packages without Solidity get no remapping
    ({"node_modules/forge-std/src/Test.sol": "",
      "node_modules/@openzeppelin/contracts/token/ERC20/ERC20.sol": "",
      "node_modules/left-pad/index.js": ""},
     ["@openzeppelin/=node_modules/@openzeppelin/", "forge-std/=node_modules/forge-std/src/"]),
    # explicit remappings win over detected ones: foundry.toml, then remappings.txt
    ({"foundry.toml": _FOUNDRY_TOML + 'remappings = ["solmate/=lib/solmate/src/tokens/"]\n',
      "remappings.txt": "solmate/=wrong/\n@x/=vendor/x/\n", "lib/solmate/src/A.sol": ""},
     ["solmate/=lib/solmate/src/tokens/", "@x/=vendor/x/"]),
    # a library's own remappings, rebased, and the libraries it holds
    ({"lib/oz/remappings.txt": "@oz/contracts/=./contracts/\n", "lib/oz/contracts/A.sol": "",
      "lib/oz/lib/erc4626-tests/src/T.sol": "", "lib/oz/lib/forge-std/src/Test.sol": "",
      "lib/forge-std/src/Test.sol": ""},
     ["forge-std/=lib/forge-std/src/", "oz/=lib/oz/",
      "@oz/contracts/=lib/oz/contracts/", "erc4626-tests/=lib/oz/lib/erc4626-tests/src/"]),
    # other library folders
    ({"foundry.toml": _FOUNDRY_TOML + 'libs = ["deps", "lib"]\n', "deps/a/src/A.sol": "",
      "lib/b/B.sol": ""},
     ["a/=deps/a/src/", "b/=lib/b/"]),
])
def test_foundry_remappings(tmp_path: Path, files: dict[str, str], expected: list[str]) -> None:
    make_tree(tmp_path, {"foundry.toml": _FOUNDRY_TOML, **files})
    assert [str(r) for r in read_foundry(tmp_path).remappings] == expected


def test_fixture_remappings() -> None:
    remappings = [str(r) for r in read_foundry(FOUNDRY).remappings]
    assert remappings == ["utils/=src/utils/", "@tokens/=lib/mylib/src/tokens/",
                          "forge-std/=lib/forge-std/src/", "mylib/=lib/mylib/src/",
                          "mylib-extra/=lib/mylib/src/extra/"]


@pytest.mark.parametrize(("path", "base", "expected"), [
    # the project fills in what the command line leaves open
    (FOUNDRY, CompileOptions(),
     CompileOptions(optimize=True, optimize_runs=10000, evm_version="paris")),
    (FOUNDRY / "src/Vault.sol", CompileOptions(),
     CompileOptions(optimize=True, optimize_runs=10000, evm_version="paris")),
    # flags win
    (FOUNDRY, CompileOptions(optimize=False, evm_version="Shanghai", solc_version="0.8.20"),
     CompileOptions(solc_version="0.8.20", optimize=False, optimize_runs=10000,
                    evm_version="shanghai")),
    (HARDHAT, CompileOptions(optimize_runs=5, remappings=("@a/=b/",)),
     CompileOptions(solc_version="0.8.19", optimize=True, optimize_runs=5,
                    evm_version="paris", remappings=("@a/=b/",))),
    # no project: the options as given
    (PLAIN, CompileOptions(via_ir=True), CompileOptions(via_ir=True)),
])
def test_compile_options_for(path: Path, base: CompileOptions,
                             expected: CompileOptions) -> None:
    with foundry_profile("optimized"):
        assert compile_options_for([path], base) == expected


@pytest.mark.parametrize(("options", "message", "hint"), [
    (CompileOptions(remappings=("nonsense",)), "--remap 'nonsense' is not a remapping",
     "PREFIX=TARGET"),
    (CompileOptions(remappings=("=x/",)), "is not a remapping", "PREFIX=TARGET"),
    (CompileOptions(optimize_runs=-1), "--optimizer-runs -1 is out of range", "0 to"),
    (CompileOptions(evm_version="frontierx"), "unknown EVM version 'frontierx' (--evm-version)",
     "cancun"),
    (CompileOptions(solc_version="latest"), "--solc-version 'latest' is not a version",
     "0.8.26"),
])
def test_bad_options(options: CompileOptions, message: str, hint: str) -> None:
    with pytest.raises(InputError) as caught:
        check_options(options)
    assert message in caught.value.message and hint in caught.value.hint


@pytest.mark.parametrize(("name", "solc", "expected"), [
    ("cancun", (0, 8, 24), "cancun"),
    ("cancun", (0, 8, 19), "paris"),
    ("Osaka", (0, 7, 6), "istanbul"),
    ("london", (0, 4, 26), "constantinople"),
    ("paris", (0, 4, 10), None),
])
def test_evm_version_lowered_for_old_compilers(name: str, solc: tuple[int, int, int],
                                               expected: str | None) -> None:
    assert evm_version_for(name, solc) == expected


_V = [(0, 7, 6), (0, 8, 19), (0, 8, 20), (0, 8, 26)]


@pytest.mark.parametrize(("ranges", "expected"), [
    # one compiler for all: the newest every file allows
    ({"a": "^0.8.0", "b": ">=0.8.19"}, [((0, 8, 26), ["a", "b"])]),
    # a pinned file pulls the others to its version rather than a second run
    ({"a": "^0.8.0", "b": "=0.8.19", "c": ">=0.7.0"}, [((0, 8, 19), ["a", "b", "c"])]),
    # incompatible pragmas: two runs, the larger first
    ({"a": "^0.8.0", "b": "^0.8.20", "old": "^0.7.0"},
     [((0, 8, 26), ["a", "b"]), ((0, 7, 6), ["old"])]),
    # nothing satisfies: a last group without a version (the compile reports it)
    ({"a": "^0.8.0", "bad": "^0.9.0"}, [((0, 8, 26), ["a"]), (None, ["bad"])]),
])
def test_plan_groups(ranges: dict[str, str],
                     expected: list[tuple[tuple[int, int, int] | None, list[str]]]) -> None:
    parsed = {name: VersionRange.parse(text) for name, text in ranges.items()}
    assert plan_groups(parsed, _V) == expected


def test_artifact_freshness(tmp_path: Path) -> None:
    foundry = read_project(FIXTURES / "foundry")
    hardhat = read_project(FIXTURES / "hardhat")
    assert foundry is not None and hardhat is not None
    assert artifacts_fresh(foundry) and artifacts_fresh(hardhat)
    # Foundry without source texts in build-info: mtimes and one artifact folder per file
    shutil.copytree(FIXTURES / "foundry", tmp_path / "f")
    copied = read_project(tmp_path / "f")
    assert copied is not None and artifacts_fresh(copied)
    counter = tmp_path / "f/src/Counter.sol"
    later = counter.stat().st_mtime + 60
    os.utime(counter, (later, later))
    assert not artifacts_fresh(copied)
    os.utime(counter, (later - 60, later - 60))
    types = tmp_path / "f/src/Types.sol"
    types.write_text("struct Pair { uint256 a; }\n")
    os.utime(types, (later - 60, later - 60))
    assert artifacts_fresh(copied)  # no contract, so no artifact folder is expected
    (tmp_path / "f/src/New.sol").write_text("contract New {}\n")
    assert not artifacts_fresh(copied)
    # Hardhat: the build-info's texts against the files
    shutil.copytree(FIXTURES / "hardhat", tmp_path / "h")
    greeter = tmp_path / "h/contracts/Greeter.sol"
    greeter.write_text(greeter.read_text() + "\n// edited\n")
    edited = read_project(tmp_path / "h")
    assert edited is not None and not artifacts_fresh(edited)


@pytest.mark.parametrize(("project", "label"), [("foundry", "(forge artifacts)"),
                                               ("hardhat", "(hardhat build-info)")])
def test_fresh_artifacts_are_read_without_a_compiler(project: str, label: str) -> None:
    # SECANT_NODE points nowhere: reading artifacts must not start solc-js
    result = run_cli("compile", str(FIXTURES / project), "--json",
                     env={"SECANT_NODE": "/nonexistent/node", "SECANT_SOLC": "none"})
    assert result.returncode == 0, result.stderr
    [compilation] = json.loads(result.stdout)["compilations"]
    assert compilation["compiler"].endswith(label)
    # a compiler setting on the command line means: compile from source
    rebuilt = run_cli("compile", str(FIXTURES / project), "--optimize", "--no-cache",
                      env={"SECANT_NODE": "/nonexistent/node", "SECANT_SOLC": "none"})
    assert rebuilt.returncode == 2 and rebuilt.stderr.startswith("error: ")
    assert "node is not installed" in rebuilt.stderr or "solc" in rebuilt.stderr


def test_project_without_sources(tmp_path: Path) -> None:
    (tmp_path / "foundry.toml").write_text(_FOUNDRY_TOML)
    (tmp_path / "src").mkdir()
    with pytest.raises(InputError, match="has no .sol file in src/"):
        load([tmp_path])


# --- compiling -----------------------------------------------------------------------------


DEFAULTS = CompileOptions()


@functools.cache
def compile_foundry(profile: str | None = None,
                    options: CompileOptions = DEFAULTS) -> list[Compilation]:
    with foundry_profile(profile):
        return load([FOUNDRY], options)


@functools.cache
def compile_hardhat(root: Path, options: CompileOptions = DEFAULTS) -> list[Compilation]:
    return load([root], options)


@pytest.fixture(scope="session")
def hardhat_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_hardhat(tmp_path_factory.mktemp("projects") / "hardhat")


@needs_node
def test_foundry_project_from_source(solc_installed: list[str]) -> None:
    main, legacy = compile_foundry()
    assert main.origin == "foundry" and main.compiler == f"solc {newest_08()}"
    assert main.roots == ("src/Vault.sol", "src/utils/Limits.sol")
    assert main.main_contract().name == "Vault"
    names = {c.qualified_name for c in main.contracts}
    assert {"test/Vault.t.sol:VaultTest", "script/Deploy.s.sol:Deploy",
            "lib/forge-std/src/Test.sol:Test", "lib/mylib/src/tokens/Points.sol:Points",
            "lib/mylib/src/extra/Flags.sol:Flags", "lib/mylib/src/MathLib.sol:MathLib"} <= names
    vault = main.contract("Vault")
    assert {"deposit()", "withdraw(uint256)", "points(address)", "total()"} <= {
        f.signature for f in vault.abi.functions}
    # the source map leads back into the files, the library's included
    code = vault.runtime.analysis_bytes()
    mapper = main.mapper(vault)
    stores = {(loc.source, loc.line) for pc in mapper.entries if code[pc] == 0x55
              for loc in [mapper.locate(pc)] if loc is not None}
    assert {("src/Vault.sol", 16), ("src/Vault.sol", 17), ("src/Vault.sol", 23),
            ("lib/mylib/src/tokens/Points.sol", 11)} <= stores
    # the 0.7 file needs its own compiler run
    assert legacy.compiler == "solc 0.7.6" and legacy.roots == ("src/legacy/Counter7.sol",)
    assert [c.name for c in legacy.contracts] == ["Counter7"]


@needs_node
def test_foundry_profile_and_flags(solc_installed: list[str]) -> None:
    plain = compile_foundry()[0].contract("Vault").runtime.size
    optimized = compile_foundry("optimized")[0].contract("Vault").runtime.size
    assert optimized < plain
    # --no-optimize wins over the profile's optimizer = true
    overridden = compile_foundry("optimized", CompileOptions(optimize=False))
    assert overridden[0].contract("Vault").runtime.size > optimized
    # a remapping from the command line wins over the project's
    with pytest.raises(CompilationFailed, match="Flags.sol"):
        compile_foundry(None, CompileOptions(remappings=("mylib-extra/=src/utils/",)))


@needs_node
def test_stale_foundry_artifacts_are_compiled_again(solc_installed: list[str],
                                                    tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "foundry", tmp_path / "f")
    counter = tmp_path / "f/src/Counter.sol"
    later = counter.stat().st_mtime + 60
    os.utime(counter, (later, later))
    [compilation] = load([tmp_path / "f"])
    assert compilation.compiler == f"solc {newest_08()}" and compilation.origin == "foundry"
    assert compilation.main_contract().name == "Counter"
    assert compilation.locate("Counter", 0) is not None


@needs_node
def test_tests_needing_missing_libraries_are_skipped(solc_installed: list[str],
                                                     tmp_path: Path) -> None:
    shutil.copytree(FOUNDRY, tmp_path / "f")
    shutil.rmtree(tmp_path / "f/lib/forge-std")  # a clone without 'forge install'
    with SolcManager() as manager:
        main, _ = load([tmp_path / "f"], manager=manager)
    assert main.main_contract().name == "Vault"
    assert "VaultTest" not in {c.name for c in main.contracts}
    assert any("skipped test/Vault.t.sol: imported forge-std/Test.sol is not installed" in n
               for n in manager.notes)
    # the project's own sources are never skipped: their error is reported
    (tmp_path / "f/src/Broken.sol").write_text('import "missing/Thing.sol";\ncontract B {}\n')
    with pytest.raises(CompilationFailed, match="src/Broken.sol:1:1"):
        load([tmp_path / "f"])


@needs_node
def test_hardhat_project_from_source(solc_installed: list[str], hardhat_project: Path) -> None:
    [compilation] = compile_hardhat(hardhat_project)
    assert compilation.origin == "hardhat" and compilation.compiler == "solc 0.8.19"
    assert compilation.roots == ("contracts/Shop.sol", "contracts/lib/Prices.sol")
    shop = compilation.main_contract()
    assert shop.name == "Shop"
    assert {"buy()", "made(address)", "sold()"} == {f.signature for f in shop.abi.functions}
    assert compilation.source("@acme/widgets/contracts/Widget.sol") is not None
    assert compilation.source("@acme/widgets/contracts/IWidget.sol") is not None
    # the config's optimizer (runs 777) reached solc: turning it off makes the code bigger
    [unoptimized] = compile_hardhat(hardhat_project, CompileOptions(optimize=False))
    assert unoptimized.main_contract().runtime.size > shop.runtime.size


@needs_node
def test_hardhat_config_version_must_fit_the_pragmas(solc_installed: list[str],
                                                     tmp_path: Path) -> None:
    root = copy_hardhat(tmp_path / "hh")
    (root / "contracts/New.sol").write_text("pragma solidity ^0.8.20;\ncontract New {}\n")
    with pytest.raises(PragmaUnsatisfiable) as caught:
        load([root])
    assert "solc 0.8.19 does not satisfy" in caught.value.message
    assert "hardhat.config.js" in caught.value.message + caught.value.hint


@needs_node
def test_plain_folder_with_remappings_txt(solc_installed: list[str]) -> None:
    [compilation] = load([PLAIN])
    assert compilation.main_contract().name == "Area"
    assert compilation.contract("Square").source == "vendor/shapes/Square.sol"
    [other] = load([PLAIN], CompileOptions(remappings=("@shapes/=vendor/other/",)))
    assert other.contract("Square").source == "vendor/other/Square.sol"


@needs_node
def test_cli_compile_project_with_flags(solc_installed: list[str]) -> None:
    result = run_cli("compile", str(PLAIN), "--json", "--remap", "@shapes/=vendor/other/",
                     "--optimize", "--optimizer-runs", "1", "--evm-version", "Paris")
    assert result.returncode == 0, result.stderr
    [compilation] = json.loads(result.stdout)["compilations"]
    by_name = {c["name"]: c for c in compilation["contracts"]}
    assert by_name["Square"]["source"] == "vendor/other/Square.sol"
    assert by_name["Area"]["main"]
    bad = run_cli("compile", str(PLAIN), "--remap", "nonsense")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --remap 'nonsense'")
    assert len(bad.stderr.strip().splitlines()) == 1


@needs_node
def test_cli_deploy_foundry_project(solc_installed: list[str]) -> None:
    result = run_cli("deploy", str(FOUNDRY), "--json", "--no-optimize",
                     env={"FOUNDRY_PROFILE": "default"})
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["main"] == "Vault"
    assert {"deposit()", "withdraw(uint256)"} <= {f["signature"] for f in data["fuzzable"]}
    bad = run_cli("deploy", str(FOUNDRY), "--evm-version", "frontierx")
    assert bad.returncode == 2 and "unknown EVM version 'frontierx'" in bad.stderr


# --- a real package from npm ---------------------------------------------------------------


@needs_node
def test_hardhat_project_with_openzeppelin_from_npm(solc_installed: list[str],
                                                    tmp_path: Path) -> None:
    modules = openzeppelin_modules()
    version = newest_08()
    make_tree(tmp_path, {
        "hardhat.config.js": f'module.exports = {{ solidity: {{ version: "{version}", '
                             "settings: { optimizer: { enabled: true, runs: 200 } } } };\n",
        "contracts/MyToken.sol": (
            "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n\n"
            'import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";\n\n'
            "contract MyToken is ERC20 {\n"
            '    constructor() ERC20("My Token", "MY") {\n'
            "        _mint(msg.sender, 1000 ether);\n    }\n}\n"),
    })
    (tmp_path / "node_modules").symlink_to(modules, target_is_directory=True)
    with SolcManager() as manager:
        [compilation] = load([tmp_path], manager=manager)
    assert compilation.compiler == f"solc {version}" and compilation.origin == "hardhat"
    token = compilation.main_contract()
    assert token.name == "MyToken" and compilation.roots == ("contracts/MyToken.sol",)
    assert {"transfer(address,uint256)", "balanceOf(address)", "approve(address,uint256)",
            "totalSupply()"} <= {f.signature for f in token.abi.functions}
    erc20 = compilation.source("@openzeppelin/contracts/token/ERC20/ERC20.sol")
    assert erc20 is not None and erc20.path is not None and erc20.path.is_file()
    located = [compilation.locate(token, pc) for pc in compilation.mapper(token).entries]
    assert any(loc is not None and loc.source == erc20.name for loc in located)
