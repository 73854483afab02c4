"""The frontier: just-missed branch sides, ranked by the code behind them, with reasons."""

from __future__ import annotations

import json
from pathlib import Path

from secant.report.frontier import (
    BOUND,
    CONSTANT,
    REVERT,
    SENDER,
    STATE,
    FrontierInputs,
    Observed,
    StateWrites,
    blocked_by,
    top_lines,
)
from secant.types import RunResult
from tests.compile.conftest import needs_node, run_cli
from tests.report.conftest import FRONTIER, Finished, line_with

OWNER = 0xB0B
USER = 0x1234
CODE = b"\x01" * 32


def inputs(constants: frozenset[int] = frozenset()) -> FrontierInputs:
    def no_run(case: object) -> RunResult:
        raise AssertionError("blocked_by replays nothing")

    return FrontierInputs(codes=(), closest={}, tried={}, run=no_run, graph=lambda h: None,
                          constants=constants, accounts={USER: "user1"},
                          senders=frozenset({USER}))


def seen(relation: str, lhs: int, rhs: int, taken: bool,
         reads: dict[tuple[bytes, int], int] | None = None,
         reverted_writes: dict[tuple[bytes, int], str] | None = None) -> Observed:
    return Observed(0, relation, lhs, rhs, taken, USER, "f()", reads or {},
                    reverted_writes or {})


@needs_node
def test_the_magic_constant_branch_comes_first(frontier_run: Finished) -> None:
    entries = json.loads((frontier_run.out / "frontier.json").read_text())
    first = entries[0]
    assert (first["rank"], first["file"], first["line"]) == (
        1, "tests/fixtures/report/Frontier.sol", line_with("0xdeadbeef"))
    assert first["function"] == "Frontier.guess" and first["snippet"].startswith("if (uint256(")
    assert first["blocked_by"][0]["reason"] == CONSTANT
    assert "0xdeadbeefdeadbeef" in first["blocked_by"][0]["detail"]
    assert first["condition"]["rhs"] == "0x" + "deadbeef" * 8
    assert first["closest"]["sequence"][0]["function"] == "guess(uint256)"
    assert first["distance"] > 0
    assert 0 < first["tried"] <= frontier_run.summary["execs"]
    # It opens the body of the if (more than any other side), nothing covered counted.
    assert first["opens"]["instructions"] > max(e["opens"]["instructions"]
                                                for e in entries[1:])
    # The compiler's dispatch and value checks are not frontier.
    assert all(not e["snippet"].startswith("contract ") for e in entries)
    top = top_lines(frontier_run.campaign.frontier or [])
    assert top[0].startswith(f"1. Frontier.sol:{first['line']} (Frontier.guess)")
    assert CONSTANT in top[0] and len(top) == len(entries) <= 5


@needs_node
def test_an_owner_only_function_is_blocked_by_a_sender_check(frontier_run: Finished) -> None:
    entries = json.loads((frontier_run.out / "frontier.json").read_text())
    [entry] = [e for e in entries if e["line"] == line_with("require(msg.sender == owner")]
    reason = entry["blocked_by"][0]
    assert reason["reason"] == SENDER
    assert "0x0000000000000000000000000000000000000b0b" in reason["detail"]
    assert "stored in slot 0" in reason["detail"] and "no sender of the campaign" in (
        reason["detail"])
    assert entry["side"] == "jump" and entry["condition"]["wanted"] == "holds"


@needs_node
def test_fuzz_prints_the_top_of_the_frontier(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(FRONTIER), "--execs", "200", "--seed", "1", "--out", str(out),
                   "--shrink-limit", "0")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("frontier (just-missed branch sides, the most code behind them first):")
    assert lines[start + 1].startswith(f"  1. Frontier.sol:{line_with('0xdeadbeef')} ")
    assert CONSTANT in lines[start + 1]
    assert (out / "coverage.lcov").exists() and (out / "coverage" / "index.html").exists()
    assert (out / "coverage.svg").stat().st_size > 0 and (out / "frontier.json").exists()


def test_a_sender_check_names_the_account_it_wants() -> None:
    [reason] = blocked_by(seen("eq", USER, OWNER, False, reads={(CODE, 0): OWNER}), True,
                          inputs(), StateWrites())
    assert reason[0] == SENDER and "stored in slot 0" in reason[1]
    # Against one of the campaign's own senders, the check is not called unsatisfiable.
    [reason] = blocked_by(seen("eq", USER, USER + 1, False), True,
                          _with_senders(USER + 1), StateWrites())
    assert reason[0] == SENDER and "no sender" not in reason[1]


def _with_senders(*more: int) -> FrontierInputs:
    made = inputs()
    made.senders = made.senders | frozenset(more)
    return made


def test_a_constant_is_never_produced_only_when_equality_is_wanted() -> None:
    magic = 0xDEADBEEF
    [reason] = blocked_by(seen("eq", 5, magic, False), True, inputs(frozenset({magic})),
                          StateWrites())
    assert reason[0] == CONSTANT
    [reason] = blocked_by(seen("ne", 5, magic, True), False, inputs(frozenset({magic})),
                          StateWrites())
    assert reason[0] == CONSTANT
    [reason] = blocked_by(seen("lt", 5, magic, True), False, inputs(frozenset({magic})),
                          StateWrites())
    assert reason[0] == BOUND
    assert blocked_by(seen("eq", 5, 1, False), True, inputs(frozenset({1})),
                      StateWrites()) == []  # 0 and 1 are booleans, not constants
    [(reason, detail)] = blocked_by(seen("eq", 5, magic, False), True,
                                    inputs(frozenset({magic})), StateWrites())
    assert detail.startswith("needs 3735928559, a constant") and "had 5" in detail
    # Both operands constants of the code (a cell of a constant grid compared with "#"):
    # the detail does not guess which one the input missed.
    [(reason, detail)] = blocked_by(seen("eq", 0x20, 0x23, False), True,
                                    inputs(frozenset({0x20, 0x23})), StateWrites())
    assert reason == CONSTANT and "32 and 35 equal, both constants" in detail


def test_storage_the_condition_reads_is_traced_to_reverts_or_to_no_write() -> None:
    # The condition compares slot 5 (value 0) with 7.
    read = {(CODE, 5): 0}
    writes = StateWrites()
    [reason] = blocked_by(seen("eq", 0, 7, False, reads=read), True, inputs(), writes)
    assert reason[0] == STATE and "slot 5" in reason[1]
    writes.reverted[(CODE, 5)] = {"arm()"}
    [reason] = blocked_by(seen("eq", 0, 7, False, reads=read), True, inputs(), writes)
    assert reason[0] == REVERT and "only arm()" in reason[1]
    [reason] = blocked_by(seen("eq", 0, 7, False, reads=read,
                               reverted_writes={(CODE, 5): "arm()"}), True, inputs(), writes)
    assert reason[0] == REVERT and "earlier in the closest case" in reason[1]
    writes.kept[(CODE, 5)] = {"set(uint256)"}
    assert blocked_by(seen("eq", 0, 7, False, reads=read), True, inputs(), writes) == []
