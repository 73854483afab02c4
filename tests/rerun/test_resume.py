"""``secant fuzz --resume OUT``: a killed campaign goes on, a corpus survives code changes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from secant.engine.values import VType
from secant.rerun.adapt import Adapter, convert, zero
from tests.compile.conftest import needs_node, run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "campaign"

U8, U16, U256 = VType("uint", 8), VType("uint", 16), VType("uint", 256)
I8 = VType("int", 8)
ADDRESS, BOOL = VType("address", 160), VType("bool")


# ---------------------------------------------------------------------- adapting values
@pytest.mark.parametrize("raw, vt, expected", [
    (300, U8, 44),                      # wraps into the new width
    (-1, U16, 0xFFFF),
    (200, I8, -56),                     # two's complement
    (5, BOOL, True),
    (0, BOOL, False),
    (True, U256, 1),
    ("attacker1", ADDRESS, "attacker1"),  # a name stays a name
    (1 << 200, ADDRESS, (1 << 200) % (1 << 160)),
    ("0x0102", VType("bytes"), "0x0102"),
    ("hi", VType("bytes"), "0x6869"),
    ("0x6869", VType("string"), "hi"),
    ("0x01", VType("fbytes", 16), "0x0100"),
    (1, VType("fbytes", 16), "0x0000"),  # the word's first bytes, as the ABI lays it out
    ([1, 2, 3], VType("array", elem=U8, length=2), [1, 2]),
    ([1], VType("array", elem=U8, length=3), [1, 0, 0]),
    ([70000], VType("array", elem=U16), [70000 % 65536]),
    ([1, "x"], VType("tuple", fields=(U8, BOOL)), [1, False]),
    ("0xzz", U8, 0),                    # nothing it means: the zero value
    ([1], U8, 0),
])
def test_a_recorded_value_converts_to_the_new_type(raw: Any, vt: VType, expected: Any) -> None:
    assert convert(raw, vt) == expected


def test_zero_values() -> None:
    assert zero(VType("tuple", fields=(U8, VType("string")))) == [0, ""]
    assert zero(VType("array", elem=BOOL, length=2)) == [False, False]
    assert zero(VType("array", elem=BOOL)) == []


# ---------------------------------------------------------------------- adapting cases
FUNCTIONS = {
    None: {"open(uint256)": (U256,), "step(uint16)": (U16,), "complete(uint256)": (U256,),
           "extra(address)": (ADDRESS,), "pair(uint8)": (U8,), "pair(uint8,uint8)": (U8, U8),
           "fallback": ()},
    "Helper": {"ping()": ()},
}


def tx(function: str, *args: Any, to: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"function": function, "args": list(args), "sender": "attacker1"}
    if to is not None:
        entry["to"] = to
    return entry


def test_cases_are_kept_adapted_by_name_or_types_or_dropped() -> None:
    recorded = [
        [tx("open(uint256)", 7)],                                    # unchanged
        [tx("open(uint256)", 1), tx("step(uint8)", 300)],            # retyped
        [tx("finish(uint256)", 99)],                                 # renamed
        [tx("gone(bool)", True)],                                    # removed
        [tx("gone(bool)", True), tx("fallback")],                    # loses one transaction
        [tx("ping()", to="Helper"), tx("ping()", to="Vanished")],    # a contract is gone
        [tx("pair(uint256,uint256)", 1, 2)],                         # overload by arity
    ]
    adapter = Adapter(FUNCTIONS, recorded)
    results = [adapter.adapt(sequence) for sequence in recorded]
    assert results[0] == (recorded[0], False)
    assert results[1][0] == [tx("open(uint256)", 1), tx("step(uint16)", 300)]
    assert results[2][0] == [tx("complete(uint256)", 99)]
    assert results[3] == (None, True)
    assert results[4][0] == [tx("fallback")]
    assert results[5][0] == [tx("ping()", to="Helper")]
    assert results[6][0] == [tx("pair(uint8,uint8)", 1, 2)]
    report = adapter.report
    assert (report.kept, report.adapted, report.dropped) == (1, 5, 1)
    assert report.changes == {
        "retyped step(uint8) -> step(uint16)": 1,
        "renamed finish(uint256) -> complete(uint256)": 1,
        "dropped gone(bool): no such function": 2,
        "dropped ping(): no contract Vanished": 1,
        "retyped pair(uint256,uint256) -> pair(uint8,uint8)": 1,
    }


def test_a_rename_must_be_the_only_new_function_with_those_types() -> None:
    functions = {None: {"a(uint256)": (U256,), "b(uint256)": (U256,), "c(uint256)": (U256,)}}
    # a(uint256) is known to the recorded cases, so only b and c are new: ambiguous.
    recorded = [[tx("a(uint256)", 1)], [tx("old(uint256)", 2)]]
    adapter = Adapter(functions, recorded)
    assert adapter.adapt(recorded[1]) == (None, True)
    # With c(uint256) known too, b(uint256) is the one new function: the rename.
    recorded.append([tx("c(uint256)", 3)])
    adapter = Adapter(functions, recorded)
    assert adapter.adapt(recorded[1])[0] == [tx("b(uint256)", 2)]


# ---------------------------------------------------------------------- campaigns
def summary_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "summary.json").read_text())
    return data


def finding_names(folder: Path) -> set[str]:
    return {path.name for path in (folder / "findings").glob("*.json")}


EDITED_V1 = """// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.0;
contract Edited {
    uint256 public stage;
    bool public flag;
    function open(uint256 key) external { if (key == 4660) { stage = 1; } }
    function step(uint8 x) external { if (stage == 1 && x == 7) { assert(false); } }
    function finish(uint256 y) external { if (y > 100) { stage = 2; } }
    function gone(bool b) external { if (b) { flag = true; } }
}
"""

# step takes a uint16 now, finish is called complete, gone is gone, extra is new.
EDITED_V2 = """// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.0;
contract Edited {
    uint256 public stage;
    bool public flag;
    function open(uint256 key) external { if (key == 4660) { stage = 1; } }
    function step(uint16 x) external { if (stage == 1 && x == 7) { assert(false); } }
    function complete(uint256 y) external { if (y > 100) { stage = 2; } }
    function extra(address who) external { if (who == msg.sender) { flag = true; } }
}
"""


@needs_node
def test_a_corpus_survives_an_edited_contract(tmp_path: Path) -> None:
    source = tmp_path / "Edited.sol"
    source.write_text(EDITED_V1)
    out = tmp_path / "out"
    first = run_cli("fuzz", str(source), "--execs", "3000", "--seed", "1", "--out", str(out),
                    "-q")
    assert first.returncode == 0, first.stderr
    [found] = finding_names(out)
    corpus_before = len(list((out / "corpus").glob("*.json")))
    source.write_text(EDITED_V2)
    # No input and no options: the manifest says what to fuzz and how.
    again = run_cli("fuzz", "--resume", str(out), "--execs", "1000", "-q")
    assert again.returncode == 0, again.stderr
    summary = summary_of(out)
    resumed = summary["resume"]
    corpus = resumed["corpus"]
    assert corpus["kept"] + corpus["adapted"] + corpus["dropped"] == corpus_before
    assert corpus["kept"] > 0 and corpus["adapted"] > 0
    changes = {**corpus["changes"], **resumed["findings"]["changes"]}
    assert "retyped step(uint8) -> step(uint16)" in changes
    assert "renamed finish(uint256) -> complete(uint256)" in changes
    assert "dropped gone(bool): no such function" in changes
    assert "resumed: corpus" in again.stderr and "retyped step(uint8)" in again.stderr
    # The finding's case was adapted (step now takes a uint16) and still fails, at
    # another pc: one file under today's key replaces the old one.
    [(old, now)] = resumed["findings_reproduced"].items()
    assert old == found and finding_names(out) == {now}
    [finding] = summary["findings"]
    assert [step["function"] for step in finding["sequence"]] == ["open(uint256)",
                                                                  "step(uint16)"]
    assert summary["manifest"]["options"]["seed"] == 1  # taken from the record
    assert summary["execs"] == 1000  # the budget given again wins over the record
    # The recorded options came with the run: the functions fuzzed are today's.
    fuzzed = {f["function"] for path in (out / "corpus").glob("*.json")
              for f in json.loads(path.read_text())["sequence"]}
    assert "extra(address)" in fuzzed


@needs_node
def test_a_finding_the_edit_fixed_is_reported_as_not_reproduced(tmp_path: Path) -> None:
    source = tmp_path / "Edited.sol"
    source.write_text(EDITED_V1)
    out = tmp_path / "out"
    assert run_cli("fuzz", str(source), "--execs", "3000", "--seed", "1", "--out", str(out),
                   "-q").returncode == 0
    [found] = finding_names(out)
    source.write_text(EDITED_V1.replace("assert(false);", "stage = 3;"))
    again = run_cli("fuzz", "--resume", str(out), "--execs", "500", "-q")
    assert again.returncode == 0, again.stderr
    resumed = summary_of(out)["resume"]
    assert resumed["findings_reproduced"] == {}
    assert found in resumed["findings_not_reproduced"]
    assert finding_names(out) == {found}  # its file stays as it was
    assert f"finding {found} not reproduced" in again.stderr


@needs_node
@pytest.mark.parametrize("args, message", [
    (["--resume", "nowhere"], "--resume nowhere: no such folder"),
])
def test_resume_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    proc = run_cli("fuzz", *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


@needs_node
def test_resume_without_a_manifest_needs_the_input(tmp_path: Path) -> None:
    (tmp_path / "out" / "corpus").mkdir(parents=True)
    proc = run_cli("fuzz", "--resume", str(tmp_path / "out"))
    assert proc.returncode == 2 and "has no summary.json with a manifest" in proc.stderr
    assert "secant fuzz PATH --resume" in proc.stderr
    no_input = run_cli("fuzz", cwd=tmp_path)
    assert no_input.returncode == 2 and "no contract to fuzz" in no_input.stderr


# ---------------------------------------------------------------------- kill -9
LOCK = FIXTURES / "StagedLock.sol"
KILL_BUDGET = ["--execs", "12000", "--seed", "5"]


def start(*args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", "from secant.cli.main import app; app(prog_name='secant')"]
    return subprocess.Popen([*command, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def assert_whole(folder: Path) -> None:
    """Every file the campaign left parses; no half-written file has a real name."""
    for path in [folder / "summary.json", *(folder / "corpus").glob("*.json"),
                 *(folder / "findings").glob("*.json")]:
        if path.name.startswith(".tmp-"):
            continue
        json.loads(path.read_text())


@needs_node
def test_a_campaign_killed_at_random_points_resumes_without_loss(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    done = run_cli("fuzz", str(LOCK), *KILL_BUDGET, "--out", str(whole), "-q")
    assert done.returncode == 0, done.stderr
    reference = summary_of(whole)
    assert reference["findings"], "the fixture's assertion is found in one go"

    out = tmp_path / "killed"
    rng = random.Random(7)
    seen: set[str] = set()
    killed = 0
    for attempt in range(3):
        args = [str(LOCK), *KILL_BUDGET, "-q"]
        args += ["--out", str(out)] if attempt == 0 else ["--resume", str(out)]
        process = start("fuzz", *args)
        deadline = time.monotonic() + 300
        # Wait for the campaign to start (its summary says "running"), then kill it at a
        # random moment of the search, the shrinking or the reports.
        while not (out / "summary.json").exists() and process.poll() is None:
            assert time.monotonic() < deadline, "the campaign never started"
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 3.0))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            killed += 1
        process.wait(timeout=60)
        assert_whole(out)
        seen |= finding_names(out)
    assert killed, "no run was killed: the budget is too small for this machine"

    final = run_cli("fuzz", str(LOCK), *KILL_BUDGET, "--resume", str(out), "-q")
    assert final.returncode == 0, final.stderr
    assert_whole(out)
    summary = summary_of(out)
    assert summary["manifest"]["status"] == "completed"
    # No finding is lost, every one reproduced, and the coverage is the whole run's.
    assert seen <= finding_names(out)
    assert set(summary["resume"]["findings_reproduced"].values()) >= seen
    assert summary["resume"]["findings_not_reproduced"] == {}
    assert finding_names(out) == finding_names(whole)
    assert summary["branches_covered"] == reference["branches_covered"]
    assert summary["instructions_covered"] == reference["instructions_covered"]
    assert not list(out.rglob(".tmp-*"))
