/**
 * No API key in the logs. The API runs as a real process writing its logs to a file;
 * Postgres is then stopped, so that checking a key fails and the API logs the failure with the request's
 * path. An event stream request with `?api_key=<a real key>` (where a browser's EventSource puts it, its
 * name percent-encoded or not) gets the error envelope, and nothing the process wrote holds the key, nor
 * any query string; nor does a request with the key in the Authorization header. The whole log file is
 * read, not only its tail.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, httpOk, type LaunchedProcess } from '../../dev/stack/child-process';
import { freePort } from '../../dev/stack/ports';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { createUserWithApiKey } from '../../platform/users';
import { Pool } from 'pg';
import { expectSchema } from '../support/http';
import { COMPILED_API } from '../support/compiled-roles';
import { startRestartablePostgres, type RestartablePostgres } from '../support/restartable-postgres';
import { readTestEnv } from '../support/test-env';

let pg: RestartablePostgres;
let apiProcess: LaunchedProcess | null = null;
let url: string;
let logFile: string;
let logDir: string;
let apiKey: string;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  const pool = new Pool({ connectionString: pg.url, max: 1 });
  try {
    ({ apiKey } = await createUserWithApiKey(pool, 'leaky'));
  } finally {
    await pool.end();
  }
  logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-api-log-'));
  logFile = path.join(logDir, 'api.log');
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  apiProcess = await launch({
    name: 'the API process',
    script: COMPILED_API,
    env: {
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: readTestEnv().temporalAddress,
      TEMPORAL_TASK_QUEUE: 'amy-secrets-in-logs',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'debug',
    },
    logFile,
    ready: httpOk(`${url}/healthz`),
  });
}, 120_000);
afterAll(async () => {
  await apiProcess?.kill();
  await pg?.destroy();
  if (logDir) fs.rmSync(logDir, { recursive: true, force: true });
});

const readLog = () => fs.readFileSync(logFile, 'utf8');

test('with Postgres stopped, a stream request with ?api_key= gets the error envelope and leaves no key in the logs', async () => {
  // With Postgres up the key works on the stream route (a turn id that does not exist is a 404).
  const turnId = 'turn_01ARZ3NDEKTSV4RRFFQ69G5FAV';
  const ok = await fetch(`${url}/v1/turns/${turnId}/events?api_key=${apiKey}`, {
    headers: { accept: 'text/event-stream' },
  });
  expect(ok.status).toBe(404);

  await pg.stop();
  const requests = [
    fetch(`${url}/v1/turns/${turnId}/events?last_event_id=3&api_key=${apiKey}`, {
      headers: { accept: 'text/event-stream' },
    }),
    fetch(`${url}/v1/turns/${turnId}/events?api_key=${encodeURIComponent(apiKey)}`),
    // The parameter's name percent-encoded: the server decodes it, so it is a key like any other.
    fetch(`${url}/v1/turns/${turnId}/events?%61pi%5Fkey=${apiKey}&last_event_id=4`),
    fetch(`${url}/v1/turns/${turnId}?last_event_id=5`, { headers: { authorization: `Bearer ${apiKey}` } }),
  ];
  for (const res of await Promise.all(requests)) {
    expect(res.status).toBe(500);
    const { error } = expectSchema(errorEnvelopeSchema, await res.json());
    expect(error.code).toBe('internal_error');
    expect(JSON.stringify(error)).not.toContain(apiKey);
  }

  // The failures were logged (so the test looked where the key would have been) ...
  const logged = () =>
    readLog()
      .split('\n')
      .filter((line) => line.includes('"unhandled error"'));
  const deadline = Date.now() + 10_000;
  while (logged().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(logged()).toHaveLength(4);
  // A log line carries the request's path, never its query string (which may hold a key, or anything).
  const paths = logged().map((line) => (JSON.parse(line) as { path?: string }).path);
  expect(paths.sort()).toEqual([
    `/v1/turns/${turnId}`,
    `/v1/turns/${turnId}/events`,
    `/v1/turns/${turnId}/events`,
    `/v1/turns/${turnId}/events`,
  ]);
  // ... and nothing in the whole log holds the key, nor enough of it to matter.
  const log = readLog();
  expect(log).not.toMatch(/last_event_id|api_key|%5Fkey/i);
  expect(log).not.toContain(apiKey);
  expect(log).not.toContain(apiKey.slice('amy_live_'.length));
  expect(log).not.toContain(apiKey.slice(-16));
  await pg.start();
}, 60_000);
