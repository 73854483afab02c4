"""summary.json's manifest: what a campaign ran on and with, how it ended; exit codes."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from secant import __version__
from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.function_filter import FunctionFilter
from secant.campaign.manifest import (
    SCHEMA_VERSION,
    Manifest,
    ManifestError,
    describe,
    pinned_version,
    read_manifest,
)
from secant.campaign.plan import Selection
from secant.chain.blockenv import BlockSettings
from secant.chain.chain import ChainConfig, TestChain
from secant.cli.main import app
from secant.compile import Compilation, load
from secant.compile.solidity import CompileOptions
from secant.engine.config import FuzzConfig
from secant.engine.events import FuzzListener
from secant.evm.forks import get_fork
from secant.types import RunResult
from tests.compile.conftest import needs_node

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"
BAZ = EXAMPLES / "Baz.sol"
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def invoke(*args: str) -> Result:
    """``secant ARGS`` in this process (so a test can patch secant)."""
    return CliRunner().invoke(app, list(args))


@functools.cache
def compiled(path: Path) -> list[Compilation]:
    return load([path])


# ---------------------------------------------------------------------- the record
def test_a_manifest_reads_back_into_what_built_the_campaign() -> None:
    selection = Selection(contract="Vault", args=["1000", "Token"], value=5,
                          match_contract="Vault", match_test="invariant_",
                          oracles=["assertion"], property_prefixes=["check_"],
                          panic_codes=frozenset({0x01, 0x11}), deploy=[("Token", ["7"])],
                          all_contracts=True, senders=[0x10000, 0x20000], block_number=9,
                          block_time=99, harness="echidna",
                          functions=FunctionFilter(("deposit",), ("Vault.pause()",)))
    chain_config = ChainConfig(fork=get_fork("shanghai"), balance=123, seed=4,
                               unlimited_code_size=True, block=BlockSettings(number=3),
                               deployer=0x30000)
    config = CampaignConfig(FuzzConfig(seed=4, max_execs=77, max_time=2.5, schedule="afl",
                                       sequences="eager", adaptive_share=0.5),
                            prefix_cache=False, oracles=["assertion"], shrink_limit=12,
                            test_contract=False)
    given = CompileOptions(optimize=True, remappings=("a/=b/",))
    runs = [Compilation([], {}, ("src/Vault.sol",), "solc 0.8.21", "solc")]
    manifest = describe(inputs=[Path("src")], project=True, foundry=True,
                        selection=selection, given=given,
                        settings=replace(given, evm_version="paris"), compilations=runs,
                        chain_config=chain_config, config=config, options={"out": Path("o")})
    data = json.loads(json.dumps(manifest.to_json()))  # as summary.json holds it
    assert data["schema_version"] == SCHEMA_VERSION and data["secant_version"] == __version__
    assert data["target"]["inputs"] == [{"given": "src", "resolved": str(Path("src").resolve())}]
    assert data["target"]["foundry_project"] is True
    assert data["compiler"]["used"] == {"solc_version": "0.8.21", "optimize": True,
                                        "optimize_runs": 200, "via_ir": False,
                                        "evm_version": "paris", "remappings": ["a/=b/"]}
    assert data["chain"]["fork"] == "shanghai" and data["seed"] == 4
    assert data["options"] == {"out": "o"}
    recorded = read_manifest({"manifest": data}, Path("summary.json"))
    assert recorded.inputs == [Path("src").resolve()] and recorded.project
    assert recorded.selection == selection
    assert recorded.chain_config == chain_config
    assert recorded.config == config
    # The version that ran is pinned: a newer solc since must not change the bytecode.
    assert recorded.compile_options == replace(given, solc_version="0.8.21")


def test_only_a_version_secant_compiled_with_alone_is_pinned() -> None:
    assert pinned_version([{"compiler": "solc 0.8.21 (native)"}]) == "0.8.21"
    assert pinned_version([{"compiler": "solc 0.8.21"}, {"compiler": "solc 0.7.6"}]) is None
    assert pinned_version([{"compiler": "solc 0.8.21 (forge artifacts)"}]) is None
    assert pinned_version([{"compiler": "vyper 0.4.0"}]) is None


@pytest.mark.parametrize("summary, message", [
    ({"execs": 10}, "has no manifest (written by an older secant)"),
    ({"manifest": {"schema_version": SCHEMA_VERSION + 1}}, "has a manifest of schema"),
    ({"manifest": {"schema_version": SCHEMA_VERSION}}, "has a malformed manifest"),
])
def test_a_manifest_secant_cannot_read_is_a_one_line_error(summary: dict[str, Any],
                                                           message: str) -> None:
    with pytest.raises(ManifestError) as error:
        read_manifest(summary, Path("out/summary.json"))
    assert message in error.value.one_line() and "\n" not in error.value.one_line()


# ---------------------------------------------------------------------- status and times
class _StopAfter(FuzzListener):
    """Ctrl-C after ``runs`` runs, as a user's would arrive."""

    def __init__(self, runs: int) -> None:
        self.runs = runs

    def on_run(self, result: RunResult) -> None:
        self.runs -= 1
        if self.runs == 0:
            raise KeyboardInterrupt


def baz_campaign(out: Path, execs: int) -> Campaign:
    chain = TestChain.setup(compiled(BAZ), contract="Baz")
    return Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=execs), out=out),
                    manifest=Manifest({"seed": 0}).for_campaign("Baz", "Baz"))


@needs_node
def test_a_completed_campaign_records_its_times_and_status(tmp_path: Path) -> None:
    campaign = baz_campaign(tmp_path, 300)
    summary = campaign.run()
    manifest = summary["manifest"]
    assert manifest["status"] == "completed" and "error" not in manifest
    assert ISO_UTC.match(manifest["started"]) and ISO_UTC.match(manifest["ended"])
    assert manifest["started"] <= manifest["ended"]
    assert manifest["campaign"] == {"name": "Baz", "slug": "Baz"}
    assert json.loads((tmp_path / "summary.json").read_text())["manifest"] == manifest


@needs_node
def test_an_interrupted_campaign_says_so(tmp_path: Path) -> None:
    campaign = baz_campaign(tmp_path, 100_000)
    campaign.listen(_StopAfter(200))
    with pytest.raises(KeyboardInterrupt):
        campaign.run()
    summary = campaign.finish()  # what secant fuzz does on Ctrl-C
    assert summary["execs"] < 100_000
    assert summary["manifest"]["status"] == "interrupted"
    assert ISO_UTC.match(summary["manifest"]["ended"])
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["manifest"]["status"] == "interrupted"


class _StopShrinking(FuzzListener):
    """Ctrl-C while the campaign shrinks a finding."""

    def __init__(self, campaign: Campaign) -> None:
        self.campaign = campaign

    def on_progress(self) -> None:
        shrinking = self.campaign.shrinking
        if shrinking is not None and shrinking.active is not None:
            raise KeyboardInterrupt


@needs_node
def test_a_campaign_interrupted_while_shrinking_says_so(tmp_path: Path) -> None:
    campaign = baz_campaign(tmp_path, 1000)
    campaign.listen(_StopShrinking(campaign))
    summary = campaign.run()  # shrinking stops on Ctrl-C and the campaign finishes
    assert summary["shrink"]["interrupted"] is True
    assert summary["manifest"]["status"] == "interrupted"


@needs_node
def test_a_failing_campaign_says_failed_and_keeps_what_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Campaign) -> None:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(Campaign, "shrink_findings", broken)
    campaign = baz_campaign(tmp_path, 1000)
    with pytest.raises(RuntimeError):
        campaign.run()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["manifest"]["status"] == "failed"
    assert summary["manifest"]["error"] == "RuntimeError: injected failure"
    assert len(summary["findings"]) == 1


# ---------------------------------------------------------------------- secant fuzz
@needs_node
def test_secant_fuzz_records_the_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke("fuzz", str(BAZ), "--execs", "400", "--seed", "3", "--out", str(out),
                    "--balance", "5000", "--block-number", "100", "--sender", "0x10000",
                    "--oracles", "assertion", "--fork", "shanghai", "--optimize",
                    "--shrink-limit", "50")
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "summary.json").read_text())["manifest"]
    assert manifest["status"] == "completed" and manifest["seed"] == 3
    target = manifest["target"]
    assert target["inputs"] == [{"given": str(BAZ), "resolved": str(BAZ.resolve())}]
    assert (target["project"], target["foundry_project"]) == (False, False)
    assert target["senders"] == [f"0x{0x10000:040x}"] and target["block_number"] == 100
    assert target["oracles"] == ["assertion"]
    compiler = manifest["compiler"]
    assert compiler["given"]["optimize"] is True and compiler["given"]["solc_version"] is None
    [run] = compiler["compilations"]
    assert run["compiler"] == f"solc {compiler['used']['solc_version']}"
    assert compiler["used"]["optimize"] is True
    assert manifest["chain"]["fork"] == "shanghai" and manifest["chain"]["balance"] == 5000
    assert manifest["config"]["fuzz"]["max_execs"] == 400
    assert manifest["config"]["shrink_limit"] == 50
    options = manifest["options"]
    assert options["execs"] == 400 and options["out"] == str(out)
    assert options["sequences"] == "demand" and "execs" in options["given"]
    # How the command ran is not the campaign's: the manifest leaves it out.
    assert not {"quiet", "force", "fail_on_findings", "resume"} & set(options)
    assert manifest["campaign"] == {"name": "Baz", "slug": "Baz"}


@needs_node
def test_secant_failing_exits_3_with_the_traceback_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Campaign) -> None:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(Campaign, "shrink_findings", broken)
    out = tmp_path / "out"
    result = invoke("fuzz", str(BAZ), "--execs", "1000", "--out", str(out))
    assert result.exit_code == 3
    traceback = out / "traceback.txt"
    assert result.stderr == (f"error: secant failed (RuntimeError: injected failure); the "
                             f"traceback is in {traceback}: please report it\n")
    assert "RuntimeError: injected failure" in traceback.read_text()
    assert "Traceback (most recent call last)" in traceback.read_text()
    # What was on disk stays: the finding, the corpus, a summary saying failed.
    assert len(list((out / "findings").glob("*.json"))) == 1
    assert list((out / "corpus").glob("*.json"))
    assert json.loads((out / "summary.json").read_text())["manifest"]["status"] == "failed"


@needs_node
def test_exit_codes_for_findings(tmp_path: Path) -> None:
    quiet = invoke("fuzz", str(BAZ), "--execs", "1000", "--out", str(tmp_path / "a"))
    assert quiet.exit_code == 0, quiet.output  # a finding, but not asked to fail on one
    failing = invoke("fuzz", str(BAZ), "--execs", "1000", "--out", str(tmp_path / "b"),
                     "--fail-on-findings")
    assert failing.exit_code == 1
    usage = invoke("fuzz", str(BAZ), "--execs", "0", "--out", str(tmp_path / "c"))
    assert usage.exit_code == 2
