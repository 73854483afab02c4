"""A new run never mixes its files with an earlier one's."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.campaign.output import OutputInUse, earlier_outputs, prepare_output


def test_an_earlier_output_is_refused_then_replaced_leaving_other_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare_output(out, replace=False)  # a new folder is fine
    (out / "corpus").mkdir()
    (out / "corpus" / "a.json").write_text("{}")
    (out / "Test-invariants" / "findings").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    assert earlier_outputs(out) == [out, out / "Test-invariants"]
    with pytest.raises(OutputInUse, match="pass --out with a new folder, or --force"):
        prepare_output(out, replace=False)
    prepare_output(out, replace=True)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    prepare_output(out, replace=False)  # nothing of a campaign is left


def test_replacing_removes_the_reports_of_the_earlier_run_too(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "findings").mkdir(parents=True)
    (out / "reproducers").mkdir()
    (out / "reproducers" / "Bank.t.sol").write_text("// old")
    (out / "coverage").mkdir()
    for name in ("findings.sarif", "coverage.lcov", "frontier.json", "coverage.png"):
        (out / name).write_text("old")
    (out / "mine.sarif").write_text("kept")
    prepare_output(out, replace=True)
    assert sorted(p.name for p in out.iterdir()) == ["mine.sarif"]
