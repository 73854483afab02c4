"""ILF's policies against Harvey's loop: instruction coverage and ILF's six detectors.

Usage::

    .venv/bin/python bench/ilf.py --manifest CORPUS/manifest.json [--split held-out] \\
        [--contract FILE:NAME]... [--policies uniform,learned,expert,mix,harvey,harvey+learned] \\
        [--seeds 0,1,2] [--budgets 1000tx,2000tx,60s,300s] [--model FILE] \\
        [--learned-share 0.1] [--limit N] [--only REGEX]... [--out ilf-out] [--json FILE] \
        [--markdown]

Each contract (the held-out split of a ``secant learn dataset`` manifest, or ``--contract``)
is fuzzed by each policy, seed and budget in its own process on one core
(``--workers 1``, shrinking off), with ILF's six detectors as the oracles (leaking,
suicidal and freezing ether, block dependency, unchecked call, controlled delegatecall):

* ``uniform``, ``learned``, ``mix``: ``secant fuzz --policy NAME`` (ILF's episodes);
* ``expert``: ``secant expert`` (ILF's symbolic expert, stopping when no state it reached
  adds coverage);
* ``harvey``: ``secant fuzz`` with its defaults but the oracles;
* ``harvey+learned``: the same with the learned stage (``--learned-share``).

A budget is a number of transactions (``1000tx``: ``--execs 1000`` for ILF's episodes and
the expert, each execution one new transaction; ``--calls 1000`` for Harvey's cases) or of
seconds (``60s``: ``--time 60s``). Contracts are small under 3,000 instructions, large otherwise,
as ILF's paper splits them. The table gives, per policy and budget, the mean instruction
coverage over contracts and seeds (small / large), the findings of each detector (the
number of contract-and-seed runs that reported it), the mean wall time and, for the
learned policies, decisions a second. A figure, never a pass/fail.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

from harnesses import first_line, machine, secant_state  # noqa: E402

if TYPE_CHECKING:
    from secant.learn.corpus import PackagePin
from harnesses import run as execute  # noqa: E402

REPO = HERE.parent
SECANT = REPO / "bin" / "secant"
POLICIES = ("uniform", "learned", "expert", "mix", "harvey", "harvey+learned")
DETECTORS = ("leaking-ether", "suicidal", "freezing-ether", "block-dependency",
             "unchecked-call", "controlled-delegatecall")
LARGE = 3_000
"""ILF's line between small and large contracts, in instructions."""


@dataclass
class Target:
    """A contract to fuzz: its source, its name and any options its compile needs."""

    source: Path
    contract: str
    args: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """``file:Name``."""
        return f"{self.source.name}:{self.contract}"


@dataclass
class Run:
    """One policy, seed and budget on one contract."""

    target: str
    policy: str
    seed: int
    budget: str
    command: list[str]
    wall_s: float = 0.0
    covered: int = 0
    total: int = 0
    transactions: int = 0
    decisions: int = 0
    detectors: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def coverage(self) -> float:
        """Instruction coverage in percent."""
        return 100.0 * self.covered / self.total if self.total else 0.0


def targets_of(args: argparse.Namespace) -> list[Target]:
    """The manifest's contracts of the chosen split, then every ``--contract``.

    A manifest's contract is found in its package as ``secant learn dataset`` installed it
    (the user cache; installed again if it is gone), and fuzzed as the corpus ran it: as a
    plain contract (``--harness echidna``) without the code size limit.
    """
    found: list[Target] = []
    if args.manifest is not None:
        from secant.learn.corpus import install_package, read_manifest

        manifest = read_manifest(args.manifest)
        entries = manifest.get("contracts", [])
        folders: dict[tuple[str, str], Path] = {}
        for entry in entries:
            if entry.get("status") != "done" or entry.get("split") != args.split:
                continue
            package, version = entry["package"], entry["version"]
            if (package, version) not in folders:
                folders[(package, version)] = install_package(pin(package, version))
            found.append(Target(folders[(package, version)] / entry["source"],
                                entry["contract"],
                                ["--harness", "echidna", "--unlimited-code-size"]))
    for text in args.contract or []:
        file, _, name = text.rpartition(":")
        if not file:
            raise SystemExit(f"--contract {text!r} is not FILE:NAME")
        found.append(Target(Path(file), name))
    if args.only:
        patterns = [re.compile(text) for text in args.only]
        found = [t for t in found if any(p.search(t.label) for p in patterns)]
    return found[: args.limit] if args.limit else found


def pin(package: str, version: str) -> PackagePin:
    """The corpus's pin of ``package`` at ``version``."""
    from secant.learn.corpus import PINS

    for known in PINS:
        if known.name == package and known.version == version:
            return known
    raise SystemExit(f"{package}@{version} is not pinned in this secant's corpus")


def budget_flags(budget: str, policy: str = "harvey") -> list[str]:
    """``1000tx`` -> ``--calls 1000`` (Harvey) or ``--execs 1000``; ``60s`` -> ``--time 60s``.

    An execution of ILF's episodes and of the expert runs one new transaction on the
    state its episode reached (the prefix is restored from the cache, not run again), so
    their transactions are their executions; Harvey's cases count every call they make.
    """
    if budget.endswith("tx") and budget[:-2].isdigit():
        return ["--calls" if policy.startswith("harvey") else "--execs", budget[:-2]]
    if budget.endswith("s") and budget[:-1].replace(".", "", 1).isdigit():
        return ["--time", budget]
    raise SystemExit(f"budget {budget!r} is neither N tx nor N s")


def command_for(target: Target, policy: str, seed: int, budget: str, out: Path,
                args: argparse.Namespace) -> list[str]:
    """The secant command line of one run."""
    verb = "expert" if policy == "expert" else "fuzz"
    command = [str(SECANT), verb, str(target.source), "--contract", target.contract,
               "--seed", str(seed), "--out", str(out), "--quiet", "--force",
               "--shrink-limit", "0", "--oracles", ",".join(DETECTORS),
               *budget_flags(budget, policy)]
    if verb == "fuzz":
        command += ["--workers", "1"]
    if policy in ("uniform", "learned", "mix"):
        command += ["--policy", policy]
    if policy == "harvey+learned":
        command += ["--learned-share", str(args.learned_share)]
    if args.model is not None and policy in ("learned", "mix", "harvey+learned"):
        command += ["--model", str(args.model)]
    return command + target.args


def run_one(target: Target, policy: str, seed: int, budget: str, out: Path,
            args: argparse.Namespace) -> Run:
    """Run one campaign and read its summary."""
    command = command_for(target, policy, seed, budget, out, args)
    result = Run(target.label, policy, seed, budget, command)
    seconds = float(budget[:-1]) if budget.endswith("s") and not budget.endswith("tx") \
        else 600.0
    code, _, err, result.wall_s = execute(command, None, {"SECANT_WORKERS": "1"},
                                          timeout=4 * seconds + 600)
    summary_path = out / "summary.json"
    if code not in (0, 1) or not summary_path.exists():
        result.error = first_line(err)
        return result
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    result.covered = int(summary.get("instructions_covered", 0))
    result.total = int(summary.get("instructions_total", 0))
    result.transactions = int(summary.get("transactions", 0))
    episodes = summary.get("episodes") or {}
    stage = summary.get("learned_stage") or {}
    result.decisions = int((episodes.get("learned") or stage.get("learned") or {})
                           .get("decisions", 0))
    result.detectors = sorted({str(f.get("oracle")) for f in summary.get("findings", [])
                               if f.get("oracle") in DETECTORS})
    return result


def mean(values: list[float]) -> str:
    """The mean to one decimal, or a dash."""
    return f"{statistics.fmean(values):.1f}" if values else "-"


def table(runs: list[Run], policies: list[str], budgets: list[str]) -> str:
    """The markdown table: one row per policy and budget."""
    header = ["policy", "budget", "coverage small %", "coverage large %", "wall s",
              "decisions/s", *DETECTORS, "errors"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    grouped: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        grouped[(run.policy, run.budget)].append(run)
    for budget in budgets:
        for policy in policies:
            group = grouped.get((policy, budget), [])
            ok = [r for r in group if not r.error]
            small = [r.coverage for r in ok if r.total < LARGE]
            large = [r.coverage for r in ok if r.total >= LARGE]
            rates = [r.decisions / r.wall_s for r in ok if r.decisions and r.wall_s]
            cells = [policy, budget, mean(small), mean(large),
                     mean([r.wall_s for r in ok]), mean(rates)]
            cells += [str(sum(1 for r in ok if d in r.detectors)) for d in DETECTORS]
            cells.append(str(len(group) - len(ok)))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired(runs: list[Run], budgets: list[str], base: str = "harvey",
           other: str = "harvey+learned") -> str:
    """``other`` against ``base`` on the same contract and seed: the mean difference in
    coverage points (small / large), and on how many pairs it was ahead, level, behind.

    Empty when the runs do not hold both policies: the comparison the issue's target is
    stated in (Harvey with the learned stage against Harvey, paired over seeds).
    """
    by_key = {(r.policy, r.target, r.seed, r.budget): r for r in runs if not r.error}
    lines: list[str] = []
    for budget in budgets:
        for size, large in (("small", False), ("large", True)):
            diffs = [by_key[(other, target, seed, budget)].coverage - run.coverage
                     for (policy, target, seed, b), run in by_key.items()
                     if policy == base and b == budget and (run.total >= LARGE) == large
                     and (other, target, seed, budget) in by_key]
            if not diffs:
                continue
            ahead = sum(1 for d in diffs if d > 0.05)
            behind = sum(1 for d in diffs if d < -0.05)
            lines.append(f"| {budget} | {size} | {len(diffs)} | {statistics.fmean(diffs):+.2f} "
                         f"| {ahead} / {len(diffs) - ahead - behind} / {behind} |")
    if not lines:
        return ""
    return "\n".join([f"\n{other} against {base}, paired by contract and seed:\n",
                      "| budget | size | pairs | mean difference (points) "
                      "| ahead / level / behind |", "|---|---|---|---|---|", *lines])


def main() -> None:
    """Parse the arguments, run every campaign, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, help="a `secant learn dataset` manifest")
    parser.add_argument("--split", default="held-out", help="the manifest's split to run")
    parser.add_argument("--contract", action="append", metavar="FILE:NAME")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--budgets", default="1000tx,2000tx,60s,300s")
    parser.add_argument("--model", type=Path)
    parser.add_argument("--learned-share", type=float, default=0.1)
    parser.add_argument("--limit", type=int, default=0, help="at most this many contracts")
    parser.add_argument("--only", action="append", metavar="REGEX",
                        help="only contracts whose file:Name matches (repeat: any of them)")
    parser.add_argument("--out", type=Path, default=Path("ilf-out"))
    parser.add_argument("--json", type=Path, help="write every run here too")
    parser.add_argument("--markdown", action="store_true", help="print only the table")
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise SystemExit(f"unknown policies {unknown}: use some of {', '.join(POLICIES)}")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    budgets = [b for b in args.budgets.split(",") if b]
    for budget in budgets:
        budget_flags(budget)
    targets = targets_of(args)
    if not targets:
        raise SystemExit("no contracts: give --manifest (with contracts of --split) or "
                         "--contract FILE:NAME")
    runs: list[Run] = []
    for target in targets:
        for policy in policies:
            for seed in seeds:
                for budget in budgets:
                    out = args.out / f"{target.label}-{policy}-{seed}-{budget}".replace(":", "_")
                    run = run_one(target, policy, seed, budget, out, args)
                    runs.append(run)
                    if not args.markdown:
                        status = run.error or f"{run.coverage:.1f} % instructions"
                        print(f"{target.label} {policy} seed {seed} {budget}: {status} "
                              f"({run.wall_s:.1f} s)", file=sys.stderr)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1) + "\n",
                             encoding="utf-8")
    if not args.markdown:
        print(f"# ILF's policies against Harvey's loop\n\n{machine()}; secant "
              f"{secant_state()}; {len(targets)} contracts, seeds {args.seeds}\n")
        print("Command: " + shlex.join([sys.executable, *sys.argv]) + "\n")
    print(table(runs, policies, budgets))
    comparison = paired(runs, budgets)
    if comparison:
        print(comparison)


if __name__ == "__main__":
    main()
