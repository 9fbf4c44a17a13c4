// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
// Look-alike written from the published spec, not the official source.

/// @notice The ERC-3009 entry point the ERC-3009 collector calls (bytes-signature form).
interface IX402Erc3009Token {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}

/// @notice The EIP-2612 entry point the Permit2 collector may call before pulling through Permit2.
interface IX402Eip2612Token {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @notice The part of Permit2's SignatureTransfer interface the Permit2 collector calls.
interface IX402Permit2 {
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

/// @title X402Erc3009DepositCollector: a look-alike written from the published spec, not the official source.
/// @notice Placed at 0x4020806089470a89826cB9fB1f4059150b550004. Only the escrow may call it. It redeems the
///         payer's `receiveWithAuthorization` (payee = this collector, nonce = keccak256(abi.encode(channelId,
///         salt)), so the authorization is bound to one channel) and forwards the amount to the escrow.
///         `data` = abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature), as
///         the x402 EVM package's `buildErc3009CollectorData` builds it. No constructor, no storage.
contract X402Erc3009DepositCollector {
    address public constant SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    error OnlySettlement();
    error TransferFailed();

    /// @notice Moves `amount` of `token` from `payer` to the escrow with the payer's ERC-3009 authorization.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != SETTLEMENT) revert OnlySettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IX402Erc3009Token(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        (bool ok, bytes memory ret) =
            token.call(abi.encodeWithSignature("transfer(address,uint256)", SETTLEMENT, amount));
        if (!ok || (ret.length != 0 && (ret.length < 32 || abi.decode(ret, (uint256)) != 1))) revert TransferFailed();
    }
}

/// @title X402Permit2DepositCollector: a look-alike written from the published spec, not the official source.
/// @notice Placed at 0x4020425FAf3B746C082C2f942b4E5159887B0005. Only the escrow may call it. It pulls the
///         deposit straight into the escrow through Permit2's `permitWitnessTransferFrom` with the payer's
///         signature (spender = this collector, witness `DepositWitness(bytes32 channelId)`), first applying an
///         optional EIP-2612 permit for Permit2 (a failing permit is ignored: an allowance may already exist).
///         `data` = abi.encode(uint256 nonce, uint256 deadline, bytes permit2Signature, bytes eip2612PermitData),
///         as the x402 EVM package's `buildPermit2CollectorData` builds it. No constructor, no storage.
contract X402Permit2DepositCollector {
    address public constant SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;
    address public constant PERMIT2 = 0x000000000022D473030F116dDEE9F6B43aC78BA3;
    bytes32 public constant DEPOSIT_WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");
    string public constant WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";

    error OnlySettlement();

    /// @notice Moves `amount` of `token` from `payer` to the escrow with the payer's Permit2 witness signature.
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != SETTLEMENT) revert OnlySettlement();
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory eip2612) =
            abi.decode(data, (uint256, uint256, bytes, bytes));
        if (eip2612.length > 0) _applyEip2612(payer, token, eip2612);
        IX402Permit2(PERMIT2).permitWitnessTransferFrom(
            IX402Permit2.PermitTransferFrom({
                permitted: IX402Permit2.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            IX402Permit2.SignatureTransferDetails({to: SETTLEMENT, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(DEPOSIT_WITNESS_TYPEHASH, channelId)),
            WITNESS_TYPE_STRING,
            signature
        );
    }

    function _applyEip2612(address payer, address token, bytes memory eip2612) private {
        (uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) =
            abi.decode(eip2612, (uint256, uint256, uint8, bytes32, bytes32));
        try IX402Eip2612Token(token).permit(payer, PERMIT2, value, deadline, v, r, s) {} catch {}
    }
}
