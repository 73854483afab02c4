// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Token} from "./Token.sol";

/// A share vault with a term: before maturity, withdrawals pay a 1% fee that stays in the
/// vault for the remaining holders. After maturity the fee is waived, and the waiver path
/// has the example's bug: it burns the holder's shares but not the total.
contract Vault {
    Token public immutable asset;
    uint256 public immutable maturity;
    uint256 public totalShares;
    mapping(address => uint256) public sharesOf;

    constructor(Token asset_, uint256 term) {
        asset = asset_;
        maturity = block.timestamp + term;
    }

    function totalAssets() public view returns (uint256) {
        return asset.balanceOf(address(this));
    }

    function deposit(uint256 assets) external returns (uint256 shares) {
        require(assets > 0, "nothing to deposit");
        shares = totalShares == 0 ? assets : assets * totalShares / totalAssets();
        require(shares > 0, "too small");
        asset.transferFrom(msg.sender, address(this), assets);
        sharesOf[msg.sender] += shares;
        totalShares += shares;
    }

    function withdraw(uint256 shares) external returns (uint256 assets) {
        require(shares > 0 && shares <= sharesOf[msg.sender], "bad share amount");
        assets = shares * totalAssets() / totalShares;
        sharesOf[msg.sender] -= shares;
        if (block.timestamp < maturity) {
            totalShares -= shares;
            assets -= assets / 100; // the early-withdrawal fee stays in the vault
        }
        // BUG: after maturity totalShares keeps the burnt shares.
        asset.transfer(msg.sender, assets);
    }
}
