"""``secant shrink``: a campaign's findings shrunk after the campaign, files rewritten."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compile.conftest import needs_node, run_cli

SHRINK = Path(__file__).resolve().parents[1] / "fixtures" / "shrink" / "Shrink.sol"


@needs_node
def test_an_unshrunk_finding_is_shrunk_later_and_keeps_the_case_found(tmp_path: Path) -> None:
    out = tmp_path / "out"
    fuzz = run_cli("fuzz", str(SHRINK), "--contract", "OneStep", "--execs", "3000",
                   "--seed", "0", "--shrink-limit", "0", "--out", str(out))
    assert fuzz.returncode == 0, fuzz.stderr
    [path] = sorted((out / "findings").glob("*.json"))
    found = json.loads(path.read_text())["sequence"]
    assert found[0]["args"][0] > 10**6  # the search's value, not the boundary
    shrunk = run_cli("shrink", str(out), "--shrink-limit", "2000")
    assert shrunk.returncode == 0, shrunk.stderr
    data = json.loads(path.read_text())
    assert data["original_sequence"] == found
    assert data["sequence"] == [{"function": "boom(uint256,int16,address,bytes,uint8[2])",
                                 "args": [1001, 0, 0, "0x", [0, 0]], "sender": "deployer"}]
    assert data["shrink"]["reproduced"] and data["shrink"]["execs"] <= 2002
    # The shrunk file replays to the same finding.
    replayed = run_cli("replay", str(path), "--no-trace")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


@needs_node
def test_bad_paths_and_limits_fail_in_one_line(tmp_path: Path) -> None:
    stray = tmp_path / "stray.json"
    stray.write_text("{}")
    for args, message in ((["shrink", str(tmp_path / "nothing")], "does not exist"),
                          (["shrink", str(stray)], "is not in a campaign's findings/"),
                          (["shrink", str(tmp_path), "--shrink-limit", "0"],
                           "--shrink-limit must be at least 1"),
                          (["shrink", str(tmp_path)], "has no summary.json")):
        proc = run_cli(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert message in proc.stderr and proc.stderr.count("\n") == 1
