/**
 * The exports of our own code (src/, tools/, schemas/) that no file of src/, tools/, schemas/ or scripts/ imports.
 * Each is either imported by tests only, used only inside its own file (the `export` is the only thing to drop), or
 * used nowhere at all (dead). An export kept on purpose is listed in RULES below under the rule it falls under
 * (docs/development.md, "Exports"). `node scripts/unused-exports.mjs` prints the dead and test-only exports no rule
 * allows and exits 1 when there is one; `--all` lists every export found, allowed or not.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** The folders whose exports are checked; their imports (and those of scripts/) are the uses that count. */
const CHECKED = ['src', 'tools', 'schemas'];
const USERS = [...CHECKED, 'scripts'];

/** The allowed entries of one rule, as `path: [names]` from a list of `path: name`. */
function byPath(entries) {
  const out = {};
  for (const entry of entries) {
    const [path, name] = entry.split(': ');
    (out[path] ??= []).push(name);
  }
  return out;
}

/**
 * Exports no src/, tools/, schemas/ or scripts/ file imports, kept on purpose, under the rules of docs/development.md
 * ("Exports"). Anything else a test alone imports is made private and tested through its caller, or removed.
 */
export const RULES = {
  /** A value a test must agree with: a limit, a default, a table, a network entry, a wire key, a sentence. */
  agreedValue: [
    'src/agent/catalog.ts: CATALOG_LIMITS',
    'src/agent/chain-check.ts: ALREADY_USED_REASONS',
    'src/agent/mcp.ts: PAYMENT_NOTE_META_KEY',
    'src/config/upstreams.ts: UPSTREAM_DEFAULTS',
    'src/limits/json-body.ts: TURN_BODY_BYTES',
    'src/limits/settings.ts: LIMIT_DEFAULTS',
    'src/payments/mpp/problem.ts: MPP_ERROR_TYPES',
    'src/payments/rails/stellar/network.ts: EXPIRATION_TOLERANCE_LEDGERS',
    'src/pipeline/charge-note.ts: NOTHING_CHARGED',
    'src/providers/chain/settings.ts: PUBLIC_RPC_URLS',
    'src/providers/chain/wallet.ts: STABLECOIN_TRANSFER_GAS',
    'src/providers/market/hyperliquid.ts: INTERVAL_MS',
    'src/providers/smm/panel.ts: PANEL_STATUS_MAP',
    'src/shared/dev-addresses.ts: ZERO_ADDRESSES',
    'src/shared/networks.ts: NetworkEntrySchema',
    'src/shared/networks.ts: STELLAR_PUBNET',
    'src/shared/networks.ts: ALGORAND_MAINNET',
    'src/shared/setting-groups.ts: SERVER_SETTING_GROUPS',
    'src/shared/setting-groups.ts: AGENT_SETTING_GROUPS',
    'src/shared/setting-groups.ts: SHARED_SETTINGS',
    'src/tool/price.ts: ACCEPTS',
    'tools/testnet-fund.ts: DRIPS_PER_DAY',
  ],
  /** A pure unit (a parser, a classifier, a formatter, a sentence) a test checks over more cases than its caller reaches. */
  pureUnit: [
    'src/agent/choose.ts: chooseOption',
    'src/agent/mcp-remote.ts: answerOf',
    'src/agent/mcp.ts: toMcpResult',
    'src/cli/batch-flag.ts: batchSettlementSettings',
    'src/cli/main.ts: usage',
    'src/cli/remote-flags.ts: parseRemoteFlag',
    'src/discovery/home.ts: firstSentence',
    'src/http/body.ts: isJsonContentType',
    'src/limits/limiter.ts: limitedError',
    'src/observe/health.ts: checkReadiness',
    'src/observe/observe.ts: logPaidCall',
    'src/payments/batch/voucher-signer.ts: voucherDigest',
    'src/payments/facilitators/facilitator-support.ts: covers',
    'src/payments/facilitators/facilitator-support.ts: familyOptions',
    'src/payments/facilitators/facilitator-thread.ts: rebuildError',
    'src/payments/ledger/idempotency.ts: paymentIdentifier',
    'src/payments/ledger/verdicts.ts: settlementMessage',
    'src/payments/rails/window.ts: longestWindowSeconds',
    'src/payments/reading/match.ts: matchPayment',
    'src/providers/chain/cdp-faucet.ts: interpretCdpFaucetAnswer',
    'src/providers/chain/transfers.ts: cutToLimit',
    'src/providers/market/defillama-yields.ts: rankPools',
    'src/providers/market/kalshi.ts: eventUrl',
    'src/providers/market/worldbank.ts: messageOf',
    'src/providers/smm/panel.ts: mapPanelStatus',
    'src/store/sql/channels.ts: writeMustBeDurable',
    'src/token-report/risk.ts: top10Concentration',
    'src/token-report/verdict.ts: usd',
    'src/tool/catalog.ts: toolTableMarkdown',
    'src/tool/price.ts: priceSentence',
  ],
  /** A seam a test builds with or names: a factory, a class, the type of what it returns or takes. */
  seam: [
    'src/agent/after-payment.ts: AnswerClass',
    'src/agent/agent.ts: Agent',
    'src/agent/choose.ts: ChoiceRules',
    'src/limits/turns.ts: Turns',
    'src/observe/health.ts: Readiness',
    'src/payments/batch/storage.ts: officialChannelStorage',
    'src/payments/facilitators/facilitator.ts: FacilitatorMode',
    'src/payments/ledger/settled-outbox.ts: OutboxLedger',
    'src/payments/rails/evm/chain.ts: createEvmFacilitatorSigner',
    'src/providers/chain/evm-rpc.ts: createEvmReader',
    'src/providers/chain/transfers.ts: TransferRow',
    'src/providers/chain/transfers.ts: FoundTransfer',
  ],
  /** An entry a thread or a bundle loads by path (its default export), which no file imports. */
  entry: ['src/workers/tool-worker.ts: default'],
};

/** Every allowed export, as `path: [names]`. */
export const ALLOWED = byPath(Object.values(RULES).flat());

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'fixtures' ? [] : walk(path);
    return /\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names (`./x.js` is `./x.ts`), or undefined for a package or a file not ours. */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

const exported = (node) => ts.getModifiers?.(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
const isDefault = (node) => ts.getModifiers?.(node)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ?? false;

/** The names a file exports itself (re-exports are uses of the file they come from). */
function exportsOf(source) {
  const names = [];
  for (const node of source.statements) {
    if (
      ts.isExportDeclaration(node) &&
      !node.moduleSpecifier &&
      node.exportClause &&
      ts.isNamedExports(node.exportClause)
    )
      names.push(...node.exportClause.elements.map((e) => e.name.text));
    if (ts.isExportAssignment(node)) names.push('default');
    if (!exported(node)) continue;
    if (isDefault(node)) {
      names.push('default');
    } else if (ts.isVariableStatement(node)) {
      for (const d of node.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (node.name && ts.isIdentifier(node.name)) {
      names.push(node.name.text);
    }
  }
  return names;
}

/** Every use a file makes of another of our files: `[file, name]`, name `*` for a namespace or dynamic import. */
function usesOf(file, source, base) {
  const uses = [];
  const add = (specifier, names) => {
    const target = resolveSpecifier(file, specifier);
    if (target) for (const name of names) uses.push([relative(base, target), name]);
  };
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const specifier = node.moduleSpecifier.text;
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        const names = [];
        if (clause?.name) names.push('default');
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) names.push('*');
        if (bindings && ts.isNamedImports(bindings))
          names.push(...bindings.elements.map((e) => (e.propertyName ?? e.name).text));
        add(specifier, names);
      } else {
        const clause = node.exportClause;
        add(
          specifier,
          clause && ts.isNamedExports(clause) ? clause.elements.map((e) => (e.propertyName ?? e.name).text) : ['*'],
        );
      }
    }
    // import('./x.js') and typeof import('./x.js'): every export may be used.
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, ['*']);
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      add(node.argument.literal.text, ['*']);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

/** How many times each identifier appears in a file (a declaration counts once). */
function identifierCounts(source) {
  const counts = new Map();
  const visit = (node) => {
    if (ts.isIdentifier(node)) counts.set(node.text, (counts.get(node.text) ?? 0) + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return counts;
}

const parse = (file) => ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);

/** `{ dead, ownFileOnly, testsOnly }`: lists of `path: name` among the exports no src/tools/schemas/scripts file imports. */
export function unusedExports(base = root) {
  const used = new Map();
  const note = (into, [file, name]) => into.set(file, (into.get(file) ?? new Set()).add(name));
  const sources = new Map();
  for (const file of USERS.flatMap((dir) => walk(join(base, dir)))) {
    const source = parse(file);
    sources.set(relative(base, file), source);
    for (const use of usesOf(file, source, base)) note(used, use);
  }
  const tested = new Map();
  for (const file of walk(join(base, 'test'))) for (const use of usesOf(file, parse(file), base)) note(tested, use);
  const result = { dead: [], ownFileOnly: [], testsOnly: [] };
  for (const [path, source] of sources) {
    if (!CHECKED.some((dir) => path.startsWith(`${dir}/`))) continue;
    const uses = used.get(path) ?? new Set();
    if (uses.has('*')) continue;
    const counts = identifierCounts(source);
    for (const name of exportsOf(source)) {
      if (uses.has(name)) continue;
      const entry = `${path}: ${name}`;
      const byTests = tested.get(path);
      if (byTests?.has(name) || byTests?.has('*')) result.testsOnly.push(entry);
      else if (name !== 'default' && (counts.get(name) ?? 0) > 1) result.ownFileOnly.push(entry);
      else result.dead.push(entry);
    }
  }
  return result;
}

/** The entries of `list` not allowed by ALLOWED. */
export function notAllowed(list) {
  return list.filter((entry) => {
    const [path, name] = entry.split(': ');
    return !(ALLOWED[path] ?? []).includes(name);
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { dead, ownFileOnly, testsOnly } = unusedExports();
  const all = process.argv.includes('--all');
  const refused = { dead: notAllowed(dead), testsOnly: notAllowed(testsOnly) };
  for (const [kind, list] of Object.entries({ dead, testsOnly })) {
    console.log(`${kind}: ${list.length} (${refused[kind].length} not allowed)`);
    for (const entry of all ? list : refused[kind]) console.log(`  ${entry}`);
  }
  // Exported but imported by no file at all, used inside their own: the `export` is only a reader's hint; not refused.
  console.log(`exported, used only in their own file: ${ownFileOnly.length}${all ? '' : ' (--all lists them)'}`);
  if (all) for (const entry of ownFileOnly) console.log(`  ${entry}`);
  process.exit(refused.dead.length + refused.testsOnly.length > 0 ? 1 : 0);
}
