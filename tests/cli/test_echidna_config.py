"""``--config echidna.yaml``: Echidna's flat YAML read, its keys turned into secant's."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.cli.echidna_config import EchidnaConfigError, echidna_table, parse_flat_yaml

_FILE = """\
# a comment
testMode: "assertion"   # trailing comment
prefix: 'check_'
seqLen: 20
testLimit: 5000
timeout: 90
shrinkLimit: 0x10
sender: ["0x10000", 0x20000]
balanceContract: 1000
allContracts: true
corpusDir: "corpus # not a comment"
deployer: 0x30000
cryticArgs:
  - "--foundry-ignore-compile"
  - --solc-remaps
filterFunctions: []
filterBlacklist: true
workers: 4
"""


def test_a_flat_file_parses_as_echidna_writes_it(tmp_path: Path) -> None:
    data = parse_flat_yaml(_FILE, tmp_path / "echidna.yaml")
    assert data == {
        "testMode": "assertion", "prefix": "check_", "seqLen": 20, "testLimit": 5000,
        "timeout": 90, "shrinkLimit": 16, "sender": ["0x10000", 0x20000],
        "balanceContract": 1000, "allContracts": True, "corpusDir": "corpus # not a comment",
        "deployer": 0x30000, "cryticArgs": ["--foundry-ignore-compile", "--solc-remaps"],
        "filterFunctions": [], "filterBlacklist": True, "workers": 4}


def test_keys_with_an_equivalent_become_options_and_the_rest_a_note(tmp_path: Path) -> None:
    path = tmp_path / "echidna.yaml"
    path.write_text(_FILE)
    table, notes = echidna_table(path)
    assert table == {
        "oracles": "assertion", "property-prefix": ["check_"], "max-sequence-length": 20,
        "calls": 5000, "time": "90s", "shrink-limit": 16,
        "sender": [f"0x{0x10000:040x}", f"0x{0x20000:040x}"], "value": 1000,
        "all-contracts": True, "deployer": f"0x{0x30000:040x}", "workers": 4,
        # secant's own entries beside Echidna's, relative to the file's folder.
        "corpus": str(tmp_path / "corpus # not a comment" / "secant")}
    # An empty filterFunctions filters nothing, so it needs no note.
    assert notes == ["echidna.yaml: not read (no secant equivalent yet): cryticArgs"]


@pytest.mark.parametrize(("size", "unlimited"), [(0x6000, False), (0x10000, True)])
def test_a_code_size_above_eip170_lifts_the_limit(tmp_path: Path, size: int,
                                                  unlimited: bool) -> None:
    path = tmp_path / "echidna.yaml"
    path.write_text(f"codeSize: {size:#x}\n")
    # A file without allContracts keeps Echidna's default: the created contracts are not
    # called (secant's own default for a contract without properties would call them).
    assert echidna_table(path) == ({"unlimited-code-size": unlimited, "all-contracts": False},
                                   [])


@pytest.mark.parametrize(("blacklist", "option"), [("", "exclude-function"),
                                                  ("filterBlacklist: true\n", "exclude-function"),
                                                  ("filterBlacklist: false\n", "only-function")])
def test_filtered_functions_are_excluded_or_the_only_ones(tmp_path: Path, blacklist: str,
                                                           option: str) -> None:
    path = tmp_path / "echidna.yaml"
    path.write_text('filterFunctions: ["Vault.drain(uint256)", "Vault.pause()"]\n' + blacklist)
    assert echidna_table(path) == ({option: ["Vault.drain(uint256)", "Vault.pause()"],
                                    "all-contracts": False}, [])


@pytest.mark.parametrize(("text", "message"), [
    ("testMode: optimization\n", "testMode 'optimization' has no secant equivalent"),
    ("seqLen: many\n", "seqLen: 'many' is not an integer"),
    ("campaign:\n  seqLen: 3\n", ":2: nested mappings are not read"),
    ("sender: {a: 1}\n", ":1: nested mappings are not read"),
    ("- 1\n", ":1: a list item outside a list"),
    ("just words\n", ":1: not a 'key: value' line"),
    ("sender: [1,\n", ":1: a list must end on its line"),
])
def test_what_cannot_be_read_is_one_error_naming_it(tmp_path: Path, text: str,
                                                     message: str) -> None:
    path = tmp_path / "echidna.yaml"
    path.write_text(text)
    with pytest.raises(EchidnaConfigError, match=message.replace("(", r"\(")):
        echidna_table(path)
