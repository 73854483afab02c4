"""Projects too large for one solc-js run: split into jobs under a size budget."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from secant.chain.artifacts import ArtifactResolver
from secant.compile import CompilationFailed, CompileOptions, load
from secant.compile.artifacts import Compilation
from secant.compile.config import read_project
from secant.compile.loader import select_contract
from secant.compile.project import compile_project, pack_roots
from secant.compile.semver import Version, VersionRange
from secant.compile.solc import SolcJs, SolcManager
from secant.compile.sources import SourceSet

from .conftest import needs_node

_PROGRESS = re.compile(r"compiling (\d+)/(\d+): (\d+) files, \d+\.\d MB \(solc 0\.8\.19\)")


def _closures(roots: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each root's closure: itself and the units it imports."""
    return {root: [root, *imports] for root, imports in roots.items()}


def test_pack_roots_keeps_what_fits_in_one_job_in_order() -> None:
    closures = _closures({"b.sol": ["lib.sol"], "a.sol": ["lib.sol"], "c.sol": []})
    sizes = {"a.sol": 10, "b.sol": 10, "c.sol": 10, "lib.sol": 50}
    assert pack_roots(closures, sizes, budget=80) == [["b.sol", "a.sol", "c.sol"]]
    assert pack_roots({}, sizes, budget=80) == []


def test_pack_roots_counts_a_shared_library_once() -> None:
    closures = _closures({"a.sol": ["lib.sol"], "b.sol": ["lib.sol"], "c.sol": ["lib.sol"],
                          "d.sol": []})
    sizes = {"a.sol": 20, "b.sol": 20, "c.sol": 20, "d.sol": 15, "lib.sol": 50}
    # a + b + lib = 90: counted per root the library would make it 140
    assert pack_roots(closures, sizes, budget=100) == [["a.sol", "b.sol"], ["c.sol", "d.sol"]]


def test_pack_roots_gives_an_oversized_root_a_job_of_its_own() -> None:
    closures = _closures({"big.sol": ["huge.sol", "lib.sol"], "part.sol": ["lib.sol"],
                          "small.sol": ["lib.sol"], "other.sol": []})
    sizes = {"big.sol": 10, "huge.sol": 200, "lib.sol": 30, "part.sol": 10,
             "small.sol": 10, "other.sol": 10}
    jobs = pack_roots(closures, sizes, budget=100)
    assert jobs[0] == ["big.sol"]
    assert sorted(jobs[1]) == ["other.sol", "part.sol", "small.sol"]
    # a root the oversized job already holds joins it for free (nothing grows)
    closures["lib.sol"] = ["lib.sol"]
    assert pack_roots(closures, sizes, budget=100)[0] == ["big.sol", "lib.sol"]


def test_pack_roots_is_deterministic() -> None:
    rng = random.Random(7)
    units = [f"u{i}.sol" for i in range(30)]
    sizes = {unit: rng.randrange(1, 25) for unit in units}  # no root alone over
    closures = {f"r{i}.sol": [f"r{i}.sol", *rng.sample(units, 5)] for i in range(40)}
    sizes.update({root: 5 for root in closures})
    first = pack_roots(closures, sizes, budget=150)
    assert len(first) > 1 and sorted(r for job in first for r in job) == sorted(closures)
    assert all(sum(sizes[u] for u in {u for r in job for u in closures[r]}) <= 150
               for job in first)
    names = list(closures)
    rng.shuffle(names)
    shuffled = pack_roots({name: closures[name] for name in names}, sizes, budget=150)
    assert [sorted(job) for job in shuffled] == [sorted(job) for job in first]


def _write_project(root: Path, contracts: int, size: int) -> None:
    """A Foundry project of ``contracts`` generated contracts of about ``size`` bytes each.

    Every contract imports a shared library (every other one calls it), so jobs share it.
    """
    (root / "src").mkdir(parents=True)
    (root / "foundry.toml").write_text('[profile.default]\nsrc = "src"\nsolc_version = "0.8.19"\n')
    (root / "src/Shared.sol").write_text(
        "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\n\nlibrary Shared {\n"
        "    function mix(uint256 a, uint256 k) internal pure returns (uint256) {\n"
        "        return (a ^ (k << 3)) % 1000003;\n    }\n\n"
        "    function scale(uint256 a) public pure returns (uint256) {\n"
        "        return a * 3 / 2;\n    }\n}\n")
    for i in range(contracts):
        shared = i % 2 == 0
        parts = ["// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\n\n",
                 'import {Shared} from "./Shared.sol";\n\n',
                 f"contract C{i} {{\n    uint256 public total;\n"]
        j = 0
        while sum(map(len, parts)) < size:
            step = f"Shared.mix(r, {j})" if shared else f"r ^ {j + 1}"
            parts.append(
                f"\n    function f{j}(uint256 a, uint256 b) external returns (uint256 r) {{\n"
                f"        r = a * {j % 7 + 2} + b / {j % 5 + 1};\n"
                f"        if (r % 2 == 0) {{\n            r = {step};\n"
                f"        }} else {{\n            r -= r / {j % 3 + 2};\n        }}\n"
                f"        total += r;\n    }}\n")
            j += 1
        parts.append("}\n")
        (root / f"src/C{i}.sol").write_text("".join(parts))


@needs_node
def test_large_project_compiles_in_several_jobs(solc_installed: list[str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _write_project(tmp_path, contracts=34, size=45_000)
    total = sum(p.stat().st_size for p in (tmp_path / "src").glob("*.sol"))
    assert total >= 1_500_000  # more than solc-js's own call takes in one run
    # Jobs of at most 1 MB, as for compilers before 0.6 (from 0.6 a job may hold 2 MB): each
    # is still past the size from which the driver puts the input on the heap.
    monkeypatch.setattr("secant.compile.project.HEAP_JOB_BUDGET", 1_000_000)
    with SolcManager(use_native=False) as manager:  # the limit is solc-js's
        compilations = load([tmp_path], CompileOptions(), manager)
    progress = [_PROGRESS.fullmatch(line) for line in capsys.readouterr().err.splitlines()]
    assert len(compilations) >= 2 and len(progress) == len(compilations)
    assert [m and (int(m[1]), int(m[2])) for m in progress] == \
        [(n, len(compilations)) for n in range(1, len(compilations) + 1)]
    compiled = {c.name: c for comp in compilations for c in comp.contracts}
    for i in range(34):
        contract = compiled[f"C{i}"]
        assert contract.deployable and len(contract.creation.hex) > 1000
    # the library is in several jobs, with the same code: no artifact name is ambiguous
    shared = [c for comp in compilations for c in comp.contracts if c.name == "Shared"]
    assert len(shared) >= 2 and len({c.creation.hex for c in shared}) == 1
    assert ArtifactResolver(compilations, {}).contract("Shared").kind == "library"
    assert select_contract(compilations, "C33")[1].name == "C33"
    # each job's output is cached: compiling again runs no compiler
    calls: list[int] = []
    original = SolcJs.compile

    def counted(self: SolcJs, *args: Any) -> dict[str, Any]:
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(SolcJs, "compile", counted)
    with SolcManager(use_native=False) as manager:
        again = load([tmp_path], CompileOptions(), manager)
    assert not calls and [c.roots for c in again] == [c.roots for c in compilations]


class _Manager:
    """A compiler manager for planning only: solc-js 0.8.19 for everything."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def select(self, pragma: VersionRange, requested: str | None = None,
               where: str = "the sources") -> tuple[str, Version]:
        return "solc-js", (0, 8, 19)


def _fake_compile(failing: str | None) -> Callable[..., Compilation]:
    """A stand-in for compile_sources: announces, then fails when ``failing`` is a root."""
    def compile_sources(sources: SourceSet, manager: Any, options: CompileOptions,
                        roots: Sequence[str], origin: str, what: str,
                        announce: Callable[[str], None] | None) -> Compilation:
        if announce is not None:
            announce("solc 0.8.19")
        if failing in sources.roots:
            raise CompilationFailed("solc-js 0.8.19 failed internally: memory access out "
                                    "of bounds", "try another compiler version")
        return Compilation([], {}, tuple(sources.roots), "solc 0.8.19")
    return compile_sources


def _small_project(root: Path) -> None:
    for folder in ("src", "test", "lib"):
        (root / folder).mkdir(parents=True)
    (root / "foundry.toml").write_text('[profile.default]\nsolc_version = "0.8.19"\n')
    (root / "lib/Lib.sol").write_text("library Lib {}\n" + "// padding\n" * 100)
    for name in ("A", "B"):
        (root / f"src/{name}.sol").write_text(f'import "../lib/Lib.sol";\ncontract {name} {{}}\n')
    (root / "test/Big.t.sol").write_text('import "../lib/Lib.sol";\ncontract Big {}\n'
                                         + "// padding\n" * 300)


def test_jobs_progress_and_a_root_too_large(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _small_project(tmp_path)
    project = read_project(tmp_path)
    assert project is not None
    manager: Any = _Manager()
    lines: list[str] = []
    monkeypatch.setattr("secant.compile.project.compile_sources", _fake_compile(None))
    # within the budget: one job, as ever, and no progress
    [one] = compile_project(project, CompileOptions(), manager, progress=lines.append)
    assert one.roots == ("src/A.sol", "src/B.sol", "test/Big.t.sol") and not lines
    # over the budget: the job over it alone runs first, the own files' job comes first
    results = compile_project(project, CompileOptions(), manager, budget=2000,
                              progress=lines.append)
    assert [c.roots for c in results] == [("src/A.sol", "src/B.sol"), ("test/Big.t.sol",)]
    assert lines == ["compiling 1/2: 2 files, 0.0 MB (solc 0.8.19)",
                     "compiling 2/2: 3 files, 0.0 MB (solc 0.8.19)"]
    # the budget follows the compiler: from 0.6 the driver takes large inputs on the heap
    monkeypatch.setattr("secant.compile.project.JOB_BUDGET", 2000)
    monkeypatch.setattr("secant.compile.project.HEAP_JOB_BUDGET", 6000)
    assert len(compile_project(project, CompileOptions(), manager, progress=lines.append)) == 1
    monkeypatch.setattr("secant.compile.project.HEAP_JOB_BUDGET", 2000)
    assert len(compile_project(project, CompileOptions(), manager, progress=lines.append)) == 2
    monkeypatch.setattr("secant.compile.project.compile_sources",
                        _fake_compile("test/Big.t.sol"))
    with pytest.raises(CompilationFailed) as caught:
        compile_project(project, CompileOptions(), manager, budget=2000, progress=lines.append)
    assert caught.value.one_line() == (
        "test/Big.t.sol and its imports total 0.0 MB, more than solc-js can compile in one job "
        "(solc-js 0.8.19 failed internally: memory access out of bounds); put a native solc "
        "0.8.19 on PATH (or name it in SECANT_SOLC): it has no such limit")
