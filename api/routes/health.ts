import { Router } from 'express';
import type { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import { checkBwrap, type BwrapCheck } from '../../platform/sandbox/bwrap';
import type { Logger } from '../../platform/logger';

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

/** How long a bubblewrap check stands: it starts a process, and /healthz may be polled every second. */
const SANDBOX_CHECK_TTL_MS = 60_000;

const SANDBOX_ERRORS: Record<Exclude<BwrapCheck, { ok: true }>['reason'], string> = {
  not_installed: 'bubblewrap is not installed on this host: data questions cannot run (apt-get install bubblewrap)',
  cannot_run: 'bubblewrap cannot create its namespaces on this host: data questions cannot run',
};

/**
 * Whether the sandbox can run generated code on this host, checked at most once a minute. The API
 * does not run the sandbox (the worker does, perhaps elsewhere), so this is what an operator needs to
 * hear on a single-host install, and it changes neither `status` nor the status code.
 */
function sandboxCheck(env: NodeJS.ProcessEnv, logger?: Logger) {
  let cached: { at: number; result: Promise<{ ok: boolean; error?: string }> } | null = null;
  return () => {
    if (!cached || Date.now() - cached.at > SANDBOX_CHECK_TTL_MS) {
      const result = checkBwrap(env).then((check) => {
        if (check.ok) return { ok: true };
        logger?.warn('health probe failed', { dependency: 'sandbox', error: check.detail });
        return { ok: false, error: SANDBOX_ERRORS[check.reason] };
      });
      cached = { at: Date.now(), result };
    }
    return cached.result;
  };
}

export function healthRoutes({
  pool,
  temporal,
  logger,
  sandboxEnv = process.env,
}: {
  pool: Pool;
  temporal: TemporalClient;
  logger?: Logger;
  /** Where `AMY_BWRAP_PATH` and `PATH` are read for the sandbox check; the process's environment by default. */
  sandboxEnv?: NodeJS.ProcessEnv;
}): Router {
  const router = Router();
  const sandbox = sandboxCheck(sandboxEnv, logger);
  router.get('/healthz', async (_req, res) => {
    const [postgres, temporalStatus, sandboxStatus] = await Promise.all([
      probe('postgres', () => pool.query('SELECT 1'), logger),
      probe('temporal', () => temporal.workflowService.getSystemInfo({}), logger),
      sandbox(),
    ]);
    const ok = postgres.ok && temporalStatus.ok;
    res
      .status(ok ? 200 : 503)
      .json({ status: ok ? 'ok' : 'degraded', postgres, temporal: temporalStatus, sandbox: sandboxStatus });
  });
  return router;
}
