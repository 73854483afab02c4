"""bench/scfuzz.py: how it counts scfuzzbench's bugs, without running a campaign."""

from __future__ import annotations

import json

from tests.bench import load_bench

SCFUZZ = load_bench("scfuzz")

KNOWN = {"targets": [
    {"target_id": "drips",
     "canaries": [{"id": "assertion-canary", "aliases": [{"event": "assert_canary"}]},
                  {"id": "invariant-canary", "aliases": [{"event": "invariant_canary"}]}],
     "known_bugs": [{"id": "squeeze", "aliases": [{"event": "testSqueezableAmountCantBeUndone"},
                                                 {"event": "testSqueezeA"}]}]},
    {"target_id": "other", "canaries": [], "known_bugs": []}]}


def test_checks_are_counted_by_scfuzzbench_names() -> None:
    canonical = SCFUZZ.canonical
    assert canonical("assert_canary_ASSERTION_CANARY") == "assert_canary"
    assert canonical("iSpoke_withdraw_ASSERTION_WITHDRAW_DOS(uint256)") == "iSpoke_withdraw"
    assert canonical("invariant_canary()") == "invariant_canary"
    canaries, bugs = SCFUZZ.expected(KNOWN, "drips")
    assert canaries == {"assert_canary": "assertion-canary",
                        "invariant_canary": "invariant-canary"}
    assert bugs == {"testSqueezableAmountCantBeUndone": "squeeze", "testSqueezeA": "squeeze"}
    assert SCFUZZ.expected(KNOWN, "missing") == ({}, {})


def test_forge_failures_are_timed_from_its_event_lines() -> None:
    lines = ["Compiling 3 files", json.dumps({"timestamp": 1010, "event": "failure",
                                              "invariant": "invariant_canary"}),
             json.dumps({"timestamp": 1030, "event": "failure",
                         "invariant": "invariant_canary"}),
             json.dumps({"timestamp": 1042, "event": "progress"}), "{not json"]
    assert SCFUZZ.forge_events("\n".join(lines), 1000.0) == {"invariant_canary": 10.0}


def test_the_table_shows_times_and_what_was_missed() -> None:
    run = SCFUZZ.Run("secant", [], compile_s=12.0, execs=6000, fuzz_s=600.0,
                     branches="10/20", found={"assert_canary": 3.2, "invariant_canary": 41.0,
                                              "testSqueezeA": None, "echidna_x": 9.0})
    text = SCFUZZ.table([("drips", run)], KNOWN)
    row = text.splitlines()[-1]
    assert "| 12.0 s | 10 | 10/20 |" in row
    assert "assert_canary 3.2 s, invariant_canary 41 s" in row
    assert "testSqueezableAmountCantBeUndone -, testSqueezeA yes" in row
    assert row.endswith("| 1: echidna_x |")


def test_a_forge_failure_is_named_by_the_handler_when_an_assertion_failed() -> None:
    sequence = {"Sequence": [[{"func_name": "deposit"},
                              {"func_name": "assert_canary_ASSERTION_CANARY"}]]}
    check = SCFUZZ.failing_check
    assert check("invariant_noop()", "panic: assertion failed (0x01)", sequence) == \
        "assert_canary"
    assert check("invariant_canary()", "Canary invariant", sequence) == "invariant_canary"
    assert check("invariant_noop()", "!!! canary assertion", None) == "invariant_noop"
