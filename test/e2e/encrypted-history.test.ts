/**
 * A turn's Temporal history holds none of its content in the clear (docs/operations.md#encrypted-workflow-payloads):
 * read raw, without the codec, the payloads of a finished turn hold neither the user's message, nor its
 * answer, nor the memory it was given; they are `binary/encrypted` under the user's data key. Through the
 * service's codec the same history decodes and replays against the workflow code, and `npm run turn:replay`
 * replays it. Real Temporal, Postgres, worker and API.
 */
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { Pool } from 'pg';
import type { temporal } from '@temporalio/proto';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { turnSchema } from '../../contracts/turn';
import { ENCRYPTED_ENCODING } from '../../platform/temporal/encryption-codec';
import { workflowTracingSinks } from '../../platform/temporal/tracing';
import { runCli } from '../support/cli';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import type { TurnHistory } from '../support/history';
import { readTestEnv } from '../support/test-env';

jest.setTimeout(180_000);

/** Words no template, rule or answer of the service would write on its own. */
const MESSAGE = 'What is my average resting heart rate over the last 30 days, for the quokka regatta?';
const MEMORY = 'Trains for the Tromsø midnight-sun quokka regatta every June.';

let svc: TestService;
let pool: Pool;

beforeAll(async () => {
  svc = await startTestService();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await svc?.close();
});

/** Every byte string in a history (payload data and metadata), as text: what someone with the raw history reads. */
function rawText(history: TurnHistory): string {
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
    else if (typeof value === 'string') out.push(value);
  };
  walk(history);
  return out.join('\n');
}

test("a finished turn's raw history holds none of its message, answer or memory; through the codec it replays", async () => {
  const user = await svc.createUser();
  await seedDemoHealthData(pool, user.userId);
  const memory = await api(svc.url, 'POST', '/v1/memory', {
    key: user.apiKey,
    body: { text: MEMORY, category: 'goal' },
  });
  expect(memory.status).toBe(201);
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: MESSAGE }] },
  });
  expect(created.status).toBe(201);
  const turnId: string = created.body.id;
  await svc.temporal.workflow.getHandle(turnId).result();
  const turn = expectSchema(turnSchema, (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey })).body);
  expect(turn.status).toBe('completed');
  const answerOpening = turn.result!.answer.split(/(?<=[.!?])\s/)[0];
  expect(answerOpening.length).toBeGreaterThan(20);

  // Without the codec: what Temporal stores, and what anyone with its database or an export reads.
  const connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  try {
    const raw = await new Client({ connection }).workflow.getHandle(turnId).fetchHistory();
    const text = rawText(raw);
    expect(text).toContain(ENCRYPTED_ENCODING);
    for (const secret of ['quokka regatta', 'Tromsø', answerOpening, 'resting heart rate over the last 30 days'])
      expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
  } finally {
    await connection.close();
  }

  // With it: the history reads back and replays against the workflow code, in-process and by the script.
  const decoded = await svc.temporal.workflow.getHandle(turnId).fetchHistory();
  await Worker.runReplayHistory(
    {
      workflowBundle: { codePath: readTestEnv().workflowBundlePath },
      dataConverter: svc.dataConverter,
      sinks: workflowTracingSinks(),
    },
    decoded,
    turnId,
  );
  const replayed = await runCli('scripts/turn-replay.ts', [turnId], {
    DATABASE_URL: svc.config.DATABASE_URL,
    TEMPORAL_ADDRESS: svc.config.TEMPORAL_ADDRESS,
    WORKFLOW_BUNDLE_PATH: readTestEnv().workflowBundlePath,
  });
  expect(replayed).toMatchObject({ code: 0, stdout: expect.stringContaining(`OK: turn ${turnId} replays`) });
});

/** Every failure in a history (an activity's, the workflow's, and their causes), as Temporal stores it. */
function failuresOf(history: TurnHistory): temporal.api.failure.v1.IFailure[] {
  const out: temporal.api.failure.v1.IFailure[] = [];
  const walk = (value: unknown, key?: string): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if (Array.isArray(value)) return value.forEach((v) => walk(v));
    if ((key === 'failure' || key === 'cause') && 'message' in value)
      out.push(value as temporal.api.failure.v1.IFailure);
    for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  walk(history);
  return out;
}

test("a failed turn's raw history holds no failure message or stack trace: they are encrypted with its payloads", async () => {
  const user = await svc.createUser();
  // Past route's retry budget (4 attempts): every attempt fails, then the turn.
  svc.scripted.faults.inject({ kind: 'server_error', step: 'route', times: 4 });
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks!' }], stream: false },
  });
  expect(created.body.status).toBe('failed');
  const turnId: string = created.body.id;

  const connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  let raw: TurnHistory;
  try {
    raw = await new Client({ connection }).workflow.getHandle(turnId).fetchHistory();
  } finally {
    await connection.close();
  }
  const failures = failuresOf(raw);
  // route's last attempt, the workflow's own failure, and the causes they carry.
  expect(failures.length).toBeGreaterThanOrEqual(2);
  for (const failure of failures) {
    expect({ message: failure.message, stackTrace: failure.stackTrace }).toEqual({
      message: 'Encoded failure',
      stackTrace: '',
    });
    expect(failure.encodedAttributes?.metadata?.encoding).toEqual(Buffer.from(ENCRYPTED_ENCODING));
  }
  const text = rawText(raw);
  expect(text).not.toMatch(/Step route failed|status code|at .*\.js:\d+/);

  // Through the codec, the text is there for the engineer who opens the turn (the Web UI decodes it too).
  const workflowFailure = raw.events!.find((e) => e.workflowExecutionFailedEventAttributes)!
    .workflowExecutionFailedEventAttributes!.failure!;
  const [decoded] = await svc.dataConverter.payloadCodecs![0].decode([workflowFailure.encodedAttributes!]);
  const attributes = JSON.parse(Buffer.from(decoded.data!).toString('utf8')) as { message: string };
  expect(attributes.message).toMatch(/^Step route failed/);
});
