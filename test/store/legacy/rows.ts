/**
 * One row of each kind of state a store of the release before the shared migration list held, as plain values: the
 * legacy fixtures write them in that release's formats, the forward-migration test reads them back with today's code.
 */
const hour = (h: number) => `2025-03-0${1 + Math.floor(h / 24)}T${String(h % 24).padStart(2, '0')}:00:00.000Z`;
const payload = { x402Version: 2, payload: { signature: '0xsig', authorization: { nonce: '0x01', value: '1000' } } };
const requirements = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '1000',
  extra: { name: 'USD Coin', version: '2' },
};

/** The rows, by table; `expiresAt` of idempotency records lies far ahead so they are still live when read back. */
export const LEGACY_ROWS = {
  claims: [
    { key: 'claimed-1', status: 'claimed', details: { payload, requirements, requestHash: 'sha256:c1' } },
    {
      key: 'pending-1',
      status: 'pending',
      transaction: '0xpending',
      details: { payload, requirements, requestHash: 'sha256:p1' },
      output: { presentValue: 772.17, rows: [{ n: 1 }], note: null },
    },
    {
      key: 'spent-after-pending',
      status: 'spent',
      transaction: '0xlate',
      details: { payload, requirements, requestHash: 'sha256:s1' },
      output: { z: 1, a: [3, 2, 1] },
    },
    { key: 'spent-1', status: 'spent', transaction: '0xspent', protocol: 'mpp' },
  ].map((c, i) => ({
    tool: 'annuity',
    network: 'eip155:8453',
    payer: '0xPayer',
    amount: '1000',
    transport: i % 2 ? 'mcp' : 'http',
    protocol: 'x402',
    createdAt: hour(i),
    updatedAt: hour(i + 1),
    transaction: undefined as string | undefined,
    output: undefined as unknown,
    details: undefined as { payload: unknown; requirements: unknown; requestHash: string } | undefined,
    ...c,
  })),
  receipts: [
    { key: 'spent-1', status: 'settled', transaction: '0xspent', protocol: 'mpp', transport: 'http' },
    { key: 'spent-after-pending', status: 'settled', transaction: '0xlate', protocol: 'x402', transport: 'mcp' },
    {
      key: 'failed-1',
      status: 'failed',
      transaction: '',
      errorReason: 'insufficient_funds',
      protocol: 'x402',
      transport: 'http',
    },
  ].map((r, i) => ({
    tool: 'annuity',
    network: 'eip155:8453',
    payer: '0xPayer',
    amount: '1000',
    createdAt: hour(10 + i),
    errorReason: undefined as string | undefined,
    ...r,
  })),
  idempotency: [
    { id: 'idem_inflight_0123456789', status: 'in_flight', result: undefined as unknown },
    {
      id: 'idem_done_0123456789abcd',
      status: 'done',
      result: { output: { presentValue: 1 }, receipt: { success: true, transaction: '0xspent' } },
    },
  ].map((i) => ({
    tool: 'annuity',
    requestHash: `sha256:${i.id}`,
    paymentKey: 'spent-1',
    createdAt: hour(20),
    expiresAt: '2999-01-01T00:00:00.000Z',
    ...i,
  })),
  drips: [{ subject: 'base-sepolia:0xabc', day: '2025-03-01', count: 1 }],
  orders: [
    {
      orderId: '23501',
      serviceId: 1,
      link: 'https://example.com/p',
      quantity: 100,
      chargeUsd: 3.25,
      status: 'ordered',
      payer: '0xabc',
      paymentKey: 'spent-1',
      createdAt: '2025-03-01T06:00:00.000Z',
      updatedAt: '2025-03-01T07:00:00.000Z',
    },
  ],
  spends: [
    {
      id: 'spend_settled',
      status: 'settled',
      usdMicros: 3000,
      payer: '0xPayer',
      transaction: '0xa',
      paymentId: 'pay_0123456789abcdef',
      protocol: 'mpp',
    },
    {
      id: 'spend_pending',
      status: 'pending',
      usdMicros: 2000,
      note: 'no answer',
      payload: { x402Version: 2, payload: { signature: '0xb', list: [1, 'two'] } },
    },
    { id: 'spend_cancelled', status: 'cancelled', usdMicros: 4000, note: 'refused' },
  ].map((s, i) => ({
    day: '2025-03-01',
    tool: 'annuity',
    resource: 'https://tollbooth.example/api/annuity',
    requestHash: `sha256:${s.id}`,
    network: 'eip155:8453',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    amount: String(s.usdMicros),
    protocol: 'x402',
    createdAt: hour(30 + i),
    updatedAt: hour(31 + i),
    paymentId: undefined as string | undefined,
    payer: undefined as string | undefined,
    transaction: undefined as string | undefined,
    note: undefined as string | undefined,
    payload: undefined as unknown,
    ...s,
  })),
  /** A bucket of capacity 3 refilling 1 per second, with two tokens taken at `bucketNow`. */
  buckets: [{ key: 'ip:legacy', tat: 1_700_000_002_000 }],
  bucketNow: 1_700_000_000_000,
};
