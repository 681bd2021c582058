/**
 * The Terra receiver (api/routes/terra.ts) in front of a real listener, with a pool that records what it is asked
 * and a logger that keeps every line: a refused delivery stores nothing and is logged with its reason and size, never
 * with a byte of its body; an accepted one is one sealed insert; without a signing secret every delivery is 503.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { createApp, type AppDeps } from '../../api/app';
import { newMasterKey } from '../../platform/crypto/master-key';
import { processRegistry } from '../../platform/metrics';
import { parsePrometheusText, total } from '../support/prometheus';
import { nowSeconds, terraSignature, TERRA_TEST_SECRET } from '../support/terra-delivery';

const SENSITIVE = 'resting_hr_bpm_61_unique_marker';
const BODY = JSON.stringify({
  type: 'daily',
  user: { user_id: 'u-1', provider: 'GARMIN', reference_id: 'usr_x' },
  data: [{ note: SENSITIVE }],
});

interface Harness {
  url: string;
  lines: string[];
  queries: { text: string; values: unknown[] }[];
  close(): Promise<void>;
}

async function start(signingSecret: string | null): Promise<Harness> {
  const lines: string[] = [];
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  const queries: Harness['queries'] = [];
  const pool = {
    query: async (text: string, values: unknown[]) => {
      queries.push({ text, values });
      return { rows: [{ id: values[0] }], rowCount: 1 };
    },
  } as unknown as Pool;
  const master = newMasterKey();
  const app = createApp({
    pool,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    bodyLimitBytes: 1024,
    terraReceiver: {
      keyring: { current: master, byId: (id: string) => (id === master.id ? master.key : undefined) },
      terra: { signingSecret, toleranceSeconds: 300, maxBodyBytes: 4096 },
    },
  } as unknown as AppDeps);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lines,
    queries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const post = (h: Harness, body: string, signature?: string) =>
  fetch(`${h.url}/webhooks/terra`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(signature ? { 'terra-signature': signature } : {}) },
    body,
  });

const counted = async (outcome: string) =>
  total(parsePrometheusText(await processRegistry().metrics()), 'amy_terra_events_total', { outcome });

test('a refused delivery stores nothing, is counted, and its log line has the reason and the size, not the body', async () => {
  const h = await start(TERRA_TEST_SECRET);
  const refusedBefore = await counted('refused_signature');
  try {
    const bad = await post(h, BODY, terraSignature(BODY, nowSeconds(), 'another secret'));
    expect(bad.status).toBe(401);
    const stale = await post(h, BODY, terraSignature(BODY, nowSeconds() - 3600));
    expect(stale.status).toBe(401);
    const unsigned = await post(h, BODY);
    expect(unsigned.status).toBe(401);
    const big = 'x'.repeat(5000);
    expect((await post(h, big, terraSignature(big, nowSeconds()))).status).toBe(413);
    expect(h.queries).toEqual([]);
    expect(h.lines.filter((l) => l.includes('terra event refused'))).toEqual([
      expect.stringContaining('"reason":"mismatch"'),
      expect.stringContaining('"reason":"too_old"'),
      expect.stringContaining('"reason":"missing"'),
    ]);
    expect(h.lines.join('\n')).not.toContain(SENSITIVE);
    expect((await counted('refused_signature')) - refusedBefore).toBe(3);
  } finally {
    await h.close();
  }
});

test('an accepted delivery is one insert of a sealed body, answered 200; the log names its type and id only', async () => {
  const h = await start(TERRA_TEST_SECRET);
  try {
    const res = await post(h, BODY, terraSignature(BODY, nowSeconds()));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, id: expect.stringMatching(/^tev_/), duplicate: false });
    expect(h.queries).toHaveLength(1);
    expect(h.queries[0].text).toMatch(/INSERT INTO terra_events/);
    // Nothing of the body is in the clear among the values stored: the sealed body is bytes under the master key.
    const stored = h.queries[0].values.map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v))).join(' ');
    expect(stored).not.toContain(SENSITIVE);
    expect(h.lines.join('\n')).not.toContain(SENSITIVE);
    expect(h.lines.find((l) => l.includes('terra event received'))).toMatch(/"type":"daily"/);
  } finally {
    await h.close();
  }
});

test('without a signing secret every delivery is 503, so Terra keeps it for later', async () => {
  const h = await start(null);
  try {
    const res = await post(h, BODY, terraSignature(BODY, nowSeconds()));
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/TERRA_SIGNING_SECRET/);
    expect(h.queries).toEqual([]);
  } finally {
    await h.close();
  }
});
