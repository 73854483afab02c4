"""A campaign's manifest: what it ran on, with which settings, and how it ended.

``summary.json`` carries it under ``"manifest"`` so that the campaign can be rebuilt from
its output folder alone (``secant replay``): the inputs as given and resolved, the
contract and its deployment (the :class:`~secant.campaign.plan.Selection`), the compiler
settings the command line gave, those a project added and the compilers that ran, the
chain's configuration, the seed, the engine's and the campaign's configuration, every
option of the command as settled (flags over ``secant.toml``), the start and end times
(ISO 8601, UTC) and the status:

* ``running``: written when the campaign starts and again before shrinking; a summary
  still saying so was left by a process that was killed (``secant fuzz --resume`` goes on
  from it);
* ``completed``: the budget was spent (or nothing was left to propose), findings shrunk;
* ``interrupted``: Ctrl-C stopped the search or the shrinking;
* ``failed``: secant itself failed (``error`` names the exception).

:func:`describe` writes the static part, :class:`Manifest` adds the times and the status,
and :func:`read_manifest` reads it back into the objects that build the campaign again.
The format has a ``schema_version``; a manifest of a newer schema is refused rather than
misread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from secant import __version__
from secant.campaign.config import CampaignConfig
from secant.campaign.function_filter import FunctionFilter
from secant.campaign.plan import Selection
from secant.chain.blockenv import BlockSettings
from secant.chain.chain import ChainConfig
from secant.compile.artifacts import Compilation
from secant.compile.solidity import DEFAULT_RUNS, CompileOptions
from secant.engine.config import FuzzConfig
from secant.errors import SecantError
from secant.evm.forks import get_fork

SCHEMA_VERSION = 1
"""The manifest format this secant writes (and the newest it reads)."""

STATUSES = ("running", "completed", "interrupted", "failed")
"""How a campaign ended (see the module docstring)."""

# A compiler secant ran itself on the sources (not a project's build artifacts).
_SOURCE_COMPILER_RE = re.compile(r"^solc (\d+\.\d+\.\d+)( \(native\))?$")

_COMPILE_FIELDS = ("solc_version", "optimize", "optimize_runs", "via_ir", "evm_version")

_NOT_RECORDED = frozenset({"out", "target_pcs"})  # CampaignConfig fields left out


class ManifestError(SecantError):
    """A campaign's output folder has no manifest secant can read."""


def utc_now() -> str:
    """The current time, ISO 8601 in UTC to the second (``2024-05-01T12:00:00Z``)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class Manifest:
    """The manifest of one campaign: the static ``record`` and how the run went."""

    record: dict[str, Any]
    started: str | None = None
    ended: str | None = None
    status: str = "running"
    error: str | None = None

    def for_campaign(self, name: str, slug: str) -> Manifest:
        """A copy naming one campaign of the input (a test contract gives up to two)."""
        return Manifest({**self.record, "campaign": {"name": name, "slug": slug}})

    def start(self) -> None:
        """The campaign starts now."""
        self.started = utc_now()
        self.status = "running"

    def end(self, status: str, error: str | None = None) -> None:
        """The campaign ended now with ``status`` (one of :data:`STATUSES`)."""
        if status not in STATUSES:
            raise ValueError(f"unknown campaign status {status!r}")
        self.ended = utc_now()
        self.status = status
        self.error = error

    def to_json(self) -> dict[str, Any]:
        """The manifest as ``summary.json`` holds it."""
        data: dict[str, Any] = {"schema_version": SCHEMA_VERSION,
                                "secant_version": __version__, **self.record,
                                "started": self.started, "ended": self.ended,
                                "status": self.status}
        if self.error is not None:
            data["error"] = self.error
        return data


def _jsonable(value: Any) -> Any:
    """Options as JSON: paths as text, sets sorted, tuples as lists."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, frozenset | set):
        return sorted(_jsonable(v) for v in value)
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _compile_settings(options: CompileOptions) -> dict[str, Any]:
    return {**{name: getattr(options, name) for name in _COMPILE_FIELDS},
            "remappings": list(options.remappings)}


def describe(*, inputs: Sequence[Path], project: bool, foundry: bool,
             selection: Selection, given: CompileOptions, settings: CompileOptions,
             compilations: Sequence[Compilation], chain_config: ChainConfig,
             config: CampaignConfig, options: Mapping[str, Any] | None = None
             ) -> Manifest:
    """The manifest of a campaign about to run (times and status still to come).

    ``given`` holds the compiler settings the command line gave, ``settings`` those the
    input was compiled with (a project's filled in; the manifest's ``used`` adds solc's
    defaults and the version that ran); ``project`` says the input was a
    folder, ``foundry`` that it is (or lies in) a Foundry project; ``options`` are the
    command's options as settled, recorded as they are.
    """
    target = {
        "inputs": [{"given": str(path), "resolved": str(path.resolve())} for path in inputs],
        "project": project,
        "foundry_project": foundry,
        "contract": selection.contract,
        "args": _jsonable(selection.args) if selection.args is not None else None,
        "value": selection.value,
        "deploy": [{"contract": name, "args": None if args is None else list(args)}
                   for name, args in selection.deploy],
        "senders": (None if selection.senders is None
                    else [f"0x{address:040x}" for address in selection.senders]),
        "all_contracts": selection.all_contracts,
        "block_number": selection.block_number,
        "block_time": selection.block_time,
        "match_contract": selection.match_contract,
        "match_test": selection.match_test,
        "harness": selection.harness,
        "functions": {"only": list(selection.functions.only),
                      "exclude": list(selection.functions.exclude)},
        "oracles": None if selection.oracles is None else list(selection.oracles),
        "property_prefixes": (None if selection.property_prefixes is None
                              else list(selection.property_prefixes)),
        "panic_codes": (None if selection.panic_codes is None
                        else sorted(selection.panic_codes)),
    }
    runs = [{"compiler": c.compiler, "origin": c.origin, "roots": list(c.roots)}
            for c in compilations]
    # What the compilers ran with: a project's settings filled in, then solc's defaults
    # (an EVM version left null is the compiler's own default).
    used = _compile_settings(settings)
    used.update(solc_version=settings.solc_version or pinned_version(runs),
                optimize=bool(settings.optimize), via_ir=bool(settings.via_ir),
                optimize_runs=(DEFAULT_RUNS if settings.optimize_runs is None
                               else settings.optimize_runs))
    compiler = {"given": _compile_settings(given), "used": used, "compilations": runs}
    chain = {**{f.name: getattr(chain_config, f.name) for f in fields(chain_config)
                if f.name not in ("fork", "block")},
             "fork": chain_config.fork.name, "block": asdict(chain_config.block)}
    # Every field but the output folder (the summary's own) and a directed campaign's
    # target pcs (resolved per campaign from the --target option, which ``options`` has).
    campaign = {f.name: _jsonable(getattr(config, f.name)) for f in fields(config)
                if f.name not in _NOT_RECORDED}
    campaign["fuzz"] = asdict(config.fuzz)
    record = {"target": target, "compiler": compiler, "chain": chain,
              "seed": config.fuzz.seed, "config": campaign,
              "options": _jsonable(dict(options or {}))}
    return Manifest(record)


# ---------------------------------------------------------------------- reading it back
@dataclass
class Recorded:
    """A manifest read back: what builds the campaign's chain again."""

    inputs: list[Path]
    project: bool
    compile_options: CompileOptions
    selection: Selection
    chain_config: ChainConfig
    config: CampaignConfig
    slug: str | None = None
    """The campaign among those of the input (None: the only one)."""
    data: dict[str, Any] = field(default_factory=dict)
    """The manifest as written."""


def read_manifest(summary: Mapping[str, Any], where: Path) -> Recorded:
    """The manifest of a ``summary.json`` (read from ``where``), ready to rebuild from.

    A summary without a manifest (written by a secant before manifests), a newer schema
    or a malformed entry is a :class:`ManifestError`.
    """
    data = summary.get("manifest")
    if not isinstance(data, Mapping):
        raise ManifestError(f"{where} has no manifest (written by an older secant)",
                            "run secant fuzz again to record one")
    version = data.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ManifestError(f"{where} has a manifest of schema {version!r}, this secant "
                            f"reads schema {SCHEMA_VERSION} and older",
                            "replay it with the secant that wrote it (secant_version)")
    try:
        return _recorded(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ManifestError(f"{where} has a malformed manifest ({type(exc).__name__}: {exc})",
                            "run secant fuzz again to write a new one") from None


def _recorded(data: Mapping[str, Any]) -> Recorded:
    target, compiler = data["target"], data["compiler"]
    inputs = [Path(entry["resolved"]) for entry in target["inputs"]]
    given = compiler["given"]
    options = CompileOptions(**{name: given[name] for name in _COMPILE_FIELDS},
                             remappings=tuple(given["remappings"]))
    if options.solc_version is None:
        # The version the pragmas picked then: a newer solc since must not change the code.
        options = replace(options, solc_version=pinned_version(compiler["compilations"]))
    selection = Selection(
        contract=target["contract"],
        args=None if target["args"] is None else list(target["args"]),
        value=int(target["value"]),
        match_contract=target["match_contract"], match_test=target["match_test"],
        oracles=target["oracles"], property_prefixes=target["property_prefixes"],
        panic_codes=(None if target["panic_codes"] is None
                     else frozenset(int(c) for c in target["panic_codes"])),
        deploy=[(d["contract"], d["args"]) for d in target["deploy"]],
        all_contracts=(None if target["all_contracts"] is None
                       else bool(target["all_contracts"])),
        senders=(None if target["senders"] is None
                 else [int(s, 16) for s in target["senders"]]),
        block_number=target["block_number"], block_time=target["block_time"],
        # Manifests written before --harness existed guessed the style.
        harness=target.get("harness", "auto"),
        functions=FunctionFilter(
            tuple((target.get("functions") or {}).get("only", ())),
            tuple((target.get("functions") or {}).get("exclude", ()))))
    chain = dict(data["chain"])
    known = {f.name for f in fields(ChainConfig)}
    chain_config = ChainConfig(**{
        **{k: v for k, v in chain.items() if k in known and k not in ("fork", "block")},
        "fork": get_fork(chain["fork"]), "block": BlockSettings(**chain["block"])})
    campaign = data["config"]
    fuzz_fields = {f.name for f in fields(FuzzConfig)}
    fuzz = FuzzConfig(**{k: v for k, v in campaign["fuzz"].items() if k in fuzz_fields})
    settable = {f.name for f in fields(CampaignConfig)} - _NOT_RECORDED - {"fuzz"}
    config = CampaignConfig(fuzz=fuzz, **{k: v for k, v in campaign.items() if k in settable})
    slug = (data.get("campaign") or {}).get("slug")
    return Recorded(inputs, bool(target["project"]), options, selection, chain_config,
                    config, slug, dict(data))


def pinned_version(compilations: Sequence[Mapping[str, Any]]) -> str | None:
    """The one solc version secant compiled the sources with, else None.

    None when a project's build artifacts were read (its settings decide again) or when
    several versions ran (each group's pragmas decide again).
    """
    versions = set()
    for entry in compilations:
        match = _SOURCE_COMPILER_RE.match(str(entry.get("compiler", "")))
        if match is None:
            return None
        versions.add(match.group(1))
    return versions.pop() if len(versions) == 1 else None
