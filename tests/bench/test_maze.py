"""The maze benchmark (``bench/maze_gen.py``, ``bench/maze.py``): generation, ground truth,
and the runner's reading of each tool's results.

The ground truth is checked three ways: z3's verdict on hand-written nests whose answer is
known; the Python evaluator (the generator's model of Solidity 0.8) against the z3 encoding
on random values; and both against the EVM: every feasible assertion's transaction
sequence fires it on secant's chain, and random arguments revert, pass or fire a cell on
the chain exactly as the evaluator says.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench import load_bench
from tests.compile.conftest import needs_node

MAZE = load_bench("maze")
GEN = sys.modules["maze_gen"]  # imported by bench/maze.py

U256, U64, S256 = GEN.U256, GEN.U64, GEN.S256
Var, Const, Bin, Cmp, Cast = GEN.Var, GEN.Const, GEN.Bin, GEN.Cmp, GEN.Cast


# ------------------------------------------------------------------ generation


def test_the_same_seed_gives_the_same_maze_and_other_seeds_other_mazes() -> None:
    first, again = GEN.generate(7), GEN.generate(7)
    assert first.source == again.source
    assert first.open == again.open
    assert [c.witness for c in first.cells] == [c.witness for c in again.cells]
    assert GEN.generate(8).source != first.source
    assert GEN.generate(7, size=4).source != first.source


def test_a_maze_has_its_functions_walls_and_one_assertion_per_cell() -> None:
    maze = GEN.generate(0)
    args = "uint256 p0, uint256 p1, uint256 p2, int256 p3, uint64 p4, uint64 p5, " \
           "uint64 p6, int256 p7"
    for name in ("moveNorth", "moveSouth", "moveEast", "moveWest"):
        assert f"function {name}({args}) external {{" in maze.source
    lines = maze.source.splitlines()
    assert len(maze.cells) == 25
    for cell in maze.cells:
        assert lines[cell.line - 1].strip() == f"emit AssertionFailed({cell.id});"
        assert 1 <= len(cell.levels) <= 3
    assert sum(c.intended == "infeasible" for c in maze.cells) == 5
    # Walls are open from both sides, only between neighbours, and every cell is reachable.
    for cell in range(25):
        for direction, nxt in maze.exits(cell):
            assert (direction ^ 1, cell) in maze.exits(nxt)
    assert sorted(maze.paths()) == list(range(25))
    # Every family appears somewhere in five mazes.
    families = {level.family for seed in range(5) for cell in GEN.generate(seed).cells
                for level in cell.levels}
    assert families >= {"linear", "non-linear", "wrapping", "truncation", "signed",
                        "storage", "contradiction"}


# ------------------------------------------------------------------ ground truth


def nest(*levels: tuple[Any, bool]) -> Any:
    return GEN.Cell(99, [GEN.Level(cond, "test", unchecked) for cond, unchecked in levels],
                    "feasible")


def k(value: int, kind: Any) -> Any:
    return Const(value, kind)


def verdict(cell: Any) -> str:
    maze = GEN.generate(0, size=2)
    maze.cells = [cell]
    cell.id = 0
    return GEN.decide(maze, cell, 30_000)[0]


@pytest.mark.parametrize(("levels", "expected"), [
    # p3 > 100 inside p3 < 50: a contradiction.
    ([(Cmp(">", Var("p3"), k(100, S256)), False), (Cmp("<", Var("p3"), k(50, S256)), False)],
     "unsat"),
    # p1 * p1 + 10 == 10010 (p1 = 100), inside p1 < 1000.
    ([(Cmp("<", Var("p1"), k(1000, U256)), False),
      (Cmp("==", Bin("+", Bin("*", Var("p1"), Var("p1")), k(10, U256)), k(10010, U256)),
       False)], "sat"),
    # x * x == 2 has no solution, checked or wrapped.
    ([(Cmp("==", Bin("*", Var("p0"), Var("p0")), k(2, U256)), False)], "unsat"),
    ([(Cmp("==", Bin("*", Var("p0"), Var("p0")), k(2, U256)), True)], "unsat"),
    # p4 + p6 < p4 holds only when the uint64 sum wraps: never in checked code.
    ([(Cmp("<", Bin("+", Var("p4"), Var("p6")), Var("p4")), True)], "sat"),
    ([(Cmp("<", Bin("+", Var("p4"), Var("p6")), Var("p4")), False)], "unsat"),
    # p4 > p4 * p6 with p6 >= 1: only a wrapping product.
    ([(Cmp(">=", Var("p6"), k(1, U64)), False),
      (Cmp(">", Var("p4"), Bin("*", Var("p4"), Var("p6"))), True)], "sat"),
    # p4 * p5 == 391 (17 * 23) for factors below 100; signed: p3 / -5 == 7.
    ([(Cmp("<", Var("p4"), k(100, U64)), False), (Cmp("<", Var("p5"), k(100, U64)), False),
      (Cmp("==", Bin("*", Var("p4"), Var("p5")), k(391, U64)), False)], "sat"),
    ([(Cmp("==", Bin("/", Var("p3"), k(-5, S256)), k(7, S256)), False)], "sat"),
    # uint64(p0) truncates.
    ([(Cmp("==", Cast(U64, Var("p0")), k(5, U64)), False),
      (Cmp(">", Var("p0"), k(1 << 200, U256)), False)], "sat"),
    # Storage: p0 == memo + 3 inside memo % 10 == 9 inside moves >= 2.
    ([(Cmp(">=", Var("moves"), k(2, U256)), False),
      (Cmp("==", Bin("%", Var("memo"), k(10, U256)), k(9, U256)), False),
      (Cmp("==", Var("p0"), Bin("+", Var("memo"), k(3, U256))), False)], "sat"),
    # 2 * p1 is even, wrapped or not.
    ([(Cmp("==", Bin("*", k(2, U256), Var("p1")), k(7, U256)), True)], "unsat"),
])
def test_z3_decides_known_nests(levels: list[tuple[Any, bool]], expected: str) -> None:
    cell = nest(*levels)
    assert verdict(cell) == expected
    if expected == "sat":
        maze = GEN.generate(0, size=2)
        _, model, _ = GEN.decide(maze, cell, 30_000)
        assert model is not None and cell.fires(model)  # the evaluator agrees


def random_env(rng: random.Random, witness: dict[str, int]) -> dict[str, int]:
    """Values near the witness, small, or anywhere in the types' ranges."""
    env = {}
    for name, kind in GEN.TYPES.items():
        roll = rng.random()
        if roll < 0.4 and name in witness:
            env[name] = kind.wrap(witness[name] + rng.choice((0, 0, 1, -1, 2)))
        elif roll < 0.7:
            env[name] = kind.wrap(rng.randrange(-3, 1000))
        else:
            env[name] = rng.randrange(kind.lo, kind.hi + 1)
    env["moves"] = abs(env["moves"]) % 64
    return env


def outcome(cell: Any, env: dict[str, int]) -> str:
    try:
        return "fire" if cell.fires(env) else "pass"
    except GEN.Revert:
        return "revert"


def test_the_evaluator_and_the_z3_encoding_agree_on_random_values() -> None:
    import z3

    rng = random.Random(1)
    checked = 0
    for seed in range(4):
        for cell in GEN.generate(seed).cells:
            terms = GEN.z3_env()
            fires, passes = cell.z3_terms(terms)
            for _ in range(6):
                env = random_env(rng, cell.witness)
                subst = [(terms[n], z3.BitVecVal(v % (1 << GEN.TYPES[n].bits),
                                                  GEN.TYPES[n].bits)) for n, v in env.items()]
                z3_fires = z3.is_true(z3.simplify(z3.substitute(fires, *subst)))
                z3_passes = z3.is_true(z3.simplify(z3.substitute(passes, *subst)))
                expected = outcome(cell, env)
                assert (z3_fires, z3_passes) == (expected == "fire", expected != "revert"), \
                    (seed, cell.id, env)
                checked += 1
    assert checked == 4 * 25 * 6


@pytest.mark.parametrize(("seed", "size"), [(2, 3), (4, 3), (4, 5)])
def test_classification_matches_the_generators_intent(seed: int, size: int) -> None:
    truth = GEN.classify(GEN.generate(seed, size=size))
    for entry in truth["assertions"]:
        if entry["intended"] == "infeasible":
            assert entry["z3"] == "unsat" and entry["feasible"] is False, entry
        else:
            assert entry["feasible"] is True and entry["z3"] == "sat", entry
            assert entry["witness_from"] == "generator" and entry["sequence"]
    assert truth["feasible"] + truth["infeasible"] == size * size and truth["unknown"] == 0


# ------------------------------------------------------------------ on secant's EVM


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, dict[str, Any]]:
    from secant.chain.chain import TestChain
    from secant.compile import CompileOptions, load

    maze = GEN.generate(0)
    sol, truth_path = GEN.write(maze, tmp_path_factory.mktemp("maze"))
    chain = TestChain.setup(load([sol], CompileOptions(solc_version=GEN.SOLC_VERSION)), "Maze")
    return maze, chain, json.loads(truth_path.read_text())


def emitted(chain: Any, logs: list[Any]) -> list[int]:
    from secant.abi import event_topic

    topic = int.from_bytes(event_topic("AssertionFailed(uint256)"), "big")
    return [int.from_bytes(data, "big") for _, topics, data in logs
            if topics and topics[0] == topic]


def replay(chain: Any, sequence: list[dict[str, Any]]) -> list[int]:
    """Run the transactions; the ids each emitted, in order."""
    fired: list[int] = []
    for tx in sequence:
        result = chain.call("user1", "Maze", tx["function"], [int(a) for a in tx["args"]])
        assert result.success, (tx, result.revert)
        fired += emitted(chain, result.logs)
    return fired


@needs_node
def test_every_feasible_assertion_fires_on_secants_evm(deployed: tuple[Any, Any, Any]) -> None:
    maze, chain, truth = deployed
    base = chain.state.snapshot()
    fired_ids = []
    for entry in truth["assertions"]:
        if not entry["feasible"]:
            assert "sequence" not in entry
            continue
        chain.state.revert(base)
        fired = replay(chain, entry["sequence"])
        assert fired and fired[-1] == entry["id"], entry["id"]
        mask = chain.view("Maze", "foundMask").value
        assert mask >> entry["id"] & 1
        fired_ids.append(entry["id"])
    chain.state.revert(base)
    assert len(fired_ids) == truth["feasible"] == 20


@needs_node
def test_the_evm_reverts_passes_and_fires_as_the_evaluator_says(
        deployed: tuple[Any, Any, Any]) -> None:
    maze, chain, truth = deployed
    rng = random.Random(5)
    base = chain.state.snapshot()
    seen = {"revert": 0, "pass": 0, "fire": 0}
    for cell in maze.cells:
        memo = cell.witness.get("memo", 0)
        entry = maze.entry_moves(cell.id)
        moves = cell.witness.get("moves", entry)
        chain.state.revert(base)
        approach = GEN.witness_sequence(maze, cell, {"memo": memo, "moves": moves})
        final = approach.pop()
        replay(chain, approach)
        here = chain.state.snapshot()
        for _ in range(12):
            env = random_env(rng, cell.witness)
            env.update(memo=memo, moves=moves)
            chain.state.revert(here)
            result = chain.call("user1", "Maze", final["function"], GEN.abi_args(env))
            on_chain = ("revert" if not result.success else
                        "fire" if emitted(chain, result.logs) == [cell.id] else "pass")
            assert on_chain == outcome(cell, env), (cell.id, env)
            seen[on_chain] += 1
    chain.state.revert(base)
    assert all(seen.values()), seen


# ------------------------------------------------------------------ the runner


def test_secant_findings_map_to_ids_by_line() -> None:
    truth = {"assertions": [{"id": 4, "line": 90}, {"id": 7, "line": 120}]}
    summary = {"findings": [
        {"kind": "assertion", "source": "Maze.sol:120", "time_to_find_s": 3.5},
        {"kind": "assertion", "source": "/x/seed-1/Maze.sol:90", "time_to_find_s": 9.0},
        {"kind": "assertion", "source": "Maze.sol:91", "detail": "elsewhere"},
        {"kind": "reentrancy", "source": "Maze.sol:90", "detail": "not ours"},
    ]}
    run = MAZE.Run("secant")
    MAZE.secant_found(summary, truth, run)
    assert run.found == {7: 3.5, 4: 9.0}
    assert len(run.unattributed) == 2


def test_forge_finds_are_read_from_the_harness_file() -> None:
    run = MAZE.Run("forge")
    MAZE.forge_found("start 1000\n1500 520\n4000 522\n9000 523\n", run)
    assert run.found == {3: 0.5, 9: 0.5, 1: 3.0, 0: 8.0}


def test_the_symbolic_column_needs_the_option_in_secants_help() -> None:
    assert MAZE.symbolic_available("--symbolic-share  <float>  Share of the time ...")
    assert not MAZE.symbolic_available("--symbolic-sha…  <float>")


def easy_maze(folder: Path) -> tuple[Path, dict[str, Any]]:
    """A 2 x 2 maze whose cell 1 fires on any entry (``p0 >= 0``): a find for every tool."""
    maze = GEN.generate(11, size=2)
    maze.cells[1] = GEN.Cell(1, [GEN.Level(Cmp(">=", Var("p0"), k(0, U256)), "test")],
                             "feasible", {})
    maze.source = GEN.render(maze)
    sol, truth_path = GEN.write(maze, folder)
    return sol, json.loads(truth_path.read_text())


@needs_node
def test_the_runner_runs_secant_and_counts_what_it_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # A 2 x 2 maze: one run with an execution budget, then the whole command (secant with
    # its defaults, and the lighter column with a share for a stage secant does not have:
    # skipped) for two seconds.
    sol, truth = easy_maze(tmp_path / "maze")
    run = MAZE.run_secant("secant", sol, truth, tmp_path / "out", None, 0, [], execs=1500)
    assert run.status == "ran" and run.execs >= 1500, run.message
    feasible = {a["id"] for a in truth["assertions"] if a["feasible"]}
    assert 1 in run.found and set(run.found) <= feasible and not run.unattributed
    assert "--execs" in run.command and "--oracles" not in run.command
    assert "--shrink-limit" not in run.command  # what a user gets
    cap = run.command[run.command.index("--max-sequence-length") + 1]
    assert int(cap) == max(16, *(len(a.get("sequence", [])) for a in truth["assertions"]))

    monkeypatch.setattr(MAZE, "help_text", lambda: "no such option here")
    out = tmp_path / "bench"
    assert MAZE.main(["--mazes", "1", "--first-seed", "11", "--size", "2", "--seconds", "2",
                      "--tools", "secant,secant-assertion,secant-no-stage",
                      "--symbolic-share", "0.1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert ("| maze (seed) | assertions | feasible | infeasible | unknown | secant (defaults) "
            "| secant --oracles assertion --shrink-limit 0 | the same, --symbolic-share 0 |"
            in printed)
    assert "| 11 | 4 |" in printed and "skipped" in printed
    results = json.loads((out / "results.json").read_text())
    [entry] = results["mazes"]
    assert entry["runs"]["secant"]["status"] == "ran"
    assert entry["runs"]["secant-assertion"]["status"] == "skipped"
    lighter = entry["runs"]["secant-no-stage"]
    assert lighter["status"] == "ran" and "--oracles" in lighter["command"]
    assert "--symbolic-share" not in lighter["command"]  # the option does not exist here
    assert (out / "results.md").read_text().count("/bin/secant fuzz ") == 2


@needs_node
def test_the_runner_runs_the_expert_with_its_depth_option(tmp_path: Path) -> None:
    sol, truth = easy_maze(tmp_path / "maze")
    run = MAZE.run_secant("secant-expert", sol, truth, tmp_path / "out", None, 0, [],
                          execs=20, subcommand="expert")
    assert run.status == "ran" and 1 <= run.execs <= 20, run.message
    feasible = {a["id"] for a in truth["assertions"] if a["feasible"]}
    assert 1 in run.found and set(run.found) <= feasible and not run.unattributed
    assert run.command[1] == "expert" and "--max-depth" in run.command
    assert "--max-sequence-length" not in run.command


@pytest.mark.slow
@pytest.mark.skipif("os.environ.get('SECANT_SLOW') != '1'", reason="slow: set SECANT_SLOW=1")
@needs_node
def test_forge_runs_the_maze_harness(tmp_path: Path) -> None:
    from secant.compile.cache import cache_root
    from secant.report.forge import FORGE_VERSION, ForgeUnavailable, install_forge, solc_wrapper

    try:
        forge = install_forge(cache_root() / "forge", FORGE_VERSION)
    except ForgeUnavailable as exc:
        pytest.skip(f"forge {FORGE_VERSION} is not available: {exc.message}")
    sol, truth = easy_maze(tmp_path / "maze")
    project = MAZE.forge_project(sol, tmp_path / "forge")
    run = MAZE.run_forge(project, 3, 0, forge, solc_wrapper(cache_root() / "forge",
                                                            GEN.SOLC_VERSION))
    assert run.status == "ran", run.message
    assert run.execs > 0
    feasible = {a["id"] for a in truth["assertions"] if a["feasible"]}
    assert 1 in run.found and set(run.found) <= feasible
