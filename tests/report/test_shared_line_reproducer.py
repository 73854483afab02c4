"""The Foundry reproducer of a line that both emits ``AssertionFailed`` and asserts.

Such a line is one finding whose key ends in ``event`` (``shared_site_key``) and whose detail
names the signals its case shows. ``if (loud) { emit AssertionFailed(x); } assert(x != 7);``
shows the assert alone for ``(false, 7)``, the event alone for ``(true, 3)`` and both for
``(true, 7)``: the reproducer must check a signal the case shows, the panic for the first
(a test looking for the event would pass with the bug there), the event for the others.
Under forge every such test fails, and the panic's test passes once the assert holds.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import CompileOptions, load
from secant.compile.cache import cache_root
from secant.engine.config import FuzzConfig
from secant.report.forge import solc_wrapper
from secant.report.reproducer import checks_event, reproducer_source
from secant.types import Finding, Tx
from tests.compile.conftest import needs_node
from tests.packages import npm_modules
from tests.report.test_reproducer import (
    FORGE_STD,
    SOLC,
    fixed_copy,
    forge_or_skip,
    forge_results,
    place,
)

SOURCE = """\
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract SharedLine {
    event AssertionFailed(uint256 id);

    function check(bool loud, uint256 x) external {
        if (loud) { emit AssertionFailed(x); } assert(x != 7); // one line, two signals
    }
}
"""

ASSERT = "Panic(0x01): assertion failed"
EVENT = "AssertionFailed event emitted"
CASES = {(False, 7): ASSERT, (True, 3): EVENT, (True, 7): f"{EVENT}; {ASSERT}"}
"""check(loud, x) -> the detail of the line's finding for that call."""


def shared_line(folder: Path) -> tuple[TestChain, list[Finding]]:
    """The chain of SharedLine.sol (in ``folder``) and the line's finding of each case."""
    path = folder / "SharedLine.sol"
    path.write_text(SOURCE)
    chain = TestChain.setup(load([path], CompileOptions(solc_version=SOLC)), "SharedLine")
    worker = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=1))).workers[0]
    findings = []
    for loud, x in CASES:
        shown = worker.replay((Tx("check(bool,uint256)", (loud, x), chain.deployer.address),))
        [finding] = [f for f in shown.values() if f.oracle == "assertion"]
        findings.append(finding)
    return chain, findings


def bodies_of(source: str) -> dict[str, str]:
    """The body of each ``test_*`` function of a reproducer, by name."""
    bodies: dict[str, str] = {}
    for part in source.split("    function test_")[1:]:
        name, _, rest = part.partition("(")
        bodies[f"test_{name}"] = rest.split("\n    }\n", 1)[0]
    return bodies


def test_the_check_follows_the_signals_the_detail_names() -> None:
    def finding(detail: str, last: object = "event") -> Finding:
        return Finding("assertion", "SWC-110", "C", "f", 0, "C.sol:8", detail,
                       ("assertion", 1, "C.sol:8", last), case=(), oracle="assertion")

    assert not checks_event(finding(ASSERT))
    assert not checks_event(finding("INVALID opcode reached (assert in solc < 0.8)"))
    assert checks_event(finding(EVENT)) and checks_event(finding(f"{EVENT}; {ASSERT}"))
    assert checks_event(finding(f"{ASSERT}; {EVENT}"))
    assert checks_event(finding("words that name no signal"))  # the key's check
    assert not checks_event(finding(EVENT, last=1))  # a panic's key: its panic


@needs_node
def test_a_shared_line_is_checked_by_the_signal_its_case_shows(tmp_path: Path) -> None:
    chain, findings = shared_line(tmp_path)
    assert [f.detail for f in findings] == list(CASES.values())
    assert len({f.key for f in findings}) == 1 and findings[0].key[-1] == "event"
    source = reproducer_source(chain, findings)
    assert source is not None
    tests = bodies_of(source)
    assert list(tests) == ["test_assertion_check", "test_assertion_check_2",
                           "test_assertion_check_3"]
    assert_only, event_only, both = tests.values()
    # The assert alone: the panicking call is the test's last, a plain call; no logs.
    assert "vm.recordLogs()" not in assert_only and "getRecordedLogs" not in assert_only
    assert ('_call(SHARED_LINE, 0, abi.encodeWithSignature("check(bool,uint256)", false, '
            "uint256(7)));\n        // The last call reverted with the panic") in assert_only
    # The event, alone or with the assert: the recorded logs must not hold it.
    for body in (event_only, both):
        assert "vm.recordLogs();" in body
        assert body.rstrip().endswith("_assertNoAssertionFailed(vm.getRecordedLogs());")
    assert "_try(SHARED_LINE" in both  # the assert reverts the call that emitted


@needs_node
def test_shared_line_reproducers_fail_under_forge(tmp_path: Path) -> None:
    forge = forge_or_skip()
    modules = npm_modules(*FORGE_STD)
    forge_std = modules / "@layerzerolabs" / "toolbox-foundry" / "lib" / "forge-std"
    chain, findings = shared_line(tmp_path)
    source = reproducer_source(chain, findings)
    assert source is not None
    project = tmp_path / "project"
    place(project, "SharedLine.sol", SOURCE)
    place(project, "test/SharedLine.t.sol", source)
    # The assert fixed, the event still emitted: only the assert's test passes.
    fixed_copy(project, source, "SharedLine.sol",
               SOURCE.replace("assert(x != 7);", "assert(true);"))
    (project / "foundry.toml").write_text(
        '[profile.default]\nsrc = "src"\ntest = "test"\nlibs = []\n'
        f'remappings = ["forge-std/={forge_std}/"]\n')
    solc = solc_wrapper(cache_root() / "forge", SOLC)
    env = dict(os.environ, FOUNDRY_DISABLE_NIGHTLY_WARNING="1")
    proc = subprocess.run([str(forge), "test", "--offline", "--use", str(solc), "-j", "1",
                           "--match-contract", "Reproducer", "--json"], cwd=project,
                          capture_output=True, text=True, timeout=600, check=False, env=env)
    assert '"test_results"' in proc.stdout, proc.stderr[-3000:]
    outcome = {name: (r["status"], r.get("reason") or "")
               for name, r in forge_results(proc.stdout).items()}
    emitted = "AssertionFailed was emitted"
    assert outcome == {
        "SharedLineReproducer.test_assertion_check":
            ("Failure", "panic: assertion failed (0x01)"),
        "SharedLineReproducer.test_assertion_check_2": ("Failure", emitted),
        "SharedLineReproducer.test_assertion_check_3": ("Failure", emitted),
        "SharedLineReproducerFixed.test_assertion_check": ("Success", ""),
        "SharedLineReproducerFixed.test_assertion_check_2": ("Failure", emitted),
        "SharedLineReproducerFixed.test_assertion_check_3": ("Failure", emitted),
    }


@pytest.mark.parametrize("detail", [ASSERT, "INVALID opcode reached (assert in solc < 0.8)"])
def test_a_shared_line_showing_the_assert_alone_expects_its_panic(detail: str) -> None:
    from secant.report.reproducer import _panic_code

    finding = Finding("assertion", "SWC-110", "C", "f", 0, "C.sol:8", detail,
                      ("assertion", 1, "C.sol:8", "event"), case=(), oracle="assertion")
    assert _panic_code(finding) == (0x01 if detail == ASSERT else None)
