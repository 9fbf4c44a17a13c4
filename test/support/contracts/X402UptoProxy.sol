// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice The part of Permit2's SignatureTransfer interface this proxy calls.
interface IPermit2WitnessTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

/// @title X402UptoProxy — an independently written test stand-in for the x402 `upto` Permit2 proxy.
/// @notice The audited proxy's compiled artifacts are not published on npm, so the tests place this contract
///         at the canonical proxy address (0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002) with `hardhat_setCode`.
///         It implements the `settle` entry point of the ABI that the x402 EVM package publishes (`x402UptoPermit2ProxyABI`):
///         only the facilitator named in the signed witness may settle, at most the permitted amount, always to
///         the witness `to`; the real Permit2 checks the payer's signature over the witness and burns the nonce.
///         No constructor, no storage: copying the runtime code is a complete deployment.
contract X402UptoProxy {
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    /// @notice Permit2's canonical address (same on every chain).
    address public constant PERMIT2 = 0x000000000022D473030F116dDEE9F6B43aC78BA3;

    /// @notice Tail of the EIP-712 type Permit2 hashes: `Witness witness)` plus the referenced types, alphabetical.
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    event Settled();

    error AmountExceedsPermitted();
    error InvalidAmount();
    error InvalidDestination();
    error InvalidOwner();
    error PaymentTooEarly();
    error UnauthorizedFacilitator();

    /// @notice Moves `amount` (at most the permitted maximum) from `owner` to `witness.to` through Permit2.
    function settle(
        IPermit2WitnessTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (amount == 0) revert InvalidAmount();
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        IPermit2WitnessTransfer(PERMIT2).permitWitnessTransferFrom(
            permit,
            IPermit2WitnessTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
        emit Settled();
    }
}
