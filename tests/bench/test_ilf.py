"""bench/ilf.py's merge of runs saved at different times: the table, pairings and reach."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.bench import load_bench

ILF = load_bench("ilf")


def run(target: str, policy: str, seed: int, budget: str, covered: int, total: int) -> Any:
    """A run record as ``--json`` writes it."""
    return ILF.Run(target, policy, seed, budget, ["secant"], wall_s=1.0, covered=covered,
                   total=total)


def write(path: Path, runs: list[Any]) -> Path:
    path.write_text(json.dumps([asdict(r) for r in runs]), encoding="utf-8")
    return path


def test_a_later_file_replaces_the_same_run_and_keeps_the_others(tmp_path: Path) -> None:
    first = write(tmp_path / "a.json", [run("A.sol:A", "uniform", 0, "1000tx", 50, 100),
                                        run("A.sol:A", "learned", 0, "1000tx", 60, 100)])
    second = write(tmp_path / "b.json", [run("A.sol:A", "uniform", 0, "1000tx", 55, 100)])
    runs = ILF.merged([first, second])
    by_policy = {r.policy: r.covered for r in runs}
    assert by_policy == {"uniform": 55, "learned": 60}


def test_the_table_counts_runs_and_skips_rows_never_run() -> None:
    runs = [run("A.sol:A", "uniform", seed, "60s", 50 + seed, 100) for seed in (0, 1)]
    text = ILF.table(runs, ["uniform", "learned"], ["60s"])
    rows = [line for line in text.splitlines() if line.startswith("| uniform")]
    assert rows == ["| uniform | 60s | 2 | 50.5 | - | 1.0 | - | 0 | 0 | 0 | 0 | 0 | 0 | 0 |"]
    assert "| learned |" not in text


def test_reach_is_the_best_any_run_reached_against_uniform_at_its_smallest_tx_budget(
) -> None:
    large = ILF.LARGE
    runs = [
        run("S.sol:S", "uniform", 0, "1000tx", 40, 100),
        run("S.sol:S", "uniform", 1, "1000tx", 50, 100),
        run("S.sol:S", "uniform", 0, "2000tx", 58, 100),  # not the baseline's budget
        run("S.sol:S", "harvey", 0, "60s", 61, 100),       # the best of S
        run("L.sol:L", "uniform", 0, "1000tx", large // 2, large),
        run("L.sol:L", "learned", 0, "300s", large * 3 // 4, large),
        run("X.sol:X", "harvey", 0, "60s", 99, 100),      # uniform never ran it: left out
    ]
    text = ILF.reach(runs)
    assert "| small | 1 | 61.0 | 45.0 | +16.0 |" in text
    assert "| large | 1 | 75.0 | 50.0 | +25.0 |" in text
    assert "against uniform at 1000tx" in text
    assert ILF.reach([run("S.sol:S", "harvey", 0, "60s", 61, 100)]) == ""


def test_learned_is_paired_with_uniform_by_contract_and_seed() -> None:
    runs = [run("S.sol:S", "uniform", seed, "1000tx", 50, 100) for seed in (0, 1)]
    runs += [run("S.sol:S", "learned", 0, "1000tx", 54, 100),
             run("S.sol:S", "learned", 1, "1000tx", 50, 100)]
    text = ILF.paired(runs, ["1000tx"], "uniform", "learned")
    assert "| 1000tx | small | 2 | +2.00 | 1 / 1 / 0 |" in text


def test_a_file_that_holds_no_runs_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="holds no list of runs"):
        ILF.merged([bad])
    with pytest.raises(SystemExit, match="cannot read runs"):
        ILF.merged([tmp_path / "missing.json"])


def test_budgets_sort_transactions_first_then_seconds() -> None:
    assert sorted(["300s", "2000tx", "60s", "1000tx"], key=ILF.budget_order) == [
        "1000tx", "2000tx", "60s", "300s"]


def test_a_merged_table_says_which_commit_ran_how_many_runs(tmp_path: Path) -> None:
    old = run("A.sol:A", "uniform", 0, "60s", 50, 100)
    new = run("A.sol:A", "learned", 0, "60s", 50, 100)
    new.secant = "commit abc1234"
    runs = ILF.merged([write(tmp_path / "runs.json", [old, new])])
    assert ILF.provenance(runs) == "commit abc1234: 1; unknown commit: 1"
    bad = write(tmp_path / "bad.json", [])
    bad.write_text("[3]", encoding="utf-8")
    with pytest.raises(SystemExit, match="no run"):
        ILF.merged([bad])


def test_kept_runs_lose_their_commands_and_merge_back_with_a_label(tmp_path: Path) -> None:
    older = write(tmp_path / "old.json", [run("A.sol:A", "uniform", 0, "60s", 50, 100)])
    runs = ILF.merged([f"{older}=commit 0ld0000"])
    assert runs[0].secant == "commit 0ld0000"
    kept = tmp_path / "kept.json"
    kept.write_text(ILF.kept(runs), encoding="utf-8")
    assert "command" not in json.loads(kept.read_text(encoding="utf-8"))[0]
    again = ILF.merged([kept])
    assert [(r.target, r.covered, r.secant, r.command) for r in again] == [
        ("A.sol:A", 50, "commit 0ld0000", [])]


def test_a_run_of_seconds_is_read_at_a_shorter_budget_off_its_timeline(tmp_path: Path) -> None:
    (tmp_path / "timeline.csv").write_text(
        "execs,seconds,paths,branches,instructions,findings\n"
        "5,0.2,1,4,100,0\n40,59.9,7,20,300,1\n41,60.0,8,22,320,1\n900,250.5,9,24,400,2\n",
        encoding="utf-8")
    findings = [{"oracle": "suicidal", "time_to_find_s": 59.9},
                {"oracle": "leaking-ether", "time_to_find_s": 250.5},
                {"oracle": "assertion", "time_to_find_s": 1.0}]  # not one of ILF's six
    (tmp_path / "summary.json").write_text(json.dumps({"findings": findings}),
                                           encoding="utf-8")
    whole = run("A.sol:A", "harvey", 2, "300s", 400, 1000)
    whole.secant = "commit abc"
    early = ILF.read_at(whole, "60s", tmp_path)
    # The last sample at or before 60 s counts; findings made later do not.
    assert (early.budget, early.covered, early.total, early.detectors) == (
        "60s", 320, 1000, ["suicidal"])
    assert (early.read_from, early.secant, early.seed, early.wall_s) == (
        "300s", "commit abc", 2, 60.0)
    assert ILF.read_at(whole, "0.1s", tmp_path).covered == 0
    # Nothing to read: a budget no shorter, one of transactions, a run of transactions.
    assert ILF.read_at(whole, "300s", tmp_path) is None
    assert ILF.read_at(whole, "1000tx", tmp_path) is None
    assert ILF.read_at(run("A.sol:A", "harvey", 0, "1000tx", 1, 2), "60s", tmp_path) is None
    assert ILF.read_at(whole, "60s", tmp_path / "missing") is None
