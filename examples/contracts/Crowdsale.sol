// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// ILF Fig. 2: reaching withdraw needs invest(>= goal) then setPhase(1); reaching refund
/// needs time past `end` then setPhase(2). setOwner lacks its access check (the bug: anyone
/// becomes owner and withdraws the raised funds).
contract Crowdsale {
    uint256 goal = 100000 * (10 ** 18);
    uint256 phase = 0; // 0: Active, 1: Success, 2: Refund
    uint256 raised;
    uint256 end;
    address owner;
    mapping(address => uint256) investments;

    event Withdrawn(address to, uint256 amount);
    event Refunded(address to, uint256 amount);

    constructor() {
        end = block.timestamp + 60 days;
        owner = msg.sender;
    }

    function invest() public payable {
        require(phase == 0 && raised < goal);
        investments[msg.sender] += msg.value;
        raised += msg.value;
    }

    function setPhase(uint256 newPhase) public {
        require(
            (newPhase == 1 && raised >= goal) ||
            (newPhase == 2 && raised < goal && block.timestamp > end)
        );
        phase = newPhase;
    }

    function setOwner(address newOwner) public {
        // Fix: require(msg.sender == owner);
        owner = newOwner;
    }

    function withdraw() public {
        require(phase == 1);
        payable(owner).transfer(raised);
        emit Withdrawn(owner, raised);
    }

    function refund() public {
        require(phase == 2);
        uint256 amount = investments[msg.sender];
        payable(msg.sender).transfer(amount);
        investments[msg.sender] = 0;
        emit Refunded(msg.sender, amount);
    }
}
