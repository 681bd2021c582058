import { Router } from 'express';
import type { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Logger } from '../logger';

class ProbeTimeout extends Error {}

/**
 * Whether a dependency answers, and how fast. `/healthz` needs no key, so what it says of a failure is
 * only `unreachable` or `no answer in N ms`: a driver's message names hosts, ports and users. The
 * message itself goes to the log.
 */
async function probe(name: string, check: () => Promise<unknown>, logger?: Logger, timeoutMs = 2000) {
  const started = Date.now();
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new ProbeTimeout()), timeoutMs).unref()),
    ]);
    return { ok: true, latency_ms: Date.now() - started };
  } catch (err) {
    logger?.warn('health probe failed', { dependency: name, error: err instanceof Error ? err.message : String(err) });
    return {
      ok: false,
      latency_ms: null,
      error: err instanceof ProbeTimeout ? `no answer in ${timeoutMs} ms` : 'unreachable',
    };
  }
}

export function healthRoutes({
  pool,
  temporal,
  logger,
}: {
  pool: Pool;
  temporal: TemporalClient;
  logger?: Logger;
}): Router {
  const router = Router();
  router.get('/healthz', async (_req, res) => {
    const [postgres, temporalStatus] = await Promise.all([
      probe('postgres', () => pool.query('SELECT 1'), logger),
      probe('temporal', () => temporal.workflowService.getSystemInfo({}), logger),
    ]);
    const ok = postgres.ok && temporalStatus.ok;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', postgres, temporal: temporalStatus });
  });
  return router;
}
