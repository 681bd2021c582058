import { Router } from 'express';
import type { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';

async function probe(check: () => Promise<unknown>, timeoutMs = 2000) {
  const started = Date.now();
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs).unref(),
      ),
    ]);
    return { ok: true, latency_ms: Date.now() - started };
  } catch (err) {
    return { ok: false, latency_ms: null, error: err instanceof Error ? err.message : String(err) };
  }
}

export function healthRoutes({ pool, temporal }: { pool: Pool; temporal: TemporalClient }): Router {
  const router = Router();
  router.get('/healthz', async (_req, res) => {
    const [postgres, temporalStatus] = await Promise.all([
      probe(() => pool.query('SELECT 1')),
      probe(() => temporal.workflowService.getSystemInfo({})),
    ]);
    const ok = postgres.ok && temporalStatus.ok;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', postgres, temporal: temporalStatus });
  });
  return router;
}
