"""Resident memory of a long campaign, worker by worker, and its slope.

Usage::

    .venv/bin/python bench/memory.py [--minutes 60] [--interval 60] [--workers 2] \\
        [--maze-seed 0] [--size 5] [--seed 0] [--out memory-out] [--secant-arg ARG]... \\
        [TARGET.sol --contract C]

Runs ``bin/secant fuzz`` with the defaults (every oracle, the concolic stage, shrinking) on a
maze of the maze bench (``bench/maze_gen.py``), or on ``TARGET``, for ``--minutes`` with
``--workers N``, and reads the resident size of the campaign's process and of each worker
process (Linux's ``/proc``) every ``--interval`` seconds. Prints one row per sample and, per
process, the least-squares slope in MB a minute over the samples after the first ten
minutes (after the first half of a run of twenty minutes or less): the figure a 24-hour
campaign multiplies. A figure, never a pass/fail.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from maze import sequence_cap  # noqa: E402
from maze_gen import SOLC_VERSION, generate, write  # noqa: E402

SECANT = HERE.parent / "bin" / "secant"
PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_mb(pid: int) -> float | None:
    """The resident size of process ``pid`` in MB (None: it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 1e6
    except (OSError, ValueError, IndexError):
        return None


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the campaign's worker processes)."""
    try:
        return [int(part) for part in
                Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (minute, MB) points, in MB a minute."""
    if len(points) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if not spread:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("target", nargs="?", type=Path, help="a .sol file (default: a maze)")
    parser.add_argument("--contract", default=None, help="the target's contract")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--maze-seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("memory-out"))
    parser.add_argument("--secant-arg", action="append", default=[], metavar="ARG",
                        help="one more argument of secant fuzz (repeat)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.target is None:
        maze = generate(args.maze_seed, args.size)
        sol, truth = write(maze, out / "maze", timeout_ms=60_000)
        import json

        target = [str(sol), "--contract", "Maze", "--solc-version", SOLC_VERSION,
                  "--unlimited-code-size", "--max-sequence-length",
                  str(sequence_cap(json.loads(truth.read_text())))]
    else:
        target = [str(args.target)] + (["--contract", args.contract] if args.contract else [])
    command = [str(SECANT), "fuzz", *target, "--time", f"{args.minutes}m", "--seed",
               str(args.seed), "--workers", str(args.workers), "--quiet", "--force",
               "--out", str(out / "campaign"), *args.secant_arg]
    print("command: " + " ".join(command), file=sys.stderr)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    started = time.monotonic()
    samples: list[tuple[float, list[float | None]]] = []
    print("| minute | " + " | ".join(["campaign"] + [f"worker {i}" for i in
                                                       range(1, args.workers)]) + " |")
    print("|---:|" + "---:|" * args.workers)
    try:
        while process.poll() is None:
            time.sleep(args.interval)
            minute = (time.monotonic() - started) / 60
            pids = [process.pid, *children(process.pid)]
            sizes = [resident_mb(pid) for pid in pids][:args.workers]
            if process.poll() is not None:
                break
            samples.append((minute, sizes))
            cells = " | ".join("-" if mb is None else f"{mb:.1f}" for mb in sizes)
            print(f"| {minute:.1f} | {cells} |", flush=True)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait()
    after = 10.0 if args.minutes > 20 else args.minutes / 2
    print(f"\nslope after minute {after:g} (MB a minute):")
    for index in range(args.workers):
        points = [(minute, sizes[index]) for minute, sizes in samples
                  if minute >= after and index < len(sizes) and sizes[index] is not None]
        fitted = slope([(x, y) for x, y in points if y is not None])
        name = "campaign (worker 0)" if index == 0 else f"worker {index}"
        print(f"  {name}: " + ("-" if fitted is None else f"{fitted:+.3f}"))
    summary_path = out / "campaign" / "summary.json"
    if summary_path.exists():
        import json

        summary = json.loads(summary_path.read_text())
        print(f"\n{summary.get('execs')} executions, {len(summary.get('findings', []))} "
              "findings")
        for index, worker in enumerate(summary.get("workers") or [summary]):
            held = worker.get("cost_vectors") or {}
            print(f"  worker {index}: {worker.get('execs')} executions, corpus "
                  f"{worker.get('corpus')}, cost vectors held {held.get('held_mb')} MB of "
                  f"{held.get('budget_mb')} ({held.get('dropped')} dropped, "
                  f"{held.get('restored')} restored)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
