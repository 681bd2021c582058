/**
 * The API fuzzed against its own document: schemathesis (test/requirements.txt, installed into .venv)
 * reads /openapi.json from the real service and sends every operation generated requests, valid and
 * hostile, with a real API key. Every response must be no server error, carry a status and a content
 * type the document lists for that operation, the headers it declares required (X-Request-Id, on every
 * one) and declared headers in their declared form, and match the schema listed for them.
 *
 * POST /v1/turns starts real turns (Temporal, the worker, the scripted model). The per-user cap on
 * turns in flight answers most of them 429, as the document says it may. The run is bounded (a fixed
 * number of cases per operation and a fixed seed), so it is the same run each time.
 *
 * A generated id is almost never one that exists, so half of the `{id}` path parameters are drawn from
 * a real finished turn and a real memory entry (schemathesis dictionaries): the 200 answers, the
 * event stream and a delete are fuzzed too, not only the 404s. A finding's series is drawn likewise from a data
 * question's turn (on the demo's synthetic history) and its finding. The event stream route is run again
 * with `Accept: text/event-stream`, where each event is checked against the catalog in the document.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { createEventLog } from '../../platform/event-log';
import { api, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SCHEMATHESIS = path.join(REPO_ROOT, '.venv', 'bin', 'schemathesis');

/**
 * Cases per operation in the fuzzing phase: enough to reach the odd corners, few enough for 2 cores.
 * AMY_FUZZ_MAX_EXAMPLES and AMY_FUZZ_SEED run a longer or another search by hand.
 */
const MAX_EXAMPLES = Number(process.env.AMY_FUZZ_MAX_EXAMPLES ?? 50);
const SEED = Number(process.env.AMY_FUZZ_SEED ?? 16011);

let svc: TestService;
let apiKey: string;
let workDir: string;

beforeAll(async () => {
  // The Terra receiver as deployed, with a signing secret: the fuzzer's requests meet the signature check (401)
  // rather than the 503 of a receiver nobody configured.
  svc = await startTestService({ env: { TERRA_SIGNING_SECRET: 'fuzzed-terra-receiver-secret' } });
  const user = await svc.createUser('fuzz');
  apiKey = user.apiKey;
  await seedDemoHealthData(svc.database.pool, user.userId);
  const turn = await api(svc.url, 'POST', '/v1/turns', { key: apiKey, body: { ...thanks, stream: false } });
  // A data question, so GET …/findings/{finding_id}/series has a finding to answer 200 for.
  const dataTurn = await api(svc.url, 'POST', '/v1/turns', {
    key: apiKey,
    body: {
      messages: [{ role: 'user', content: 'What is my average resting heart rate over the last 90 days?' }],
      stream: false,
    },
  });
  expect(dataTurn.body.status).toBe('completed');
  const gated = (await createEventLog(svc.database.pool).readAfter(dataTurn.body.id, 0, 10_000)).find(
    (e) => e.type === 'validator.gate',
  );
  expect(gated).toBeDefined();
  const memory = await api(svc.url, 'POST', '/v1/memory', {
    key: apiKey,
    body: { text: 'Prefers morning workouts.', category: 'preference' },
  });
  // A workout and a profile, so the health data routes answer more than 404 (workouts: from a dictionary).
  const workout = await api(svc.url, 'POST', '/v1/data/workouts', {
    key: apiKey,
    body: { rows: [{ external_id: 'fuzz-workout-1', date: '2026-01-05', type: 'yoga', duration_minutes: 30 }] },
  });
  const profile = await api(svc.url, 'PUT', '/v1/data/profile', {
    key: apiKey,
    body: { sex: 'female', birth_year: 1990, height_cm: 170, weight_kg: 65 },
  });
  expect([turn.status, turn.body.status, memory.status]).toEqual([200, 'completed', 201]);
  expect([workout.status, profile.status]).toEqual([200, 200]);
  // Hypothesis keeps state in its working directory; keep it out of the repository.
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-fuzz-'));
  // schemathesis reads schemathesis.toml from its working directory.
  fs.writeFileSync(
    path.join(workDir, 'schemathesis.toml'),
    [
      '[dictionaries.turn_ids]',
      `values = ["${turn.body.id}"]`,
      '[dictionaries.memory_ids]',
      `values = ["${memory.body.id}"]`,
      '[dictionaries.data_turn_ids]',
      `values = ["${dataTurn.body.id}"]`,
      '[dictionaries.finding_ids]',
      `values = ["${gated!.data.finding_id as string}"]`,
      '[[operations]]',
      'include-path-regex = "^/v1/turns/[^/]+/findings/"',
      'parameters = { "path.id" = { dictionary = "data_turn_ids", probability = 0.5 }, "path.finding_id" = { dictionary = "finding_ids", probability = 0.5 } }',
      '[[operations]]',
      'include-path-regex = "^/v1/turns/(?!.*/findings/)"',
      'parameters = { "path.id" = { dictionary = "turn_ids", probability = 0.5 } }',
      '[[operations]]',
      'include-path-regex = "^/v1/memory/"',
      'parameters = { "path.id" = { dictionary = "memory_ids", probability = 0.5 } }',
      '[dictionaries.workout_ids]',
      'values = ["fuzz-workout-1"]',
      '[[operations]]',
      'include-path-regex = "^/v1/data/workouts/"',
      'parameters = { "path.external_id" = { dictionary = "workout_ids", probability = 0.5 } }',
      // Terra's receiver answers 401 to whoever cannot sign as Terra, which a fuzzer never can: the point here.
      '[[operations]]',
      'include-path = "/webhooks/terra"',
      'warnings = { display = [] }',
      // An answer is taken only by a turn waiting for one, to the request it asked, once: a fuzzer's answers are
      // refused (404, 409), which is the point here (test/e2e/asking-back.test.ts answers for real).
      '[[operations]]',
      'include-path = "/v1/turns/{id}/input"',
      'parameters = { "path.id" = { dictionary = "turn_ids", probability = 0.5 } }',
      'warnings = { display = [] }',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  // Turns the fuzzer started may still be running: end them so the worker shuts down at once.
  if (svc) {
    const running = await svc.database.pool.query<{ id: string }>(
      "SELECT id FROM turns WHERE status IN ('queued', 'running')",
    );
    await Promise.allSettled(running.rows.map(({ id }) => svc.temporal.workflow.getHandle(id).terminate('fuzz over')));
    await svc.close();
  }
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

function runSchemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Spawned, never run synchronously: the API under test serves from this process's event loop.
    const child = spawn(SCHEMATHESIS, args, {
      cwd: workDir,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '160' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** A bounded, seeded run against the live document, with the checks this suite is about. */
async function fuzz(...extra: string[]) {
  expect(fs.existsSync(SCHEMATHESIS)).toBe(true);
  const { code, output } = await runSchemathesis([
    'run',
    `${svc.url}/openapi.json`,
    '--header',
    `Authorization: Bearer ${apiKey}`,
    '--checks',
    'not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance',
    '--phases',
    'examples,coverage,fuzzing',
    '--max-examples',
    String(MAX_EXAMPLES),
    '--seed',
    String(SEED),
    '--workers',
    '1',
    '--request-timeout',
    '60',
    '--generation-database',
    'none',
    '--no-color',
    // Deleting the account would end the run: every later request is a 401 (test/e2e/account-deletion.test.ts).
    '--exclude-operation-id',
    'deleteAccount',
    ...extra,
  ]);
  if (code !== 0) throw new Error(`schemathesis exited ${code}:\n${output}`);
  expect(output).toMatch(/No issues found/i);
  return output;
}

test(
  'every operation: no server error, and every status, content type and body as the document says',
  async () => {
    const output = await fuzz();
    // Every operation of the document was exercised (a route left out of it would not be), but DELETE
    // /v1/account, which would end the run (test/e2e/account-deletion.test.ts exercises it).
    const [, selected, total] = /Operations:\s+(\d+) selected \/ (\d+) total/.exec(output) ?? [];
    expect({ selected: Number(selected), total: Number(total) }).toEqual({
      selected: Number(total) - 1,
      total: Number(total),
    });
  },
  10 * 60_000,
);

test(
  'the event stream with Accept: text/event-stream: every event matches the catalog',
  async () => {
    await fuzz('--include-operation-id', 'streamTurnEvents', '--header', 'Accept: text/event-stream');
  },
  10 * 60_000,
);

/**
 * What the fuzzer found, pinned down so that a change of seed or of schemathesis cannot lose them:
 * instants zod admits as ISO-8601 but Postgres refuses (an offset past ±15:59, the year 0000) were a
 * 500 from the query, in a filter and in a hand-made cursor.
 */
describe('instants Postgres cannot compare are a 400, never a 500', () => {
  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  test.each([
    ['after', '2000-01-20T06:47:32.106-18:37'],
    ['before', '2000-01-20T06:47:32+16:00'],
    ['after', '0000-01-01T00:00:00Z'],
    ['cursor', cursor(['0000-01-01T00:00:00.000Z', 'mem_01M85TPVMMDDZMJSZNVBJK26YF'])],
  ])('GET /v1/memory?%s=%s', async (name, value) => {
    const res = await api(svc.url, 'GET', `/v1/memory?${name}=${encodeURIComponent(value)}`, { key: apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_field', field: name });
  });

  test('GET /v1/turns?cursor= with a position in the year 0000', async () => {
    const value = cursor(['0000-01-01T00:00:00.000', 'turn_01M85TPVMMDDZMJSZNVBJK26YF']);
    const res = await api(svc.url, 'GET', `/v1/turns?cursor=${value}`, { key: apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_field', field: 'cursor' });
  });

  test('the real range still works: ±15:59 and the year 0001', async () => {
    for (const query of ['after=0001-01-01T00:00:00Z', 'before=9999-12-31T23:59:59-15:59']) {
      const res = await api(svc.url, 'GET', `/v1/memory?${query}`, { key: apiKey });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeGreaterThan(0);
    }
  });
});

/** One request exactly as given (no URL normalisation, any body), on a connection of its own. */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<{ status: number; body: { error: Record<string, unknown> } }> {
  const { hostname, port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent: false, host: hostname, port, method, path, headers: { authorization: `Bearer ${apiKey}`, ...headers } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Hostile requests a schema-driven fuzzer does not send, found by hand next to it: they failed in the
 * router, the body parser or the validation itself, before any route code, and were a 500.
 */
describe('malformed requests are a 400 in the envelope, never a 500', () => {
  test.each([
    ['GET', '/v1/turns/%E0'],
    ['POST', '/v1/turns/%/cancel'],
    ['DELETE', '/v1/memory/%E0%A4'],
  ])('%s %s: a path that is not valid percent-encoding', async (method, path) => {
    const res = await rawRequest(method, path, {});
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'invalid_request',
      message: 'The URL is not valid percent-encoding.',
    });
  });

  test('a gzip body that does not decompress', async () => {
    const res = await rawRequest(
      'POST',
      '/v1/memory',
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      'not gzip at all',
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  test('JSON nested thousands deep in memory meta', async () => {
    const meta = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await rawRequest(
      'POST',
      '/v1/memory',
      { 'content-type': 'application/json' },
      `{"text":"Nested.","category":"goal","meta":${meta}}`,
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', field: 'body' });
  });
});
