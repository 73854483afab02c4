"""bench/oracles_public.py: labels read from the SWC layout, verdicts and the table."""

from __future__ import annotations

from pathlib import Path

from tests.bench import load_bench

BENCH = load_bench("oracles_public")


def _case(folder: Path, name: str, labels: str) -> Path:
    (folder / name).mkdir(parents=True)
    (folder / name / f"{name}.sol").write_text("contract C {}\n")
    (folder / name / f"{name}.yaml").write_text(f"description: x\nissues:\n{labels}")
    return folder / name / f"{name}.sol"


def test_labels_verdicts_and_the_table(tmp_path: Path) -> None:
    bank = _case(tmp_path, "bank", "- id: SWC-107\n  count: 1\n  locations: []\n")
    fixed = _case(tmp_path, "bank_fixed", "- id: SWC-107\n  count: 0\n  locations: []\n")
    pragma = _case(tmp_path, "loose", "- id: SWC-103\n  count: 2\n  locations: []\n")
    cases = BENCH.swc_cases(tmp_path)
    assert {(c.path.stem, c.label, c.vulnerable) for c in cases} == {
        ("bank", "SWC-107", True), ("bank_fixed", "SWC-107", False),
        ("loose", "SWC-103", True)}
    runs = {(str(bank), None): BENCH.Run(str(bank), None, [], tags=["SWC-107"]),
            (str(fixed), None): BENCH.Run(str(fixed), None, [], tags=["SWC-107"]),
            (str(pragma), None): BENCH.Run(str(pragma), None, [], tags=[])}
    verdicts = {v.case.path.stem: v.shown for v in BENCH.judge(cases, runs)}
    assert verdicts == {"bank": True, "bank_fixed": True, "loose": False}
    table = "\n".join(BENCH.table(BENCH.judge(cases, runs)))
    assert "| SWC-107 | 1 | 1 | - | 1 | swc:bank_fixed |" in table
    assert "SWC-103 | 1 (not counted: a floating pragma" in table
    assert "| **all counted** | 1 | 1 (100 %) | | 1 | 1 |" in table


def test_an_effect_shows_a_cause_and_an_oracle_without_an_swc_counts_by_name() -> None:
    assert "owner-takeover" in BENCH.SHOWN_BY["SWC-118"]
    assert "SWC-105" in BENCH.SHOWN_BY["SWC-100"]
    assert not set(BENCH.SHOWN_BY) & set(BENCH.NOT_AT_RUNTIME)
