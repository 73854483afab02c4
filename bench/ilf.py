"""ILF's policies against Harvey's loop: instruction coverage and ILF's six detectors.

Usage::

    .venv/bin/python bench/ilf.py --manifest CORPUS/manifest.json [--split held-out] \\
        [--contract FILE:NAME]... [--policies uniform,learned,expert,mix,harvey,harvey+learned] \\
        [--seeds 0,1,2] [--budgets 1000tx,2000tx,60s,300s] [--model FILE] \\
        [--learned-share 0.1] [--limit N] [--only REGEX]... [--also-at 60s] [--out ilf-out] \
        [--json FILE] [--markdown]
    .venv/bin/python bench/ilf.py --merge FILE[=LABEL] [FILE ...] [--keep FILE] [--markdown]

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

Two pairings follow the table, each by contract and seed: Harvey with the learned stage
against Harvey, and the learned policy against uniform (the two comparisons the issue's
targets are stated in). Then the *reach*: per size, the mean over contracts of the best
coverage any of the runs reached, beside uniform's at the smallest transaction budget. No
policy can gain more over uniform than that headroom, so a target above it says more
about the contracts than about the policy.

``--also-at 60s`` reads more budgets off each run of seconds: a run of ``300s`` also gives
the row of ``60s``, from the ``timeline.csv`` its campaign wrote (the instructions covered
at the last sample at or before 60 s; the detectors whose finding came by then). The same
campaign stopped at 60 s would have covered that much: it is a function of its seed and
executions, and ``--time`` counts the same seconds. Such a run records ``read_from``
(``300s``), has no decisions or transactions of its own, and merges as any other.

``--merge`` runs nothing: it reads the ``--json`` files of earlier runs (a table of every
policy at 300 s takes a day of one core, so it is assembled from runs made at different
times) and prints the same table, pairings and reach over all of them. A run of a later
file replaces the same contract, policy, seed and budget of an earlier one; the ``runs``
column says how many runs each row averages, so a gap shows. Each run records the commit
that ran it; ``FILE=LABEL`` labels the runs of a file written before runs kept it.
``--keep FILE`` writes the merged runs without their command lines (which name paths of
the machine that ran them): docs/learned-runs.json is the table of docs/learned.md kept
that way, so that later runs are merged into it
(``--merge docs/learned-runs.json NEW.json``).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
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
    command: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    covered: int = 0
    total: int = 0
    transactions: int = 0
    decisions: int = 0
    detectors: list[str] = field(default_factory=list)
    error: str = ""
    secant: str = ""  # the commit that ran it (``harnesses.secant_state``); "" before it was kept
    read_from: str = ""  # the longer budget's run this one was read off (``--also-at``)

    @property
    def coverage(self) -> float:
        """Instruction coverage in percent."""
        return 100.0 * self.covered / self.total if self.total else 0.0


def targets_of(args: argparse.Namespace) -> list[Target]:
    """The manifest's contracts of the chosen split, then every ``--contract``.

    A manifest's contract is found in its package as ``secant learn dataset`` installed it
    (the user cache; installed again if it is gone), and fuzzed as the corpus ran it: as a
    plain contract (``--harness echidna``) without the code size limit, compiled with the
    release the manifest names (older manifests name none: the newest the pragma allows).
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
            solc = ["--solc-version", entry["solc"]] if entry.get("solc") else []
            found.append(Target(folders[(package, version)] / entry["source"],
                                entry["contract"],
                                ["--harness", "echidna", "--unlimited-code-size", *solc]))
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


def read_at(run: Run, budget: str, out: Path) -> Run | None:
    """``run`` as it stood after ``budget`` seconds, from its ``timeline.csv`` (``--also-at``).

    None when ``run`` is not a longer run of seconds, failed, or its campaign wrote no
    timeline (``secant expert`` writes none).
    """
    if (run.error or not budget.endswith("s") or budget.endswith("tx")
            or not run.budget.endswith("s") or run.budget.endswith("tx")):
        return None
    seconds = float(budget[:-1])
    if seconds >= float(run.budget[:-1]):
        return None
    try:
        lines = (out / "timeline.csv").read_text(encoding="utf-8").splitlines()
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    header = lines[0].split(",")
    samples = [dict(zip(header, line.split(","))) for line in lines[1:]]
    covered = 0
    for sample in samples:
        if float(sample["seconds"]) > seconds:
            break
        covered = int(sample["instructions"])
    detectors = sorted({str(f.get("oracle")) for f in summary.get("findings", [])
                        if f.get("oracle") in DETECTORS
                        and float(f.get("time_to_find_s", 0.0)) <= seconds})
    return Run(run.target, run.policy, run.seed, budget, run.command, seconds, covered,
               run.total, 0, 0, detectors, "", run.secant, run.budget)


def budget_order(budget: str) -> tuple[int, float]:
    """Transactions first, then seconds, each by size (``1000tx`` < ``2000tx`` < ``60s``)."""
    kind = 0 if budget.endswith("tx") else 1
    number = budget[:-2] if kind == 0 else budget[:-1]
    try:
        return kind, float(number)
    except ValueError:
        return 2, 0.0


def merged(sources: Sequence[str | Path]) -> list[Run]:
    """The runs of ``--json`` files; a later file's run replaces the same key's earlier one.

    A source is ``FILE`` or ``FILE=LABEL``: the label stands for the commit of the file's
    runs that do not record one (files written before runs kept it).
    """
    by_key: dict[tuple[str, str, int, str], Run] = {}
    names = set(Run.__dataclass_fields__)
    for source in sources:
        text = str(source)
        path, label = Path(text), ""
        if not path.exists() and "=" in text:
            file, _, label = text.rpartition("=")
            path = Path(file)
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"cannot read runs from {path}: {exc}; give files that "
                             "bench/ilf.py --json wrote") from None
        if not isinstance(records, list):
            raise SystemExit(f"{path} holds no list of runs; give files that bench/ilf.py "
                             "--json wrote")
        for record in records:
            try:
                run = Run(**{k: v for k, v in record.items() if k in names})
            except (AttributeError, TypeError):
                raise SystemExit(f"{path} holds a record that is no run ({str(record)[:60]}); "
                                 "give files that bench/ilf.py --json wrote") from None
            run.secant = run.secant or label
            by_key[(run.target, run.policy, run.seed, run.budget)] = run
    return list(by_key.values())


def kept(runs: list[Run]) -> str:
    """``runs`` as JSON for the repository: every figure, no command line (it names paths
    of the machine that ran it; the docs give the command of each table instead)."""
    records = []
    for run in sorted(runs, key=lambda r: (r.target, r.policy, budget_order(r.budget), r.seed)):
        record = asdict(run)
        del record["command"]
        if not run.read_from:
            del record["read_from"]  # a run of its own, as every run kept before the field
        record["wall_s"] = round(run.wall_s, 2)
        records.append(json.dumps(record))
    return "[\n" + ",\n".join(records) + "\n]\n"  # a run a line: later merges diff well


def provenance(runs: list[Run]) -> str:
    """How many of ``runs`` each secant commit ran (runs kept before the commit was: unknown)."""
    counts: dict[str, int] = defaultdict(int)
    for run in runs:
        counts[run.secant or "unknown commit"] += 1
    return "; ".join(f"{state}: {count}" for state, count in sorted(counts.items()))


def reach(runs: list[Run], baseline: str = "uniform") -> str:
    """Per size: the mean over contracts of the best coverage any run reached, beside
    ``baseline``'s mean at the smallest transaction budget it ran, and the difference.

    Only contracts ``baseline`` ran at that budget count. Empty without such runs.
    """
    ok = [r for r in runs if not r.error and r.total]
    budgets = sorted({r.budget for r in ok if r.policy == baseline and r.budget.endswith("tx")},
                     key=budget_order)
    if not budgets:
        return ""
    budget = budgets[0]
    base: dict[str, list[float]] = defaultdict(list)
    best: dict[str, float] = defaultdict(float)
    size: dict[str, bool] = {}
    for run in ok:
        best[run.target] = max(best[run.target], run.coverage)
        size[run.target] = run.total >= LARGE
        if run.policy == baseline and run.budget == budget:
            base[run.target].append(run.coverage)
    lines = []
    for name, large in (("small", False), ("large", True)):
        targets = [t for t in base if size[t] == large]
        if not targets:
            continue
        top = statistics.fmean(best[t] for t in targets)
        low = statistics.fmean(statistics.fmean(base[t]) for t in targets)
        lines.append(f"| {name} | {len(targets)} | {top:.1f} | {low:.1f} | {top - low:+.1f} |")
    return "\n".join([f"\nReach: the best coverage any of these {len(ok)} runs reached, by "
                      f"contract, against {baseline} at {budget}:\n",
                      f"| size | contracts | best reached % | {baseline} at {budget} % "
                      "| headroom (points) |", "|---|---|---|---|---|", *lines])


def mean(values: list[float]) -> str:
    """The mean to one decimal, or a dash."""
    return f"{statistics.fmean(values):.1f}" if values else "-"


def table(runs: list[Run], policies: list[str], budgets: list[str]) -> str:
    """The markdown table: one row per policy and budget."""
    header = ["policy", "budget", "runs", "coverage small %", "coverage large %", "wall s",
              "decisions/s", *DETECTORS, "errors"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    grouped: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        grouped[(run.policy, run.budget)].append(run)
    for budget in budgets:
        for policy in policies:
            group = grouped.get((policy, budget), [])
            if not group:
                continue  # never run (a merged table may lack some): no row
            ok = [r for r in group if not r.error]
            small = [r.coverage for r in ok if r.total < LARGE]
            large = [r.coverage for r in ok if r.total >= LARGE]
            rates = [r.decisions / r.wall_s for r in ok if r.decisions and r.wall_s]
            cells = [policy, budget, str(len(group)), mean(small), mean(large),
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
    parser.add_argument("--also-at", default="", metavar="BUDGETS",
                        help="seconds budgets to read off each longer run of seconds "
                             "(its timeline.csv), e.g. 60s")
    parser.add_argument("--out", type=Path, default=Path("ilf-out"))
    parser.add_argument("--json", type=Path, help="write every run here too")
    parser.add_argument("--markdown", action="store_true", help="print only the table")
    parser.add_argument("--merge", nargs="+", metavar="FILE[=LABEL]",
                        help="run nothing: the table of the runs in these --json files")
    parser.add_argument("--keep", type=Path, metavar="FILE",
                        help="with --merge: also write the merged runs here, without commands")
    args = parser.parse_args()
    if args.merge:
        runs = merged(args.merge)
        if args.keep is not None:
            args.keep.write_text(kept(runs), encoding="utf-8")
        present = {r.policy for r in runs}
        policies = [p for p in POLICIES if p in present]
        budgets = sorted({r.budget for r in runs}, key=budget_order)
        if not args.markdown:
            print(f"# ILF's policies against Harvey's loop\n\n{len(runs)} runs from "
                  f"{len(args.merge)} file(s) ({provenance(runs)})\n")
        report(runs, policies, budgets)
        return
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise SystemExit(f"unknown policies {unknown}: use some of {', '.join(POLICIES)}")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    budgets = [b for b in args.budgets.split(",") if b]
    for budget in budgets:
        budget_flags(budget)
    also = [b for b in args.also_at.split(",") if b]
    for budget in also:
        if not (budget.endswith("s") and budget[:-1].replace(".", "", 1).isdigit()):
            raise SystemExit(f"--also-at {budget!r}: give seconds budgets, such as 60s")
    targets = targets_of(args)
    if not targets:
        raise SystemExit("no contracts: give --manifest (with contracts of --split) or "
                         "--contract FILE:NAME")
    runs: list[Run] = []
    state = secant_state()
    for target in targets:
        for policy in policies:
            for seed in seeds:
                for budget in budgets:
                    out = args.out / f"{target.label}-{policy}-{seed}-{budget}".replace(":", "_")
                    run = run_one(target, policy, seed, budget, out, args)
                    run.secant = state
                    found = [run, *(r for b in also if (r := read_at(run, b, out)))]
                    runs += found
                    if not args.markdown:
                        for one in found:
                            status = one.error or f"{one.coverage:.1f} % instructions"
                            source = f", read off {one.read_from}" if one.read_from else ""
                            print(f"{target.label} {policy} seed {seed} {one.budget}: "
                                  f"{status} ({run.wall_s:.1f} s{source})", file=sys.stderr)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1) + "\n",
                             encoding="utf-8")
    if not args.markdown:
        print(f"# ILF's policies against Harvey's loop\n\n{machine()}; secant "
              f"{secant_state()}; {len(targets)} contracts, seeds {args.seeds}\n")
        print("Command: " + shlex.join([sys.executable, *sys.argv]) + "\n")
    report(runs, policies, sorted({*budgets, *also}, key=budget_order))


def report(runs: list[Run], policies: list[str], budgets: list[str]) -> None:
    """Print the table, the two pairings and the reach (module docstring)."""
    print(table(runs, policies, budgets))
    for base, other in (("harvey", "harvey+learned"), ("uniform", "learned")):
        comparison = paired(runs, budgets, base, other)
        if comparison:
            print(comparison)
    limits = reach(runs)
    if limits:
        print(limits)


if __name__ == "__main__":
    main()
