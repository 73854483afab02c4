"""Shrinking a recorded finding again, after the campaign: ``secant shrink FINDING.json``.

A campaign shrinks its findings within ``--shrink-limit`` executions; one that ran with
``--shrink-limit 0``, was interrupted while shrinking, or ran out of budget can have its
findings shrunk later. :func:`shrink_finding_file` rebuilds the campaign from the output
folder's manifest (``secant.rerun.replay.rebuild``), reads the finding's case back,
learns the finding's key by running the case (the file's name is the oracle and a hash of
the key), shrinks with the campaign's own shrinker and runner (``Worker.finding_keys``) and
rewrites the file: the shrunk ``sequence`` and ``detail``, the case found kept as
``original_sequence`` (the first one, when the file was shrunk before), and the figures in
``shrink``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secant.campaign.campaign import finding_file_name
from secant.engine.shrink import Shrinker
from secant.errors import SecantError
from secant.files import write_atomic
from secant.rerun.replay import Rebuilt, read_entry
from secant.types import TxSeq, case_to_json


@dataclass(frozen=True)
class Reshrunk:
    """What shrinking a finding's file did: the case before and after, and the figures."""

    path: Path
    before: TxSeq
    after: TxSeq
    stats: dict[str, Any]


def shrink_finding_file(rebuilt: Rebuilt, path: Path, limit: int) -> Reshrunk:
    """Shrink the case of the finding in ``path`` (of ``rebuilt``'s campaign); rewrite it.

    Raises ``SecantError`` when the case no longer shows the finding (the code changed).
    """
    data = read_entry(path)
    case = rebuilt.case(data["sequence"])
    worker = rebuilt.worker
    shown = {finding_file_name(f.oracle or f.kind, key): key
             for key, f in worker.replay(case).items()}
    key = shown.get(path.name)
    if key is None:
        raise SecantError(f"the case of {path.name} does not show its finding any more",
                          "run secant replay on the campaign folder to see what changed")
    result = Shrinker(worker.finding_keys, key, limit, worker.shrink_space()).shrink(case)
    stats = result.stats()
    after = result.case if result.reproduced else case
    shown_after = worker.replay(after).get(key)
    stats["execs"] += 2  # the run that found the key, and the one for the shrunk words
    if shown_after is None:  # not shown alone: keep the case the file had
        after, stats["tx_after"] = case, len(case)
    names = rebuilt.chain.names()
    data.setdefault("original_sequence", data["sequence"])
    if shown_after is not None and after != case:
        data.setdefault("original_detail", data.get("detail", ""))
        data["sequence"] = case_to_json(after, names)
        data["detail"] = shown_after.detail
    data["shrink"] = {**stats, "limit": limit}
    write_atomic(path, json.dumps(data, indent=1))
    return Reshrunk(path, case, after, stats)
