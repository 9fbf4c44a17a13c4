import { rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { agentDataDir, errorOf, spawnAgent, type AgentProcess } from '../support/agent.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A TCP proxy in front of the server that, while armed, lets a paid request (one carrying PAYMENT-SIGNATURE, or over
 * MCP a tools/call with `_meta["x402/payment"]`) reach the server and then cuts the connection as soon as the answer
 * starts coming back: the server has run the tool and settled, the client never sees the answer.
 */
interface CuttingProxy {
  url: string;
  /** Cuts the answers of the next `n` paid requests. */
  cut(n: number): void;
  /** Paid requests whose answer was cut so far. */
  cutCount(): number;
  close(): Promise<void>;
}

async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  let armed = 0;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let cutting = false;
    client.on('data', (chunk: Buffer) => {
      if (armed > 0 && /\r\npayment-signature:|"x402\/payment":/i.test(chunk.toString('latin1'))) {
        armed--;
        cutting = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cutting) {
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: (n) => void (armed = n),
    cutCount: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const args = { payment: 250, ratePerPeriod: 0.04, periods: 12 };
const PRICE = 1000n;

let paid: PaidEnvironment;
let server: TestServer;
let proxy: CuttingProxy;
let runs: Map<string, number>;
const dirs: string[] = [];
const agents: AgentProcess[] = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(paid.env, { tools: counted.tools });
  proxy = await startCuttingProxy(server.url);
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await proxy?.close();
  await server?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function agentFor(i: number): Promise<AgentProcess> {
  const dataDir = agentDataDir();
  dirs.push(dataDir);
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey;
  const agent = await spawnAgent(['--remote', proxy.url], {
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
  });
  agents.push(agent);
  return agent;
}

describe('never paying twice when the answer is lost', () => {
  it('re-sends the same payment after the connection drops: the stored result comes back and the balance dropped once', async () => {
    const agent = await agentFor(0);
    const payer = paid.payers[0]!.address;
    const before = { balance: await paid.balance(payer), runs: runs.get('annuity') ?? 0, cuts: proxy.cutCount() };
    proxy.cut(1);
    const result = await agent.client.callTool({ name: 'annuity', arguments: args });
    expect(proxy.cutCount()).toBe(before.cuts + 1);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ type: 'ordinary', presentValue: expect.any(Number) });
    expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true, network: LOCAL_NETWORK });
    expect(await paid.balance(payer)).toBe(before.balance - PRICE);
    expect(runs.get('annuity')).toBe(before.runs + 1);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: Array<{ status: string }>;
    };
    expect(history.payments.map((p) => p.status)).toEqual(['settled']);
  });

  it('pays once for two identical calls made at once (a host retrying a call still running), and both get the result', async () => {
    const agent = await agentFor(2);
    const payer = paid.payers[2]!.address;
    const before = { balance: await paid.balance(payer), runs: runs.get('annuity') ?? 0 };
    const [first, second] = await Promise.all(
      [0, 1].map(() => agent.client.callTool({ name: 'annuity', arguments: { ...args, periods: 14 } })),
    );
    expect(first!.isError).toBeFalsy();
    expect(second!.structuredContent).toEqual(first!.structuredContent);
    expect(second!._meta?.['x402/payment-response']).toEqual(first!._meta?.['x402/payment-response']);
    expect(await paid.balance(payer)).toBe(before.balance - PRICE);
    expect(runs.get('annuity')).toBe(before.runs + 1);
  });

  it('keeps a payment whose answer never arrives pending, and the same call later collects its result with that very payment', async () => {
    const agent = await agentFor(1);
    const payer = paid.payers[1]!.address;
    const before = { balance: await paid.balance(payer), runs: runs.get('annuity') ?? 0 };
    proxy.cut(100);
    const lost = await agent.client.callTool({ name: 'annuity', arguments: { ...args, periods: 13 } });
    proxy.cut(0);
    expect(errorOf(lost)).toMatchObject({ code: 'payment_pending', retryable: true });
    expect(errorOf(lost).message).toMatch(
      /call annuity again with the same input later to receive the result; the very same payment is re-sent, never a new one/,
    );
    expect(lost._meta?.['tollbooth/payment']).toMatchObject({ status: 'pending', spentToday: '$0.001' });
    expect(await paid.balance(payer)).toBe(before.balance - PRICE);

    const again = await agent.client.callTool({ name: 'annuity', arguments: { ...args, periods: 13 } });
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ type: 'ordinary' });
    expect(again._meta?.['tollbooth/payment']).toMatchObject({
      status: 'settled',
      spentToday: '$0.001',
      paymentId: (lost._meta?.['tollbooth/payment'] as { paymentId: string }).paymentId,
    });
    expect(await paid.balance(payer)).toBe(before.balance - PRICE);
    expect(runs.get('annuity')).toBe(before.runs + 1);
  });
});
