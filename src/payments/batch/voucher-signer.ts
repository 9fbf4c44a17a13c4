/**
 * Who signed a batch-settlement voucher, recovered with libsecp256k1 (Bitcoin Core's library, through the prebuilt
 * N-API binding of the `secp256k1` package): about 50 times less CPU than the pure-JavaScript recovery viem uses,
 * which was a third of a voucher call's CPU. Where the platform has no prebuilt binary the binding does not load and
 * {@link voucherSigner} answers `undefined`, so the caller keeps the official (viem) check.
 */
import { keccak_256 } from '@noble/hashes/sha3';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { getTypesForEIP712Domain, hashDomain, type TypedDataDomain } from 'viem';
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
  const digest = voucherDigest(message, chainId);
  if (!digest) return false;
  let publicKey: Uint8Array;
  try {
    publicKey = secp.ecdsaRecover(bytes.subarray(0, 64), recoveryId, digest, false);
  } catch {
    return false;
  }
  const hash = keccak_256(publicKey.subarray(1));
  return '0x' + Buffer.from(hash.subarray(12)).toString('hex');
}

/** `keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)")`, from the scheme's own type list. */
const VOUCHER_TYPE_HASH = keccak_256(
  Buffer.from(`Voucher(${voucherTypes.Voucher.map((f) => `${f.type} ${f.name}`).join(',')})`, 'utf8'),
);

/** The EIP-712 domain separator of the batch-settlement contract on each chain seen (a handful at most). */
const domainSeparators = new Map<number, Buffer>();

function domainSeparator(chainId: number): Buffer {
  let separator = domainSeparators.get(chainId);
  if (!separator) {
    const domain: TypedDataDomain = {
      ...BATCH_SETTLEMENT_DOMAIN,
      chainId,
      verifyingContract: BATCH_SETTLEMENT_ADDRESS as `0x${string}`,
    };
    separator = Buffer.from(
      hashDomain({ domain, types: { EIP712Domain: getTypesForEIP712Domain({ domain }) } } as never).slice(2),
      'hex',
    );
    domainSeparators.set(chainId, separator);
  }
  return separator;
}

const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;
const UINT128_MAX = (1n << 128n) - 1n;

/**
 * The EIP-712 digest a voucher's signature signs (the same bytes as viem's `hashTypedData` of the scheme's voucher
 * type, with the domain separator computed once per chain); undefined when a field is not of its type.
 */
export function voucherDigest(message: Omit<VoucherMessage, 'signature'>, chainId: number): Buffer | undefined {
  if (!CHANNEL_ID.test(message.channelId) || !/^[0-9]{1,39}$/.test(message.maxClaimableAmount)) return undefined;
  const amount = BigInt(message.maxClaimableAmount);
  if (amount > UINT128_MAX) return undefined;
  const struct = Buffer.alloc(96);
  struct.set(VOUCHER_TYPE_HASH, 0);
  struct.write(message.channelId.slice(2), 32, 'hex');
  struct.write(amount.toString(16).padStart(64, '0'), 64, 'hex');
  const signed = Buffer.alloc(66);
  signed.write('1901', 0, 'hex');
  signed.set(domainSeparator(chainId), 2);
  signed.set(keccak_256(struct), 34);
  return Buffer.from(keccak_256(signed));
}
