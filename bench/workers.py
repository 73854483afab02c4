"""Workers in processes: executions per second and assertions over time, 1 worker against N.

Usage::

    .venv/bin/python bench/workers.py [--workers 1,2] [--seconds 120] [--maze-seed 0] \\
        [--size 5] [--token-execs 40000] [--seed 0] [--ray-nodes 4] [--out workers-out]

Two measurements, each run of ``bin/secant fuzz`` as a user runs it (the defaults: every
oracle, the concolic stage, shrinking), one run at a time:

* **the token** (``bench/contracts/Token.sol``, the ERC-20 of ``bench/engine.py``) with
  ``--execs E --workers N``: the same budget, so the same work however it is spread;
  executions per second of fuzzing (``summary.json``'s executions over its elapsed time)
  and the wall time of the whole command, compilation and reports included;
* **a maze** of the maze bench (``bench/maze_gen.py``, seed ``--maze-seed``) with ``--time
  T --workers N``: executions in the same wall time, and the time to the k-th distinct
  feasible assertion found (``bench/maze.py`` maps findings to the maze's assertions).

With ``--ray-nodes K``, the maze also runs on a local Ray cluster of K nodes of one CPU
each (``ray.cluster_utils.Cluster``, real raylets on this machine) with K+1 workers, and a
table gives, per worker, its epochs, the mean size of its reports, the campaign's time to
apply one, and how long a report waited to be applied: the exchange's cost per epoch.

Prints a table per measurement and the ratio of each N to the first; figures, never a
pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from maze import Run, secant_found, sequence_cap  # noqa: E402
from maze_gen import SOLC_VERSION, generate, write  # noqa: E402

SECANT = HERE.parent / "bin" / "secant"
TOKEN = HERE / "contracts" / "Token.sol"


def run(args: list[str], out: Path) -> tuple[dict[str, Any], float]:
    """``bin/secant fuzz ARGS --quiet --force --out OUT``: its summary and wall seconds."""
    command = [str(SECANT), "fuzz", *args, "--quiet", "--force", "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-400:]}")
    return json.loads((out / "summary.json").read_text()), wall


def rate(summary: dict[str, Any]) -> float:
    """Executions per second of a campaign (all its workers) over its elapsed time."""
    return float(summary["execs"]) / max(float(summary["elapsed_s"]), 1e-9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--seconds", type=int, default=120, help="the maze's --time")
    parser.add_argument("--maze-seed", type=int, default=0, help="bench/maze_gen.py seed")
    parser.add_argument("--size", type=int, default=5, help="maze cells per side")
    parser.add_argument("--token-execs", type=int, default=40_000, help="the token's --execs")
    parser.add_argument("--seed", type=int, default=0, help="the campaigns' seed")
    parser.add_argument("--out", type=Path, default=Path("workers-out"))
    parser.add_argument("--ray-nodes", type=int, default=0,
                        help="also run the maze on a local Ray cluster of this many nodes")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores; seed {args.seed}", file=sys.stderr)

    print(f"\n### Token, --execs {args.token_execs:,} (defaults)\n")
    print("| workers | executions | fuzzing s | exec/s | wall s | speed-up |")
    print("|---:|---:|---:|---:|---:|---:|")
    first_rate = None
    for count in counts:
        summary, wall = run([str(TOKEN), "--contract", "Token", "--execs",
                             str(args.token_execs), "--seed", str(args.seed),
                             "--workers", str(count)], out / f"token-{count}")
        speed = rate(summary)
        first_rate = first_rate or speed
        print(f"| {count} | {summary['execs']:,} | {summary['elapsed_s']:.1f} | "
              f"{speed:,.0f} | {wall:.1f} | {speed / first_rate:.2f}x |", flush=True)

    maze = generate(args.maze_seed, args.size)
    sol, truth_path = write(maze, out / "maze", timeout_ms=60_000)
    truth = json.loads(truth_path.read_text())
    feasible = int(truth["feasible"])
    print(f"\n### Maze {args.maze_seed} ({feasible} feasible assertions), --time "
          f"{args.seconds}s (defaults)\n")
    print("| workers | executions | exec/s | assertions | time to the k-th "
          "(k = 1, 5, 10, 15, 20, ...) | speed-up |")
    print("|---:|---:|---:|---:|---|---:|")
    first_rate = None
    for count in counts:
        summary, _ = run([str(sol), "--contract", "Maze", "--time", f"{args.seconds}s",
                          "--seed", str(args.seed), "--workers", str(count),
                          "--max-sequence-length", str(sequence_cap(truth)),
                          "--solc-version", SOLC_VERSION, "--unlimited-code-size"],
                         out / f"maze-{count}")
        found = Run(f"secant-{count}")
        secant_found(summary, truth, found)
        times = sorted(found.found.values())
        marks = ", ".join(f"{times[k - 1]:.0f} s" for k in [1, *range(5, len(times) + 1, 5)]
                          if k <= len(times))
        speed = rate(summary)
        first_rate = first_rate or speed
        print(f"| {count} | {summary['execs']:,} | {speed:,.0f} | {len(times)} | "
              f"{marks or '-'} | {speed / first_rate:.2f}x |", flush=True)
    if args.ray_nodes:
        ray_exchange(args, sol, truth, out)
    return 0


def ray_exchange(args: argparse.Namespace, sol: Path, truth: dict[str, Any],
                 out: Path) -> None:
    """The maze on a local Ray cluster of ``--ray-nodes`` nodes (one CPU each), one worker
    per node: what each epoch's exchange costs the campaign."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        for _ in range(args.ray_nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        summary, wall = run([str(sol), "--contract", "Maze", "--time", f"{args.seconds}s",
                             "--seed", str(args.seed), "--ray", cluster.address,
                             "--workers", str(args.ray_nodes + 1),
                             "--max-sequence-length", str(sequence_cap(truth)),
                             "--solc-version", SOLC_VERSION, "--unlimited-code-size"],
                            out / "maze-ray")
    finally:
        cluster.shutdown()
    workers = summary["workers"]
    print(f"\n### Maze {args.maze_seed} on a local Ray cluster of {args.ray_nodes} nodes "
          f"(one CPU each; {len(workers)} workers, the first in the command's process), "
          f"--time {args.seconds}s\n")
    print(f"{summary['execs']:,} executions; {os.cpu_count()} cores shared by every node.\n")
    print("| worker | where | executions | epochs | report KB (mean) | applied in ms (mean) "
          "| waited ms (mean) | cases sent |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for index, worker in enumerate(workers):
        exchange = worker.get("exchange")
        if exchange is None:
            print(f"| {index} | the command | {worker['execs']:,} | | | | | |")
            continue
        print(f"| {index} | {worker.get('where', '')} | {worker['execs']:,} | "
              f"{exchange['epochs']} | {exchange['report_kb_mean']} | "
              f"{exchange['apply_ms_mean']} | {exchange['waited_ms_mean']} | "
              f"{exchange['cases_sent']:,} |", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
