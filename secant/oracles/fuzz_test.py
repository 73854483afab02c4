"""Foundry fuzz tests: a ``test*`` function with parameters fails when its call reverts.

Such a test is a stateless property: every call starts from the state ``setUp()`` left,
and the test fails when the call reverts (a failed ``assert*``, a ``require``, a panic),
except for runs ``vm.assume`` rejected, which are discarded as forge discards them. Under
forge's ``assertions_revert = false`` a failed ``vm.assert*`` does not revert: the test
fails all the same (the cheatcode's record of it, an event of the test contract). Under
forge's ``[invariant] fail_on_revert`` (:meth:`FuzzTestOracle.fail_on_revert`) an invariant
campaign's handler calls are held to the same rule: a call that reverts is a finding. Only
the chain's main contract is read for tests: it is the test contract in a fuzz-test
campaign (``secant.targets.foundry``).
"""

from __future__ import annotations

from secant.abi import decode_revert
from secant.chain.chain import TestChain
from secant.chain.cheatcodes import (
    FORGE_ASSERTION_TOPIC,
    forge_assertion_message,
    is_assume_rejection,
)
from secant.engine.oracle import Oracle, PostState
from secant.targets.contract import ContractRun
from secant.targets.foundry import fuzz_tests
from secant.types import Finding, RunResult


class FuzzTestOracle(Oracle):
    """Reports the fuzz tests whose call reverted (see the module docstring)."""

    name = "fuzz-test"
    swc = None
    description = "a Foundry fuzz test (test* with parameters) reverted"
    needs = frozenset()

    def __init__(self, chain: TestChain) -> None:
        main = chain.main
        self.contract = main
        self.tests = {f.signature: f for f in fuzz_tests(main)} if main is not None else {}
        # forge's fail_on_revert: every call of an invariant campaign must not revert.
        self.handlers = False
        cheats = chain.cheatcodes
        # Failed assertions that do not revert are read from the run's events.
        self.flagged_assertions = cheats is not None and not cheats.assertions_revert
        if self.flagged_assertions:
            self.needs = frozenset({"logs"})

    def fail_on_revert(self) -> None:
        """Hold every call to the rule, handlers included (forge's ``fail_on_revert``)."""
        self.handlers = True

    def check(self, result: RunResult, post: PostState | None) -> list[Finding]:
        """A finding when a transaction calling a fuzz test (or a handler) reverted."""
        if not isinstance(result, ContractRun) or self.contract is None:
            return []
        if self.handlers:
            return self._reverted_handlers(result)
        if not self.tests:
            return []
        findings = []
        flagged = ({log.tx: log.data for log in result.logs
                    if log.topics and log.topics[0] == FORGE_ASSERTION_TOPIC}
                   if self.flagged_assertions else {})
        for index, (tx, outcome) in enumerate(zip(result.case, result.outcomes)):
            test = self.tests.get(tx.function) if tx.to is None else None
            if test is None or outcome.invalid or outcome.success and index not in flagged:
                continue
            if is_assume_rejection(outcome.output):
                continue  # vm.assume rejected the input: discarded, as forge does
            if outcome.success:
                reason = forge_assertion_message(flagged[index])
            else:
                reason = str(decode_revert(outcome.output)) if outcome.output else (
                    outcome.error or "reverted")
            findings.append(Finding(
                kind="fuzz-test", swc="", contract=self.contract.name, function=test.name,
                pc=0, source=None, detail=f"{test.name} failed: {reason}",
                key=(self.name, self.contract.address, test.signature),
                case=result.case[:index + 1], oracle=self.name))
        return findings

    def _reverted_handlers(self, result: ContractRun) -> list[Finding]:
        """A finding for the first call of the run that reverted (fail_on_revert)."""
        for index, (tx, outcome) in enumerate(zip(result.case, result.outcomes)):
            if outcome.success or outcome.invalid or is_assume_rejection(outcome.output):
                continue
            name = tx.function.split("(", 1)[0]
            reason = str(decode_revert(outcome.output)) if outcome.output else (
                outcome.error or "reverted")
            return [Finding(
                kind="revert", swc="", contract=self.contract.name if self.contract else "",
                function=name, pc=0, source=None,
                detail=f"{name} reverted (fail_on_revert): {reason}",
                key=(self.name, "revert", tx.to, tx.function),
                case=result.case[:index + 1], oracle=self.name)]
        return []
