"""secant.toml: found from the input up, flags win, unknown keys and bad values are one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.compile.conftest import needs_node, run_cli

HARNESS = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "MedusaStyle.sol"


def project(tmp_path: Path, config: str) -> Path:
    folder = tmp_path / "project" / "src"
    folder.mkdir(parents=True)
    shutil.copy(HARNESS, folder / HARNESS.name)
    (tmp_path / "project" / "secant.toml").write_text(config)
    return folder / HARNESS.name


@needs_node
def test_the_file_sets_options_and_flags_win(tmp_path: Path) -> None:
    source = project(tmp_path, '[fuzz]\nexecs = 300\nseed = 4\noracles = "property"\n'
                               'out = "result"\nmax-sequence-length = 3\n')
    proc = run_cli("fuzz", str(source), "-q")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "project" / "result" / "summary.json").read_text())
    assert (summary["execs"], summary["seed"], summary["oracles"]) == (300, 4, ["property"])
    assert max(int(n) for n in summary["sequences"]["lengths"]) <= 3
    proc = run_cli("fuzz", str(source), "-q", "--execs", "120", "--out", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert (summary["execs"], summary["seed"]) == (120, 4)  # the flag won, the file filled in


def test_unknown_keys_and_bad_values_are_one_line(tmp_path: Path) -> None:
    source = project(tmp_path, "[fuzz]\nexec = 300\n")
    proc = run_cli("fuzz", str(source))
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert "[fuzz] has no key 'exec'; use one of:" in line and "execs" in line
    assert "list-oracles" not in line
    (tmp_path / "project" / "secant.toml").write_text('[fuzz]\nexecs = "many"\n')
    proc = run_cli("fuzz", str(source))
    assert proc.returncode == 2 and "[fuzz] execs = 'many'" in proc.stderr
    (tmp_path / "project" / "secant.toml").write_text("[fuzz\n")
    proc = run_cli("fuzz", str(source))
    assert proc.returncode == 2 and "is not valid TOML" in proc.stderr


def test_every_fuzz_option_is_documented_as_a_key() -> None:
    import typer

    from secant.cli.main import app

    documented = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    fuzz = typer.main.get_command(app).commands["fuzz"]  # type: ignore[attr-defined]
    keys = [opt[2:] for param in fuzz.params for opt in param.opts
            if opt.startswith("--") and param.name not in ("config", "list_oracles")]
    assert [key for key in keys if f"`{key}`" not in documented] == []
