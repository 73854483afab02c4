"""The contract target on chains whose ABIs list functions no transaction can call."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import CompileOptions, load
from secant.engine.config import FuzzConfig
from tests.compile.conftest import needs_node

LIBRARY = Path(__file__).resolve().parents[1] / "fixtures" / "solidity" / \
    "LibraryStorage04.sol"


@needs_node
def test_a_linked_library_with_storage_parameters_does_not_stop_the_campaign() -> None:
    config = CampaignConfig(FuzzConfig(seed=0, max_execs=300), shrink_limit=0)
    [chosen] = plan(load([LIBRARY], CompileOptions()), Selection(contract="UsesLib"),
                    ChainConfig(), config, project=False)
    chain = chosen.make_chain()
    library = next(c for c in chain.contracts if c.name == "Counters")
    campaign = Campaign(chain, chosen.config, oracles=chosen.oracles,
                        functions=chosen.functions, senders=chosen.senders,
                        block_steps=chosen.block_steps)
    campaign.run()
    assert campaign.fuzzer.stats.execs == 300
    signatures = {tx.function for i in range(len(campaign.fuzzer.corpus))
                  for tx in campaign.fuzzer.corpus[i].case}
    assert signatures == {"hit(uint256)"}
    # The library's function is known to the target, but only a call would need it encoded.
    target = campaign.workers[0].target
    [storage_fn] = [fn.signature for fn in library.functions(include_read_only=False)]
    assert "storage" in storage_fn
    with pytest.raises(ValueError, match="cannot encode ABI type"):
        target.calldata(storage_fn, [0], to=library.address)
