"""Sequences on an invariant suite whose bug needs four calls through a handler (issue 25).

``tests/fixtures/staking`` is a Foundry project of ours: a staking pool whose loyalty bonus
is paid out of the other stakers' ether, and a handler that deals, pranks and warps. The
invariant breaks only after two actors stake, a month passes, and one of them takes back
exactly all of their stake. The handler reads the pool through calls, so Harvey's demand
signal never comes: the sequences grow because the suite is an invariant suite.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.compile.conftest import needs_node, run_cli

STAKING = Path(__file__).resolve().parents[1] / "fixtures" / "staking"
DAY = 86_400


@needs_node
def test_an_invariant_needing_four_handler_calls_is_broken(tmp_path: Path) -> None:
    proc = run_cli("fuzz", str(STAKING), "--execs", "1000", "--seed", "2",
                   "--out", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    [finding] = summary["findings"]
    assert (finding["oracle"], finding["function"]) == ("property",
                                                        "invariant_pool_holds_every_stake")
    calls = [(tx["function"].split("(")[0], tx["args"]) for tx in finding["sequence"]]
    stakers = {args[0] % 3 for name, args in calls if name == "deposit"}
    # Two stakers, a month, and a withdrawal last: three calls and the wait at the least.
    assert len(calls) >= 3 and len(stakers) >= 2 and calls[-1][0] == "withdraw"
    # The month passes through the handler's wait(), or the block delays input-to-state
    # gives the transactions when the pool compares the timestamp with its deadline.
    waited = sum(args[0] % (60 * DAY) for name, args in calls if name == "wait")
    delayed = sum(tx.get("time", 0) for tx in finding["sequence"])
    assert waited + delayed >= 30 * DAY
    # Random runs of the longest length were tried, as in any invariant suite.
    assert summary["corpus_origins"].get("random", 0) >= 1
