"""From a :class:`CampaignOptions` to campaigns ready to run: compile, plan, describe, build.

The commands (``secant fuzz``, ``secant expert``) and anything else that runs campaigns
from a description (a benchmark, a worker in another process) go through the same three
steps, so that a campaign is the same wherever it is built:

1. :func:`compile_inputs` compiles the input with the options' compiler settings;
2. :func:`plan_campaigns` picks the campaigns of the input (a test contract gives up to
   two) and writes the manifest each records;
3. :func:`build_campaign` builds one of them: its chain, its policy, its output folder.

Nothing here prints: notes are returned for the caller to show.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from secant.campaign.campaign import Campaign
from secant.campaign.manifest import Manifest, describe
from secant.campaign.options import CampaignOptions
from secant.campaign.plan import CampaignPlan, plan
from secant.campaign.processes import ProcessWorker, processes_available
from secant.campaign.remote import RemoteWorker
from secant.compile import compile_options_for
from secant.compile.artifacts import Compilation
from secant.compile.loader import load
from secant.compile.project import project_of
from secant.compile.solc import SolcManager
from secant.compile.solidity import CompileOptions
from secant.engine.policy import Policy, PolicyContext, PolicyFactory
from secant.errors import SecantError
from secant.learn.dataset import DATASET_FILE, DatasetWriter


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

    def folder(self, index: int) -> Path:
        """Where campaign ``index`` writes: the output folder, or its sub-folder of several."""
        if len(self.plans) == 1:
            return self.options.out
        return self.options.out / self.plans[index].slug


def plan_campaigns(options: CampaignOptions, compiled: Compiled) -> Planned:
    """The campaigns of the compiled input as the options select them, and their manifest."""
    selection = options.selection()
    chain_config = options.chain_config()
    campaign_config = options.campaign_config()
    project = options.path.is_dir()
    plans = plan(compiled.compilations, selection, chain_config, campaign_config,
                 project=project)
    found = project_of(options.path)
    manifest = describe(inputs=[options.path], project=project,
                        foundry=found is not None and found.kind == "foundry",
                        selection=selection, given=options.compile_flags(),
                        settings=compiled.settings, compilations=compiled.compilations,
                        chain_config=chain_config, config=campaign_config,
                        options=options.to_record())
    return Planned(options, plans, manifest)


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
    return build_plan(planned.options, chosen,
                      planned.manifest.for_campaign(chosen.name, chosen.slug),
                      planned.folder(index), seconds, corpus)


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
    if options.policy != "harvey":
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
        return None, None
    from secant.learn.expert import DEFAULT_MAX_QUERIES, DEFAULT_RLIMIT, ExpertConfig, ExpertPolicy

    settings = ExpertConfig(
        rlimit=DEFAULT_RLIMIT if options.expert_rlimit is None else options.expert_rlimit,
        max_queries=(DEFAULT_MAX_QUERIES if options.expert_queries is None
                     else options.expert_queries))
    writer = DatasetWriter(where / DATASET_FILE, names) if options.dataset else None

    def expert(context: PolicyContext) -> Policy:
        return ExpertPolicy.from_context(context, settings, writer)

    return expert, writer
