"""The example contracts' bugs are reachable with known witnesses (and not without them).

Later quality tests assert the fuzzer finds these; this table pins down that each target is
real: the witness sequence reaches it, a near-miss does not, and the functions involved are
fuzzable (not view/pure, which fuzzers skip by default).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from tests.compile.conftest import needs_node

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"
ETHER = 10**18

# A step: (sender, function, args, value wei, seconds to advance before it).
Step = tuple[str, str, list[Any], int, int]


@functools.cache
def compiled(file: str) -> list[Compilation]:
    return load([EXAMPLES / file])


def run(file: str, contract: str, steps: list[Step]) -> Any:
    chain = TestChain.setup(compiled(file), contract=contract)
    result = None
    for sender, function, args, value, seconds in steps:
        if seconds:
            chain.advance(1, seconds)
        result = chain.call(sender, contract, function, args, value)
    return chain, result


def is_assert_failure(result: Any) -> bool:
    """A revert with Panic(0x01): solc >= 0.8's failed ``assert``."""
    reason = result.revert
    return bool(result.reverted and reason is not None and reason.kind == "panic"
                and reason.panic_code == 0x01)


CASES: list[tuple[str, str, str, list[Step], list[Step]]] = [
    # id, file, contract, witness, near miss
    ("baz-a42", "Baz.sol", "Baz",
     [("user1", "baz", [42, 3, -5], 0, 0)],
     [("user1", "baz", [41, 3, -5], 0, 0)]),
    ("derived-constant", "DerivedConstant.sol", "DerivedConstant",
     [("user1", "check", [19088743], 0, 0)],
     [("user1", "check", [19088744], 0, 0)]),
    ("foo-sety-copyy-bar", "HarveyFoo.sol", "Foo",
     [("user1", "SetY", [42], 0, 0), ("user1", "CopyY", [], 0, 0),
      ("user1", "Bar", [], 0, 0)],
     [("user1", "SetY", [42], 0, 0), ("user1", "Bar", [], 0, 0)]),
    ("foo-incx-42", "HarveyFoo.sol", "Foo",
     [("user1", "IncX", [], 0, 0)] * 42 + [("user1", "Bar", [], 0, 0)],
     [("user1", "IncX", [], 0, 0)] * 41 + [("user1", "Bar", [], 0, 0)]),
    ("stateful-maze-depth3", "StatefulMaze.sol", "StatefulMaze",
     [("user1", "north", [0], 0, 0), ("user1", "north", [0], 0, 0),
      ("user1", "east", [49], 0, 0)],
     [("user1", "north", [0], 0, 0), ("user1", "north", [0], 0, 0),
      ("user1", "east", [50], 0, 0)]),
    ("stateful-maze-depth6", "StatefulMaze.sol", "StatefulMaze",
     [("user1", m, [1001 if i == 5 else 0], 0, 0)
      for i, m in enumerate(["north", "north", "north", "east", "east", "east"])],
     [("user1", m, [1003 if i == 5 else 0], 0, 0)
      for i, m in enumerate(["north", "north", "north", "east", "east", "east"])]),
    ("stateful-maze-depth10", "StatefulMaze.sol", "StatefulMaze",
     [("user1", m, [0xDEAD if i == 9 else 0], 0, 0)
      for i, m in enumerate(["north", "north", "north", "east", "east", "east", "south",
                             "south", "west", "south"])],
     [("user1", m, [0xDEAE if i == 9 else 0], 0, 0)
      for i, m in enumerate(["north", "north", "north", "east", "east", "east", "south",
                             "south", "west", "south"])]),
    ("sfuzz-y110", "SFuzzExamples.sol", "MultipleObjectives",
     [("user1", "foo", [-10], 0, 0)],
     [("user1", "foo", [11], 0, 0)]),
    ("crashme-bad!", "FuzzingBook.sol", "CrashMe",
     [("user1", "crashme", [b"bad!x"], 0, 0)],
     [("user1", "crashme", [b"bad?"], 0, 0)]),
    ("maze-solved", "FuzzingBook.sol", "Maze",
     [("user1", "walk", [b"DDDDRRRRUULLUURRRRDDDD"], 0, 0)],
     [("user1", "walk", [b"DDDDRRRRUULLUURRRRDDD"], 0, 0)]),
    ("sfuzz-y10010", "SFuzzExamples.sol", "MultipleObjectives",
     [("user1", "foo", [100], 0, 0)],
     [("user1", "foo", [99], 0, 0)]),
]


@needs_node
@pytest.mark.parametrize(("name", "file", "contract", "witness", "near_miss"), CASES,
                         ids=[c[0] for c in CASES])
def test_assertion_reached_by_witness_only(
    name: str, file: str, contract: str, witness: list[Step], near_miss: list[Step]
) -> None:
    _, hit = run(file, contract, witness)
    assert is_assert_failure(hit), f"{name}: witness did not fail the assertion: {hit}"
    _, miss = run(file, contract, near_miss)
    assert miss.success, f"{name}: near miss should succeed: {miss}"


@needs_node
def test_baz_has_five_paths() -> None:
    returns = set()
    for args in ([0, 0, 0], [0, 3, -5], [41, 3, -5], [0, 0, 5], [0, 0, 50]):
        _, result = run("Baz.sol", "Baz", [("user1", "baz", args, 0, 0)])
        returns.add(result.value)
    assert returns == {1, 3, 4, 5}  # and path 2 is the assertion (test above)


@needs_node
def test_crowdsale_withdraw_and_refund_need_their_sequences() -> None:
    goal = 100000 * ETHER
    _, early = run("Crowdsale.sol", "Crowdsale", [("user1", "withdraw", [], 0, 0)])
    assert early.reverted
    _, done = run("Crowdsale.sol", "Crowdsale", [
        ("user1", "invest", [], goal, 0), ("user2", "setPhase", [1], 0, 0),
        ("attacker1", "withdraw", [], 0, 0),
    ])
    assert done.success and done.logs, "withdraw after invest(goal), setPhase(1)"
    _, too_soon = run("Crowdsale.sol", "Crowdsale", [
        ("user1", "invest", [], ETHER, 0), ("user2", "setPhase", [2], 0, 0)])
    assert too_soon.reverted
    _, refunded = run("Crowdsale.sol", "Crowdsale", [
        ("user1", "invest", [], ETHER, 0), ("user2", "setPhase", [2], 0, 61 * 86400),
        ("user1", "refund", [], 0, 0)])
    assert refunded.success and refunded.logs, "refund after time travel past end"


@needs_node
def test_maze_walls_revert() -> None:
    _, wall = run("FuzzingBook.sol", "Maze", [("user1", "walk", [b"R"], 0, 0)])
    assert wall.reverted and wall.revert is not None and wall.revert.message == "wall"
    _, partial = run("FuzzingBook.sol", "Maze", [("user1", "walk", [b"DDDD"], 0, 0)])
    assert partial.success and partial.value == 4


@needs_node
def test_stateful_maze_walls_and_edges_revert() -> None:
    _, wall = run("StatefulMaze.sol", "StatefulMaze", [("user1", "east", [0], 0, 0)])
    assert wall.reverted and wall.revert is not None and wall.revert.message == "wall"
    _, edge = run("StatefulMaze.sol", "StatefulMaze", [("user1", "west", [0], 0, 0)])
    assert edge.reverted and edge.revert is not None and edge.revert.message == "edge"


@needs_node
def test_opposite_game_try_needs_the_quiz_and_100_finney() -> None:
    start = ("user1", "start_quiz_game", ["q?", "yes"], 0, 0)
    _, won = run("SFuzzExamples.sol", "OppositeGame",
                 [start, ("user2", "Try", ["yes"], ETHER // 10, 0)])
    assert won.success and won.logs
    _, wrong_fee = run("SFuzzExamples.sol", "OppositeGame",
                       [start, ("user2", "Try", ["yes"], ETHER // 10 + 1, 0)])
    assert wrong_fee.success and not wrong_fee.logs
    _, no_quiz = run("SFuzzExamples.sol", "OppositeGame",
                     [("user2", "Try", [""], ETHER // 10, 0)])
    assert no_quiz.success and not no_quiz.logs


@needs_node
@pytest.mark.parametrize(("file", "contract", "functions"), [
    ("Baz.sol", "Baz", {"baz"}),
    ("DerivedConstant.sol", "DerivedConstant", {"check"}),
    ("HarveyFoo.sol", "Foo", {"Bar", "SetY", "IncX", "CopyY"}),
    ("SFuzzExamples.sol", "MultipleObjectives", {"foo"}),
    ("FuzzingBook.sol", "CrashMe", {"crashme"}),
    ("FuzzingBook.sol", "Maze", {"walk"}),
    ("StatefulMaze.sol", "StatefulMaze", {"north", "east", "south", "west"}),
])
def test_targets_are_fuzzable(file: str, contract: str, functions: set[str]) -> None:
    chain = TestChain.setup(compiled(file), contract=contract)
    assert {f.name for f in chain.fuzzable_functions(contract)} >= functions

