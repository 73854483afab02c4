// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Token} from "../src/Token.sol";
import {Vault} from "../src/Vault.sol";
import {VaultHandler} from "./VaultHandler.sol";
import {InvariantBase} from "./Vm.sol";

contract VaultInvariantTest is InvariantBase {
    Token internal token;
    Vault internal vault;
    VaultHandler internal handler;

    function setUp() public {
        token = new Token();
        vault = new Vault(token, 30 days);
        handler = new VaultHandler(token, vault);
        targetContract(address(handler));
    }

    /// Holds: the vault holds every token deposited and not paid out (fees included).
    function invariant_tokens_match_the_books() public view {
        vm.assertEq(token.balanceOf(address(vault)), handler.ghostIn() - handler.ghostOut(),
                    "tokens went missing");
    }

    /// Broken after maturity: the vault's total shares must equal what holders own.
    function invariant_total_shares_match_holders() public view {
        vm.assertEq(vault.totalShares(), handler.ghostShares(), "total shares drifted");
    }
}
