"""The oracle seam's claim on a finding: its oracle, its case and its ratings filled in."""

from __future__ import annotations

from secant.engine.oracle import Oracle, PostState, claim
from secant.types import Finding, RunResult, Tx


class Rated(Oracle):
    name = "rated"
    severity = "high"
    confidence = "likely"

    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        return []


class Unrated(Rated):
    name = "unrated"
    severity = None
    confidence = None


def finding(**given: object) -> Finding:
    return Finding("k", "", "C", "f", 0, None, "detail", ("k",), **given)  # type: ignore[arg-type]


def test_a_finding_gets_what_it_left_out_and_keeps_what_it_says() -> None:
    case = (Tx("f()", (), 1),)
    result = RunResult(case, [], 0)
    plain = claim(finding(), Rated(), result)
    assert (plain.oracle, plain.case, plain.severity, plain.confidence) == (
        "rated", case, "high", "likely")
    own = claim(finding(confidence="certain", oracle="other", case=()), Rated(), result)
    assert (own.oracle, own.case, own.severity, own.confidence) == (
        "other", (), "high", "certain")
    bare = claim(finding(), Unrated(), result)
    assert (bare.severity, bare.confidence) == (None, None)
    assert "severity" not in bare.to_json() and plain.to_json()["confidence"] == "likely"
