/**
 * Who signed a batch-settlement voucher, recovered with libsecp256k1 (Bitcoin Core's library, through the prebuilt
 * N-API binding of the `secp256k1` package): about 50 times less CPU than the pure-JavaScript recovery viem uses,
 * which was a third of a voucher call's CPU. Where the platform has no prebuilt binary the binding does not load and
 * {@link voucherSigner} answers `undefined`, so the caller keeps the official (viem) check.
 */
import { keccak_256 } from '@noble/hashes/sha3';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { hashTypedData } from 'viem';
import { lazyRequire } from '../../shared/lazy.js';

/** The part of the `secp256k1` binding used here. */
interface Secp256k1 {
  ecdsaRecover(signature: Uint8Array, recoveryId: number, digest: Uint8Array, compressed: boolean): Uint8Array;
}

/** The binding, loaded at the first voucher; `null` where it cannot load (no prebuilt binary for the platform). */
const binding = lazyRequire<Secp256k1 | null>('secp256k1/bindings');

function loadBinding(): Secp256k1 | null {
  try {
    return binding();
  } catch {
    return null;
  }
}

/** The fields of a voucher's EIP-712 message. */
export interface VoucherMessage {
  channelId: `0x${string}`;
  maxClaimableAmount: string;
  signature: string;
}

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/**
 * The address (lowercase) that signed the voucher on the chain `chainId`; `false` when the signature is malformed or
 * recovers no key; `undefined` when the native binding is not available here (then nothing was checked).
 */
export function voucherSigner(message: VoucherMessage, chainId: number): string | false | undefined {
  const secp = loadBinding();
  if (!secp) return undefined;
  if (!SIGNATURE.test(message.signature)) return false;
  const bytes = Buffer.from(message.signature.slice(2), 'hex');
  const v = bytes[64]!;
  const recoveryId = v >= 27 ? v - 27 : v;
  if (recoveryId !== 0 && recoveryId !== 1) return false;
  const digest = hashTypedData({
    domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS as `0x${string}` },
    types: voucherTypes,
    primaryType: 'Voucher',
    message: { channelId: message.channelId, maxClaimableAmount: BigInt(message.maxClaimableAmount) },
  });
  let publicKey: Uint8Array;
  try {
    publicKey = secp.ecdsaRecover(bytes.subarray(0, 64), recoveryId, Buffer.from(digest.slice(2), 'hex'), false);
  } catch {
    return false;
  }
  const hash = keccak_256(publicKey.subarray(1));
  return '0x' + Buffer.from(hash.subarray(12)).toString('hex');
}
