"""``secant fuzz``: compile, deploy and fuzz a contract; live progress; summary.json."""

from __future__ import annotations

import json
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from secant.chain.accounts import DEFAULT_BALANCE
from secant.cli.compile_cmd import (
    EvmVersionFlag,
    OptimizeFlag,
    OptimizerRunsFlag,
    RemapFlag,
    SolcVersionFlag,
    ViaIrFlag,
)
from secant.cli.options import (
    AllContractsFlag,
    ArgFlag,
    BalanceFlag,
    BlockNumberFlag,
    BlockTimeFlag,
    ConfigFlag,
    ContractFlag,
    DeployArgFlag,
    DeployerFlag,
    DeployFlag,
    ExcludeFunctionFlag,
    ForceFlag,
    ForkFlag,
    HarnessFlag,
    MatchContractFlag,
    MatchTestFlag,
    OnlyFunctionFlag,
    OraclesFlag,
    QuietFlag,
    SeedFlag,
    SenderFlag,
    ShrinkLimitFlag,
    TimeFlag,
    UnlimitedCodeSizeFlag,
    ValueFlag,
)
from secant.engine.events import FuzzListener
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT
from secant.errors import SecantError, cli_errors
from secant.files import write_atomic
from secant.types import finding_label

if TYPE_CHECKING:
    from secant.campaign.campaign import Campaign
    from secant.compile.forge_testing import ForgeTesting
    from secant.engine.failures import InternalError
    from secant.engine.policy import Policy, PolicyContext, PolicyFactory
    from secant.learn.dataset import DatasetWriter

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")

DEFAULT_TIME_S = 300.0
"""The time budget when none of --time, --execs and --calls is given."""
DEFAULT_SYMBOLIC_SHARE = 0.1
"""The concolic stage's share by default. On the maze bench (five mazes, ten minutes each)
it found 66 of 100 assertions at 0.1 and 64 at 0.25, against 62 without the stage; at 60 s,
39 against 37 (docs/maze-bench.md)."""

EXIT_FINDINGS = 1
"""Exit code of ``secant fuzz --fail-on-findings`` when something was found."""

EXIT_CRASH = 3
"""Exit code when secant itself failed (a bug: the traceback is saved, see ``crash_exit``)."""

TRACEBACK_FILE = "traceback.txt"


def register(app: typer.Typer) -> None:
    """Add ``fuzz`` to the main app."""
    app.command("fuzz")(fuzz_command)


def crash_exit(error: Exception, folder: Path, name: str = TRACEBACK_FILE) -> NoReturn:
    """Secant itself failed: save the traceback as ``folder/name``, say so in one line, exit 3.

    What the campaign wrote (corpus, findings, the summary saying ``failed``) stays.
    """
    where = folder / name
    try:
        write_atomic(where, "".join(traceback.format_exception(error)))
        saved = f"the traceback is in {where}"
    except OSError:
        saved = "the traceback could not be saved"
    message = " ".join(f"{type(error).__name__}: {error}".split())
    print(f"error: secant failed ({message}); {saved}: please report it", file=sys.stderr)
    raise SystemExit(EXIT_CRASH)


_NOT_RESUMED = frozenset({"path", "out", "force", "resume", "quiet"})
"""Recorded options a resumed campaign takes from its own command line, never the record."""


def _resumed_options(folder: Path, path: Path | None) -> dict[str, Any] | None:
    """The options recorded in ``folder`` (the ``--resume`` folder), paths as paths.

    None when it has no manifest but the input is given (a campaign killed before it
    wrote one: its corpus is still read); a one-line error when neither says what to fuzz.
    """
    from secant.campaign.resume import recorded_options

    if not folder.is_dir():
        raise SecantError(f"--resume {folder}: no such folder",
                          "pass the --out folder of an earlier secant fuzz run")
    recorded = recorded_options(folder)
    if recorded is None:
        if path is None:
            raise SecantError(f"--resume {folder}: it has no summary.json with a manifest "
                              "(the campaign stopped before it started, or is not secant's)",
                              f"give the contract too: secant fuzz PATH --resume {folder}")
        return None
    if "path" not in recorded:
        raise SecantError(f"--resume {folder}: its manifest records no input",
                          f"give the contract too: secant fuzz PATH --resume {folder}")
    for name in ("path", "out"):
        if isinstance(recorded.get(name), str):
            recorded[name] = Path(recorded[name])
    return recorded


def parse_duration(text: str) -> float:
    """Seconds in ``90``, ``30s``, ``5m``, ``1.5h`` or ``500ms``."""
    match = _DURATION_RE.match(text)
    if match is None:
        raise SecantError(f"cannot read the duration {text!r}",
                          "write it like 90, 30s, 5m or 1h")
    number = float(match.group(1))
    scale = {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
    return number * scale


@cli_errors
def fuzz_command(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(
        help="A Solidity/Vyper file, a Foundry or Hardhat project, or .bin + .abi "
             "(with --resume: the one the campaign recorded when left out)",
        show_default=False)] = None,
    contract: ContractFlag = None,
    arg: ArgFlag = None,
    value: ValueFlag = 0,
    deploy: DeployFlag = None,
    deploy_arg: DeployArgFlag = None,
    balance: BalanceFlag = DEFAULT_BALANCE,
    all_contracts: AllContractsFlag = False,
    sender: SenderFlag = None,
    deployer: DeployerFlag = None,
    block_number: BlockNumberFlag = None,
    block_time: BlockTimeFlag = None,
    match_contract: MatchContractFlag = None,
    match_test: MatchTestFlag = None,
    harness: HarnessFlag = "auto",
    only_function: OnlyFunctionFlag = None,
    exclude_function: ExcludeFunctionFlag = None,
    unlimited_code_size: UnlimitedCodeSizeFlag = False,
    time_budget: TimeFlag = None,
    execs: Annotated[int | None, typer.Option(
        "--execs", help="Execution budget (deterministic for a given seed).")] = None,
    calls: Annotated[int | None, typer.Option(
        "--calls", help="Transaction budget: stop once the cases have made this many "
        "calls in all (Echidna's and Medusa's testLimit; deterministic for a given "
        "seed).")] = None,
    seed: SeedFlag = 0,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output directory (corpus/, findings/, summary.json).")
    ] = Path("secant-out"),
    schedule: Annotated[str | None, typer.Option(
        "--schedule", help="Power schedule: uniform, afl, aflfast (default) or aflgo.")
    ] = None,
    target: Annotated[str | None, typer.Option(
        "--target", help="Directed fuzzing target FILE:LINE (or pc:N); implies aflgo.")
    ] = None,
    no_predict: Annotated[bool, typer.Option(
        "--no-predict", help="Turn off input prediction (Harvey's configuration A).")
    ] = False,
    predict_iterations: Annotated[int, typer.Option(
        "--predict-iterations", help="Secant iterations after the first prediction "
                                     "(0 is Harvey's configuration C).")] = 8,
    sequences: Annotated[str, typer.Option(
        "--sequences", help="Transaction sequences: demand (Harvey's demand-driven, default), "
                            "eager (Harvey's configuration D) or off (single transactions).")
    ] = "demand",
    aggressive_probability: Annotated[float, typer.Option(
        "--aggressive-probability", help="Probability of an aggressive-mode probe "
                                         "(storage reads as inputs) per mutation.")] = 0.125,
    no_adaptive: Annotated[bool, typer.Option(
        "--no-adaptive", help="Turn off sFuzz's adaptive seeds for just-missed branches.")
    ] = False,
    adaptive_share: Annotated[float | None, typer.Option(
        "--adaptive-share", help="Share of rounds given to adaptive seeds (default: sFuzz's, "
                                 "their number over all seeds).")] = None,
    symbolic_share: Annotated[float, typer.Option(
        "--symbolic-share", help="Share of the campaign's work (transactions run) charged "
                                 "to the concolic stage, which solves just-missed branches "
                                 "with z3 (0: off).")
    ] = DEFAULT_SYMBOLIC_SHARE,
    max_sequence_length: Annotated[int, typer.Option(
        "--max-sequence-length", help="Most transactions in a test case.")] = 16,
    max_time_delay: Annotated[int | None, typer.Option(
        "--max-time-delay", help="Most seconds one transaction may move the clock on "
                                 "(Echidna's maxTimeDelay; default: a week for harnesses "
                                 "with properties, unbounded otherwise).")] = None,
    max_block_delay: Annotated[int | None, typer.Option(
        "--max-block-delay", help="Most blocks one transaction may move the chain on "
                                  "(Echidna's maxBlockDelay; default: 60480 for harnesses "
                                  "with properties, unbounded otherwise).")] = None,
    no_prefix_cache: Annotated[bool, typer.Option(
        "--no-prefix-cache", help="Replay every sequence in full (no prefix-state cache).")
    ] = False,
    shrink_limit: ShrinkLimitFlag = DEFAULT_SHRINK_LIMIT,
    fork: ForkFlag = "cancun",
    solc_version: SolcVersionFlag = None,
    optimize: OptimizeFlag = None,
    optimizer_runs: OptimizerRunsFlag = None,
    via_ir: ViaIrFlag = None,
    evm_version: EvmVersionFlag = None,
    remap: RemapFlag = None,
    panic_codes: Annotated[str | None, typer.Option(
        "--panic-codes", help="Solidity panic codes to report, comma-separated (e.g. "
                              "0x01,0x11,0x12), or 'all' (default: 0x00,0x01,0x22,0x51; the "
                              "input checks 0.8 inserts are how such code refuses input).")] = None,
    property_prefix: Annotated[list[str] | None, typer.Option(
        "--property-prefix", help="A name prefix of boolean properties (repeat; default: "
                                  "echidna_, property_, invariant_, statefulFuzz_).")] = None,
    oracles: OraclesFlag = None,
    list_oracles: Annotated[bool, typer.Option(
        "--list-oracles", is_eager=True, callback=lambda value: _list_oracles(value),
        help="List the oracles with their SWC ids and exit.")] = False,
    quiet: QuietFlag = False,
    force: ForceFlag = False,
    resume: Annotated[Path | None, typer.Option(
        "--resume", metavar="OUT", help="Go on with the campaign whose output is in OUT: "
                                        "its corpus and findings are run again on the "
                                        "current code (adapted where functions changed), "
                                        "with the options it recorded unless given again; "
                                        "the output stays in OUT.")] = None,
    config: ConfigFlag = None,
    fail_on_findings: Annotated[bool, typer.Option(
        "--fail-on-findings", help="Exit with 1 when anything was found (for CI).")] = False,
) -> None:
    """Fuzz a contract, a harness or a Foundry test contract; write OUT/summary.json.

    A Foundry test contract (or a project folder, for each test contract in it) runs its
    invariants over the contracts setUp() created, and its fuzz tests. --time counts from
    the start of fuzzing (the code compiled and deployed) and covers shrinking the findings
    and writing the reports too: fuzzing stops early enough for them. It is the whole
    run's: with several campaigns each gets an equal part of what is left when it starts.
    Exit codes: 0 done (findings or not), 1 findings with --fail-on-findings, 2 bad input
    or options, 3 secant itself failed (the traceback is in OUT/traceback.txt).
    """
    from secant.cli.settings import merged_options

    recorded = _resumed_options(resume, path) if resume is not None else None
    if path is None:
        if recorded is None:
            raise SecantError("no contract to fuzz", "give a .sol file, a project folder, or "
                                                     "--resume OUT")
        path = Path(recorded["path"])
    options = merged_options(ctx, path, config, "fuzz")
    given = _given(ctx, options)
    options.pop("list_oracles", None)
    options.pop("config", None)
    options["path"] = path
    if resume is not None:
        # The recorded options win over secant.toml; the command line wins over both.
        for name, value in (recorded or {}).items():
            source = ctx.get_parameter_source(name)
            if name in options and name not in _NOT_RESUMED and (
                    source is None or source.name in ("DEFAULT", "DEFAULT_MAP")):
                options[name] = value
        options.update(out=resume, force=False)
    try:
        _fuzz(**options, given=given)
    except (SecantError, typer.Exit):
        raise
    except Exception as exc:
        crash_exit(exc, options["out"])


def _forge_testing(path: Path) -> ForgeTesting:
    """The testing settings of the Foundry project ``path`` is or lies in, or forge's."""
    from secant.compile.forge_testing import ForgeTesting, read_forge_testing
    from secant.compile.project import project_of

    project = project_of(path)
    if project is None or project.kind != "foundry":
        return ForgeTesting()
    return read_forge_testing(project.root)


def _given(ctx: typer.Context, options: dict[str, Any]) -> frozenset[str]:
    """The options the user set: on the command line, or in a config file."""
    chosen = set()
    for name, value in options.items():
        source = ctx.get_parameter_source(name)
        if (source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
                or value != ctx.params.get(name)):
            chosen.add(name)
    return frozenset(chosen)


def _fuzz(
    *,
    path: Path,
    contract: str | None,
    arg: list[str] | None,
    value: int,
    deploy: list[str] | None,
    deploy_arg: list[str] | None,
    balance: int,
    all_contracts: bool,
    sender: list[str] | None,
    block_number: int | None,
    block_time: int | None,
    match_contract: str | None,
    match_test: str | None,
    unlimited_code_size: bool,
    time_budget: str | None,
    execs: int | None,
    seed: int,
    out: Path,
    schedule: str | None,
    target: str | None,
    no_predict: bool,
    predict_iterations: int,
    sequences: str,
    aggressive_probability: float,
    no_adaptive: bool,
    adaptive_share: float | None,
    symbolic_share: float,
    max_sequence_length: int,
    max_time_delay: int | None,
    max_block_delay: int | None,
    no_prefix_cache: bool,
    shrink_limit: int,
    fork: str,
    solc_version: str | None,
    optimize: bool | None,
    optimizer_runs: int | None,
    via_ir: bool | None,
    evm_version: str | None,
    remap: list[str] | None,
    panic_codes: str | None,
    property_prefix: list[str] | None,
    oracles: str | None,
    quiet: bool,
    force: bool,
    fail_on_findings: bool,
    resume: Path | None = None,
    policy: str = "harvey",
    expert_rlimit: int | None = None,
    expert_queries: int | None = None,
    dataset: bool = True,
    harness: str = "auto",
    only_function: list[str] | None = None,
    exclude_function: list[str] | None = None,
    deployer: str | None = None,
    calls: int | None = None,
    given: frozenset[str] = frozenset(),
) -> None:
    """The fuzz command once its options are settled (flags over secant.toml).

    ``policy`` is Harvey's (``secant fuzz``) or ILF's expert (``secant expert``: z3's
    resource limit and the queries per state, and whether to write OUT/dataset.jsonl).
    """
    settled = dict(locals())  # first: the options only, as the manifest records them
    settled.pop("given")
    # A budget passed in is the caller's choice (``secant expert`` passes its own).
    given = given | {name for name in ("time_budget", "execs", "calls")
                     if settled[name] is not None}
    from secant.campaign.campaign import Campaign, run_share
    from secant.campaign.config import CampaignConfig
    from secant.campaign.function_filter import FunctionFilter
    from secant.campaign.manifest import describe
    from secant.campaign.output import check_output, prepare_output
    from secant.campaign.plan import Selection, plan
    from secant.chain.chain import ChainConfig
    from secant.compile import compile_options_for
    from secant.compile.loader import load
    from secant.compile.project import project_of
    from secant.compile.solc import SolcManager
    from secant.compile.solidity import CompileOptions
    from secant.engine.config import FuzzConfig
    from secant.engine.harvey.sequences import SEQUENCE_MODES
    from secant.engine.schedulers import SCHEDULES
    from secant.evm.forks import get_fork
    from secant.targets.foundry import HARNESS_STYLES

    check_output(out)
    if harness not in HARNESS_STYLES:
        raise SecantError(f"unknown --harness {harness!r}",
                          f"use one of {', '.join(HARNESS_STYLES)}")
    chosen = schedule or ("aflgo" if target else "aflfast")
    if chosen not in SCHEDULES:
        raise SecantError(f"unknown schedule {chosen!r}",
                          f"use one of {', '.join(SCHEDULES)}")
    if chosen == "aflgo" and target is None:
        raise SecantError("the aflgo schedule needs a target",
                          "pass --target File.sol:LINE (or pc:N)")
    if predict_iterations < 0:
        raise SecantError("--predict-iterations must be 0 or more",
                          "use 0 for one-shot prediction")
    if sequences not in SEQUENCE_MODES:
        raise SecantError(f"unknown sequence mode {sequences!r}",
                          f"use one of {', '.join(SEQUENCE_MODES)}")
    if not 0.0 <= aggressive_probability <= 1.0:
        raise SecantError("--aggressive-probability must be between 0 and 1",
                          "Harvey uses 0.125")
    if adaptive_share is not None and not 0.0 <= adaptive_share <= 1.0:
        raise SecantError("--adaptive-share must be between 0 and 1",
                          "leave it out for sFuzz's share")
    if not 0.0 <= symbolic_share <= 1.0:
        raise SecantError("--symbolic-share must be between 0 and 1",
                          "use 0 to turn the concolic stage off")
    if max_sequence_length < 1:
        raise SecantError("--max-sequence-length must be at least 1",
                          "use 1 for single transactions, or --sequences off")
    for option, most in (("--max-time-delay", max_time_delay),
                         ("--max-block-delay", max_block_delay)):
        if most is not None and not 0 <= most < 1 << 64:
            raise SecantError(f"{option} must be between 0 and 2**64 - 1",
                              f"pass 0 to keep the block still, or a number of "
                              f"{'seconds' if 'time' in option else 'blocks'}")
    if execs is not None and execs <= 0:
        raise SecantError("--execs must be positive", "pass a number of executions")
    if calls is not None and calls <= 0:
        raise SecantError("--calls must be positive", "pass a number of transactions")
    if shrink_limit < 0:
        raise SecantError("--shrink-limit must be 0 or more", "use 0 to turn shrinking off")
    for option, number in (("--block-number", block_number), ("--block-time", block_time)):
        if number is not None and not 0 <= number < 1 << 64:
            raise SecantError(f"{option} must be between 0 and 2**64 - 1",
                              f"pass a non-negative {option}")
    max_time = (parse_duration(time_budget) if time_budget
                else None if execs or calls else DEFAULT_TIME_S)
    try:
        chosen_fork = get_fork(fork)
    except ValueError as exc:
        raise SecantError(str(exc), "pass --fork with one of those names") from None
    config = FuzzConfig(seed=seed, max_execs=execs, max_time=max_time,
                        max_transactions=calls, schedule=chosen,
                        predict=not no_predict, predict_iterations=predict_iterations,
                        sequences=sequences, aggressive_probability=aggressive_probability,
                        adaptive=not no_adaptive, adaptive_share=adaptive_share,
                        max_sequence_length=max_sequence_length,
                        max_time_delay=max_time_delay, max_block_delay=max_block_delay,
                        symbolic_share=symbolic_share)
    flags = CompileOptions(solc_version=solc_version, optimize=optimize,
                           optimize_runs=optimizer_runs, via_ir=via_ir,
                           evm_version=evm_version, remappings=tuple(remap or ()))
    with SolcManager() as manager:
        compile_options = compile_options_for([path], flags)
        compilations = load([path], compile_options, manager)
        for note in manager.notes:
            print(f"note: {note}", file=sys.stderr)
    chosen_oracles = ([name.strip() for name in oracles.split(",") if name.strip()]
                      if oracles is not None else None)
    selection = Selection(contract, list(arg) if arg else None, value, match_contract,
                          match_test, chosen_oracles,
                          list(property_prefix) if property_prefix else None,
                          _panic_codes(panic_codes),
                          _deployments(deploy or [], deploy_arg or []),
                          all_contracts, _senders(sender), block_number, block_time,
                          harness, _forge_testing(path), given,
                          FunctionFilter(tuple(only_function or ()),
                                         tuple(exclude_function or ())))
    chain_config = ChainConfig(fork=chosen_fork, seed=seed, balance=balance,
                               unlimited_code_size=unlimited_code_size,
                               deployer=(None if deployer is None
                                         else _address(deployer, "--deployer")))
    campaign_config = CampaignConfig(fuzz=config, out=out, prefix_cache=not no_prefix_cache,
                                     oracles=chosen_oracles, shrink_limit=shrink_limit)
    if resume is None:
        prepare_output(out, force)
    plans = plan(compilations, selection, chain_config, campaign_config,
                 project=path.is_dir())
    project = project_of(path)
    manifest = describe(inputs=[path], project=path.is_dir(),
                        foundry=project is not None and project.kind == "foundry",
                        selection=selection, given=flags, settings=compile_options,
                        compilations=compilations, chain_config=chain_config,
                        config=campaign_config, options=settled)
    failed = False
    # --time is the whole run's: each campaign of several gets its part of what is left
    # when it starts (secant.campaign.campaign.run_share).
    run_deadline = None if max_time is None else time.monotonic() + max_time
    for index, campaign_plan in enumerate(plans):
        where = out / campaign_plan.slug if len(plans) > 1 else out
        chain = campaign_plan.make_chain()
        for note in [*chain.notes, *campaign_plan.notes]:
            print(f"note: {note}", file=sys.stderr)
        where.mkdir(parents=True, exist_ok=True)
        settings = replace(campaign_plan.config, out=where)
        seconds = None
        if run_deadline is not None and len(plans) > 1 and not campaign_plan.own_budget:
            seconds = run_share(run_deadline - time.monotonic(), len(plans) - index)
            settings = replace(settings, fuzz=replace(settings.fuzz, max_time=seconds))
        if target is not None:
            from secant.campaign.directed import resolve_target
            settings.target_pcs = resolve_target(target, chain)
        factory, writer = _policy(policy, where, chain.names(), expert_rlimit, expert_queries,
                                  dataset)
        campaign = Campaign(chain, settings, oracles=campaign_plan.oracles,
                            functions=campaign_plan.functions, senders=campaign_plan.senders,
                            block_steps=campaign_plan.block_steps, policy=factory,
                            manifest=manifest.for_campaign(campaign_plan.name,
                                                           campaign_plan.slug))
        for note in campaign.notes:
            print(f"note: {note}", file=sys.stderr)
        # A part switched off after an internal error (from the replays of --resume on)
        # gets one line on stderr, above the live display, which redirects it.
        campaign.listen(Announce())
        if resume is not None:
            from secant.campaign.resume import resume as resume_from

            for line in resume_from(campaign, where).lines():
                print(line, file=sys.stderr)
        if len(plans) > 1:
            typer.echo(f"== {campaign_plan.name}"
                       + (f" ({seconds:.0f} s of --time)" if seconds is not None else ""))
        try:
            summary = _run(campaign, quiet)
        finally:
            if writer is not None:
                writer.close()
        _print_summary(summary, where)
        if writer is not None:
            typer.echo(f"dataset: {writer.path} ({writer.steps} step"
                       f"{'s' if writer.steps != 1 else ''})")
        _print_frontier(campaign, where)
        failed = failed or bool(summary["findings"])
    if fail_on_findings and failed:
        raise typer.Exit(EXIT_FINDINGS)


def _policy(name: str, where: Path, names: dict[str, int], rlimit: int | None,
            queries: int | None, dataset: bool
            ) -> tuple[PolicyFactory | None, DatasetWriter | None]:
    """The campaign's policy factory (None: Harvey's) and the expert's dataset writer."""
    if name == "harvey":
        return None, None
    from secant.learn.dataset import DATASET_FILE, DatasetWriter
    from secant.learn.expert import DEFAULT_MAX_QUERIES, DEFAULT_RLIMIT, ExpertConfig, ExpertPolicy

    settings = ExpertConfig(rlimit=rlimit if rlimit is not None else DEFAULT_RLIMIT,
                            max_queries=queries if queries is not None
                            else DEFAULT_MAX_QUERIES)
    writer = DatasetWriter(where / DATASET_FILE, names) if dataset else None

    def expert(context: PolicyContext) -> Policy:
        return ExpertPolicy.from_context(context, settings, writer)

    return expert, writer


def _run(campaign: Campaign, quiet: bool) -> dict[str, Any]:
    """Run with a live display (unless quiet); Ctrl-C ends the campaign cleanly."""
    if quiet or not sys.stdout.isatty():
        try:
            return campaign.run()
        except KeyboardInterrupt:
            return campaign.finish()
    from rich.live import Live

    from secant.campaign.progress import ProgressView

    view = ProgressView(campaign)
    with Live(view.render(), refresh_per_second=4, transient=False) as live:
        campaign.listen(_Refresh(lambda: live.update(view.render())))
        try:
            summary = campaign.run()
        except KeyboardInterrupt:
            summary = campaign.finish()
        live.update(view.render())
    return summary


class Announce(FuzzListener):
    """Prints one line on stderr when a part of a campaign is switched off after an error.

    ``then`` says what became of it (default: a campaign's, whose summary.json has the
    details).
    """

    def __init__(self, then: str | None = None) -> None:
        self.then = then

    def on_internal_error(self, error: InternalError) -> None:
        """Print the line."""
        line = error.line() if self.then is None else error.line(self.then)
        print(f"warning: {line}", file=sys.stderr)


class _Refresh(FuzzListener):
    """Redraws the live display at most four times a second."""

    def __init__(self, redraw: Callable[[], None]) -> None:
        self.redraw = redraw
        self.last = 0.0

    def on_progress(self) -> None:
        now = time.perf_counter()
        if now - self.last >= 0.25:
            self.last = now
            self.redraw()


def _senders(given: list[str] | None) -> list[int] | None:
    """The ``--sender`` addresses (None: the default senders)."""
    if not given:
        return None
    return [_address(text, "--sender") for text in given]


def _address(text: str, option: str) -> int:
    """An address given to ``option``."""
    try:
        address = int(text, 0)
    except ValueError:
        address = -1
    if not 0 < address < 1 << 160:
        raise SecantError(f"{option} {text!r} is not an address",
                          "write it in hex like 0x10000 (or a positive number)")
    return address


def _panic_codes(text: str | None) -> frozenset[int] | None:
    """``--panic-codes``: a set of codes, every code for ``all``, None when not given."""
    if text is None:
        return None
    from secant.abi import PANIC_CODES

    if text.strip() == "all":
        return frozenset(PANIC_CODES)
    try:
        return frozenset(int(part, 0) for part in text.split(",") if part.strip())
    except ValueError:
        raise SecantError(f"--panic-codes {text!r} is not a list of codes",
                          "write codes like 0x01,0x11,0x12, or all") from None


def _deployments(names: list[str], args: list[str]
                 ) -> list[tuple[str, list[str] | None]]:
    """``--deploy`` contracts with the ``--deploy-arg`` values given for each, in order."""
    given: dict[str, list[str]] = {}
    for item in args:
        name, sep, text = item.partition("=")
        if not sep or name not in names:
            raise SecantError(f"--deploy-arg {item!r} names no --deploy contract",
                              "write --deploy-arg NAME=VALUE for a contract given to --deploy")
        given.setdefault(name, []).append(text)
    return [(name, given.get(name)) for name in names]


def _list_oracles(value: bool) -> None:
    """``--list-oracles``: one line per oracle, then exit."""
    if not value:
        return
    from secant.oracles.registry import available

    for name, oracle in available().items():
        typer.echo(f"{name:16} {oracle.swc or '-':8} {oracle.description}")
    raise typer.Exit(0)


def _shrink_note(finding: dict[str, Any], shrinking: dict[str, Any] | None) -> str | None:
    """What shrinking did to a finding (of ``summary.json``), in words; None: nothing.

    ``shrinking`` is the summary's ``shrink`` section (None: shrinking did not run).
    """
    shrunk = finding.get("shrink")
    if shrunk is None:
        if shrinking is None or not finding["sequence"]:
            return None
        return "not shrunk: " + ("shrinking was interrupted" if shrinking.get("interrupted")
                                 else "the time budget ran out first")
    late = bool(shrunk.get("out_of_time"))
    if finding["sequence"] != finding["original_sequence"]:
        before = shrunk["tx_before"]
        return (f"shrunk from {before} transaction{'s' if before != 1 else ''} in "
                f"{shrunk['execs']} execs{', cut short by the time budget' if late else ''}; "
                "the case found is in the finding's file")
    if late:
        return f"not shrunk: the time budget ran out after {shrunk['execs']} execs"
    if not shrunk.get("reproduced", True):
        return "not shrunk: the case did not show the finding again alone"
    return None


def _print_frontier(campaign: Campaign, out: Path) -> None:
    """The top of the frontier, one line per branch side, and where the reports are."""
    from secant.report.frontier import top_lines

    if campaign.frontier is None:
        return  # no reports (or they failed: the summary's notes say why)
    lines = top_lines(campaign.frontier)
    if lines:
        typer.echo("frontier (just-missed branch sides, the most code behind them first):")
        for line in lines:
            typer.echo(f"  {line}")
    typer.echo(f"coverage: {out / 'coverage' / 'index.html'}, {out / 'coverage.lcov'}, "
               f"{out / 'frontier.json'}")


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    findings = summary["findings"]
    typer.echo(f"{summary['execs']} executions in {summary['elapsed_s']:.1f} s, "
               f"{summary['paths']} paths, {summary['branches_covered']}/"
               f"{summary['branches_total']} branches, {len(findings)} finding(s)")
    for finding in findings:
        where = finding["source"] or f"pc {finding['pc']}"
        label = finding_label(finding["kind"], finding.get("severity"),
                              finding.get("confidence"))
        typer.echo(f"  {label} {finding['contract']}.{finding['function']} at "
                   f"{where}: {finding['detail']} (after {finding['execs_to_find']} execs)")
        typer.echo(f"      sequence: {json.dumps(finding['sequence'])}")
        note = _shrink_note(finding, summary.get("shrink"))
        if note:
            typer.echo(f"      ({note})")
    shrinking = summary.get("shrink")
    if findings and shrinking and (shrinking.get("out_of_time") or shrinking.get("interrupted")):
        why = "interrupted" if shrinking.get("interrupted") else "the time budget ran out"
        typer.echo(f"  shrinking stopped early ({why}): secant shrink {out} shrinks the "
                   "findings further")
    for prop in summary.get("properties", []):
        if prop["status"] == "optimized":
            typer.echo(f"  [optimize] {prop['contract']}.{prop['function']}: best {prop['best']}"
                       f" with {json.dumps(prop['sequence'])}")
        elif prop["status"] == "passed":
            typer.echo(f"  [passed] {prop['contract']}.{prop['function']}")
    typer.echo(f"summary: {out / 'summary.json'}")
