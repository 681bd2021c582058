/**
 * Asking back through the API (docs/api.md#asking-back), over real HTTP, a real worker and a real Temporal server: a
 * vague question whose request accepts confirmations asks before the Investigator's scan, and one that reads two
 * ways asks which reading; the question is on the turn's stream and row; POST /v1/turns/:id/input answers it once,
 * refusing another request's id, a second answer, another user, and any answer once the turn has ended (completed
 * on the default at the deadline, or cancelled during the wait); the turn goes on with what it was told and
 * completes with gapless events.
 */
import { errorEnvelopeSchema } from '../../contracts/errors';
import { inputReceivedSchema, type InputRequest } from '../../contracts/interaction';
import { turnSchema } from '../../contracts/turn';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { verifyWebhook } from '@amy/sdk';
import { runCli } from '../support/cli';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';

let svc: TestService;
let receiver: WebhookReceiver;
let webhookSecret: string;
let alice: { userId: string; apiKey: string };
let bob: { userId: string; apiKey: string };

beforeAll(async () => {
  [svc, receiver] = await Promise.all([
    startTestService({ env: { AMY_WEBHOOKS_ALLOW_PRIVATE: '1' } }),
    startWebhookReceiver(),
  ]);
  alice = await svc.createUser('alice');
  bob = await svc.createUser('bob');
  // The clarification questions are about Alice's own numbers: the demo history gives her some.
  await seedDemoHealthData(svc.database.pool, alice.userId);
  const added = await runCli(
    'scripts/webhooks.ts',
    ['add', '--url', `${receiver.url}/questions`, '--events', 'turn.input_required'],
    { DATABASE_URL: svc.database.url, AMY_WEBHOOKS_ALLOW_PRIVATE: '1' },
  );
  expect(added.code).toBe(0);
  webhookSecret = added.stdout.trim().split('\n').at(-1)!;
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

const VAGUE = 'Is there anything in my numbers worth knowing?';

async function eventsOf(turnId: string) {
  return svc.database.db.turnEvent.findMany({ where: { turnId }, orderBy: { id: 'asc' } });
}

/** Waits until the turn's log holds an event of `type`, and returns its data. */
async function waitForEvent(turnId: string, type: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const event = (await eventsOf(turnId)).find((e) => e.type === type);
    if (event) return event.data as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`no ${type} event`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const errorCode = (res: { body: unknown }) => expectSchema(errorEnvelopeSchema, res.body).error.code;

test('a turn that may ask confirms the scan first; the answer is taken once, and the turn completes', async () => {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: alice.apiKey,
    body: { messages: [{ role: 'user', content: VAGUE }], interaction: { accepts: ['confirmation'] } },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;

  const { turn_id: askedBy, ...request } = (await waitForEvent(
    turnId,
    'turn.input_required',
  )) as unknown as InputRequest & {
    turn_id: string;
  };
  expect(askedBy).toBe(turnId);
  expect(request).toMatchObject({ kind: 'confirmation', default_option_id: 'quick' });
  // The Turn shows the wait and the question.
  const waiting = expectSchema(
    turnSchema,
    (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: alice.apiKey })).body,
  );
  expect(waiting).toMatchObject({ status: 'waiting_for_input', pending_input: request });
  // Listed, it is one of the running turns, shown as waiting.
  const running = (await api(svc.url, 'GET', '/v1/turns?status=running', { key: alice.apiKey })).body.data as {
    id: string;
    status: string;
  }[];
  expect(running.find((t) => t.id === turnId)?.status).toBe('waiting_for_input');

  const input = (key: string, body: object, headers: Record<string, string> = {}) =>
    api(svc.url, 'POST', `/v1/turns/${turnId}/input`, { key, body, headers });

  expect(errorCode(await input(alice.apiKey, { request_id: 'inq_other', option_id: 'scan' }))).toBe(
    'input_not_requested',
  );
  expect((await input(bob.apiKey, { request_id: request.request_id, option_id: 'scan' })).status).toBe(404);
  expect(errorCode(await input(alice.apiKey, { request_id: request.request_id, option_id: 'maybe' }))).toBe(
    'invalid_field',
  );

  const taken = await input(
    alice.apiKey,
    { request_id: request.request_id, option_id: 'scan' },
    {
      'Idempotency-Key': 'answer-1',
    },
  );
  expect(taken.status).toBe(200);
  expect(expectSchema(inputReceivedSchema, taken.body)).toMatchObject({ option_id: 'scan', source: 'user' });
  // The same key again: the same outcome, applied once.
  const retried = await input(
    alice.apiKey,
    { request_id: request.request_id, option_id: 'scan' },
    {
      'Idempotency-Key': 'answer-1',
    },
  );
  expect(retried.status).toBe(200);
  expect(retried.body).toEqual(taken.body);
  // Another answer, without the key: already answered.
  const again = await input(alice.apiKey, { request_id: request.request_id, option_id: 'quick' });
  expect([again.status, errorCode(again)]).toEqual([409, 'input_already_received']);

  await svc.temporal.workflow.getHandle(turnId).result();
  // A backend whose user is not watching was told, with ids only: the question is read from the Turn.
  await receiver.waitFor('/questions', 1);
  const [delivery] = receiver.received.filter((r) => r.path === '/questions');
  expect(verifyWebhook(delivery.body, delivery.headers, webhookSecret)).toMatchObject({
    type: 'turn.input_required',
    data: { turn_id: turnId, user_id: alice.userId, request_id: request.request_id, kind: 'confirmation' },
  });
  expect(delivery.body).not.toContain(request.question);
  const events = await eventsOf(turnId);
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const types = events.map((e) => e.type);
  expect(types.filter((t) => t.startsWith('turn.input'))).toEqual(['turn.input_required', 'turn.input_received']);
  expect(types.at(-1)).toBe('turn.completed');
  expect(types).toContain('agent.started');
  const ended = await svc.database.db.turn.findUnique({ where: { id: turnId } });
  expect(ended).toMatchObject({ status: 'completed', pendingInput: null });
  const done = expectSchema(turnSchema, (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: alice.apiKey })).body);
  expect(done.status).toBe('completed');
  expect(done).not.toHaveProperty('pending_input');

  // Once the turn has ended it waits for nothing.
  expect(errorCode(await input(alice.apiKey, { request_id: request.request_id, option_id: 'scan' }))).toBe(
    'input_not_requested',
  );
});

test('without interaction the same question never asks', async () => {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: alice.apiKey,
    body: { messages: [{ role: 'user', content: VAGUE }] },
  });
  await svc.temporal.workflow.getHandle(created.body.id as string).result();
  const types = (await eventsOf(created.body.id as string)).map((e) => e.type);
  expect(types.some((t) => t.startsWith('turn.input'))).toBe(false);
});

/** Creates a turn that accepts clarification questions and returns its id. */
async function clarifyingTurn(content: string, interaction: object = {}): Promise<string> {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: alice.apiKey,
    body: { messages: [{ role: 'user', content }], interaction: { accepts: ['clarification'], ...interaction } },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const resultOf = async (turnId: string) =>
  expectSchema(turnSchema, (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: alice.apiKey })).body).result!;

test('a question that reads two ways asks which period; the answer is computed over the one chosen', async () => {
  const turnId = await clarifyingTurn('What has my average resting heart rate been lately?');
  const request = (await waitForEvent(turnId, 'turn.input_required')) as unknown as InputRequest;
  expect(request).toMatchObject({ kind: 'clarification', default_option_id: 'last_30_days', free_text: true });
  expect(request.options.map((o) => o.id)).toEqual(['last_2_weeks', 'last_30_days', 'last_90_days']);
  const taken = await api(svc.url, 'POST', `/v1/turns/${turnId}/input`, {
    key: alice.apiKey,
    body: { request_id: request.request_id, option_id: 'last_2_weeks' },
  });
  expect(taken.status).toBe(200);
  await svc.temporal.workflow.getHandle(turnId).result();
  const result = await resultOf(turnId);
  expect(result.fact_sheet.length).toBeGreaterThan(0);
  expect(result.fact_sheet.every((fact) => fact.window === 'the last 14 days')).toBe(true);
  expect(result.answer).not.toMatch(/didn't answer/);
});

test('unanswered, a clarification goes on with the likely reading, and the answer says which it took', async () => {
  const turnId = await clarifyingTurn('How has my sleep been lately?', { timeout_seconds: 10 });
  const request = (await waitForEvent(turnId, 'turn.input_required')) as unknown as InputRequest;
  expect(request).toMatchObject({ kind: 'clarification', default_option_id: 'sleep_duration' });
  await svc.temporal.workflow.getHandle(turnId).result();
  const received = await waitForEvent(turnId, 'turn.input_received');
  expect(received).toMatchObject({ option_id: 'sleep_duration', source: 'expiry' });
  const result = await resultOf(turnId);
  expect(result.answer).toMatch(
    /^You didn't answer my question in time, so I went with the most likely reading: how long I sleep\./,
  );
  // The likely reading: how long, over the 30 days "lately" reads as.
  expect(result.answer).toMatch(/sleep minutes/i);
  expect(result.fact_sheet.every((fact) => fact.window === 'the last 30 days' && fact.unit !== 'points')).toBe(true);
  expect(result.fact_check?.issues).toEqual([]);
  // The turn has ended: the question waits for nothing now.
  const late = await api(svc.url, 'POST', `/v1/turns/${turnId}/input`, {
    key: alice.apiKey,
    body: { request_id: request.request_id, option_id: 'sleep_score' },
  });
  expect([late.status, errorCode(late)]).toEqual([409, 'input_not_requested']);
}, 60_000);

test('a clear question is not asked about, though the turn could ask', async () => {
  const turnId = await clarifyingTurn('What is my average resting heart rate over the last 90 days?');
  await svc.temporal.workflow.getHandle(turnId).result();
  const types = (await eventsOf(turnId)).map((e) => e.type);
  expect(types.some((t) => t.startsWith('turn.input'))).toBe(false);
  const calls = await svc.database.db.llmCall.findMany({ where: { turnId } });
  expect(calls.map((c) => c.step)).toContain('clarify');
});

test('a cancel during the wait ends the turn as cancelled; an answer after it is refused, and the log stays gapless', async () => {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: alice.apiKey,
    body: { messages: [{ role: 'user', content: VAGUE }], interaction: { accepts: ['confirmation'] } },
  });
  const turnId = created.body.id as string;
  const request = (await waitForEvent(turnId, 'turn.input_required')) as unknown as InputRequest;
  // 202 while the cancellation is on its way, 200 if the turn had already recorded it.
  expect([200, 202]).toContain(
    (await api(svc.url, 'POST', `/v1/turns/${turnId}/cancel`, { key: alice.apiKey })).status,
  );
  await expect(svc.temporal.workflow.getHandle(turnId).result()).rejects.toThrow();
  const late = await api(svc.url, 'POST', `/v1/turns/${turnId}/input`, {
    key: alice.apiKey,
    body: { request_id: request.request_id, option_id: 'scan' },
  });
  expect([late.status, errorCode(late)]).toEqual([409, 'input_not_requested']);
  const ended = expectSchema(
    turnSchema,
    (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: alice.apiKey })).body,
  );
  expect(ended).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
  expect(ended).not.toHaveProperty('pending_input');
  const events = await eventsOf(turnId);
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events.map((e) => e.type).filter((t) => t.startsWith('turn.input'))).toEqual(['turn.input_required']);
});
