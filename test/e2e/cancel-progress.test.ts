/**
 * Signals and queries through the API: POST /v1/turns/:id/cancel and the `progress` object on
 * GET /v1/turns/:id, over real HTTP, a real worker and a real Temporal server.
 */
import { errorEnvelopeSchema } from '../../contracts/errors';
import { TERMINAL_EVENTS } from '../../contracts/event-data';
import { turnSchema, type Turn } from '../../contracts/turn';
import { api, expectSchema, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let alice: { userId: string; apiKey: string };
let bob: { userId: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService({ scripted: { streamChunkDelayMs: 40 } });
  alice = await svc.createUser('alice');
  bob = await svc.createUser('bob');
});
afterAll(async () => {
  await svc?.close();
});

function expectNotFound(res: { status: number; body: unknown }) {
  expect(res.status).toBe(404);
  expect(expectSchema(errorEnvelopeSchema, res.body).error.code).toBe('not_found');
}

async function getTurn(id: string, key = alice.apiKey): Promise<Turn> {
  const res = await api(svc.url, 'GET', `/v1/turns/${id}`, { key });
  expect(res.status).toBe(200);
  return expectSchema(turnSchema, res.body);
}

/** Polls GET until the turn reports it is in `step`; the slow fault holds it there for seconds. */
async function waitForStep(id: string, step: string): Promise<Turn> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const turn = await getTurn(id);
    if (turn.progress?.current_step === step) return turn;
    if (Date.now() > deadline) throw new Error(`turn never reached ${step}: ${JSON.stringify(turn)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startSlowFallbackTurn(): Promise<string> {
  await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 5000 });
  const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: thanks });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const waitForEnd = (id: string) =>
  svc.temporal.workflow
    .getHandle(id)
    .result()
    .catch(() => undefined);

async function eventsOf(turnId: string) {
  return svc.database.db.turnEvent.findMany({ where: { turnId }, orderBy: { id: 'asc' } });
}

describe('GET /v1/turns/:id progress', () => {
  test('shows the step a turn is held in, the steps before it and the cost so far; none once it ends', async () => {
    const id = await startSlowFallbackTurn();
    const held = await waitForStep(id, 'fallback_reply');
    expect(held.status).toBe('running');
    const progress = held.progress!;
    expect(progress.completed_steps).toEqual(['start_turn', 'recall_memory', 'classify_vagueness', 'route']);
    expect(progress.agents_started).toEqual([]);
    // classify_vagueness and route have been billed by now.
    const billed = await svc.database.db.llmCall.findMany({ where: { turnId: id } });
    expect(billed.length).toBeGreaterThanOrEqual(2);
    expect(progress.cost_usd_so_far).toBeGreaterThan(0);
    expect(progress.cost_usd_so_far).toBeLessThanOrEqual(billed.reduce((sum, c) => sum + Number(c.costUsd), 0));

    await waitForEnd(id);
    const done = await getTurn(id);
    expect(done.status).toBe('completed');
    expect(done.progress).toBeUndefined();
  });
});

describe('POST /v1/turns/:id/cancel', () => {
  test('cancelling mid-turn ends it failed with code cancelled, one turn.failed event, a gapless log', async () => {
    const id = await startSlowFallbackTurn();
    await waitForStep(id, 'fallback_reply');

    const cancel = await api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: alice.apiKey });
    expect(cancel.status).toBe(202);
    expect(expectSchema(turnSchema, cancel.body).id).toBe(id);
    await waitForEnd(id);

    const turn = await getTurn(id);
    expect(turn.status).toBe('failed');
    expect(turn.error?.code).toBe('cancelled');
    expect(turn.result).toBeNull();
    expect(turn.progress).toBeUndefined();
    const events = await eventsOf(id);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => TERMINAL_EVENTS.includes(e.type as never)).map((e) => e.type)).toEqual(['turn.failed']);

    // Again: the same failed turn, no error, no second terminal event.
    const again = await api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: alice.apiKey });
    expect(again.status).toBe(200);
    expect(expectSchema(turnSchema, again.body)).toEqual(turn);
    expect(await eventsOf(id)).toHaveLength(events.length);
  });

  test('the cancellation reaches the step in flight: its model call is aborted, not waited out', async () => {
    // Held far longer than cancellation takes to arrive through the activity's heartbeats.
    await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 30_000 });
    const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: thanks });
    const id = created.body.id as string;
    await waitForStep(id, 'fallback_reply');
    await api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: alice.apiKey });
    await waitForEnd(id);

    // The held call ends in the ledger as aborted; had the step not heard of the cancellation, it would
    // have waited the 30 s out and been billed as a success.
    const deadline = Date.now() + 25_000;
    let reply: Array<{ outcome: string }> = [];
    while (reply.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      reply = await svc.database.db.llmCall.findMany({ where: { turnId: id, step: 'fallback_reply' } });
    }
    expect(reply.map((c) => c.outcome)).toEqual(['aborted']);
  }, 60_000);

  test('a repeated cancel while the cancellation is still in flight is harmless', async () => {
    const id = await startSlowFallbackTurn();
    await waitForStep(id, 'fallback_reply');
    const [first, second] = await Promise.all([
      api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: alice.apiKey }),
      api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: alice.apiKey }),
    ]);
    for (const res of [first, second]) {
      expect([200, 202]).toContain(res.status);
      expect(expectSchema(turnSchema, res.body).id).toBe(id);
    }
    await waitForEnd(id);
    expect((await getTurn(id)).error?.code).toBe('cancelled');
    expect((await eventsOf(id)).filter((e) => e.type === 'turn.failed')).toHaveLength(1);
  });

  test('cancelling a completed turn is a no-op that returns it unchanged', async () => {
    const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: { ...thanks, stream: false } });
    const completed = expectSchema(turnSchema, created.body);
    expect(completed.status).toBe('completed');
    const eventCount = (await eventsOf(completed.id)).length;

    const res = await api(svc.url, 'POST', `/v1/turns/${completed.id}/cancel`, { key: alice.apiKey });
    expect(res.status).toBe(200);
    expect(expectSchema(turnSchema, res.body)).toEqual(completed);
    expect(await getTurn(completed.id)).toEqual(completed);
    expect(await eventsOf(completed.id)).toHaveLength(eventCount);
  });

  test("another user's turn and unknown ids are 404; no key is 401", async () => {
    const id = await startSlowFallbackTurn();
    expectNotFound(await api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: bob.apiKey }));
    expectNotFound(
      await api(svc.url, 'POST', '/v1/turns/turn_01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel', { key: alice.apiKey }),
    );
    expectNotFound(await api(svc.url, 'POST', '/v1/turns/not-a-turn/cancel', { key: alice.apiKey }));
    const anonymous = await api(svc.url, 'POST', `/v1/turns/${id}/cancel`);
    expect(anonymous.status).toBe(401);
    expectSchema(errorEnvelopeSchema, anonymous.body);
    // Bob's attempt did not touch Alice's turn.
    await waitForEnd(id);
    expect((await getTurn(id)).status).toBe('completed');
  });
});

test('/openapi.json lists the cancel operation', async () => {
  const res = await api(svc.url, 'GET', '/openapi.json');
  const cancel = res.body.paths['/v1/turns/{id}/cancel'].post;
  expect(cancel.operationId).toBe('cancelTurn');
  expect(Object.keys(cancel.responses)).toEqual(expect.arrayContaining(['200', '202', '401', '404']));
});
