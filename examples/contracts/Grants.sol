// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The owner grants amounts; a grantee claims them. grant(to) writes grants[to] and claim()
/// reads grants[msg.sender]: the bug needs a grant whose argument names the claimant, made
/// by the owner, then the claimant taking the whole grant at once.
contract Grants {
    address owner;
    mapping(address => uint256) grants;
    mapping(address => uint256) claimed;

    constructor() {
        owner = msg.sender;
    }

    function grant(address to, uint256 amount) public {
        require(msg.sender == owner && to != owner && amount > 0 && amount <= 1e24);
        grants[to] += amount;
    }

    function claim(uint256 amount) public {
        require(amount > 0 && claimed[msg.sender] + amount <= grants[msg.sender]);
        claimed[msg.sender] += amount;
        if (claimed[msg.sender] == grants[msg.sender]) {
            assert(amount < grants[msg.sender]); // the bug: a whole grant claimed at once
        }
    }
}
