/**
 * The agent's secrets, which its logs and command-line output blank in every encoding (src/shared/redact.ts): the
 * values of its secret-named settings (wallet keys and mnemonics, tokens), the secret parts of its URLs (DATABASE_URL,
 * REMOTE_URL*, AGENT_DISCOVERY_URLS, the network table's RPC URLs) and the bytes of each parsed wallet key and seed.
 */
import { stellarSeedBytes } from '../shared/keys.js';
import type { NetworkEntry } from '../shared/networks.js';
import { urlSecrets, variableSecrets, type Secret } from '../shared/redact.js';

/** The parsed wallet keys (settings.ts `WalletKeys`), one per network family. */
interface Wallets {
  evm?: string;
  svm?: Uint8Array;
  stellar?: string;
  algorand?: Uint8Array;
}

/** Bytes of each wallet key: the whole secret key and the seed it starts with (Solana, Algorand), and Stellar's seed. */
function walletBytes(wallets: Wallets): Uint8Array[] {
  const out: Uint8Array[] = [];
  if (wallets.evm) out.push(Buffer.from(wallets.evm.slice(2), 'hex'));
  for (const key of [wallets.svm, wallets.algorand]) if (key) out.push(key, key.slice(0, 32));
  if (wallets.stellar) out.push(stellarSeedBytes(wallets.stellar));
  return out;
}

/** Every secret of the agent's configuration: `env` after *_FILE was read, its parsed wallets and network table. */
export function agentSecrets(
  env: Readonly<Record<string, string | undefined>>,
  wallets: Wallets,
  networks: readonly NetworkEntry[],
): Secret[] {
  const out: Secret[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    out.push(...variableSecrets(name, value));
    // A mnemonic as its words, however they are spaced or quoted when echoed.
    if (name.endsWith('MNEMONIC')) out.push({ words: value.trim().split(/\s+/) });
  }
  for (const network of networks) if (network.rpcUrl) out.push(...urlSecrets(network.rpcUrl));
  return [...out, ...walletBytes(wallets)];
}
