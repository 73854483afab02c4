"""TestChain: constructor arguments, linking, main contract, address book, reset, views."""

from __future__ import annotations

import pytest

from secant.chain import ChainConfig, TestChain
from secant.chain.accounts import DEFAULT_BALANCE, Role
from secant.chain.errors import ConstructorArgumentError, UnknownFunction
from secant.compile import NoDeployableContract, UnknownContract
from secant.compile.srcmap import instruction_offsets
from secant.evm.instructions.system import create_address

from .conftest import ETHER, SOLIDITY, chain_fixture, compiled, needs_node

pytestmark = needs_node

TYPES_ARGS = ["user1", "true", "0x01", "hello world", "[1, 2, 3]", "-5", "0xbeef", "(7, true)",
              "[deployer, 0x0000000000000000000000000000000000000001]"]


def test_five_senders_with_large_balances(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Inherit.sol"))
    roles = [(s.name, s.role) for s in chain.senders]
    assert roles == [("deployer", Role.DEPLOYER), ("user1", Role.USER), ("user2", Role.USER),
                     ("attacker1", Role.ATTACKER), ("attacker2", Role.ATTACKER)]
    assert len({s.address for s in chain.senders}) == 5
    assert all(chain.balance(s) == DEFAULT_BALANCE for s in chain.senders)
    assert [s.name for s in chain.users] == ["user1", "user2"]
    assert [s.trusted for s in chain.senders] == [True, True, True, False, False]
    other = TestChain(ChainConfig(users=1, attackers=3))
    assert [s.name for s in other.senders] == [
        "deployer", "user1", "attacker1", "attacker2", "attacker3"]
    assert other.sender("attacker1") == chain.sender("attacker1")  # same addresses everywhere


def test_the_deployer_may_be_given_as_echidna_and_medusa_give_it(solc_installed: list[str]
                                                                  ) -> None:
    chain = TestChain.setup(chain_fixture("Inherit.sol"), config=ChainConfig(deployer=0x30000))
    assert chain.deployer.address == 0x30000 and chain.balance(0x30000) == DEFAULT_BALANCE
    main = chain.main
    assert main is not None and main.address == create_address(0x30000, 0)


def test_constructor_arguments_from_strings(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Types.sol"), args=TYPES_ARGS)
    expected = {
        "who": chain.sender("user1").hex, "flag": True, "tag": b"\x01" + bytes(31),
        "label": "hello world", "total": 6, "delta": -5, "blob": b"\xbe\xef", "pairA": 7,
        "pairB": True, "secondOwner": "0x" + "00" * 19 + "01",
    }
    for getter, value in expected.items():
        got = chain.view("Types", getter).value
        assert (got.lower() if isinstance(got, str) and got.startswith("0x") else got) == value
    assert chain.main is not None and not chain.main.generated_args
    assert not chain.notes


def test_constructor_arguments_as_python_values(solc_installed: list[str]) -> None:
    values = [chain_address := 0x1234, False, b"\x02" * 32, "x", [9], 3, b"", (1, False),
              [0x1, 0x2]]
    chain = TestChain.setup(chain_fixture("Types.sol"), args=values)
    assert int(chain.view("Types", "who").value, 16) == chain_address
    assert chain.view("Types", "total").value == 9
    assert chain.main is not None and chain.main.args[0] == chain_address


def test_generated_arguments_are_deterministic_and_noted(solc_installed: list[str]) -> None:
    first = TestChain.setup(chain_fixture("Types.sol"))
    again = TestChain.setup(chain_fixture("Types.sol"))
    other = TestChain.setup(chain_fixture("Types.sol"), config=ChainConfig(seed=7))
    assert first.main is not None and again.main is not None and other.main is not None
    assert first.main.generated_args
    assert first.main.args == again.main.args
    assert first.main.args != other.main.args
    [note] = first.notes
    assert note.startswith("no constructor arguments given for Types; generated (who_=0x")
    assert "from seed 0" in note and "--arg" in note
    # generated addresses are trusted senders; the code ran with the generated values
    trusted = {s.hex for s in first.senders if s.trusted}
    assert first.view("Types", "who").value.lower() in trusted
    assert first.view("Types", "label").value == first.main.args[3]


def test_contract_typed_parameter_gets_a_deployed_contract(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Factory.sol"))
    assert chain.main is not None and chain.main.name == "Vault"
    roles = {c.name: c.role for c in chain.contracts}
    assert roles == {"NormalAttacker": "attacker", "ReentrancyAttacker": "attacker",
                     "CostlyAttacker": "attacker", "AnsweringAttacker": "attacker",
                     "Token": "dependency", "Vault": "main", "Child": "created"}
    token = chain.contract("Token")
    assert int(chain.view("Vault", "token").value, 16) == token.address
    # the Child the constructor created is callable by name, with its ABI
    child = chain.contract("Child")
    assert int(chain.view("Vault", "child").value, 16) == child.address
    assert chain.call("user1", "Vault", "poke").success
    assert chain.view("Child", "pinged").value == 1
    assert chain.call("user2", child, "ping").success
    assert chain.view(child.address, "pinged").value == 2
    assert chain.at(child.address) is child
    assert chain.contract(child.hex) is child


def test_main_contract_choice(solc_installed: list[str]) -> None:
    inherit = chain_fixture("Inherit.sol")
    assert TestChain.setup(inherit).contract("Leaf").role == "main"  # the most derived one
    # A contract another one creates or holds is its dependency, even when it comes last.
    creates = chain_fixture("Creates.sol")
    assert [c.name for c in creates[0].contracts] == ["Shop", "Ledger"]
    chain = TestChain.setup(creates)
    assert chain.main is not None and chain.main.name == "Shop"
    assert chain.contract("Ledger").role == "created"
    named = TestChain.setup(inherit, contract="Unrelated", also=["Middle"])
    assert named.main is not None and named.main.name == "Unrelated"
    assert named.contract("Middle").role == "deployed"  # deployed too, and callable
    assert named.call("user1", "Middle", "setA", [1]).success
    assert named.view("Middle", "a").value == 2
    assert {f.signature for f in named.fuzzable_functions()} == {"setB(uint256)"}
    assert {f.signature for f in named.fuzzable_functions("Middle")} == {"setA(uint256)"}
    with pytest.raises(UnknownContract, match="no contract named 'Nope'"):
        TestChain.setup(inherit, contract="Nope")
    with pytest.raises(NoDeployableContract):
        TestChain.setup(compiled(SOLIDITY / "OnlyInterface.sol"))


def test_library_linking_deploys_libraries_first(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Libs.sol"))
    names = [c.name for c in chain.contracts if c.role != "attacker"]
    assert names == ["Inner", "Outer", "UsesLibs"]  # Outer links Inner, UsesLibs links Outer
    assert chain.call("user1", "UsesLibs", "run", [3]).value == 12
    main = chain.contract("UsesLibs")
    assert main.compiled is not None
    outer = chain.contract("Outer").address.to_bytes(20, "big")
    assert outer in chain.state.code(main.address)


def test_view_functions_excluded_by_default(solc_installed: list[str]) -> None:
    compilation = chain_fixture("Bank.sol")
    chain = TestChain.setup(compilation)
    assert {f.signature for f in chain.fuzzable_functions()} == {
        "deposit()", "withdraw()", "withdrawWithTransfer()"}
    everything = {f.signature for f in chain.fuzzable_functions(include_read_only=True)}
    assert {"reserves()", "balances(address)", "withdrawals()"} <= everything
    configured = TestChain.setup(compilation, config=ChainConfig(include_read_only=True))
    assert {f.signature for f in configured.fuzzable_functions()} == everything


def test_reset_restores_the_post_deployment_state(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    user = chain.sender("user1")
    balance, nonce = chain.balance(user), chain.state.nonce(user.address)
    block = chain.env
    assert len(chain.state.journal) == 0  # sealing dropped the deployment's journal
    assert chain.call(user, "Bank", "deposit", value=3 * ETHER).success
    chain.advance(10, 120)
    assert chain.call(user, "Bank", "withdraw").success
    assert chain.view("Bank", "withdrawals").value == 1
    assert chain.state.nonce(user.address) == nonce + 2
    chain.reset()
    assert chain.view("Bank", "withdrawals").value == 0
    assert chain.balance(user) == balance and chain.state.nonce(user.address) == nonce
    assert chain.balance("Bank") == 0
    assert chain.env is block
    assert len(chain.state.journal) == 0


def test_view_does_not_change_state(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    journal = len(chain.state.journal)
    result = chain.view("Bank", "deposit")  # a state-changing function, called without a tx
    assert result.success
    assert len(chain.state.journal) == journal
    assert chain.view("Bank", "withdrawals").value == 0


def test_calls_decode_outputs_and_reverts(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    nothing = chain.call("attacker2", "Bank", "withdraw")
    assert nothing.reverted and not nothing.success
    assert str(nothing.revert) == "Error('nothing to withdraw')"
    assert nothing.gas_used > 21000
    assert chain.call("user1", "Bank", "deposit()", value=ETHER).values == ()
    assert chain.view("Bank", "reserves").value == ETHER
    with pytest.raises(UnknownFunction, match="no function matches 'steal'"):
        chain.call("user1", "Bank", "steal")
    with pytest.raises(UnknownContract, match="no deployed contract 'Vault'"):
        chain.call("user1", "Vault", "poke")
    with pytest.raises(KeyError, match="no sender 'mallory'"):
        chain.call("mallory", "Bank", "withdraw")


def test_locate_maps_runtime_pcs_to_source(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    bank = chain.contract("Bank")
    code = chain.state.code(bank.address)
    lines = set()
    for pc in instruction_offsets(code):
        if code[pc] == 0x55:  # SSTORE
            location = bank.locate(pc)
            if location is not None and location.function:
                lines.add((location.line, location.function))
    assert (9, "deposit") in lines and (19, "withdraw") in lines
    assert chain.contract("NormalAttacker").locate(0) is None


def test_bad_constructor_arguments(solc_installed: list[str]) -> None:
    types = chain_fixture("Types.sol")
    with pytest.raises(ConstructorArgumentError, match="takes 9 arguments"):
        TestChain.setup(types, args=["1"])
    bad = list(TYPES_ARGS)
    bad[5] = "40000"
    with pytest.raises(ConstructorArgumentError,
                       match=r"argument 6 \(int16 delta_\).*'40000' is not a valid int16"):
        TestChain.setup(types, args=bad)
    bad = list(TYPES_ARGS)
    bad[0] = 12  # a Python value that does not fit
    bad[1] = "maybe"
    with pytest.raises(ConstructorArgumentError, match="'maybe' is not a valid bool"):
        TestChain.setup(types, args=bad)
    bad[1] = "true"
    bad[4] = [1, 300]
    with pytest.raises(ConstructorArgumentError, match=r"argument 5 \(uint8\[\] xs\)"):
        TestChain.setup(types, args=bad)
