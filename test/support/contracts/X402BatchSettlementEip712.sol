// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
// Look-alike written from the published spec, not the official source.

/// @title X402BatchSettlementEip712: typed-data hashing and signature checks of the batch-settlement look-alike.
/// @notice A look-alike written from the published spec, not the official source. The x402 `batch-settlement`
///         escrow is only published as Solidity on GitHub, so the tests place our own implementation at its
///         canonical address. This file holds what the off-chain signers must agree with: the EIP-712 domain
///         ("x402 Batch Settlement", version "1", chain id, the contract's own address), the type strings of
///         ChannelConfig, Voucher, Refund and ClaimBatch/ClaimEntry as the x402 EVM package signs them, and the checks:
///         ECDSA (65 bytes, low s) for EOAs, EIP-1271 `isValidSignature` for contracts.
///         No storage and no immutables: copying the runtime code is a complete deployment.
abstract contract X402BatchSettlementEip712 {
    /// @notice The immutable parameters that identify a channel.
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    /// @notice The payer side's cumulative ceiling for one channel.
    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    /// @notice One claim row: a signed voucher and the channel's new cumulative claimed total.
    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;
    uint256 private constant HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    error InvalidSignature();

    /// @notice The EIP-712 domain separator, recomputed from the current chain id and this address.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice A channel's id: the EIP-712 hash of its config under this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _hashTypedData(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    /// @notice The digest a payer (or payer authorizer) signs for a voucher.
    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _hashTypedData(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    /// @notice The digest a receiver authorizer signs to allow a refund with a given nonce.
    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _hashTypedData(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    /// @notice The digest a receiver authorizer signs to allow a batch of claims.
    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata c = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(c.voucher.channel),
                    c.voucher.maxClaimableAmount,
                    c.totalClaimed
                )
            );
        }
        return _hashTypedData(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    function _hashTypedData(bytes32 structHash) internal view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// @dev A voucher binds to the payer authorizer by ECDSA when one is set, else to the payer (EOA or EIP-1271).
    function _requireVoucherSignature(
        ChannelConfig calldata config,
        bytes32 channelId,
        uint128 maxClaimableAmount,
        bytes calldata signature
    ) internal view {
        bytes32 digest = getVoucherDigest(channelId, maxClaimableAmount);
        if (config.payerAuthorizer != address(0)) {
            if (_recover(digest, signature) != config.payerAuthorizer) revert InvalidSignature();
        } else {
            _requireSignatureOf(config.payer, digest, signature);
        }
    }

    /// @dev `signer` must be a contract approving `digest` (EIP-1271) or the EOA that signed it.
    function _requireSignatureOf(address signer, bytes32 digest, bytes calldata signature) internal view {
        if (signer == address(0)) revert InvalidSignature();
        if (signer.code.length > 0) {
            (bool ok, bytes memory ret) =
                signer.staticcall(abi.encodeWithSelector(ERC1271_MAGIC, digest, signature));
            if (!ok || ret.length < 32 || bytes4(ret) != ERC1271_MAGIC) revert InvalidSignature();
            return;
        }
        if (_recover(digest, signature) != signer) revert InvalidSignature();
    }

    /// @dev Recovers a 65-byte (r, s, v) signature with low s; returns address(0) for anything malformed.
    function _recover(bytes32 digest, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
