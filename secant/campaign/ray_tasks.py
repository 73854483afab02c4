"""The campaigns of a project spread over a Ray cluster, one Ray task each (``--ray``).

A project with many test contracts plans one campaign per test contract (two for one with
invariants and fuzz tests). With ``--ray`` and more than one campaign, each campaign is a
Ray task: the driver sends it the campaign's plan (how to deploy its system, what it calls,
what it checks; the compiled code travels with it, serialised by Ray) and its manifest,
the task builds and runs the campaign on whichever node has the CPUs its workers need
(``--workers`` processes on that node, one without it), in a folder of its own there,
and answers with every file the campaign wrote. The driver writes them into the
campaign's folder under ``--out``: the output is the same as that of the campaigns run
one after another here.

The run's ``--time`` is shared as the sequential run shares it: the campaigns run in
*waves* of as many as the cluster has room for, and each gets the time of one wave.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secant.campaign.launch import Planned, build_plan
from secant.campaign.manifest import Manifest
from secant.campaign.options import CampaignOptions
from secant.campaign.plan import CampaignPlan
from secant.campaign.ray_workers import _ray, connect
from secant.files import write_atomic


@dataclass
class TaskResult:
    """What one campaign run as a Ray task answers: its files, summary and notes."""

    files: dict[str, bytes]
    """Every file it wrote, by path relative to its folder."""
    folders: list[str]
    """Every folder it made (``findings/`` stays, empty, when nothing was found)."""
    summary: dict[str, Any]
    notes: list[str]


def run_plan(options: CampaignOptions, chosen: CampaignPlan, manifest: Manifest,
             seconds: float | None) -> TaskResult:
    """Build and run one campaign in a folder of its own; answer what it wrote.

    The body of the Ray task: ``options`` are the run's with ``--ray`` taken out, so that
    the campaign's own workers are processes on the task's node.
    """
    with tempfile.TemporaryDirectory(prefix="secant-task-") as folder:
        where = Path(folder)
        built = build_plan(options, chosen, manifest, where, seconds)
        try:
            summary = built.campaign.run()
        except KeyboardInterrupt:
            summary = built.campaign.finish()
        finally:
            if built.writer is not None:
                built.writer.close()
        files = {str(path.relative_to(where)): path.read_bytes()
                 for path in sorted(where.rglob("*")) if path.is_file()}
        folders = [str(path.relative_to(where)) for path in sorted(where.rglob("*"))
                   if path.is_dir()]
    return TaskResult(files, folders, summary, built.notes)


def time_per_campaign(seconds: float | None, campaigns: int, slots: int) -> float | None:
    """A campaign's part of the run's ``seconds`` when ``slots`` run at once: one wave's."""
    if seconds is None:
        return None
    waves = math.ceil(campaigns / max(slots, 1))
    return seconds / waves


def run_on_ray(planned: Planned, address: str) -> list[tuple[int, TaskResult]]:
    """Run every campaign of ``planned`` as a Ray task; write their files; answer in order.

    A campaign's plan and manifest are what its task receives (with the chain planning
    deployed, when it was not used: the task's copy deploys no other).
    """
    ray = _ray()
    cpus = connect(address)
    options = planned.options
    workers = options.workers or 1
    task_options = options.with_changes(ray=None, workers=workers)
    slots = max(cpus // workers, 1)
    seconds = time_per_campaign(options.max_time, len(planned.plans), slots)
    remote = ray.remote(num_cpus=workers)(run_plan)
    replies = []
    for index, chosen in enumerate(planned.plans):
        manifest = planned.manifest.for_campaign(chosen.name, chosen.slug)
        own = None if chosen.own_budget else seconds
        replies.append((index, remote.remote(task_options, chosen, manifest, own)))
    results = []
    for index, reply in replies:
        result: TaskResult = ray.get(reply)
        folder = planned.folder(index)
        for name in result.folders:
            (folder / name).mkdir(parents=True, exist_ok=True)
        for name, data in result.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        results.append((index, result))
    return results

