import { randomBytes } from 'node:crypto';

/** How this server speaks the Machine Payments Protocol (`WWW-Authenticate: Payment` beside x402). */
export interface MppSettings {
  /** MPP=on (default) or off: off, no MPP challenge is offered and `Authorization: Payment` is refused. */
  enabled: boolean;
  /** Key of the challenge-id HMAC (MPP_SECRET_KEY / MPP_SECRET_KEY_FILE; ≥ 32 bytes). Never log it. */
  secretKey: string;
  /** True when no key was configured and a random one was made for this process (challenges die with it). */
  ephemeralKey: boolean;
  /** Protection space named in every challenge (MPP_REALM; default: the host of the tools base URL). */
  realm: string;
  /** True when NODE_ENV=production runs MPP without a shared key: a server refuses to start (an agent does not care). */
  sharedKeyMissing: boolean;
}

/** Why a server cannot start with these settings, said for the operator (never quoting the key), or undefined. */
export function mppStartProblem(settings: MppSettings): string | undefined {
  if (!settings.sharedKeyMissing) return undefined;
  return 'MPP_SECRET_KEY (or MPP_SECRET_KEY_FILE) is required when NODE_ENV=production and MPP is on: every instance and restart must sign MPP challenges with the same key of at least 32 bytes (openssl rand -base64 32). Set MPP=off to offer x402 only.';
}

/** Fewest bytes of a challenge key (the size mppx asks for). */
export const MPP_MIN_KEY_BYTES = 32;

/** The MPP variables as the environment schema parsed them. */
export interface MppEnv {
  MPP?: 'on' | 'off';
  MPP_SECRET_KEY?: string;
  MPP_REALM?: string;
}

/**
 * The MPP settings of a process; throws a message naming the variable (never its value) for a key that is too short.
 * Without a key, a random one of this process is used (a server in production refuses that: {@link mppStartProblem}).
 */
export function mppSettings(env: MppEnv, production: boolean, baseUrl: string): MppSettings {
  const enabled = env.MPP !== 'off';
  const configured = env.MPP_SECRET_KEY;
  if (configured !== undefined && Buffer.byteLength(configured, 'utf8') < MPP_MIN_KEY_BYTES) {
    throw new Error(
      `MPP_SECRET_KEY must be at least ${MPP_MIN_KEY_BYTES} bytes (generate one with: openssl rand -base64 32)`,
    );
  }
  const secretKey = configured ?? randomBytes(32).toString('base64');
  const ephemeralKey = configured === undefined;
  return {
    enabled,
    secretKey,
    ephemeralKey,
    realm: env.MPP_REALM ?? new URL(baseUrl).host,
    sharedKeyMissing: enabled && production && ephemeralKey,
  };
}
