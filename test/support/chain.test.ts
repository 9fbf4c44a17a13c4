import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { authorizationTypes, eip3009ABI, toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { type Hex, createPublicClient, createWalletClient, parseAbi, publicActions, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalChain, startLocalChain } from './chain/node.js';
import {
  BASE_SEPOLIA_USDC as USDC,
  balanceOf,
  deployMulticall3IfNeeded,
  deployTestUsdc,
  localTransport,
  localViemChain,
  mint,
  testUsdcAbi,
} from './chain/token.js';

const TEN_USDC = 10_000_000n;
const cancelAbi = parseAbi(['function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)']);
const cancelTypes = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

describe('local chain with TestUSDC at the Base Sepolia USDC address', () => {
  let chain: LocalChain;
  let blockAtStart: bigint;
  let requirements: PaymentRequirements;
  let payload: PaymentPayload;
  let facilitator: x402Facilitator;

  const payer = () => chain.accounts[1]!;
  const payTo = () => chain.accounts[2]!;
  const wallet = (index: number) =>
    createWalletClient({
      account: privateKeyToAccount(chain.accounts[index]!.privateKey),
      chain: localViemChain(chain),
      transport: localTransport(chain),
      pollingInterval: 50,
    }).extend(publicActions);
  const pay = (privateKey: Hex) =>
    new x402Client()
      .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(privateKey)))
      .createPaymentPayload({
        x402Version: 2,
        resource: { url: 'http://127.0.0.1/x' },
        accepts: [requirements],
      });

  beforeAll(async () => {
    chain = await startLocalChain({ chainId: 84532 });
    blockAtStart = await createPublicClient({ transport: localTransport(chain) }).getBlockNumber();
    await deployMulticall3IfNeeded(chain);
    await deployTestUsdc(chain, { name: 'USDC', version: '2', at: USDC });
    await mint(chain, USDC, payer().address, TEN_USDC);

    requirements = {
      scheme: 'exact',
      network: 'eip155:84532',
      asset: USDC,
      amount: '1000',
      payTo: payTo().address,
      maxTimeoutSeconds: 300,
      extra: { name: 'USDC', version: '2' },
    };
    payload = await pay(payer().privateKey);

    const facilitatorWallet = wallet(3);
    // viem's verifyTypedData wants literal EIP-712 types; x402's signer passes a plain record.
    const signer = toFacilitatorEvmSigner({
      ...facilitatorWallet,
      address: facilitatorWallet.account.address,
      verifyTypedData: (args) => facilitatorWallet.verifyTypedData(args as never),
    });
    facilitator = new x402Facilitator().register('eip155:84532', new ExactEvmFacilitatorScheme(signer));
  });

  afterAll(async () => {
    await chain?.stop();
  });

  it('starts a fresh hardhat node that answers on loopback, at genesis until the test deploys', async () => {
    const reader = createPublicClient({ transport: localTransport(chain) });
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await reader.getChainId()).toBe(84532);
    expect(blockAtStart).toBe(0n);
  });

  it('serves the token at the fixed address with the domain baked into its bytecode', async () => {
    const reader = createPublicClient({ transport: localTransport(chain) });
    const read = (functionName: 'name' | 'version' | 'decimals') =>
      reader.readContract({ address: USDC, abi: testUsdcAbi, functionName });
    expect(await read('name')).toBe('USDC');
    expect(await read('version')).toBe('2');
    expect(await read('decimals')).toBe(6);
    expect(await balanceOf(chain, USDC, payer().address)).toBe(TEN_USDC);
  });

  it('lets the official x402 facilitator verify the official client payload', async () => {
    const result = await facilitator.verify(payload, requirements);
    expect(result).toMatchObject({ isValid: true, payer: payer().address });
  });

  it('settles on chain, moving exactly the required amount from payer to payTo', async () => {
    const payerBefore = await balanceOf(chain, USDC, payer().address);
    const payToBefore = await balanceOf(chain, USDC, payTo().address);

    const result = await facilitator.settle(payload, requirements);

    expect(result.success, result.errorMessage ?? result.errorReason).toBe(true);
    expect(result.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balanceOf(chain, USDC, payer().address)).toBe(payerBefore - 1000n);
    expect(await balanceOf(chain, USDC, payTo().address)).toBe(payToBefore + 1000n);
  });

  it('refuses to settle the same payload twice because its nonce is used', async () => {
    const result = await facilitator.settle(payload, requirements);
    expect(result.success).toBe(false);
    expect(result.errorReason).toBe('invalid_exact_evm_nonce_already_used');
  });

  it('reports a used nonce on re-verify through the Multicall3 diagnostics', async () => {
    const result = await facilitator.verify(payload, requirements);
    expect(result).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_nonce_already_used',
    });
  });

  it('rejects a payer without enough balance as insufficient_balance', async () => {
    const result = await facilitator.verify(await pay(chain.accounts[5]!.privateKey), requirements);
    expect(result).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_insufficient_balance',
    });
  });

  it('accepts the bytes-signature overload and honours cancelAuthorization', async () => {
    const owner = privateKeyToAccount(payer().privateKey);
    const relayer = wallet(0);
    const domain = { name: 'USDC', version: '2', chainId: chain.chainId, verifyingContract: USDC };
    const now = BigInt(Math.floor(Date.now() / 1000));
    const transferWithSignatureBytes = async (nonce: Hex) => {
      const auth = {
        from: owner.address,
        to: payTo().address,
        value: 7n,
        validAfter: now - 60n,
        validBefore: now + 300n,
        nonce,
      };
      const signature = await owner.signTypedData({
        domain,
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: auth,
      });
      const { from, to, value, validAfter, validBefore } = auth;
      return relayer.writeContract({
        address: USDC,
        abi: eip3009ABI,
        functionName: 'transferWithAuthorization',
        args: [from, to, value, validAfter, validBefore, nonce, signature],
      });
    };
    const before = await balanceOf(chain, USDC, payTo().address);
    const hash = await transferWithSignatureBytes(toHex(1n, { size: 32 }));
    expect((await relayer.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await balanceOf(chain, USDC, payTo().address)).toBe(before + 7n);

    const cancelled = toHex(2n, { size: 32 });
    const cancelSignature = await owner.signTypedData({
      domain,
      types: cancelTypes,
      primaryType: 'CancelAuthorization',
      message: { authorizer: owner.address, nonce: cancelled },
    });
    await relayer.waitForTransactionReceipt({
      hash: await relayer.writeContract({
        address: USDC,
        abi: cancelAbi,
        functionName: 'cancelAuthorization',
        args: [owner.address, cancelled, cancelSignature],
      }),
    });
    const state = await relayer.readContract({
      address: USDC,
      abi: testUsdcAbi,
      functionName: 'authorizationState',
      args: [owner.address, cancelled],
    });
    expect(state).toBe(true);
    await expect(transferWithSignatureBytes(cancelled)).rejects.toThrow(/used or canceled/);
  });
});
