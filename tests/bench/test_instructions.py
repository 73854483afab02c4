"""bench/instructions.py: callgrind's count read back, and per-execution arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import load_bench

INSTRUCTIONS = load_bench("instructions")

LOG = """\
==4242== Callgrind, a call-graph generating cache profiler
20000 executions in 3.9 s, 7 paths, 23/40 branches, 0 finding(s)
==4242== Events    : Ir
==4242== Collected : 13,676,408,440
==4242==
==4242== I   refs:      13,676,408,440
"""


def test_the_count_is_read_from_callgrinds_report() -> None:
    assert INSTRUCTIONS.collected(LOG) == 13_676_408_440
    assert INSTRUCTIONS.collected("error: no contract to fuzz\n") is None


def test_one_execution_is_the_difference_of_two_budgets_over_their_executions() -> None:
    count = INSTRUCTIONS.Count("head", {1000: 9_000_000_000, 4000: 12_600_000_000})
    assert count.per_exec(1000, 4000) == 1_200_000
    assert INSTRUCTIONS.Count("base", {1000: 1}).per_exec(1000, 4000) is None
    assert INSTRUCTIONS.Count("base", {1000: 1, 4000: 2}, failed="x").per_exec(1000, 4000) \
        is None


def test_the_counted_run_is_secant_fuzz_under_callgrind(tmp_path: Path) -> None:
    version = INSTRUCTIONS.Version("head", tmp_path, "abc")
    plain = INSTRUCTIONS.command(["T.sol"], 20, 0, tmp_path / "o", None)
    counted = INSTRUCTIONS.command(["T.sol"], 20, 0, tmp_path / "o", tmp_path / "cg")
    assert counted[:3] == ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp_path}/cg"]
    assert counted[3:] == plain
    assert plain[plain.index("--execs") + 1] == "20" and "fuzz" in plain
    env = INSTRUCTIONS.environment(version)
    assert (env["PYTHONPATH"], env["PYTHONHASHSEED"], env["SECANT_WORKERS"]) == (
        str(tmp_path), "0", "1")


def test_the_shorter_run_must_be_shorter() -> None:
    with pytest.raises(SystemExit):
        INSTRUCTIONS.parse(["--execs", "1000", "--from", "1000"])
