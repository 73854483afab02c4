"""The symbolic expert against ``secant fuzz``: transactions per second and coverage, same time.

Usage::

    .venv/bin/python bench/expert.py [--seconds 60] [--seed 0] [--out expert-out] \\
        [--tools expert,fuzz-same-time,fuzz] [--contract FILE[:NAME]]...

Runs ``bin/secant expert`` (ILF's π_expert, ``secant.learn.expert``) and ``bin/secant fuzz``
(Harvey's loop) on each contract for ``--seconds`` of wall time (one process, one core,
seed ``--seed``, shrinking off, every oracle on), one run at a time, and prints per contract
and tool: the transactions the campaign executed and their rate (the expert: the
transactions it chose, each run once; fuzz: its executions, each one new transaction on a
cached prefix), the symbolic runs and z3 queries behind the expert's choices, the branch
sides and instructions covered (``summary.json``), when the expert stopped because no state
it reached could add coverage, and the size of the dataset it wrote. The default contracts
are secant's bundled examples and the expert's test fixture.

The expert stops when no state it reached can add coverage, often long before the budget;
``fuzz-same-time`` runs ``secant fuzz`` for as long as the expert's campaign ran (at least
a second), for coverage at the same time; ``fuzz`` for the whole ``--seconds``. A figure,
never a pass/fail.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

from harnesses import first_line, machine, secant_state  # noqa: E402
from harnesses import run as execute  # noqa: E402

REPO = HERE.parent
SECANT = REPO / "bin" / "secant"
CONTRACTS = [
    "examples/contracts/FuzzingBook.sol",
    "examples/contracts/HarveyFoo.sol",
    "examples/contracts/Crowdsale.sol",
    "examples/contracts/Allowances.sol",
    "examples/contracts/Grants.sol",
    "examples/contracts/StatefulMaze.sol",
    "tests/fixtures/learn/Lockbox.sol",
]


@dataclass
class ToolRun:
    """One tool on one contract."""

    tool: str
    status: str
    message: str = ""
    transactions: int = 0
    seconds: float = 0.0
    branches: tuple[int, int] = (0, 0)
    instructions: tuple[int, int] = (0, 0)
    findings: int = 0
    expert: dict[str, Any] | None = None
    dataset_steps: int = 0

    @property
    def rate(self) -> float:
        """Transactions per second of the campaign's own time."""
        return self.transactions / self.seconds if self.seconds else 0.0


TOOLS = ("expert", "fuzz-same-time", "fuzz")


def run_tool(tool: str, contract: str, seconds: float, seed: int, out: Path) -> ToolRun:
    """Run ``secant TOOL`` on ``contract`` (``FILE`` or ``FILE:NAME``) and read its summary."""
    path, _, name = contract.partition(":")
    command = [str(SECANT), "fuzz" if tool.startswith("fuzz") else tool, str(REPO / path),
               "--time", f"{seconds:g}s", "--seed", str(seed),
               "--out", str(out), "--force", "--quiet", "--shrink-limit", "0"]
    if name:
        command += ["--contract", name]
    code, _, stderr, _ = execute(command, None, {}, int(seconds) * 3 + 300)
    summary_path = out / "summary.json"
    if code != 0 or not summary_path.exists():
        return ToolRun(tool, "error", first_line(stderr))
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    run = ToolRun(tool, "ok", transactions=int(summary["execs"]),
                  seconds=float(summary["elapsed_s"]),
                  branches=(summary["branches_covered"], summary["branches_total"]),
                  instructions=(summary["instructions_covered"], summary["instructions_total"]),
                  findings=len(summary["findings"]), expert=summary.get("expert"))
    dataset = out / "dataset.jsonl"
    if dataset.exists():
        run.dataset_steps = sum(1 for line in dataset.read_text(encoding="utf-8").splitlines()
                                if '"kind":"step"' in line)
    return run


def row(contract: str, tool: ToolRun) -> str:
    """One markdown table row."""
    if tool.status != "ok":
        return f"| {contract} | {tool.tool} | error: {tool.message} | | | | |"
    covered, total = tool.branches
    done, all_instructions = tool.instructions
    expert = tool.expert
    behind = ""
    if expert is not None:
        behind = (f"{expert['symbolic_runs']} symbolic runs, {expert['queries']} queries "
                  f"({expert['sat']} sat), {tool.dataset_steps} dataset steps"
                  + (", finished" if expert["finished"] else ""))
    return (f"| {contract} | {tool.tool} | {tool.transactions} in {tool.seconds:.0f} s | "
            f"{tool.rate:,.1f} | {covered}/{total} | {done}/{all_instructions} | "
            f"{tool.findings} | {behind} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="wall seconds per run")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed")
    parser.add_argument("--out", type=Path, default=Path("expert-out"), help="output folder")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, of {', '.join(TOOLS)}")
    parser.add_argument("--contract", action="append", default=None, metavar="FILE[:NAME]",
                        help="a contract to run (repeat; default: the bundled examples)")
    args = parser.parse_args(argv)
    tools = [t for t in args.tools.split(",") if t]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; known: {', '.join(TOOLS)}")
    contracts = args.contract or CONTRACTS
    out = args.out.resolve()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["| contract | tool | transactions | tx/s | branch sides | instructions | "
             "findings | behind the expert's choices |",
             "|---|---|---|---|---|---|---|---|"]
    results: list[dict[str, Any]] = []
    for contract in contracts:
        label = Path(contract.partition(":")[0]).stem
        expert_seconds: float | None = None
        for tool in tools:
            seconds: float = args.seconds
            if tool == "fuzz-same-time":
                seconds = max(1.0, round(expert_seconds if expert_seconds is not None
                                         else args.seconds, 1))
            result = run_tool(tool, contract, seconds, args.seed, out / tool / label)
            if tool == "expert" and result.status == "ok":
                expert_seconds = result.seconds
            lines.append(row(label, result))
            print(lines[-1], file=sys.stderr)
            results.append({"contract": contract, **result.__dict__})
    body = "\n".join(lines)
    print(body)
    report = [f"Run on {when}: {machine()}; secant {secant_state()}.", "", "```sh",
              ".venv/bin/python bench/expert.py "
              + shlex.join(sys.argv[1:] if argv is None else argv), "```", "", body, ""]
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text("\n".join(report), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1, default=list) + "\n",
                                      encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
