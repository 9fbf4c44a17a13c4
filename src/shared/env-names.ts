/**
 * Environment variables that look like Tollbooth's but are not one it reads (`DATABSE_URL`, `FACILITATOR_ULR`,
 * `PAY_T0_EVM`): a typo leaves a setting at its default without a word, so they are named at start-up with the known
 * name closest to each. The known names come from the schemas (src/config/env.ts, src/agent/settings.ts), so a new
 * setting is known as soon as it is added there.
 */

/** An unknown variable that looks like one of ours, and the known name closest to it (when one is close). */
export interface Lookalike {
  name: string;
  closest?: string;
}

/** Prefixes only Tollbooth's settings use: a variable starting with one of them is ours or a typo of ours. */
export const OUR_PREFIXES = [
  'PAY_TO',
  'PAYTO',
  'FACILITATOR',
  'BASE_URL',
  'REMOTE_URL',
  'MCP_',
  'TOLLBOOTH',
  'BUDGET_',
  'WALLET_',
  'PAYMENT_',
  'MPP_',
  'RATE_LIMIT',
  'UPSTREAM_',
  'FAUCET_',
  'SMM_',
  'CDP_API',
  'NETWORKS_',
  'IDEMPOTENCY',
  'SHUTDOWN_',
  'METRICS_',
  'TRANSFERS_',
];

/** Variables of the shell, the OS, Node and common tools that are never ours even when close to one of our names. */
const NOT_OURS = new Set([
  'HOME',
  'PATH',
  'PWD',
  'OLDPWD',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'HOSTNAME',
  'HOSTTYPE',
  'TZ',
  'TMPDIR',
  'TEMP',
  'TMP',
  'CI',
  'COLORTERM',
  'EDITOR',
  'PAGER',
  'MAIL',
  'SHLVL',
  'DISPLAY',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_EXTRA_CA_CERTS',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'NODE_NO_WARNINGS',
  'NODE_DEBUG',
  'NODE_V8_COVERAGE',
  'NODE_CHANNEL_FD',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'FORCE_COLOR',
  'NO_COLOR',
  'DEBUG',
  'INIT_CWD',
  'VISUAL',
  'PS1',
  'SSH_AUTH_SOCK',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'UV_THREADPOOL_SIZE',
]);
/** Prefixes of variables set by npm, locales, desktops, CI systems, test runners and this repository's test harness. */
const NOT_OURS_PREFIXES = [
  'npm_',
  'LC_',
  'XDG_',
  'GITHUB_',
  'RUNNER_',
  'VITEST',
  'VSCODE_',
  'TERM_',
  'SSH_',
  'DBUS_',
  'TOLLBOOTH_TEST_',
  'TOLLBOOTH_MODULE_TRACE',
];

/** The three rows {@link editDistance} works in, kept between calls (it runs once per known name per variable). */
let rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Edit distance with adjacent transpositions counted as one edit (optimal string alignment), computed only up to
 * `max`: anything further answers `max + 1` (so scanning every known name for every variable stays cheap).
 */
export function editDistance(a: string, b: string, max = Math.max(a.length, b.length)): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (rows[0].length <= b.length) rows = [0, 1, 2].map(() => new Int32Array(b.length * 2 + 1)) as typeof rows;
  let [before, previous, current] = rows;
  for (let j = 0; j <= b.length; j += 1) previous[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
      rowMin = Math.min(rowMin, best);
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/** How many edits still make a name look like a known one: 1 for short names (HOME is not HOST), 2 otherwise. */
const nearEnough = (name: string) => (name.length < 6 ? 1 : 2);
/** How many edits still make a known name worth suggesting: a third of the name, at least {@link nearEnough}. */
const suggestable = (name: string) => Math.max(nearEnough(name), Math.floor(name.length / 3));

/** How many times each character occurs in an upper-case name (letters, digits, `_`; anything else counts as `_`). */
function letterCounts(name: string): Uint8Array {
  const counts = new Uint8Array(37);
  for (let i = 0; i < name.length; i += 1) {
    const c = name.charCodeAt(i);
    const slot = c >= 65 && c <= 90 ? c - 65 : c >= 48 && c <= 57 ? c - 22 : 36;
    counts[slot] = counts[slot]! + 1;
  }
  return counts;
}

/**
 * A lower bound of the edit distance from the letter counts: an edit changes them by at most two (a substitution
 * takes one character away and adds another; an insertion or deletion changes one; a transposition none).
 */
function countsBound(a: Uint8Array, b: Uint8Array): number {
  let differ = 0;
  for (let i = 0; i < a.length; i += 1) differ += Math.abs(a[i]! - b[i]!);
  return Math.ceil(differ / 2);
}

/**
 * The known name closest to `name` within `max` edits (in upper case, digits read as the letters they stand for);
 * `knownCounts` holds the {@link letterCounts} of `known`, in the same order.
 */
function closestKnown(
  name: string,
  known: readonly string[],
  knownCounts: readonly Uint8Array[],
  max: number,
): { name: string; distance: number } | undefined {
  const upper = name.toUpperCase();
  // Digits typed for letters (PAY_T0_EVM), and the family names used elsewhere (SVM, SOL, ALGO) for ours.
  const wanted = upper
    .replace(/0/g, 'O')
    .replace(/1/g, 'I')
    .replace(/_(SVM|SOL)(?=_|$)/, '_SOLANA')
    .replace(/_ALGO(?=_|$)/, '_ALGORAND')
    .replace(/_XLM(?=_|$)/, '_STELLAR');
  const forms = wanted === upper ? [upper] : [upper, wanted];
  const formCounts = forms.map(letterCounts);
  let best: { name: string; distance: number } | undefined;
  let bound = max;
  for (let i = 0; i < known.length; i += 1) {
    const candidate = known[i]!;
    let distance = bound + 1;
    for (let j = 0; j < forms.length; j += 1) {
      // Most pairs are far apart: the letter counts rule them out before the table is filled.
      if (Math.abs(forms[j]!.length - candidate.length) > bound || countsBound(formCounts[j]!, knownCounts[i]!) > bound)
        continue;
      distance = Math.min(distance, editDistance(forms[j]!, candidate, bound));
    }
    if (distance <= bound && (!best || distance < best.distance)) {
      best = { name: candidate, distance };
      bound = distance;
    }
  }
  return best;
}

/**
 * The variables of `env` that look like ours but are not in `known`: those starting with one of {@link OUR_PREFIXES}
 * (in any case), and any other within two edits of a known name (one for names under six characters); the shell's,
 * npm's and Node's own variables are never reported. Each comes with the closest known name when it is within a third
 * of its length in edits (or the known names it is the start of).
 */
export function lookalikeVariables(env: NodeJS.ProcessEnv, known: readonly string[]): Lookalike[] {
  const knownSet = new Set(known);
  const knownCounts = known.map(letterCounts);
  const found: Lookalike[] = [];
  for (const name of Object.keys(env).sort()) {
    const upper = name.toUpperCase();
    if (knownSet.has(name) || NOT_OURS.has(upper) || NOT_OURS_PREFIXES.some((p) => name.startsWith(p))) continue;
    const ourPrefix = OUR_PREFIXES.some((prefix) => upper.startsWith(prefix));
    const closest = closestKnown(name, known, knownCounts, ourPrefix ? suggestable(name) : nearEnough(name));
    if (!ourPrefix && !closest) continue;
    // A name that is the start of known ones (BASE_URL for BASE_URL_TOOLS…) is answered with them.
    const longer = known.filter((k) => k.startsWith(`${upper}_`) && !k.endsWith('_FILE'));
    const suggestion = closest ? closest.name : longer.length > 0 ? longer.slice(0, 4).join(' or ') : undefined;
    found.push({ name, ...(suggestion ? { closest: suggestion } : {}) });
  }
  return found;
}

/** The lookalikes said in one sentence: `DATABSE_URL (did you mean DATABASE_URL?), FOO_BAR`. */
export function describeLookalikes(lookalikes: readonly Lookalike[]): string {
  return lookalikes.map((l) => (l.closest ? `${l.name} (did you mean ${l.closest}?)` : l.name)).join(', ');
}
