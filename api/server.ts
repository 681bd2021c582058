import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../platform/config';
import { createEventLog } from '../platform/event-log';
import { createPgPool } from '../platform/pg-pool';
import { createApp } from './app';
import { startEventHub } from './event-hub';
import { createEventStreamRoute } from './event-stream';
import { createLogger, type Logger } from './logger';

export interface ApiServer {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

/** Connects to Postgres and Temporal and serves the API; `close()` releases everything. */
export async function startApiServer(config: Config, logger: Logger = createLogger('api', config.LOG_LEVEL)) {
  const pool = createPgPool(config.DATABASE_URL, 20, (err) =>
    logger.warn('idle postgres connection lost', { error: err.message }),
  );
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const hub = await startEventHub({ databaseUrl: config.DATABASE_URL, events: createEventLog(pool), logger });
  const app = createApp({
    pool,
    temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    logger,
    maxInFlightTurns: config.AMY_MAX_INFLIGHT_TURNS,
    bodyLimitBytes: config.AMY_BODY_LIMIT_BYTES,
  });
  const eventStreamRoute = createEventStreamRoute({
    pool,
    hub,
    logger,
    replayWindowSeconds: config.AMY_REPLAY_WINDOW_SECONDS,
    maxStreamsPerKey: config.AMY_MAX_STREAMS_PER_KEY,
    maxBufferedBytes: config.AMY_STREAM_MAX_BUFFERED_BYTES,
  });
  const server = http.createServer((req, res) => {
    if (!eventStreamRoute(req, res)) app(req, res);
  });
  // Blocking turns and SSE streams legitimately last minutes: no whole-request timeout.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const { port } = server.address() as { port: number };
  const url = `http://${config.HOST}:${port}`;
  logger.info('api listening', { url });
  return {
    url,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await hub.close();
      await Promise.allSettled([pool.end(), connection.close()]);
    },
  } satisfies ApiServer;
}
