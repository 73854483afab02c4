// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// ERC-20 style allowances. The bug needs an owner with a balance (faucet), the owner's
/// approve(spender, a), then the spender's transferFrom(owner, to, a) spending the whole
/// allowance: allowance[owner][spender] is written by one sender and read by another.
contract Allowances {
    mapping(address => uint256) balanceOf;
    mapping(address => mapping(address => uint256)) allowance;

    function faucet() public {
        require(balanceOf[msg.sender] == 0);
        balanceOf[msg.sender] = 1000;
    }

    function approve(address spender, uint256 amount) public {
        allowance[msg.sender][spender] = amount;
    }

    function transferFrom(address from, address to, uint256 amount) public {
        require(amount > 0 && allowance[from][msg.sender] >= amount);
        require(balanceOf[from] >= amount && from != msg.sender);
        allowance[from][msg.sender] -= amount;
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        assert(allowance[from][msg.sender] > 0); // the bug: an allowance spent in full
    }
}
