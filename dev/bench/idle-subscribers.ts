/**
 * (c) The memory an API process spends holding idle SSE subscribers: many clients waiting on queued
 * turns that produce nothing. The API runs alone in a child process and its resident set is read from
 * /proc before and after; then one event proves the loaded process still delivers.
 */
import type { Pool } from 'pg';
import type { EventLog } from '../../platform/event-log';
import { readOpenFilesLimit, startApiProcess } from './api-process';
import { createBenchUser, insertQueuedTurns } from './fixtures';
import { newAgent, openSse, type SseStream } from './http-client';
import { nowMs } from './stats';

export interface IdleSubscribersOptions {
  databaseUrl: string;
  temporalAddress: string;
  pool: Pool;
  events: EventLog;
  turns: number;
  subscribersPerTurn: number;
  /** Connections opened at once; kept under the listen backlog (511) so none is refused. */
  batchSize: number;
  /** Which API process to measure: `compiled` needs `npm run build` first. */
  api: 'compiled' | 'tsx';
}

export interface IdleSubscribersResult {
  /** How the API process ran: compiled (dist/, as the images run it) or from TypeScript under tsx (as `npm start`). */
  api: 'compiled' | 'tsx';
  subscribers: number;
  turns: number;
  baselineKb: number;
  totalKb: number;
  /** VmHWM: the highest the resident set went, including the connection storm. */
  peakKb: number;
  kbPerSubscriber: number;
  connectSeconds: number;
  apiOpenFilesLimit: number;
  liveness: { expected: number; delivered: number; strayDeliveries: number; lastDeliveryMs: number | null };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function measureIdleSubscribers(opts: IdleSubscribersOptions): Promise<IdleSubscribersResult> {
  const { userId, apiKey } = await createBenchUser(opts.pool, 'idle');
  const turnIds = await insertQueuedTurns(opts.pool, userId, opts.turns);
  // Every subscriber here is on one key: the per-key stream cap is lifted for this API process.
  process.env.AMY_MAX_STREAMS_PER_KEY = String(opts.turns * opts.subscribersPerTurn + 1);
  const api = await startApiProcess(
    { DATABASE_URL: opts.databaseUrl, TEMPORAL_ADDRESS: opts.temporalAddress },
    { compiled: opts.api === 'compiled' },
  );
  const agent = newAgent();
  const streams: SseStream[] = [];
  try {
    // The baseline is a process that has served a stream once: the lazy start-up work (route
    // compilation, first queries, connection pools) belongs to the process, not to subscribers.
    const warmup = await openSse(`${api.url}/v1/turns/${turnIds[0]}/events`, { apiKey, agent });
    warmup.close();
    await warmup.ended;
    await sleep(1_000);
    const baselineKb = api.memoryKb('VmRSS');

    const delivered = new Map<string, number>();
    let lastDeliveryAt = 0;
    const total = opts.turns * opts.subscribersPerTurn;
    const connectStart = nowMs();
    for (let first = 0; first < total; first += opts.batchSize) {
      const batch = Array.from({ length: Math.min(opts.batchSize, total - first) }, (_, i) => {
        const turnId = turnIds[(first + i) % turnIds.length];
        return openSse(`${api.url}/v1/turns/${turnId}/events`, {
          apiKey,
          agent,
          onMessage: (_message, receivedAt) => {
            delivered.set(turnId, (delivered.get(turnId) ?? 0) + 1);
            lastDeliveryAt = receivedAt;
          },
        });
      });
      const settled = await Promise.allSettled(batch);
      for (const s of settled) if (s.status === 'fulfilled') streams.push(s.value);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        throw new Error(
          `after ${streams.length} subscribers, a connection failed (${String(failed.reason)}); open-files limits: ` +
            `API ${api.openFilesLimit()}, client ${readOpenFilesLimit('self')}`,
        );
      }
    }
    const connectSeconds = (nowMs() - connectStart) / 1000;
    await sleep(2_000);
    const totalKb = api.memoryKb('VmRSS');
    const peakKb = api.memoryKb('VmHWM');

    const probeTurn = turnIds[Math.floor(turnIds.length / 2)];
    const probeStart = nowMs();
    await opts.events.append(probeTurn, [
      { type: 'agent.thought', data: { agent: 'synthesis', delta: 'still here', attempt: 1, step: 'synthesis' } },
    ]);
    for (let waited = 0; waited < 10_000 && (delivered.get(probeTurn) ?? 0) < opts.subscribersPerTurn; waited += 10) {
      await sleep(10);
    }
    const allDelivered = (delivered.get(probeTurn) ?? 0) >= opts.subscribersPerTurn;
    const strayDeliveries = [...delivered].reduce((n, [turnId, count]) => (turnId === probeTurn ? n : n + count), 0);

    return {
      api: opts.api,
      subscribers: streams.length,
      turns: opts.turns,
      baselineKb,
      totalKb,
      peakKb,
      kbPerSubscriber: (totalKb - baselineKb) / streams.length,
      connectSeconds,
      apiOpenFilesLimit: api.openFilesLimit(),
      liveness: {
        expected: opts.subscribersPerTurn,
        delivered: delivered.get(probeTurn) ?? 0,
        strayDeliveries,
        lastDeliveryMs: allDelivered ? lastDeliveryAt - probeStart : null,
      },
    };
  } finally {
    for (const stream of streams) stream.close();
    agent.destroy();
    await api.stop();
  }
}
