"""One campaign description: validated once, recorded, read back, and given as a command line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import typer

from secant.campaign.options import CampaignOptions, parse_address, parse_panic_codes
from secant.cli.main import app
from secant.errors import SecantError

SOL = Path("Token.sol")

EVERYTHING = CampaignOptions(
    SOL, out=Path("runs/one"), contract="Token", arg=("1000", "0xaa"), value=5,
    deploy=("Oracle", "Pool"), deploy_arg=("Pool=Oracle", "Pool=7"), balance=10**20,
    all_contracts=True, sender=("0x10000", "0x20000"), deployer="0x30000",
    block_number=100, block_time=1_700_000_000, match_test="test_", harness="foundry",
    only_function=("deposit(uint256)",), exclude_function=("skim()",),
    unlimited_code_size=True, fork="shanghai", calls=3000, seed=7, schedule="afl",
    no_predict=True, predict_iterations=3, sequences="eager", aggressive_probability=0.5,
    no_adaptive=True, adaptive_share=0.25, symbolic_share=0.0, max_sequence_length=4,
    max_time_delay=3600, max_block_delay=10, no_prefix_cache=True, shrink_limit=10,
    solc_version="0.8.26", optimize=False, optimizer_runs=1, via_ir=True,
    evm_version="paris", remap=("a/=lib/a/",), panic_codes="0x01,0x11",
    property_prefix=("prop_", "inv_"), oracles="assertion,property")


def test_a_record_reads_back_as_the_same_options() -> None:
    record = EVERYTHING.to_record()
    assert record["arg"] == ["1000", "0xaa"] and record["out"] == "runs/one"
    assert CampaignOptions.from_record(record) == EVERYTHING


def test_the_command_line_of_some_options_gives_those_options() -> None:
    command = typer.main.get_command(app)
    assert isinstance(command, typer.core.TyperGroup)
    fuzz = command.commands["fuzz"]
    for options in (EVERYTHING, CampaignOptions(SOL),
                    CampaignOptions(SOL, time_budget="90s", target="Token.sol:12")):
        context = fuzz.make_context("fuzz", options.command_line())
        parsed = CampaignOptions.from_values(context.params, options.given)
        assert parsed == options, options.command_line()


def test_everything_a_campaign_is_built_from_derives_from_the_options() -> None:
    fuzz = EVERYTHING.fuzz_config()
    assert (fuzz.seed, fuzz.max_transactions, fuzz.max_execs, fuzz.max_time) == (7, 3000,
                                                                                 None, None)
    assert (fuzz.predict, fuzz.adaptive, fuzz.schedule, fuzz.sequences) == (False, False,
                                                                           "afl", "eager")
    selection = EVERYTHING.selection()
    assert selection.deploy == [("Oracle", None), ("Pool", ["Oracle", "7"])]
    assert selection.senders == [0x10000, 0x20000] and selection.args == ["1000", "0xaa"]
    assert selection.panic_codes == frozenset({0x01, 0x11})
    assert selection.oracles == ["assertion", "property"]
    assert selection.functions.only == ("deposit(uint256)",)
    chain = EVERYTHING.chain_config()
    assert (chain.fork.name, chain.deployer, chain.seed) == ("shanghai", 0x30000, 7)
    campaign = EVERYTHING.campaign_config()
    assert (campaign.prefix_cache, campaign.shrink_limit, campaign.out) == (False, 10,
                                                                           Path("runs/one"))
    flags = EVERYTHING.compile_flags()
    assert (flags.optimize, flags.via_ir, flags.remappings) == (False, True, ("a/=lib/a/",))


def test_without_a_budget_the_campaign_gets_five_minutes_and_a_target_gets_aflgo() -> None:
    plain = CampaignOptions(SOL)
    assert plain.max_time == 300.0 and plain.schedule_name == "aflfast"
    assert CampaignOptions(SOL, execs=10).max_time is None
    assert CampaignOptions(SOL, time_budget="1.5h").max_time == 5400.0
    assert CampaignOptions(SOL, target="Token.sol:3").schedule_name == "aflgo"


def test_a_budget_given_is_the_users_choice_even_when_built_directly() -> None:
    assert CampaignOptions(SOL).given == frozenset()
    assert CampaignOptions(SOL, execs=5).given == {"execs"}
    assert CampaignOptions(SOL, calls=5, given=frozenset({"seed"})).given == {"calls", "seed"}


def test_an_old_manifest_records_command_options_which_are_left_out() -> None:
    recorded = {**CampaignOptions(SOL, execs=40).to_record(), "quiet": True,
                "fail_on_findings": True, "resume": None, "force": False}
    del recorded["given"]  # written before the options recorded it
    options = CampaignOptions.from_record(recorded)
    assert options.execs == 40 and options.given == {"execs"}


@pytest.mark.parametrize(("changes", "named"), [
    ({"harness": "truffle"}, "--harness"),
    ({"schedule": "fast"}, "schedule"),
    ({"schedule": "aflgo"}, "target"),
    ({"predict_iterations": -1}, "--predict-iterations"),
    ({"sequences": "lazy"}, "sequence mode"),
    ({"aggressive_probability": 1.5}, "--aggressive-probability"),
    ({"adaptive_share": -0.1}, "--adaptive-share"),
    ({"symbolic_share": 2.0}, "--symbolic-share"),
    ({"max_sequence_length": 0}, "--max-sequence-length"),
    ({"max_time_delay": 1 << 64}, "--max-time-delay"),
    ({"max_block_delay": -1}, "--max-block-delay"),
    ({"execs": 0}, "--execs"),
    ({"calls": -3}, "--calls"),
    ({"shrink_limit": -1}, "--shrink-limit"),
    ({"block_number": -1}, "--block-number"),
    ({"expert_rlimit": 0}, "--rlimit"),
    ({"expert_queries": 0}, "--queries"),
    ({"time_budget": "soon"}, "duration"),
    ({"fork": "homestead2"}, "fork"),
    ({"panic_codes": "0x01,zz"}, "--panic-codes"),
    ({"deploy_arg": ("Pool=1",)}, "--deploy-arg"),
    ({"sender": ("0x0",)}, "--sender"),
    ({"deployer": "me"}, "--deployer"),
    ({"policy": "random"}, "policy"),
])
def test_a_bad_value_is_one_line_naming_the_option(changes: dict[str, object],
                                                   named: str) -> None:
    with pytest.raises(SecantError) as raised:
        replace(CampaignOptions(SOL), **changes)
    line = raised.value.one_line()
    assert named in line and "\n" not in line


def test_addresses_and_panic_codes_read_as_the_flags_give_them() -> None:
    assert parse_address("0x10000", "--sender") == 0x10000
    assert parse_address("65536", "--sender") == 0x10000
    assert parse_panic_codes(None) is None
    assert 0x11 in (parse_panic_codes("all") or ())
