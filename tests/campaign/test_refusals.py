"""Which branch sides a campaign tells prediction to leave alone (secant.evm.refusals).

A side that only reverts refuses the transaction: prediction gains nothing there. A revert
the campaign reports is no refusal: a failed ``assert`` (Panic 0x01), and any revert on a
branch a property's call ran (the property then fails).
"""

from __future__ import annotations

from pathlib import Path

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import load
from secant.engine.config import FuzzConfig
from secant.engine.harvey.policy import HarveyPolicy, harvey
from secant.engine.policy import PolicyContext
from secant.evm.cfg import ControlFlowGraph
from secant.evm.crypto import keccak256
from secant.evm.opcodes import JUMPI
from tests.compile.conftest import needs_node

REFUSALS = Path(__file__).resolve().parents[1] / "fixtures" / "campaign" / "Refusals.sol"


@needs_node
def test_requires_and_overflow_checks_refuse_asserts_and_properties_do_not() -> None:
    [compilation] = load([REFUSALS])
    chain = TestChain.setup([compilation], contract="Refusals")
    contexts: list[PolicyContext] = []

    def make(context: PolicyContext) -> HarveyPolicy:
        contexts.append(context)
        return harvey(context)

    Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=300)), policy=make).run()
    [context] = contexts
    [contract] = [c for c in compilation.contracts if c.name == "Refusals"]
    code = chain.code_at(chain.main.address) if chain.main is not None else b""
    code_hash = keccak256(code)
    mapper = compilation.mapper(contract)
    # Source line (None: code the compiler generated) -> the sides of its JUMPIs that refuse.
    refusing: dict[int | None, set[bool]] = {}
    for _, instructions in ControlFlowGraph.from_code(code).blocks:
        pc, op, _ = instructions[-1]
        if op != JUMPI:
            continue
        location = mapper.locate(pc)
        sides = refusing.setdefault(location.line if location else None, set())
        sides.update(side for side in (False, True) if context.refuses((code_hash, pc, side)))
    assert refusing[11] == {False}  # require(amount > 0): the failing side
    assert refusing[None] == {False}  # total += amount: the overflow check's Panic(0x11)
    assert refusing[13] == {False}  # slots[amount % 3]: the index check's Panic(0x32)
    assert refusing[17] == set()  # assert: Panic(0x01) is a finding
    assert refusing[21] == set()  # the property's require: its failure is a finding
