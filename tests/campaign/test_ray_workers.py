"""Workers as Ray actors on a real local Ray cluster of several nodes (``--ray``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.compile.conftest import needs_node

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CROWDSALE = ROOT / "examples" / "contracts" / "Crowdsale.sol"
VAULT_TESTS = ROOT / "tests" / "fixtures" / "foundry_style" / "VaultInvariants.t.sol"
SECANT = [sys.executable, "-c", "from secant.cli.main import app; app(prog_name='secant')"]


def fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SECANT, "fuzz", str(CROWDSALE), "--quiet", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False, timeout=600)


def names(folder: Path) -> set[str]:
    return {path.name for path in folder.glob("*.json")}


def without_time(summary: dict[str, Any]) -> dict[str, Any]:
    return {key: without_time(value) if isinstance(value, dict) else value
            for key, value in summary.items()
            if key not in ("elapsed_s", "seconds", "exchange", "where")}


def cluster_of(nodes: int) -> Iterator[Cluster]:
    """A Ray cluster on this machine: a head and ``nodes - 1`` more, one CPU each."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


def files(folder: Path) -> set[str]:
    """The corpus and finding files under ``folder``, by path relative to it."""
    return {str(path.relative_to(folder)) for path in folder.rglob("*.json")
            if path.parent.name in ("corpus", "findings")}


@needs_node
def test_on_three_nodes_workers_and_campaigns_run_as_they_run_here(tmp_path: Path) -> None:
    for cluster in cluster_of(3):
        on_ray = fuzz("--ray", cluster.address, "--workers", "4", "--execs", "1200",
                      "--seed", "4", "--out", str(tmp_path / "ray"))
        assert on_ray.returncode == 0, on_ray.stderr
        # A file with two campaigns (invariants, fuzz tests): one Ray task each.
        project = subprocess.run(
            [*SECANT, "fuzz", str(VAULT_TESTS), "--quiet", "--execs", "400", "--ray",
             cluster.address, "--out", str(tmp_path / "tasks")], cwd=ROOT,
            capture_output=True, text=True, check=False, timeout=600)
        assert project.returncode == 0, project.stderr
        assert "2 campaigns as Ray tasks" in project.stdout
    local = fuzz("--workers", "4", "--execs", "1200", "--seed", "4", "--out",
                 str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    here = subprocess.run([*SECANT, "fuzz", str(VAULT_TESTS), "--quiet", "--execs", "400",
                           "--out", str(tmp_path / "here")], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=600)
    assert here.returncode == 0, here.stderr
    assert files(tmp_path / "tasks") == files(tmp_path / "here")
    assert {p.name for p in (tmp_path / "tasks").iterdir()} == {
        "VaultInvariantTest-invariants", "VaultInvariantTest-fuzz-tests"}
    spread = json.loads((tmp_path / "ray" / "summary.json").read_text())
    here = json.loads((tmp_path / "local" / "summary.json").read_text())
    # The three actors took the three nodes' CPUs, one each.
    places = [w["where"] for w in spread["workers"][1:]]
    assert all(place.startswith("Ray node ") for place in places)
    assert len(set(places)) == 3
    assert all(w["exchange"]["epochs"] >= 1 for w in spread["workers"][1:])
    # The same campaign: corpus, findings and counters.
    assert names(tmp_path / "ray" / "corpus") == names(tmp_path / "local" / "corpus")
    assert names(tmp_path / "ray" / "findings") == names(tmp_path / "local" / "findings")
    for key in ("execs", "transactions", "paths", "corpus", "branches_covered"):
        assert spread[key] == here[key], key
    assert ([without_time(w) for w in spread["workers"]]
            == [without_time(w) for w in here["workers"]])


def test_an_address_where_no_cluster_answers_is_one_line(tmp_path: Path) -> None:
    done = fuzz("--ray", "127.0.0.1:1", "--execs", "10", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Ray cluster answers at '127.0.0.1:1'" in lines[0]
    assert "ray start --head" in lines[0]


def test_a_cluster_of_another_ray_version_is_one_line(tmp_path: Path) -> None:
    from ray._common.usage.usage_constants import CLUSTER_METADATA_KEY
    from ray._private.ray_constants import KV_NAMESPACE_CLUSTER
    from ray._raylet import GcsClient

    for cluster in cluster_of(1):
        # What a head node started by another Ray release records of itself.
        gcs = GcsClient(address=cluster.address)
        metadata = json.loads(gcs.internal_kv_get(CLUSTER_METADATA_KEY,
                                                  namespace=KV_NAMESPACE_CLUSTER))
        metadata["ray_version"] = "2.0.0"
        gcs.internal_kv_put(CLUSTER_METADATA_KEY, json.dumps(metadata).encode(), True,
                            namespace=KV_NAMESPACE_CLUSTER)
        done = fuzz("--ray", cluster.address, "--execs", "10", "--out", str(tmp_path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "runs another Ray or Python than this process" in lines[0]
    assert "ray==2.60.0" in lines[0]
