"""Foundry's testing settings read from foundry.toml: where forge reads them, in its order."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.compile.errors import InputError
from secant.compile.forge_testing import ForgeTesting, read_forge_testing


def project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "foundry.toml").write_text(text)
    return tmp_path


def test_without_a_foundry_toml_forge_defaults_hold(tmp_path: Path) -> None:
    settings = read_forge_testing(tmp_path)
    assert settings == ForgeTesting()
    assert settings.assertions_revert and not settings.reports_handler_assertions


def test_the_layout_of_a_benchmark_suite(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOUNDRY_PROFILE", raising=False)
    settings = read_forge_testing(project(tmp_path, """
[profile.default]
src = "src"
assertions_revert = false
block_timestamp = 1_700_000_000

[invariant]
runs = 500000000
depth = 100
fail_on_revert = false
fail_on_assert = true
show_metrics = true
corpus_dir = "corpus/foundry"
"""))
    assert (settings.depth, settings.runs, settings.fail_on_assert) == (100, 500000000, True)
    assert not settings.assertions_revert and settings.reports_handler_assertions
    assert settings.block_timestamp == 1_700_000_000 and settings.block_number is None
    assert settings.where.endswith("foundry.toml")


def test_the_profile_and_the_environment_win_in_forge_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path, """
[invariant]
depth = 10
max-time-delay = 3600

[profile.default]
invariant = { depth = 20 }

[profile.ci.invariant]
depth = 30
fail-on-revert = true
""")
    monkeypatch.delenv("FOUNDRY_PROFILE", raising=False)
    monkeypatch.delenv("FOUNDRY_INVARIANT_DEPTH", raising=False)
    default = read_forge_testing(root)
    assert (default.depth, default.max_time_delay, default.fail_on_revert) == (20, 3600, False)
    monkeypatch.setenv("FOUNDRY_PROFILE", "ci")
    ci = read_forge_testing(root)
    assert (ci.depth, ci.fail_on_revert) == (30, True)
    monkeypatch.setenv("FOUNDRY_INVARIANT_DEPTH", "1")
    assert read_forge_testing(root).depth == 1


@pytest.mark.parametrize(("text", "words"), [
    ("[invariant]\ndepth = \"deep\"\n", "[invariant] depth in"),
    ("[invariant]\nfail_on_assert = 1\n", "must be true or false"),
    ("[profile.default]\nassertions_revert = \"no\"\n", "assertions_revert in"),
    ("[invariant]\ndepth = -1\n", "must not be negative"),
    ("[invariant\n", "cannot read"),
])
def test_a_bad_setting_is_one_line_naming_it(tmp_path: Path, text: str, words: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOUNDRY_PROFILE", raising=False)
    with pytest.raises(InputError) as caught:
        read_forge_testing(project(tmp_path, text))
    assert words in caught.value.message and "\n" not in caught.value.message


def test_fuzz_runs_timeout_and_seed_are_read_with_the_invariant_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOUNDRY_PROFILE", raising=False)
    monkeypatch.delenv("FOUNDRY_FUZZ_RUNS", raising=False)
    root = project(tmp_path, """
[fuzz]
runs = 1000
seed = "0x2a"

[profile.default.fuzz]
timeout = 30

[invariant]
runs = 64
""")
    settings = read_forge_testing(root)
    assert (settings.fuzz_runs, settings.fuzz_timeout, settings.fuzz_seed) == (1000, 30, 42)
    assert settings.invariant_calls == 64 * 500  # forge's depth when none is set
    monkeypatch.setenv("FOUNDRY_FUZZ_RUNS", "7")
    assert read_forge_testing(root).fuzz_runs == 7
    assert ForgeTesting(runs=3, depth=10).invariant_calls == 30
    assert ForgeTesting().invariant_calls is None
