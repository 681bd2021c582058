import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { codecServerConfig, terraSigningSecret, type Config } from '../platform/config';
import { createDataKeyStore } from '../platform/crypto/data-keys';
import { loadMasterKeyring } from '../platform/crypto/master-key';
import { createDataConverter } from '../platform/temporal/data-converter';
import { createWorkflowOwners } from '../platform/temporal/workflow-owner';
import { createEventLog } from '../platform/event-log';
import { createGatesRunner, defaultPythonPath } from '../platform/gates';
import { createPgPool } from '../platform/pg-pool';
import { costCapDefaults } from '../platform/cost-caps';
import { createApp } from './app';
import { startCodecServer } from './codec-server';
import { createCorsPolicy } from './cors';
import { parseCodecOperators } from './codec/operators';
import { createRequestDrain } from './drain';
import { createPendingTurnStarts } from './temporal/pending-turn-starts';
import { ApiError, errorResponse } from './errors';
import { startEventHub } from './streaming/event-hub';
import { createEventStreamRoute } from './streaming/event-stream';
import { createLogger, type Logger } from '../platform/logger';
import { workflowClientTracing } from '../platform/temporal/tracing';
import { traceRequests } from './request-tracing';
import { startMetricsEndpoint } from '../platform/metrics-endpoint';
import { processRegistry } from '../platform/metrics';
import { newId } from '../platform/ids';

export interface ApiServer {
  url: string;
  server: http.Server;
  /** Stops at once: every connection cut, then everything released. */
  close(): Promise<void>;
  /**
   * Stops gracefully (docs/operations.md#deploying): new connections refused, open event streams ended
   * for their clients to resume elsewhere, requests in flight given up to `graceMs`, then close().
   */
  drain(graceMs: number): Promise<void>;
}

/** What a request that reaches a draining process is told (one on a connection opened before the drain). */
const drainingRefusal = () =>
  new ApiError(
    'service_unavailable',
    'This API process is shutting down; send the request again (another process answers it).',
    undefined,
    { 'Retry-After': '1' },
  );

/**
 * How long a client may take to send what it sends, so that nobody holds a connection by trickling
 * bytes. Node closes a connection with `408 Request Timeout` when its headers, or its whole request,
 * take longer; both bound only the receiving (the parser stops counting once the request is complete),
 * so a blocking `"stream": false` turn answers after minutes and an SSE stream is never cut by them.
 * There is deliberately no socket inactivity timeout (`server.timeout`): while a turn runs, the server
 * is the quiet side (a blocking answer, an SSE stream during a long step without events), and a client
 * that goes quiet before its request is complete is already bounded. Between requests, an idle
 * keep-alive connection is closed after the keep-alive timeout.
 */
function receiveBounds(config: Config): http.ServerOptions {
  return {
    headersTimeout: config.AMY_HEADERS_TIMEOUT_MS,
    requestTimeout: config.AMY_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.AMY_KEEP_ALIVE_TIMEOUT_MS,
    // Node checks the two bounds on an interval (30 s by default), so a bound is enforced up to one
    // interval late; a quarter of the smaller bound, at most a second, keeps that lateness small.
    connectionsCheckingInterval: Math.max(
      50,
      Math.min(1000, Math.floor(Math.min(config.AMY_HEADERS_TIMEOUT_MS, config.AMY_REQUEST_TIMEOUT_MS) / 4)),
    ),
  };
}

/** How long `close()` lets the turn starts still going finish. */
const CLOSE_STARTS_WITHIN_MS = 5_000;

/** Connects to Postgres and Temporal and serves the API; `close()` releases everything. */
export async function startApiServer(config: Config, logger: Logger = createLogger('api', config.LOG_LEVEL)) {
  const codecSettings = codecServerConfig(config);
  const pool = createPgPool(config.DATABASE_URL, config.AMY_PG_POOL_SIZE, (err) =>
    logger.warn('idle postgres connection lost', { error: err.message }),
  );
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const keyring = loadMasterKeyring();
  const keys = createDataKeyStore(pool, keyring);
  const turnOwners = createWorkflowOwners(pool);
  const dataConverter = createDataConverter(pool, keys, { owners: turnOwners });
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter,
    interceptors: workflowClientTracing(),
  });
  const hub = await startEventHub({ databaseUrl: config.DATABASE_URL, events: createEventLog(pool), logger });
  // For a finding's chart (GET …/findings/:finding_id/series) only: one process, started on the first such
  // request, since the worker's pool does the gating itself.
  const gates = createGatesRunner({ python: config.AMY_PYTHON ?? defaultPythonPath(), processes: 1 });
  const requests = createRequestDrain();
  const pendingStarts = createPendingTurnStarts();
  const app = createApp({
    gates,
    keys,
    pool,
    temporal,
    turnOwners,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    logger,
    maxInFlightTurns: config.AMY_MAX_INFLIGHT_TURNS,
    costCapDefaults: costCapDefaults(config),
    maxTurnsPerMinute: config.AMY_MAX_TURNS_PER_MINUTE,
    turnRunTimeoutSeconds: config.AMY_TURN_RUN_TIMEOUT_SECONDS,
    turnStartWaitMs: config.AMY_TURN_START_WAIT_MS,
    pendingStarts,
    bodyLimitBytes: config.AMY_BODY_LIMIT_BYTES,
    shutdownDeadline: requests.deadline,
    terraReceiver: {
      keyring,
      terra: {
        signingSecret: terraSigningSecret(config),
        toleranceSeconds: config.TERRA_SIGNATURE_TOLERANCE_SECONDS,
        maxBodyBytes: config.TERRA_MAX_BODY_BYTES,
      },
    },
  });
  const eventStreamRoute = createEventStreamRoute({
    pool,
    hub,
    logger,
    replayWindowSeconds: config.AMY_REPLAY_WINDOW_SECONDS,
    maxStreamsPerKey: config.AMY_MAX_STREAMS_PER_KEY,
    maxBufferedBytes: config.AMY_STREAM_MAX_BUFFERED_BYTES,
    draining: () => requests.draining,
  });
  // Ahead of both: a preflight carries no key (./cors.ts).
  const cors = createCorsPolicy(config.AMY_CORS_ALLOWED_ORIGINS);
  const server = http.createServer(
    receiveBounds(config),
    traceRequests(
      (req, res) => {
        requests.track(res);
        if (cors(req, res)) return;
        if (eventStreamRoute(req, res)) return;
        if (requests.draining) {
          const requestId = newId('request');
          const { status, headers, body } = errorResponse(drainingRefusal(), requestId, logger);
          res.writeHead(status, {
            ...headers,
            'Content-Type': 'application/json; charset=utf-8',
            'X-Request-Id': requestId,
          });
          res.end(JSON.stringify(body));
          return;
        }
        app(req, res);
      },
      { trustTraceparent: config.AMY_OTEL_TRUST_TRACEPARENT },
    ),
  );
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const { port } = server.address() as { port: number };
  const url = `http://${config.HOST}:${port}`;
  // Metrics on a listener of their own, never on the public port (docs/operations.md#metrics).
  const metrics =
    config.AMY_METRICS_PORT === undefined
      ? null
      : await startMetricsEndpoint({
          host: config.AMY_METRICS_HOST,
          port: config.AMY_METRICS_PORT,
          registry: processRegistry(),
          logger,
        });
  // The codec server on a listener of its own too, for operators only (docs/operations.md#the-codec-server).
  const codecServer =
    codecSettings === null
      ? null
      : await startCodecServer({
          host: config.AMY_CODEC_HOST,
          port: codecSettings.port,
          ...(config.AMY_CODEC_PUBLIC_URL ? { publicUrl: new URL(config.AMY_CODEC_PUBLIC_URL) } : {}),
          codec: dataConverter.payloadCodecs![0],
          pool,
          operators: parseCodecOperators(codecSettings.operators),
          allowedOrigins: config.AMY_CODEC_ALLOWED_ORIGINS.split(',').map((o) => o.trim()),
          auditRetentionDays: config.AMY_CODEC_AUDIT_RETENTION_DAYS,
          logger,
        });
  logger.info('api listening', { url });
  /** `startsWithinMs`: how long the turn starts still going may take to finish. */
  const release = async (startsWithinMs: number) => {
    // A turn answered 201 before its workflow's start needs that start (or its undoing) to finish. One that
    // does not leaves a queued turn without a workflow, which the reconciler fails (docs/operations.md).
    const unfinishedStarts = await pendingStarts.settled(startsWithinMs);
    if (unfinishedStarts > 0) {
      logger.warn('api stopping with turn starts unfinished', { turn_starts_unfinished: unfinishedStarts });
    }
    await hub.close();
    await codecServer?.close();
    await Promise.allSettled([pool.end(), connection.close(), gates.close(), metrics?.close()]);
  };
  return {
    url,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await release(CLOSE_STARTS_WITHIN_MS);
    },
    async drain(graceMs) {
      const deadline = Date.now() + graceMs;
      // Stops listening now (a new connection is refused) and closes the idle keep-alive connections.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const streams = eventStreamRoute.endAll();
      logger.info('api draining', {
        grace_seconds: graceMs / 1000,
        event_streams_ended: streams,
        requests_in_flight: requests.inFlight() - streams,
      });
      const { unfinished } = await requests.drain(graceMs, () => server.closeIdleConnections());
      if (unfinished > 0) logger.warn('api stopping with requests unfinished', { requests_unfinished: unfinished });
      server.closeAllConnections();
      await closed;
      // What is left of the grace, and at least a second: a start begun at the last moment gets its chance.
      await release(Math.max(1_000, deadline - Date.now()));
      logger.info('api stopped');
    },
  } satisfies ApiServer;
}
