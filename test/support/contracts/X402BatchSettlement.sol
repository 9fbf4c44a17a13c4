// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;
// Look-alike written from the published spec, not the official source.

import {X402BatchSettlementEip712} from "./X402BatchSettlementEip712.sol";

/// @notice What the escrow asks a deposit collector to do: move `amount` of `token` from `payer` to the escrow.
interface IX402DepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

interface IX402BalanceOf {
    function balanceOf(address account) external view returns (uint256);
}

/// @title X402BatchSettlement: a look-alike written from the published spec, not the official source.
/// @notice Test stand-in for the x402 `batch-settlement` escrow, placed with `hardhat_setCode` at the address
///         the x402 EVM package uses (0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003). Written from the scheme's specification
///         (specs/schemes/batch-settlement/) and the ABI that the x402 EVM package calls. Rules it enforces:
///         - a deposit only through the two canonical collectors, and only if the escrow received the full amount;
///         - a claim never above the voucher the payer side signed nor above the channel's balance; a claim row
///           whose total is not above the channel's claimed total is ignored (so replays are harmless);
///         - claims and refunds only by the receiver / receiver authorizer, or with the receiver authorizer's
///           EIP-712 signature (refunds also with the current refund nonce, incremented before anything else);
///         - a timed withdrawal only by the payer / payer authorizer, only of unclaimed escrow, only after
///           `withdrawDelay`; `settle` sweeps claimed-but-unsettled value of (receiver, token) to the receiver.
///         No constructor and no immutables: copying the runtime code is a complete deployment.
contract X402BatchSettlement is X402BatchSettlementEip712 {
    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    address public constant ERC3009_DEPOSIT_COLLECTOR = 0x4020806089470a89826cB9fB1f4059150b550004;
    address public constant PERMIT2_DEPOSIT_COLLECTOR = 0x4020425FAf3B746C082C2f942b4E5159887B0005;
    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 2_592_000;

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => PendingWithdrawal) public pendingWithdrawals;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;
    mapping(bytes32 channelId => uint256) public refundNonce;
    uint256 private locked;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance);
    event Claimed(bytes32 indexed channelId, address indexed receiver, uint128 amount, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed payer, uint128 amount, uint256 nonce);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt);
    event Withdrawn(bytes32 indexed channelId, address indexed payer, uint128 amount);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);

    error ZeroAmount();
    error InvalidChannelConfig();
    error UnknownCollector();
    error DepositShortfall();
    error EmptyClaimBatch();
    error ClaimExceedsVoucher();
    error ClaimExceedsBalance();
    error MixedReceiverAuthorizers();
    error Unauthorized();
    error InvalidRefundNonce();
    error WithdrawAmountExceedsEscrow();
    error WithdrawalAlreadyPending();
    error NoPendingWithdrawal();
    error WithdrawDelayNotElapsed();
    error TransferFailed();
    error Reentrancy();

    modifier nonReentrant() {
        if (locked == 1) revert Reentrancy();
        locked = 1;
        _;
        locked = 0;
    }

    /// @notice Runs several calls to this contract in one transaction; any failure reverts them all.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory ret) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(ret, 32), mload(ret))
                }
            }
            results[i] = ret;
        }
    }

    /// @notice Adds `amount` to a channel (creating it), pulled from the payer by one of the canonical collectors.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (amount == 0) revert ZeroAmount();
        if (collector != ERC3009_DEPOSIT_COLLECTOR && collector != PERMIT2_DEPOSIT_COLLECTOR) revert UnknownCollector();
        _requireValidConfig(config);
        bytes32 channelId = getChannelId(config);
        uint256 before = IX402BalanceOf(config.token).balanceOf(address(this));
        IX402DepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (IX402BalanceOf(config.token).balanceOf(address(this)) != before + amount) revert DepositShortfall();
        ChannelState storage channel = channels[channelId];
        if (channel.balance == channel.totalClaimed) emit ChannelCreated(channelId, config);
        channel.balance += amount;
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    /// @notice Claims voucher rows; the caller must be the receiver or receiver authorizer of every row.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata config = voucherClaims[i].voucher.channel;
            if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert Unauthorized();
        }
        _claimAll(voucherClaims);
    }

    /// @notice Claims voucher rows that share one receiver authorizer, with its EIP-712 ClaimBatch signature.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyClaimBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert MixedReceiverAuthorizers();
        }
        _requireSignatureOf(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature);
        _claimAll(voucherClaims);
    }

    /// @notice Transfers everything claimed but not yet settled for (receiver, token) to the receiver.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage state = receivers[receiver][token];
        uint128 amount = state.totalClaimed - state.totalSettled;
        if (amount == 0) return;
        state.totalSettled = state.totalClaimed;
        _transfer(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    /// @notice Cooperative refund of up to `amount` unclaimed escrow, called by the receiver or receiver authorizer.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert Unauthorized();
        _refund(config, getChannelId(config), amount);
    }

    /// @notice Cooperative refund relayed by anyone, with the receiver authorizer's signature over the current nonce.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        _requireSignatureOf(
            config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
        );
        _refund(config, channelId, amount);
    }

    /// @notice Starts the payer's timed withdrawal of at most the channel's unclaimed escrow.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        if (amount == 0) revert ZeroAmount();
        if (amount > channel.balance - channel.totalClaimed) revert WithdrawAmountExceedsEscrow();
        PendingWithdrawal storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) revert WithdrawalAlreadyPending();
        pending.amount = amount;
        pending.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp));
    }

    /// @notice Completes a timed withdrawal after `withdrawDelay`, capped at the escrow still unclaimed.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _requirePayerSide(config);
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal memory pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt == 0) revert NoPendingWithdrawal();
        if (block.timestamp < uint256(pending.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();
        delete pendingWithdrawals[channelId];
        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 amount = pending.amount < available ? pending.amount : available;
        if (amount == 0) return;
        channel.balance -= amount;
        _transfer(config.token, config.payer, amount);
        emit Withdrawn(channelId, config.payer, amount);
        if (channel.balance == channel.totalClaimed) emit ChannelClosed(channelId, config);
    }

    function _claimAll(VoucherClaim[] calldata voucherClaims) private {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claimOne(voucherClaims[i]);
        }
    }

    function _claimOne(VoucherClaim calldata row) private {
        ChannelConfig calldata config = row.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        uint128 newTotal = row.totalClaimed;
        if (newTotal <= channel.totalClaimed) return;
        if (newTotal > row.voucher.maxClaimableAmount) revert ClaimExceedsVoucher();
        if (newTotal > channel.balance) revert ClaimExceedsBalance();
        _requireVoucherSignature(config, channelId, row.voucher.maxClaimableAmount, row.signature);
        uint128 delta = newTotal - channel.totalClaimed;
        channel.totalClaimed = newTotal;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(channelId, config.receiver, delta, newTotal);
    }

    /// @dev The nonce advances first, so even a refund that moves nothing invalidates older signatures.
    function _refund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroAmount();
        uint256 nonce = refundNonce[channelId]++;
        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 refunded = amount < available ? amount : available;
        if (refunded == 0) return;
        channel.balance -= refunded;
        PendingWithdrawal storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) {
            if (pending.amount <= refunded) delete pendingWithdrawals[channelId];
            else pending.amount -= refunded;
        }
        _transfer(config.token, config.payer, refunded);
        emit Refunded(channelId, config.payer, refunded, nonce);
        if (channel.balance == channel.totalClaimed) emit ChannelClosed(channelId, config);
    }

    function _requirePayerSide(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer))
        {
            revert Unauthorized();
        }
    }

    function _requireValidConfig(ChannelConfig calldata config) private pure {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0) || config.withdrawDelay < MIN_WITHDRAW_DELAY
                || config.withdrawDelay > MAX_WITHDRAW_DELAY
        ) revert InvalidChannelConfig();
    }

    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSignature("transfer(address,uint256)", to, amount));
        if (!ok || (ret.length != 0 && (ret.length < 32 || abi.decode(ret, (uint256)) != 1))) revert TransferFailed();
    }
}
