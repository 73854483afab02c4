"""The public harness suites that ``bench/harnesses.py`` runs, and what their repos expect.

Nothing here is a copy of a suite: each harness is named by its path inside a checkout the
user makes (``--suite NAME=PATH``), with the functions the bench reports on and the outcome
the suite's own repository expects (its test-suite assertions, its solutions, its README),
when it states one. A finding on a function not listed is reported as an extra row.

Where each suite comes from::

    git clone https://github.com/crytic/building-secure-contracts
        --suite echidna-exercises=building-secure-contracts/program-analysis/echidna/exercises
    git clone https://github.com/crytic/echidna
        --suite echidna-tests=echidna/tests/solidity
    git clone https://github.com/crytic/medusa
        --suite medusa-tests=medusa/fuzzing/testdata/contracts
    git clone --recurse-submodules https://github.com/horsefacts/weth-invariant-testing
        --suite weth-invariants=weth-invariant-testing
        (or a plain clone, with --lib forge-std=... --lib halmos-cheatcodes=...)
    git clone https://github.com/Uniswap/v3-core
        --suite uniswap-v3-echidna=v3-core
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROPERTY = "property"
ASSERTION = "assertion"
OPTIMIZATION = "optimization"
INVARIANT = "invariant"
FUZZ = "fuzz test"

FORGE_KINDS = (INVARIANT, FUZZ)
"""The kinds of check forge runs: Foundry invariants and fuzz tests."""

FAILS = "fails"
HOLDS = "holds"


@dataclass(frozen=True)
class Check:
    """One property, assertion function, optimization target, invariant or fuzz test.

    ``expect`` is ``fails``, ``holds``, ``best>=N`` / ``best=N`` for an optimization target,
    or empty when the suite states nothing; ``why`` is a footnote on the expectation.
    ``contract`` names the contract that holds the function when it is not the harness.
    """

    name: str
    kind: str
    expect: str = ""
    why: str = ""
    contract: str = ""


@dataclass(frozen=True)
class Harness:
    """One harness: a file (or, with ``project``, a Foundry project) and its target contract.

    ``path`` is relative to the suite's root. ``forge`` says forge can run it as it is (a
    Foundry test contract); ``solc`` pins the compiler for both tools when forge runs it, so
    they fuzz the same bytecode. ``patch`` (relative to the root) is applied to a copy first.
    """

    name: str
    path: str
    contract: str
    checks: tuple[Check, ...]
    project: bool = False
    forge: bool = False
    solc: str = ""
    patch: str = ""
    secant_args: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Suite:
    """A suite: where it comes from, what its expectations rest on, and its harnesses."""

    name: str
    source: str
    expectations: str
    harnesses: tuple[Harness, ...]
    libs: tuple[str, ...] = field(default=())


def _props(*names: str, kind: str = PROPERTY, expect: str = FAILS,
           why: str = "") -> tuple[Check, ...]:
    return tuple(Check(name, kind, expect, why) for name in names)


# --- 1. Echidna's tutorial exercises ---------------------------------------------------------

EXERCISES = Suite(
    name="echidna-exercises",
    source="git clone https://github.com/crytic/building-secure-contracts "
           "(program-analysis/echidna/exercises)",
    expectations="each exercise's solution.sol is the property that catches the exercise's bug "
                 "(Exercise-N.md); exercises 5-8 need Damn Vulnerable DeFi or other "
                 "checkouts and are left out",
    harnesses=(
        Harness("exercise1", "exercise1/solution.sol", "TestToken",
                _props("echidna_test_balance")),
        Harness("exercise2", "exercise2/solution.sol", "TestToken",
                _props("echidna_no_transfer")),
        Harness("exercise3", "exercise3/solution.sol", "TestToken",
                _props("echidna_test_balance")),
        Harness("exercise4", "exercise4/solution.sol", "TestToken",
                _props("transfer", kind=ASSERTION),
                note="assertion mode (`--test-mode assertion` in Echidna)"),
    ),
)

# --- 2a. Echidna's own test contracts -------------------------------------------------------

_ECHIDNA_REVERT = ("Echidna: a property named echidna_revert_* must revert "
                   "(lib/Echidna/Config.hs)")
_ECHIDNA_BLOCK = ("Echidna's first block is number 4370000 at time 1524785992 "
                  "(lib/Echidna/Types/Tx.hs)")

ECHIDNA_TESTS = Suite(
    name="echidna-tests",
    source="git clone https://github.com/crytic/echidna (tests/solidity)",
    expectations="src/test/Tests/{Integration,Assertion,Optimization,Foundry}.hs: "
                 "`solved` = fails, `passed` = holds, `optimized N` = best >= N",
    harnesses=(
        Harness("basic/flags.sol", "basic/flags.sol", "Test", (
            Check("echidna_alwaystrue", PROPERTY, HOLDS),
            Check("echidna_revert_always", PROPERTY, HOLDS, _ECHIDNA_REVERT),
            Check("echidna_sometimesfalse", PROPERTY, FAILS),
        )),
        Harness("basic/revert.sol", "basic/revert.sol", "C",
                _props("echidna_fails_on_revert")),
        Harness("basic/delay.sol", "basic/delay.sol", "C",
                _props("echidna_block_number", "echidna_timestamp")),
        Harness("basic/construct.sol", "basic/construct.sol", "C",
                _props("echidna_construct")),
        Harness("basic/array-mutation.sol", "basic/array-mutation.sol", "C",
                _props("echidna_mutated")),
        Harness("basic/darray-mutation.sol", "basic/darray-mutation.sol", "C",
                _props("echidna_mutated")),
        Harness("basic/immutable.sol", "basic/immutable.sol", "C",
                _props("echidna_test")),
        Harness("basic/library.sol", "basic/library.sol", "Contract", (
            Check("echidna_library_call", PROPERTY, FAILS),
            Check("echidna_valid_timestamp", PROPERTY, HOLDS, _ECHIDNA_BLOCK),
        )),
        Harness("basic/excludeviewpure.sol", "basic/excludeviewpure.sol", "ViewPureProperty", (
            Check("echidna_counter_small", PROPERTY, FAILS),
            Check("neverCalled", ASSERTION, FAILS,
                  "the control run without excludeViewPure"),
        )),
        Harness("tstore/tstore.sol", "tstore/tstore.sol", "Test",
                _props("echidna_foo")),
        Harness("assert/assert-0.8.sol", "assert/assert-0.8.sol", "Test",
                _props("direct_assert", kind=ASSERTION)),
        Harness("assert/revert.sol", "assert/revert.sol", "Test", (
            Check("assert_revert", ASSERTION, FAILS,
                  "AssertionFailed emitted, then the call reverts"),
            Check("assert_unreachable", ASSERTION, HOLDS),
        )),
        Harness("assert/external.sol", "assert/external.sol", "Test", (
            Check("assert_external", ASSERTION, FAILS,
                  "AssertionFailed emitted by a contract it calls"),
            Check("external_call", ASSERTION, HOLDS),
        )),
        Harness("assert/multi.sol", "assert/multi.sol", "Test", (
            Check("fail", ASSERTION, FAILS,
                  "on the contract that Test's constructor creates (allContracts)",
                  contract="TestAssert"),
            Check("f", ASSERTION, HOLDS),
        ), secant_args=("--all-contracts",)),
        Harness("assert/fullmath.sol", "assert/fullmath.sol", "FullMathEchidnaTest",
                _props("checkMulDivRoundingUp", kind=ASSERTION),
                note="solc 0.7.5: assert is INVALID"),
        Harness("optimize/linear.sol", "optimize/linear.sol", "Test",
                (Check("echidna_opt_linear", OPTIMIZATION, "best>=4000"),)),
        Harness("optimize/zero.sol", "optimize/zero.sol", "Test",
                (Check("echidna_opt_zero", OPTIMIZATION, "best=0"),)),
        Harness("foundry-basic/basic.sol", "foundry-basic/basic.sol", "GreeterTest", (
            *_props("testShrinking", "testFuzzFixedArray", "testFuzzVariableArray",
                    "testFuzzBytes1", "testFuzzBytes14", "testFuzzBytes32", "testFuzzI256",
                    "testFuzzAbiCoderV2", kind=FUZZ),
            Check("testFuzzAssume", FUZZ, HOLDS),
            Check("testStringFuzz", FUZZ),
            Check("testGreeting", FUZZ),
        ), forge=True, solc="0.8.26",
            note="a Foundry fuzz-test contract without forge-std; forge runs it from a "
                 "scratch project holding only this file"),
    ),
)

# --- 2b. Medusa's test contracts ------------------------------------------------------------

MEDUSA_TESTS = Suite(
    name="medusa-tests",
    source="git clone https://github.com/crytic/medusa (fuzzing/testdata/contracts)",
    expectations="fuzzing/fuzzer_test.go: TestAssertionMode, TestAssertionsNotRequire, "
                 "TestAssertionsAndProperties, TestOptimizationMode, "
                 "TestValueGenerationSolving, TestComplexValueGenerationSolving",
    harnesses=(
        Harness("assert_even_number", "assertions/assert_even_number.sol", "TestContract",
                _props("setX", kind=ASSERTION)),
        Harness("assert_arithmetic_underflow", "assertions/assert_arithmetic_underflow.sol",
                "TestContract", _props(
                    "arithmeticOverflow", kind=ASSERTION,
                    why="Panic(0x11): Medusa's test turns FailOnArithmeticUnderflow on "
                        "(off by default)"),
                secant_args=("--panic-codes", "0x01,0x11")),
        Harness("assert_divide_by_zero", "assertions/assert_divide_by_zero.sol", "TestContract",
                _props("divideByZero", kind=ASSERTION,
                       why="Panic(0x12): Medusa's test turns FailOnDivideByZero on "
                           "(off by default)"),
                secant_args=("--panic-codes", "0x01,0x12")),
        Harness("assert_constant_method", "assertions/assert_constant_method.sol", "TestContract",
                _props("checkMulDivRoundingUp", kind=ASSERTION,
                       why="a pure function (TestViewMethods)")),
        Harness("assert_not_require", "assertions/assert_not_require.sol", "TestContract",
                _props("failRequire", "failRevert", kind=ASSERTION, expect=HOLDS)),
        Harness("assert_and_property_test", "assertions/assert_and_property_test.sol",
                "TestContract", (
                    Check("failing_assert_method", ASSERTION, FAILS),
                    Check("property_failing_property", PROPERTY, FAILS),
                )),
        Harness("optimize", "optimizations/optimize.sol", "TestContract",
                (Check("optimize_opt_linear", OPTIMIZATION, "best=4241"),)),
        Harness("match_uints_xy", "value_generation/match_uints_xy.sol", "TestContract",
                _props("property_never_specific_values",
                       why="TestComplexValueGenerationSolving (15M calls)")),
        Harness("match_ints_xy", "value_generation/match_ints_xy.sol", "TestContract",
                _props("property_never_specific_values",
                       why="TestComplexValueGenerationSolving (15M calls)")),
        Harness("match_addr_exact", "value_generation/match_addr_exact.sol", "TestContract",
                _props("property_never_specific_values")),
        Harness("match_addr_sender", "value_generation/match_addr_sender.sol", "TestContract",
                _props("property_never_specific_values")),
        Harness("match_addr_contract", "value_generation/match_addr_contract.sol",
                "TestContract", _props("property_never_specific_values")),
        Harness("match_string_exact", "value_generation/match_string_exact.sol", "TestContract",
                _props("property_never_specific_values")),
        Harness("match_structs_xy", "value_generation/match_structs_xy.sol", "TestContract",
                _props("property_never_specific_values")),
        Harness("match_payable_xy", "value_generation/match_payable_xy.sol", "TestContract",
                _props("property_never_pay_exact_amounts")),
    ),
)

# --- 3. A Foundry project with a handler: WETH9 ---------------------------------------------

_WETH_INVARIANTS = ("invariant_conservationOfETH", "invariant_solvencyDeposits",
                    "invariant_solvencyBalances", "invariant_depositorBalances",
                    "invariant_callSummary")
_README = "README.md, 'forge test' output after the patch"
_DERIVED = "read off the patch (the README does not show this run)"


def _weth(name: str, patch: str, failing: tuple[str, ...], why: str) -> Harness:
    checks = tuple(Check(inv, INVARIANT, FAILS if inv in failing else HOLDS,
                         why if inv in failing else "")
                   for inv in _WETH_INVARIANTS)
    return Harness(name, ".", "WETH9Invariants", checks, project=True, forge=True,
                   solc="0.8.26", patch=patch, secant_args=("--unlimited-code-size",),
                   note="bug patch " + patch if patch else "the unmodified WETH9")


WETH = Suite(
    name="weth-invariants",
    source="git clone --recurse-submodules https://github.com/horsefacts/weth-invariant-testing",
    expectations="README.md: every invariant holds on WETH9; bugs/bug1.patch breaks "
                 "depositorBalances and solvencyBalances, bug2.patch all four; bug3 and "
                 "bug4 are read off the patches",
    libs=("forge-std", "halmos-cheatcodes"),
    harnesses=(
        _weth("WETH9", "", (), ""),
        _weth("WETH9+bug1", "bugs/bug1.patch",
              ("invariant_solvencyBalances", "invariant_depositorBalances"), _README),
        _weth("WETH9+bug2", "bugs/bug2.patch",
              ("invariant_conservationOfETH", "invariant_solvencyDeposits",
               "invariant_solvencyBalances", "invariant_depositorBalances"), _README),
        _weth("WETH9+bug3", "bugs/bug3.patch", ("invariant_solvencyBalances",), _DERIVED),
        _weth("WETH9+bug4", "bugs/bug4.patch",
              ("invariant_solvencyBalances", "invariant_depositorBalances"), _DERIVED),
    ),
)

# --- 4. Uniswap v3-core's Echidna assertion harnesses ---------------------------------------


def _uni(stem: str, *asserts: str, properties: tuple[str, ...] = ()) -> Harness:
    checks = (*_props(*properties, expect=HOLDS),
              *_props(*asserts, kind=ASSERTION, expect=HOLDS))
    return Harness(stem.removesuffix("EchidnaTest"), f"contracts/test/{stem}.sol", stem, checks)


UNISWAP = Suite(
    name="uniswap-v3-echidna",
    source="git clone https://github.com/Uniswap/v3-core (contracts/test/*EchidnaTest.sol)",
    expectations=".github/workflows/fuzz-testing.yml runs each with Echidna "
                 "(checkAsserts: true) and expects no failure: every check holds",
    harnesses=(
        _uni("BitMathEchidnaTest", "mostSignificantBitInvariant", "leastSignificantBitInvariant"),
        _uni("FullMathEchidnaTest", "checkMulDivRounding", "checkMulDiv", "checkMulDivRoundingUp"),
        _uni("LowGasSafeMathEchidnaTest", "checkAdd", "checkSub", "checkMul", "checkAddi",
             "checkSubi"),
        _uni("OracleEchidnaTest",
             "checkTwoAdjacentObservationsTickCumulativeModTimeElapsedAlways0",
             "checkTimeWeightedAveragesAlwaysFitsType",
             properties=("echidna_indexAlwaysLtCardinality", "echidna_AlwaysInitialized",
                         "echidna_cardinalityAlwaysLteNext",
                         "echidna_canAlwaysObserve0IfInitialized")),
        _uni("SqrtPriceMathEchidnaTest", "mulDivRoundingUpInvariants",
             "getNextSqrtPriceFromInputInvariants", "getNextSqrtPriceFromOutputInvariants",
             "getNextSqrtPriceFromAmount0RoundingUpInvariants",
             "getNextSqrtPriceFromAmount1RoundingDownInvariants", "getAmount0DeltaInvariants",
             "getAmount0DeltaEquivalency", "getAmount1DeltaInvariants",
             "getAmount0DeltaSignedInvariants", "getAmount1DeltaSignedInvariants",
             "getOutOfRangeMintInvariants", "getInRangeMintInvariants"),
        _uni("SwapMathEchidnaTest", "checkComputeSwapStepInvariants"),
        _uni("TickBitmapEchidnaTest", "flipTick",
             "checkNextInitializedTickWithinOneWordInvariants"),
        _uni("TickEchidnaTest", "checkTickSpacingToParametersInvariants"),
        _uni("TickMathEchidnaTest", "checkGetSqrtRatioAtTickInvariants",
             "checkGetTickAtSqrtRatioInvariants"),
        _uni("TickOverflowSafetyEchidnaTest", "setPosition"),
        _uni("UnsafeMathEchidnaTest", "checkDivRoundingUp"),
    ),
)

# --- 5. Ours: a handler suite whose bug needs four calls -----------------------------------

STAKING = Suite(
    name="secant-staking",
    source="this repository: --suite secant-staking=tests/fixtures/staking",
    expectations="the pool's comment: two stakers, a month's wait and one leaving for good "
                 "break invariant_pool_holds_every_stake",
    harnesses=(
        Harness("StakingInvariants", ".", "StakingInvariants",
                (Check("invariant_pool_holds_every_stake", INVARIANT, FAILS,
                       "StakingPool.sol: the loyalty bonus"),),
                project=True, forge=True, solc="0.8.26",
                note="deposit, deposit by another actor, wait 30 days, full withdrawal"),
    ),
)

SUITES: dict[str, Suite] = {s.name: s for s in (EXERCISES, ECHIDNA_TESTS, MEDUSA_TESTS, WETH,
                                                UNISWAP, STAKING)}
