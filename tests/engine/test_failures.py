"""The record of a part switched off after an error: its JSON and its console line."""

from __future__ import annotations

from secant.engine.failures import LINE_CHARS, TRACEBACK_FRAMES, InternalError


def nested(depth: int) -> None:
    if depth:
        nested(depth - 1)
    raise ValueError("deep\nbelow")


def test_a_record_keeps_the_error_in_one_line_and_the_innermost_frames() -> None:
    try:
        nested(3 * TRACEBACK_FRAMES)
    except ValueError as exc:
        record = InternalError.of("oracle:reentrancy", exc, 1234)
    assert record.to_json() == {"part": "oracle:reentrancy", "error": "ValueError: deep below",
                                "exec": 1234, "during": "fuzzing",
                                "traceback": record.traceback}
    # The innermost frames only: not the test's own, far above.
    assert "in nested" in record.traceback and "in test_" not in record.traceback
    assert record.traceback.count('  File "') <= TRACEBACK_FRAMES
    assert record.traceback.rstrip().endswith("ValueError: deep\nbelow")
    assert record.line() == ("internal error in oracle reentrancy (ValueError: deep below): "
                             "switched off for this run; details in summary.json")


def test_a_long_message_is_cut_short_on_the_console() -> None:
    record = InternalError.of("stage:concolic", RuntimeError("x" * 5000), 7)
    assert len(record.error) < 5000
    assert "x" * (LINE_CHARS - 20) in record.line() and "..." in record.line()
    assert record.line().startswith("internal error in stage concolic (RuntimeError: x")
