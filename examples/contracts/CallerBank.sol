// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A bank whose bug needs one user to deposit, lock the deposit and withdraw it early: each
/// step reads the caller's own entries (mappings keyed by msg.sender), so the three calls
/// must come from the same sender.
contract CallerBank {
    mapping(address => uint256) balances;
    mapping(address => uint256) unlockAt;
    mapping(address => uint256) penalties;

    function deposit() public payable {
        require(msg.value > 0);
        balances[msg.sender] += msg.value;
    }

    function lock(uint256 duration) public {
        require(balances[msg.sender] > 0 && duration >= 1 days && duration <= 365 days);
        unlockAt[msg.sender] = block.timestamp + duration;
    }

    function withdraw(uint256 amount) public {
        require(amount > 0 && amount <= balances[msg.sender]);
        if (block.timestamp < unlockAt[msg.sender]) {
            // An early withdrawal pays a 10% penalty.
            uint256 penalty = amount / 10;
            penalties[msg.sender] += penalty;
            assert(penalty > 0); // the bug: amounts below 10 wei pay nothing
        }
        balances[msg.sender] -= amount;
        payable(msg.sender).transfer(amount);
    }
}
