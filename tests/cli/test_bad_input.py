"""Bad input is the user's to fix: one line, exit code 2, no traceback left behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from secant.errors import EXIT_USER_ERROR
from tests.compile.conftest import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"


def assert_one_line(proc: subprocess.CompletedProcess[str], message: str, cwd: Path) -> None:
    stderr = proc.stderr
    assert proc.returncode == EXIT_USER_ERROR, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("error: "), stderr
    assert message in stderr and "Traceback" not in stderr and "please report" not in stderr
    assert not list(cwd.rglob("*traceback.txt"))


@pytest.mark.parametrize("command", ["fuzz", "expert"])
@pytest.mark.parametrize("out, message", [
    ("taken", "--out taken is a file, not a folder"),
    ("taken/sub", "--out taken/sub lies under taken, a file, not a folder"),
])
def test_an_out_that_is_a_file_is_refused_before_any_work(tmp_path: Path, command: str,
                                                           out: str, message: str) -> None:
    (tmp_path / "taken").write_text("mine")
    proc = run_cli(command, str(EXAMPLES / "Baz.sol"), "--execs", "10", "--out", out,
                   cwd=tmp_path)
    assert_one_line(proc, message, tmp_path)
    assert (tmp_path / "taken").read_text() == "mine"


@pytest.mark.parametrize("name, content, message", [
    ("Code.json", {"abi": {"name": "f"}, "bytecode": "0x6000"},
     "cannot read the ABI in Code.json: it is an object, not a list of entries"),
    ("Code.abi", {"name": "f"}, "cannot read the ABI in Code.abi: it is an object"),
    ("Code.abi", ["f()"], "cannot read the ABI in Code.abi: an entry is a string"),
])
def test_an_abi_that_is_not_a_list_of_entries_is_refused(tmp_path: Path, name: str,
                                                          content: object,
                                                          message: str) -> None:
    (tmp_path / name).write_text(json.dumps(content))
    (tmp_path / "Code.bin").write_text("6000")
    proc = run_cli("fuzz", name if name.endswith(".json") else "Code.bin", "--execs", "10",
                   cwd=tmp_path)
    assert_one_line(proc, message, tmp_path)
    assert "JSON list of entries" in proc.stderr


@pytest.mark.parametrize("option, value, message", [
    ("--deployer", "zero", "--deployer 'zero' is not an address"),
    ("--only-function", "Baz.nothing()", "no function is left to call: --only-function "
                                         "Baz.nothing()"),
])
def test_a_bad_deployer_or_function_filter_is_one_line(tmp_path: Path, option: str, value: str,
                                                       message: str) -> None:
    proc = run_cli("fuzz", str(EXAMPLES / "Baz.sol"), "--execs", "10", option, value,
                   cwd=tmp_path)
    assert_one_line(proc, message, tmp_path)
