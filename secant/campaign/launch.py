"""From a :class:`CampaignOptions` to campaigns ready to run: compile, plan, describe, build.

The commands (``secant fuzz``, ``secant expert``) and anything else that runs campaigns
from a description (a benchmark, a worker in another process) go through the same three
steps, so that a campaign is the same wherever it is built:

1. :func:`compile_inputs` compiles the input with the options' compiler settings;
2. :func:`plan_campaigns` picks the campaigns of the input (a test contract gives up to
   two) and writes the manifest each records; code too large to deploy that the user did
   not choose to compile unoptimized is compiled again with the optimizer first;
3. :func:`build_campaign` builds one of them: its chain, its policy, its output folder.

A main contract whose constructor fails an assertion under every argument set tried gives
no campaign but a finding of its deployment (:attr:`Planned.deployment_finding`), written as
a campaign's are by :func:`write_deployment_finding`.

Nothing here prints: notes are returned for the caller to show.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from secant.campaign.campaign import Campaign, finding_file_name
from secant.campaign.manifest import Manifest, describe
from secant.campaign.options import SINGLE_WORKER_POLICIES, CampaignOptions
from secant.campaign.plan import CampaignPlan, plan
from secant.campaign.processes import ProcessWorker, processes_available
from secant.campaign.remote import RemoteWorker
from secant.chain.deploy import CodeSizeExceeded, ConstructorPanicked
from secant.compile import compile_options_for
from secant.compile.artifacts import Compilation
from secant.compile.loader import load, select_contract
from secant.compile.project import project_of
from secant.compile.solc import SolcManager
from secant.compile.solidity import CompileOptions
from secant.engine.policy import Policy, PolicyContext, PolicyFactory
from secant.errors import SecantError
from secant.files import write_atomic
from secant.learn.dataset import DATASET_FILE, DatasetWriter
from secant.oracles.assertion import ASSERT_PANIC, AssertionOracle
from secant.types import Finding

if TYPE_CHECKING:
    from secant.learn.expert import ExpertConfig
    from secant.learn.network import LearnedModel


@dataclass
class Compiled:
    """The input compiled: what the compilers produced, with the settings they ran with."""

    compilations: list[Compilation]
    settings: CompileOptions
    """The settings the input was compiled with (a project's own filled in)."""
    notes: list[str] = field(default_factory=list)
    """What the compiler manager has to say (a solc downloaded, a version chosen)."""


def compile_inputs(options: CampaignOptions) -> Compiled:
    """Compile the options' input with their compiler settings."""
    with SolcManager() as manager:
        settings = compile_options_for([options.path], options.compile_flags())
        compilations = load([options.path], settings, manager)
        notes = list(manager.notes)
    return Compiled(list(compilations), settings, notes)


@dataclass
class Planned:
    """The campaigns of an input, each with its plan, and the manifest they share."""

    options: CampaignOptions
    plans: list[CampaignPlan]
    manifest: Manifest
    notes: list[str] = field(default_factory=list)
    """What planning has to say before the campaigns' own notes (the optimizer turned on)."""
    deployment_finding: Finding | None = None
    """The main contract's constructor failed an assertion: the finding, and no plans."""

    def folder(self, index: int) -> Path:
        """Where campaign ``index`` writes: the output folder, or its sub-folder of several."""
        if len(self.plans) == 1:
            return self.options.out
        return self.options.out / self.plans[index].slug


def plan_campaigns(options: CampaignOptions, compiled: Compiled) -> Planned:
    """The campaigns of the compiled input as the options select them, and their manifest.

    When deploying fails only because created code exceeds the size limit and the user
    chose neither the optimizer (nor did a project) nor ``--unlimited-code-size``, the input
    is compiled again with the optimizer (at solc's default runs), as its authors would
    have deployed it; the returned options record that choice (a replay or resume compiles
    the same), and a note says so. Still too large: the first error.

    When the main contract's constructor fails an assertion (a file's, the assertion
    oracle on), the planned run has no campaign but ``deployment_finding``.
    """
    try:
        return _plan_sized(options, compiled)
    except ConstructorPanicked as panic:
        selection = options.selection()
        _, main = select_contract(list(compiled.compilations), selection.contract)
        if (options.path.is_dir() or panic.contract.qualified_name != main.qualified_name
                or selection.oracles is not None
                and AssertionOracle.name not in selection.oracles):
            raise
        return Planned(options, [], _manifest(options, compiled),
                       deployment_finding=deployment_finding(panic))


def deployment_finding(panic: ConstructorPanicked) -> Finding:
    """The finding of a constructor that failed an assertion: the deployment is its case.

    Its sequence is empty (deploying shows it), its function ``constructor``, its pc and
    source the check's in the creation code; rated and keyed as the assertion oracle does a
    transaction's.
    """
    code = panic.panic_code
    assertion = code in (None, ASSERT_PANIC)
    source = (f"{panic.location.source}:{panic.location.line}"
              if panic.location is not None else None)
    name = panic.contract.name
    return Finding(kind="assertion" if assertion else "panic",
                   swc="SWC-110" if assertion else "", contract=name, function="constructor",
                   pc=panic.pc, source=source,
                   detail=f"{panic.detail} while deploying {name}: its constructor fails"
                          f"{panic.args_note}",
                   key=(AssertionOracle.name, "deployment", name, panic.pc, code),
                   oracle=AssertionOracle.name, severity=AssertionOracle.severity,
                   confidence=AssertionOracle.confidence)


def write_deployment_finding(planned: Planned) -> dict[str, Any]:
    """Write the deployment finding of ``planned`` as a campaign writes its findings.

    ``findings/`` holds its file and ``summary.json`` a summary of no executions with it
    and the manifest (a replay deploys again, and so shows it again). Returns the summary.
    """
    finding = planned.deployment_finding
    assert finding is not None
    out = planned.options.out
    (out / "findings").mkdir(parents=True, exist_ok=True)
    name = finding_file_name(finding.oracle, finding.key)
    write_atomic(out / "findings" / name, json.dumps(finding.to_json(), indent=1))
    manifest = planned.manifest
    manifest.start()
    manifest.end("completed")
    summary: dict[str, Any] = {
        "execs": 0, "transactions": 0, "elapsed_s": 0.0, "paths": 0, "corpus": 0,
        "branches_covered": 0, "branches_total": 0,
        "contract": finding.contract, "seed": planned.options.seed,
        "oracles": [AssertionOracle.name], "findings": [finding.to_json()],
        "deployment_finding": True, "notes": list(planned.notes), "internal_errors": [],
        "manifest": manifest.to_json()}
    write_atomic(out / "summary.json", json.dumps(summary, indent=1))
    return summary


def _plan_sized(options: CampaignOptions, compiled: Compiled) -> Planned:
    """``plan_campaigns`` with code too large compiled again with the optimizer."""
    try:
        return _plan(options, compiled)
    except CodeSizeExceeded as too_large:
        if (options.optimize is not None or compiled.settings.optimize is not None
                or options.unlimited_code_size
                or not any(c.origin == "solc" for c in compiled.compilations)):
            raise
        optimized = replace(options, optimize=True)
        again = compile_inputs(optimized)
        try:
            planned = _plan(optimized, again)
        except CodeSizeExceeded:
            raise too_large from None
        planned.notes[:0] = [f"{too_large.message}; compiled "
                             "again with the optimizer (200 runs), as such code is deployed "
                             "(pass --no-optimize with --unlimited-code-size to fuzz it "
                             "unoptimized)", *again.notes]
        return planned


def _plan(options: CampaignOptions, compiled: Compiled) -> Planned:
    """``plan_campaigns`` with the input as compiled."""
    plans = plan(compiled.compilations, options.selection(), options.chain_config(),
                 options.campaign_config(), project=options.path.is_dir())
    return Planned(options, plans, _manifest(options, compiled))


def _manifest(options: CampaignOptions, compiled: Compiled) -> Manifest:
    """The manifest of the campaigns of ``options`` on the input as compiled."""
    found = project_of(options.path)
    return describe(inputs=[options.path], project=options.path.is_dir(),
                    foundry=found is not None and found.kind == "foundry",
                    selection=options.selection(), given=options.compile_flags(),
                    settings=compiled.settings, compilations=compiled.compilations,
                    chain_config=options.chain_config(), config=options.campaign_config(),
                    options=options.to_record())


@dataclass
class Built:
    """One campaign built to run, with the expert's dataset writer (None: no dataset)."""

    campaign: Campaign
    writer: DatasetWriter | None
    notes: list[str]
    """The chain's, the plan's and the campaign's notes, in that order."""


def build_campaign(planned: Planned, index: int, seconds: float | None = None) -> Built:
    """Campaign ``index`` of ``planned``, on a fresh chain, writing to its folder.

    ``seconds`` replaces its time budget (its part of a run's shared ``--time``).
    """
    chosen = planned.plans[index]
    corpus = planned.options.corpus
    if corpus is not None and len(planned.plans) > 1:
        corpus = corpus / chosen.slug  # each test contract's cases apart, as in --out
    built = build_plan(planned.options, chosen,
                       planned.manifest.for_campaign(chosen.name, chosen.slug),
                       planned.folder(index), seconds, corpus)
    if index == 0:
        built.notes[:0] = planned.notes
    return built


def build_plan(options: CampaignOptions, chosen: CampaignPlan, manifest: Manifest,
               where: Path, seconds: float | None = None,
               corpus: Path | None = None) -> Built:
    """The campaign of one plan, on a fresh chain, writing to ``where``.

    What ``build_campaign`` does with a plan of its own; a Ray task that runs one campaign
    of a project on another node calls it with the plan it was sent. ``corpus`` is the
    shared corpus folder (``--corpus``) of this campaign.
    """
    chain = chosen.make_chain()
    notes = [*chain.notes, *chosen.notes]
    where.mkdir(parents=True, exist_ok=True)
    settings = replace(chosen.config, out=where, shared_corpus=corpus)
    if seconds is not None:
        settings = replace(settings, fuzz=replace(settings.fuzz, max_time=seconds))
    if options.target is not None:
        from secant.campaign.directed import resolve_target

        settings.target_pcs = resolve_target(options.target, chain)
    factory, writer = policy_factory(options, where, chain.names())
    more = worker_count(options) - 1
    transport: type[RemoteWorker] = ProcessWorker
    elsewhere = processes_available()
    if options.ray:
        from secant.campaign.ray_workers import RayWorker

        transport, elsewhere = RayWorker, True
    # Without fork (not on Linux) the other workers take turns here: the same campaign.
    chains = [chain] + ([] if elsewhere else [chosen.make_chain() for _ in range(more)])
    campaign = Campaign(chains, settings, oracles=chosen.oracles, functions=chosen.functions,
                        senders=chosen.senders, block_steps=chosen.block_steps,
                        policy=factory, manifest=manifest,
                        processes=more if elsewhere else 0,
                        make_chain=chosen.make_chain, transport=transport)
    return Built(campaign, writer, [*notes, *campaign.notes])


WORKERS_VARIABLE = "SECANT_WORKERS"
"""The environment variable that sets the default of ``--workers``."""


def default_workers() -> int:
    """``--workers`` when not given: ``SECANT_WORKERS``, else the cores this process may use."""
    text = os.environ.get(WORKERS_VARIABLE, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise SecantError(f"{WORKERS_VARIABLE}={text!r} is not a number of workers",
                              f"set {WORKERS_VARIABLE} to 1 or more, or unset it")
        return int(text)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


def worker_count(options: CampaignOptions) -> int:
    """How many workers a campaign of ``options`` runs.

    ``--workers``; without it, one per core of the machine (``default_workers``), or with
    ``--ray`` one per CPU of the cluster (which ``--ray`` joins here, once per process).
    The symbolic expert runs one.
    """
    if options.policy in SINGLE_WORKER_POLICIES:
        return 1
    if options.ray:
        from secant.campaign.ray_workers import connect

        cpus = connect(options.ray)
        if options.workers is None:
            return max(cpus, 1)
    return options.workers if options.workers is not None else default_workers()


def policy_factory(options: CampaignOptions, where: Path, names: dict[str, int]
                   ) -> tuple[PolicyFactory | None, DatasetWriter | None]:
    """The campaign's policy factory (None: Harvey's) and the expert's dataset writer."""
    if options.policy == "harvey":
        return learned_stage_factory(options), None
    if options.policy in ("uniform", "learned"):
        return episode_factory(options), None
    from secant.learn.expert import DEFAULT_MAX_QUERIES, DEFAULT_RLIMIT, ExpertConfig, ExpertPolicy

    settings = ExpertConfig(
        rlimit=DEFAULT_RLIMIT if options.expert_rlimit is None else options.expert_rlimit,
        max_queries=(DEFAULT_MAX_QUERIES if options.expert_queries is None
                     else options.expert_queries))
    if options.policy == "mix":
        return episode_factory(options, settings), None
    writer = DatasetWriter(where / DATASET_FILE, names) if options.dataset else None

    def expert(context: PolicyContext) -> Policy:
        return ExpertPolicy.from_context(context, settings, writer)

    return expert, writer


def learned_model(options: CampaignOptions) -> LearnedModel:
    """The learned policy's weights: ``--model``, else the model shipped with secant.

    Loaded before any worker starts, so that a missing or stale file is the user's
    one-line error, not a worker's failure.
    """
    from secant.learn.network import LearnedModel, ModelError

    try:
        return LearnedModel.load(options.model)
    except ModelError as exc:
        raise SecantError(str(exc)) from exc


def episode_factory(options: CampaignOptions,
                    expert_settings: ExpertConfig | None = None) -> PolicyFactory:
    """ILF's episodes under ``options.policy`` (uniform, learned or mix)."""
    from secant.learn.ilf import episode_policy

    kind = options.policy
    model = None if kind == "uniform" else learned_model(options)

    def build(context: PolicyContext) -> Policy:
        expert = None
        if kind == "mix":
            from secant.learn.expert import ExpertPolicy

            expert = ExpertPolicy.from_context(context, expert_settings)
        return episode_policy(context, kind, model, expert)

    return build


def learned_stage_factory(options: CampaignOptions) -> PolicyFactory | None:
    """Harvey's policy with the learned stage (``--learned-share``), or None without it."""
    if not options.learned_share:
        return None
    from secant.engine.harvey.policy import harvey
    from secant.learn.ilf import learned_stage

    model = learned_model(options)
    share = options.learned_share

    def build(context: PolicyContext) -> Policy:
        policy = harvey(context)
        policy.stages.append(learned_stage(context, model, share))
        return policy

    return build
