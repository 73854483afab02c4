"""The maze benchmark: distinct assertions found in generated mazes, secant against forge.

Usage::

    .venv/bin/python bench/maze.py [--mazes 5] [--first-seed 0] [--size 5] \\
        [--seconds 600] [--out maze-out] \\
        [--tools secant,secant-assertion,secant-no-stage,secant-expert,forge] \\
        [--seed 0] [--symbolic-share F] [--secant-arg ARG]... [--expert-arg ARG]... \\
        [--no-forge-corpus]

Generates ``--mazes`` mazes (``bench/maze_gen.py``; seeds ``--first-seed`` onwards) with
their ground truth (which assertions are feasible, by z3 and a witness), then runs every
tool on every maze, one run at a time, for ``--seconds`` of fuzzing each (compilation
excluded on both sides):

``secant``
    what a user gets: ``bin/secant fuzz Maze.sol --contract Maze --time T --seed S
    --solc-version 0.8.26 --max-sequence-length L`` (L: 16, or the longest witness
    sequence of the maze when longer), secant's defaults otherwise: every oracle, the
    symbolic stage at its default share, findings shrunk within the budget.
``secant-assertion``
    the lighter configuration of the earlier tables: the same with ``--oracles assertion
    --shrink-limit 0`` (the only oracle these assertions need, no shrinking), and
    ``--symbolic-share F`` when given (``--symbolic-share`` here).
``secant-no-stage``
    the lighter configuration without the symbolic stage: ``--oracles assertion
    --shrink-limit 0 --symbolic-share 0`` (``--symbolic-share 0`` only once ``secant
    fuzz`` has that option, as before it existed).
``secant-expert``
    ``bin/secant expert Maze.sol --contract Maze --time T --seed S --oracles assertion
    --shrink-limit 0 --solc-version 0.8.26 --max-depth L``: ILF's symbolic expert
    (``secant.learn.expert``) choosing every transaction with z3, one transaction ahead
    of the state the sequence reached (``--expert-arg`` adds arguments).
``forge``
    forge 1.7.1 (npm ``@foundry-rs/forge``, installed once into secant's cache) on a
    Foundry project holding the same ``Maze.sol`` and an invariant test contract that
    targets the maze: one campaign of T seconds (``invariant.timeout``, runs out of reach,
    ``--fuzz-seed S``, ``-j 1``), coverage-guided (``invariant.corpus_dir``) unless
    ``--no-forge-corpus``, compiled by solc-js 0.8.26 through secant's wrapper
    (``secant.report.forge``) with the optimizer off, as secant compiles it.

How an assertion counts as found (docs/maze-bench.md says why): a cell's body both emits
``AssertionFailed(id)`` (from a line of its own) and sets bit ``id`` of ``foundMask``, and
does not revert. secant reports each emitted ``AssertionFailed`` as an assertion finding at
its source line, which the ground truth maps to the id. forge's campaign never fails (its
one invariant is empty); the test contract's ``afterInvariant()``, which forge calls at
the end of every run of calls, writes the run's ``foundMask`` with the time to a file
(once per new bit, remembered across runs in an environment variable, since forge resets
the chain between runs). Both times are from the start of the campaign.

Prints one row per maze: assertions, feasible, infeasible (and unknown, when z3 timed out
without a witness), then per tool the number of distinct feasible assertions found and the
time of the last new one; an assertion the ground truth calls infeasible that a tool
reports is flagged. Writes ``OUT/results.json`` (every run: command, ids and times) and
``OUT/results.md`` (the table, the machine, the commands). A figure, never a pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script, bench/ is already first
    sys.path.append(str(HERE))

from harnesses import first_line  # noqa: E402
from harnesses import run as execute  # noqa: E402
from maze_gen import SOLC_VERSION, generate, write  # noqa: E402

from secant.report.forge import (  # noqa: E402
    FORGE_VERSION,
    ForgeUnavailable,
    install_forge,
    solc_wrapper,
)

REPO = Path(__file__).resolve().parents[1]
SECANT = REPO / "bin" / "secant"
TOOLS = ("secant", "secant-assertion", "secant-no-stage", "secant-expert", "forge")
LIGHTER = ["--oracles", "assertion", "--shrink-limit", "0"]
"""What the lighter secant columns add to secant's defaults."""
SYMBOLIC_FLAG = "--symbolic-share"
FORGE_RUNS = 1_000_000_000
"""Runs no campaign reaches within the budget, so forge's timeout ends the campaign."""
SEEN_VARIABLE = "SECANT_MAZE_BENCH_SEEN"
"""The environment variable the forge harness keeps the union of found ids in."""
FINDS = "finds/forge.txt"

FORGE_HARNESS = """\
// SPDX-License-Identifier: MIT
// The maze benchmark's invariant test contract (bench/maze.py): forge fuzzes the maze's
// functions; the one invariant never fails, so the campaign runs its whole budget, and
// afterInvariant() writes the ids found in each run (a bit each in foundMask) to a file.
pragma solidity ^0.8.20;

import {{Maze}} from "../src/Maze.sol";

interface MazeBenchCheats {{
    function envOr(string calldata name, uint256 defaultValue) external view returns (uint256);
    function setEnv(string calldata name, string calldata value) external;
    function toString(uint256 value) external pure returns (string memory);
    function unixTime() external view returns (uint256 milliseconds);
    function writeLine(string calldata path, string calldata data) external;
}}

contract MazeInvariants {{
    MazeBenchCheats internal constant VM =
        MazeBenchCheats(address(uint160(uint256(keccak256("hevm cheat code")))));
    string internal constant FINDS = "{finds}";
    string internal constant SEEN = "{seen}";

    Maze internal maze;

    function setUp() public {{
        maze = new Maze();
        VM.writeLine(FINDS, string.concat("start ", VM.toString(VM.unixTime())));
    }}

    function targetContracts() public view returns (address[] memory targets) {{
        targets = new address[](1);
        targets[0] = address(maze);
    }}

    /// Called by forge after every run (a sequence of calls from the state setUp left);
    /// the chain is reset between runs, the environment is not.
    function afterInvariant() public {{
        uint256 found = maze.foundMask();
        uint256 seen = VM.envOr(SEEN, uint256(0));
        if (found | seen != seen) {{
            VM.setEnv(SEEN, VM.toString(found | seen));
            VM.writeLine(FINDS, string.concat(VM.toString(VM.unixTime()), " ", VM.toString(found)));
        }}
    }}

    function invariant_mazeWalked() public view {{}}
}}
"""

FOUNDRY_TOML = """\
[profile.default]
src = "src"
test = "test"
out = "out"
libs = []
optimizer = false
evm_version = "cancun"
fs_permissions = [{ access = "read-write", path = "./finds" }]
"""


# --- one run --------------------------------------------------------------------------------


@dataclass
class Run:
    """One tool's run on one maze."""

    tool: str
    status: str = "ran"  # ran, skipped, error
    message: str = ""
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    wall_s: float = 0.0
    execs: int = 0
    found: dict[int, float] = field(default_factory=dict)  # id -> seconds to find
    unattributed: list[str] = field(default_factory=list)

    def shell(self) -> str:
        """The command as one shell line, with its environment and folder."""
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        line = (prefix + " " if prefix else "") + shlex.join(self.command)
        return f"(cd {shlex.quote(self.cwd)} && {line})" if self.cwd else line


def help_text() -> str:
    """``bin/secant fuzz --help``, wide enough that no option name is cut."""
    _, out, err, _ = execute([str(SECANT), "fuzz", "--help"], None,
                             {"COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"}, 600)
    return re.sub(r"\x1b\[[0-9;]*m", "", out + err)


def symbolic_available(text: str | None = None) -> bool:
    """Whether ``secant fuzz`` has the symbolic stage's option."""
    return SYMBOLIC_FLAG in (help_text() if text is None else text)


def line_ids(truth: dict[str, Any]) -> dict[int, int]:
    """Source line of each assertion's ``emit`` -> its id."""
    return {a["line"]: a["id"] for a in truth["assertions"]}


def secant_found(summary: dict[str, Any], truth: dict[str, Any],
                 run: Run) -> None:
    """Fill ``run.found`` from a campaign's ``summary.json`` findings."""
    ids = line_ids(truth)
    for finding in summary.get("findings", []):
        source = finding.get("source") or ""
        match = re.fullmatch(r"(?:.*/)?Maze\.sol:(\d+)", source)
        ident = ids.get(int(match.group(1))) if match else None
        if finding.get("kind") != "assertion" or ident is None:
            run.unattributed.append(f"{finding.get('kind')}: {source or '?'}: "
                                    f"{finding.get('detail', '')[:100]}")
            continue
        when = float(finding.get("time_to_find_s", 0.0))
        run.found[ident] = min(when, run.found.get(ident, when))


def sequence_cap(truth: dict[str, Any]) -> int:
    """The longest transaction sequence secant may build on a maze: secant's default (16),
    or the longest witness sequence of a feasible assertion when that is longer, so that
    every feasible assertion can be fired by one test case (forge's runs are 500 calls)."""
    return max([16] + [len(a.get("sequence") or []) for a in truth["assertions"]])


def run_secant(tool: str, sol: Path, truth: dict[str, Any], out: Path, seconds: int | None,
               seed: int, extra: list[str], execs: int | None = None,
               subcommand: str = "fuzz") -> Run:
    """``bin/secant fuzz`` (or ``expert``) on one maze (``execs`` instead of a time budget:
    for tests)."""
    command = [str(SECANT), subcommand, str(sol), "--contract", "Maze"]
    command += ["--execs", str(execs)] if execs is not None else ["--time", str(seconds)]
    command += ["--seed", str(seed), "--out", str(out), "--quiet", "--force",
                "--solc-version", SOLC_VERSION]
    depth = "--max-depth" if subcommand == "expert" else "--max-sequence-length"
    if not any(arg.startswith(depth) for arg in extra):
        command += [depth, str(sequence_cap(truth))]
    if subcommand == "fuzz" and not any(arg.startswith("--workers") for arg in extra):
        # One core each, as forge runs with -j 1 here (bench/workers.py compares 1 and 2).
        command += ["--workers", "1"]
    command += extra
    run = Run(tool, command=command)
    if out.exists():
        shutil.rmtree(out)
    budget = seconds if seconds is not None else 600
    code, _, err, run.wall_s = execute(command, None, {}, timeout=3 * budget + 900)
    summary_path = out / "summary.json"
    if code not in (0, 1) or not summary_path.is_file():
        run.status, run.message = "error", first_line(err)
        return run
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    run.execs = int(summary.get("execs", 0))
    secant_found(summary, truth, run)
    return run


def forge_project(sol: Path, dest: Path) -> Path:
    """A Foundry project with the maze and the invariant test contract."""
    if dest.exists():
        shutil.rmtree(dest)
    for folder in ("src", "test", "finds"):
        (dest / folder).mkdir(parents=True)
    shutil.copy2(sol, dest / "src" / "Maze.sol")
    (dest / "test" / "MazeInvariants.t.sol").write_text(
        FORGE_HARNESS.format(finds=FINDS, seen=SEEN_VARIABLE), encoding="utf-8")
    (dest / "foundry.toml").write_text(FOUNDRY_TOML, encoding="utf-8")
    return dest


def forge_found(text: str, run: Run) -> None:
    """Fill ``run.found`` from the harness's file: ``start MS``, then ``MS MASK`` lines."""
    start: int | None = None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        if parts[0] == "start":
            start = int(parts[1])
            continue
        if start is None:
            continue
        when, mask = (int(parts[0]) - start) / 1000, int(parts[1])
        bit = 0
        while mask:
            if mask & 1 and bit not in run.found:
                run.found[bit] = when
            mask >>= 1
            bit += 1


def forge_report(stdout: str) -> dict[str, Any] | None:
    """The results object ``forge test --json`` printed last (after its progress lines)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{") and '"test_results"' in line:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            return value if isinstance(value, dict) else None
    return None


def run_forge(project: Path, seconds: int, seed: int, forge: Path, solc: Path,
              corpus: bool = True) -> Run:
    """``forge test`` on the maze project: one invariant campaign of ``seconds``."""
    env = {
        "FOUNDRY_INVARIANT_RUNS": str(FORGE_RUNS),
        "FOUNDRY_INVARIANT_TIMEOUT": str(seconds),
        "FOUNDRY_INVARIANT_SHRINK_RUN_LIMIT": "0",
        "FOUNDRY_INVARIANT_CHECK_INTERVAL": "0",  # the invariant is empty: check it least
        "FOUNDRY_INVARIANT_SHOW_METRICS": "false",
        "FOUNDRY_DISABLE_NIGHTLY_WARNING": "1",
    }
    if corpus:
        env["FOUNDRY_INVARIANT_CORPUS_DIR"] = str(project / "corpus")
    command = [str(forge), "test", "--offline", "--use", str(solc), "--match-contract",
               "^MazeInvariants$", "--fuzz-seed", str(seed), "-j", "1", "--json"]
    run = Run("forge", command=command, env=env, cwd=str(project))
    for stale in ("corpus", "cache", "finds"):
        shutil.rmtree(project / stale, ignore_errors=True)
    (project / "finds").mkdir()
    code, out, err, run.wall_s = execute(command, project, env, timeout=3 * seconds + 900,
                                         drop=(SEEN_VARIABLE,))
    report = forge_report(out)
    finds = project / FINDS
    if report is None or not finds.is_file():
        run.status, run.message = "error", first_line(err or out)
        return run
    for suite in report.values():
        for name, test in suite.get("test_results", {}).items():
            kind = (test.get("kind") or {}).get("Invariant") or {}
            run.execs += int(kind.get("calls", 0) or 0)
            if test.get("status") != "Success":
                run.status = "error"
                run.message = f"{name}: {test.get('status')}: {test.get('reason')}"
    forge_found(finds.read_text(encoding="utf-8"), run)
    return run


# --- the table ------------------------------------------------------------------------------


@dataclass
class MazeResult:
    """One maze: its ground truth summary and every tool's run."""

    seed: int
    sol: str
    truth: dict[str, Any]
    runs: dict[str, Run] = field(default_factory=dict)

    def feasible_ids(self) -> set[int]:
        return {a["id"] for a in self.truth["assertions"] if a["feasible"] and a["reachable"]}

    def infeasible_ids(self) -> set[int]:
        return {a["id"] for a in self.truth["assertions"]
                if a["feasible"] is False or not a["reachable"]}


def seconds_text(value: float) -> str:
    return f"{value:.1f} s" if value < 100 else f"{value:.0f} s"


def cell(result: MazeResult, tool: str) -> str:
    """A tool's cell in a maze's row."""
    run = result.runs.get(tool)
    if run is None:
        return "not run"
    if run.status == "skipped":
        return "skipped"
    if run.status == "error":
        return f"error: {run.message[:80]}"
    feasible = result.feasible_ids()
    hits = {i: t for i, t in run.found.items() if i in feasible}
    text = str(len(hits))
    if hits:
        text += f" (last {seconds_text(max(hits.values()))})"
    wrong = sorted(set(run.found) & result.infeasible_ids())
    if wrong:
        text += f" **and infeasible {wrong}: ground truth wrong**"
    return text


def table(results: list[MazeResult], tools: list[str], names: dict[str, str]) -> str:
    """The markdown table: a row per maze and a total."""
    head = ["maze (seed)", "assertions", "feasible", "infeasible", "unknown"]
    head += [names[t] for t in tools]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    totals = {t: 0 for t in tools}
    counts = [0, 0, 0, 0]
    for result in results:
        truth = result.truth
        row = [str(result.seed), str(len(truth["assertions"])), str(truth["feasible"]),
               str(truth["infeasible"]), str(truth["unknown"])]
        counts = [c + int(v) for c, v in zip(counts, row[1:])]
        for tool in tools:
            row.append(cell(result, tool))
            run = result.runs.get(tool)
            if run is not None and run.status == "ran":
                totals[tool] += len(set(run.found) & result.feasible_ids())
        lines.append("| " + " | ".join(row) + " |")
    total = ["total"] + [str(c) for c in counts]
    for tool in tools:
        ran = [r.runs.get(tool) for r in results]
        total.append(str(totals[tool]) if any(r is not None and r.status == "ran"
                                              for r in ran) else "—")
    lines.append("| " + " | ".join(total) + " |")
    return "\n".join(lines)


def machine() -> str:
    """CPU model, cores and memory of this machine."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}"


def version_of(command: list[str]) -> str:
    """The first line a tool prints for its version, or 'unavailable'."""
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              check=False)
    except OSError:
        return "unavailable"
    return (proc.stdout.strip() or proc.stderr.strip() or "unavailable").splitlines()[0]


def secant_state() -> str:
    """The repository's commit, and whether secant/ has uncommitted changes (read without
    taking git's optional locks, so the index is never rewritten)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, env=env, timeout=60,
                                check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--",
                                "secant"], capture_output=True, text=True, env=env,
                               timeout=60, check=False).stdout.strip()
    except OSError:
        return "at an unknown commit"
    if not commit:
        return "at an unknown commit"
    return f"at commit {commit}" + (" with uncommitted changes under secant/" if dirty else "")


# --- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mazes", type=int, default=5, help="how many mazes")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first maze")
    parser.add_argument("--size", type=int, default=5, help="cells per side")
    parser.add_argument("--seconds", type=int, default=600,
                        help="fuzzing seconds per maze per tool")
    parser.add_argument("--out", type=Path, default=Path("maze-out"), help="output folder")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, of {', '.join(TOOLS)}")
    parser.add_argument("--seed", type=int, default=0, help="the tools' campaign seed")
    parser.add_argument("--symbolic-share", default=None, metavar="F",
                        help="the share given to the symbolic stage in the secant-assertion "
                             "column (default: secant's own)")
    parser.add_argument("--secant-arg", action="append", default=[], metavar="ARG",
                        help="an extra argument for every secant fuzz column (repeat; use "
                             "--secant-arg=--flag for options)")
    parser.add_argument("--expert-arg", action="append", default=[], metavar="ARG",
                        help="an extra argument for the secant-expert column (repeat)")
    parser.add_argument("--no-forge-corpus", action="store_true",
                        help="run forge without its coverage-guided corpus")
    parser.add_argument("--z3-timeout", type=int, default=60,
                        help="seconds z3 may take on one nest (ground truth)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="forge and the solc wrapper (default: <secant cache>/forge)")
    args = parser.parse_args(argv)

    tools = [t for t in args.tools.split(",") if t]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; known: {', '.join(TOOLS)}")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    symbolic = symbolic_available() if any(t.startswith("secant") for t in tools) else False
    skip_symbolic = ""
    if args.symbolic_share and "secant-assertion" in tools and not symbolic:
        skip_symbolic = (f"skipped: `bin/secant fuzz --help` lists no {SYMBOLIC_FLAG} (the "
                         "symbolic stage is not built yet)")
        print(f"secant-assertion: {skip_symbolic}", file=sys.stderr)
    no_stage = LIGHTER + ([SYMBOLIC_FLAG, "0"] if symbolic else [])
    with_stage = LIGHTER + ([SYMBOLIC_FLAG, args.symbolic_share] if args.symbolic_share
                            else [])

    forge = solc = None
    if "forge" in tools:
        from secant.compile.cache import cache_root

        cache = (args.cache or cache_root() / "forge").resolve()
        try:
            forge = install_forge(cache, FORGE_VERSION)
        except ForgeUnavailable as exc:
            print(f"forge: skipped: {exc}", file=sys.stderr)
        else:
            solc = solc_wrapper(cache, SOLC_VERSION)

    runs = len(tools) * args.mazes
    print(f"{args.mazes} mazes x {len(tools)} tools x {args.seconds} s: about "
          f"{runs * args.seconds / 60:.1f} min plus compilation", file=sys.stderr)
    started = time.perf_counter()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    results: list[MazeResult] = []
    for seed in range(args.first_seed, args.first_seed + args.mazes):
        maze = generate(seed, args.size)
        sol, truth_path = write(maze, out / "mazes" / f"seed-{seed}",
                                timeout_ms=args.z3_timeout * 1000)
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        result = MazeResult(seed, str(sol), truth)
        for tool in tools:
            if tool == "secant":
                run = run_secant(tool, sol, truth, out / "secant" / f"seed-{seed}",
                                 args.seconds, args.seed, args.secant_arg)
            elif tool == "secant-no-stage":
                run = run_secant(tool, sol, truth, out / tool / f"seed-{seed}",
                                 args.seconds, args.seed, no_stage + args.secant_arg)
            elif tool == "secant-expert":
                run = run_secant(tool, sol, truth, out / "secant-expert" / f"seed-{seed}",
                                 args.seconds, args.seed, LIGHTER + args.expert_arg,
                                 subcommand="expert")
            elif tool == "secant-assertion":
                if skip_symbolic:
                    run = Run(tool, status="skipped", message=skip_symbolic)
                else:
                    run = run_secant(tool, sol, truth, out / tool / f"seed-{seed}",
                                     args.seconds, args.seed, with_stage + args.secant_arg)
            elif forge is None or solc is None:
                run = Run(tool, status="skipped", message="forge is not available")
            else:
                project = forge_project(sol, out / "forge" / f"seed-{seed}")
                run = run_forge(project, args.seconds, args.seed, forge, solc,
                                corpus=not args.no_forge_corpus)
            result.runs[tool] = run
            detail = (f"; {run.execs} executions, wall {run.wall_s:.0f} s"
                      if run.status != "skipped" else "")
            print(f"maze {seed} {tool}: {cell(result, tool)}{detail}", file=sys.stderr)
        results.append(result)
    total = time.perf_counter() - started

    names = {"secant": "secant (defaults)",
             "secant-assertion": "secant --oracles assertion --shrink-limit 0",
             "secant-no-stage": "the same, --symbolic-share 0",
             "secant-expert": "secant expert",
             "forge": f"forge {FORGE_VERSION}"}
    body = table(results, tools, names)
    print(body)
    if skip_symbolic:
        print(f"\nsecant --oracles assertion: {skip_symbolic}")
    (out / "results.json").write_text(json.dumps({
        "when": when, "machine": machine(), "secant": secant_state(),
        "argv": sys.argv[1:] if argv is None else argv,
        "seconds": args.seconds, "tools": tools, "wall_s": round(total, 1),
        "mazes": [{"seed": r.seed, "sol": r.sol, "feasible": sorted(r.feasible_ids()),
                   "infeasible": sorted(r.infeasible_ids()),
                   "runs": {t: asdict(run) for t, run in r.runs.items()}} for r in results],
    }, indent=1) + "\n", encoding="utf-8")
    report = [
        f"Run on {when}: {machine()}; secant {version_of([str(SECANT), 'version'])} "
        f"{secant_state()}"
        + (f", forge {FORGE_VERSION}" if forge else "") + ".",
        "",
        "```sh",
        ".venv/bin/python bench/maze.py "
        + shlex.join(sys.argv[1:] if argv is None else argv),
        "```",
        "",
        f"Budget {args.seconds} s of fuzzing per maze per tool; total wall time "
        f"{total / 60:.1f} min. Cells: distinct feasible assertions found (time of the last "
        "new one, from the start of the campaign).",
        "",
        body,
        "",
    ]
    if skip_symbolic:
        report += [f"secant --oracles assertion: {skip_symbolic}.", ""]
    report += ["<details><summary>Every command, as run</summary>", "", "```sh"]
    for result in results:
        for run in result.runs.values():
            if run.command:
                report.append(run.shell())
    report += ["```", "", "</details>", ""]
    (out / "results.md").write_text("\n".join(report), encoding="utf-8")
    print(f"\nwrote {out / 'results.md'} and {out / 'results.json'}; total "
          f"{total / 60:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
