import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTokenDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { SolanaHistory } from './solana-history.js';

/** Lamports in one SOL. */
export const LAMPORTS_PER_SOL = 1_000_000_000n;

/**
 * An in-process Solana ledger (litesvm: the real SVM with the real SPL Token, Associated Token and Memo
 * programs) plus the few set-up steps the payment tests need, each a real signed transaction.
 */
export class SolanaLedger {
  readonly svm: LiteSVM;
  /** The transactions that landed (set-up and sent through the RPC look-alike), for the history RPC methods. */
  readonly history: SolanaHistory;
  /** Pays the set-up transactions (creating mints and token accounts); owns nothing else. */
  private constructor(readonly admin: KeyPairSigner) {
    this.svm = new LiteSVM().withSigverify(true).withBlockhashCheck(true);
    this.history = new SolanaHistory(this.svm);
    this.svm.airdrop(admin.address, lamports(1_000n * LAMPORTS_PER_SOL));
  }

  /** A fresh ledger with a funded set-up account. */
  static async create(): Promise<SolanaLedger> {
    return new SolanaLedger(await generateKeyPairSigner());
  }

  /** Sends set-up instructions signed by the admin and the signers inside them; throws with the ledger's reason on failure. */
  async execute(instructions: Instruction[]): Promise<void> {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(this.admin, m),
      (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const tx = await signTransactionMessageWithSigners(message);
    const { result, land } = this.history.around(tx, () => this.svm.sendTransaction(tx));
    if (result instanceof FailedTransactionMetadata) {
      throw new Error(`ledger set-up transaction failed: ${result.toString()}\n${result.meta().prettyLogs()}`);
    }
    land(null, { logs: result.logs(), unitsConsumed: Number(result.computeUnitsConsumed()) });
  }

  /** Creates an SPL Token mint with the given decimals; the admin is its mint authority. */
  async createMint(decimals: number): Promise<Address> {
    const mint = await generateKeyPairSigner();
    const space = BigInt(getMintSize());
    await this.execute([
      getCreateAccountInstruction({
        payer: this.admin,
        newAccount: mint,
        lamports: this.svm.minimumBalanceForRentExemption(space),
        space,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: this.admin.address }),
    ]);
    return mint.address;
  }

  /** The associated token account of `owner` for `mint` (SPL Token program). */
  async ata(owner: Address, mint: Address): Promise<Address> {
    const [address] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return address;
  }

  /** Creates `owner`'s associated token account for `mint` (idempotent) and mints `amount` base units to it. */
  async fund(owner: Address, mint: Address, amount = 0n): Promise<Address> {
    const ata = await this.ata(owner, mint);
    const instructions: Instruction[] = [
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.admin, ata, owner, mint }),
    ];
    if (amount > 0n) instructions.push(getMintToInstruction({ mint, token: ata, mintAuthority: this.admin, amount }));
    await this.execute(instructions);
    return ata;
  }

  /** Gives an account lamports (for fees). */
  airdrop(to: Address, amount: bigint): void {
    const result = this.svm.airdrop(to, lamports(amount));
    if (!result || result instanceof FailedTransactionMetadata) throw new Error(`airdrop to ${to} failed`);
  }

  /** Token balance of `owner` for `mint` in base units (0 when the token account does not exist). */
  async tokenBalance(owner: Address, mint: Address): Promise<bigint> {
    const account = this.svm.getAccount(await this.ata(owner, mint));
    if (!account.exists) return 0n;
    return getTokenDecoder().decode(account.data).amount;
  }

  /** Lamport balance of an account (0 when it does not exist). */
  lamports(of: Address): bigint {
    return this.svm.getBalance(of) ?? 0n;
  }
}
