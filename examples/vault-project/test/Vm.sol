// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The cheatcodes this example's tests use, at the address every Foundry tool serves them.
interface Vm {
    function warp(uint256 timestamp) external;
    function startPrank(address sender) external;
    function stopPrank() external;
    function assertEq(uint256 left, uint256 right, string calldata message) external pure;
}

/// The part of forge-std's StdInvariant the invariant test uses, written for the example.
abstract contract InvariantBase {
    Vm internal constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
    address[] private targets;

    function targetContract(address target) internal {
        targets.push(target);
    }

    function targetContracts() public view returns (address[] memory) {
        return targets;
    }
}
