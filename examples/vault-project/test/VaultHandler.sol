// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Token} from "../src/Token.sol";
import {Vault} from "../src/Vault.sol";
import {Vm} from "./Vm.sol";

/// The handler the invariant campaign calls: three actors deposit, withdraw and let time
/// pass; it keeps ghost totals the invariants compare with the vault's books.
contract VaultHandler {
    Vm internal constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
    Token public immutable token;
    Vault public immutable vault;
    address[3] internal actors = [address(0xA11CE), address(0xB0B), address(0xCA7)];
    uint256 public ghostShares;
    uint256 public ghostIn;
    uint256 public ghostOut;

    constructor(Token token_, Vault vault_) {
        token = token_;
        vault = vault_;
    }

    function deposit(uint256 actorSeed, uint256 amount) external {
        address actor = actors[actorSeed % actors.length];
        amount = 1 + amount % 1e24;
        token.mint(actor, amount);
        vm.startPrank(actor);
        token.approve(address(vault), amount);
        ghostShares += vault.deposit(amount);
        ghostIn += amount;
        vm.stopPrank();
    }

    function withdraw(uint256 actorSeed, uint256 shares) external {
        address actor = actors[actorSeed % actors.length];
        uint256 held = vault.sharesOf(actor);
        if (held == 0) {
            return;
        }
        shares = 1 + shares % held;
        vm.startPrank(actor);
        ghostOut += vault.withdraw(shares);
        vm.stopPrank();
        ghostShares -= shares;
    }

    function wait(uint256 seconds_) external {
        vm.warp(block.timestamp + seconds_ % 40 days);
    }
}
