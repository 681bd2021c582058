/**
 * `npm run turn:retry`: a turn failed by an injected fault is retried after the fault is switched off.
 * It resumes at the step that failed (earlier steps are not executed again: the ledger shows it) and
 * completes. The row and the event log record a second attempt; the failed attempt stays as it was.
 */
import { readPayload } from '../../platform/temporal/read-payload';
import { localActivityType } from '../../platform/temporal/local-activity-markers';
import { eventDataSchemas, type TurnEventType } from '../../contracts/event-data';
import { turnSchema } from '../../contracts/turn';
import { api, expectSchema } from '../support/http';
import { runCli } from '../support/cli';
import { startDemoService, type DemoService } from '../support/service';
import { openEventStream } from '../support/sse-client';

let demo: DemoService;
let env: Record<string, string>;

beforeAll(async () => {
  demo = await startDemoService();
  env = {
    TEMPORAL_ADDRESS: demo.svc.config.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: demo.svc.config.TEMPORAL_NAMESPACE,
    DATABASE_URL: demo.svc.config.DATABASE_URL,
  };
});
afterAll(async () => {
  await demo?.close();
});

async function failedTurn(question: string): Promise<string> {
  const { svc, user } = demo;
  // More 500s than the model steps' retry budget (4 attempts): synthesis fails for good.
  svc.scripted.faults.inject({ kind: 'server_error', step: 'synthesis', times: 4 });
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: question }] },
  });
  const turnId = created.body.id as string;
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
  await stream.closedByServer;
  expect(stream.events.at(-1)?.type).toBe('turn.failed');
  return turnId;
}

const ledger = async (turnId: string) =>
  (
    await demo.pool.query<{ step: string; outcome: string; cost_usd: string }>(
      'SELECT step, outcome, cost_usd::text FROM llm_calls WHERE turn_id = $1 ORDER BY created_at',
      [turnId],
    )
  ).rows;

test('a turn failed at synthesis resumes there, completes, and keeps its failed attempt on record', async () => {
  const { svc, user } = demo;
  const turnId = await failedTurn('What is heart rate variability?');
  const failed = expectSchema(
    turnSchema,
    (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey })).body,
  );
  expect(failed).toMatchObject({ status: 'failed', attempt: 1, previous_attempts: [] });
  expect(failed.error?.code).toBe('upstream_unavailable');
  const before = await ledger(turnId);
  const failedEventId = (await demo.pool.query('SELECT last_event_id FROM turns WHERE id = $1', [turnId])).rows[0]
    .last_event_id as number;

  const retried = await runCli('scripts/turn-retry.ts', [turnId, '--wait'], env);
  expect(retried.stderr).not.toContain('error');
  expect(retried.code).toBe(0);
  expect(retried.stdout).toContain(`turn ${turnId}: attempt 2 resumes at`);
  // The step as the Web UI's event history names it (its summary), and its activity type.
  expect(retried.stdout).toContain('resumes at 7 · Synthesis (streamed, fact sheet) [synthesise]');
  expect(retried.stdout).toContain(`turn ${turnId}: attempt 2 completed`);

  const turn = expectSchema(turnSchema, (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey })).body);
  expect(turn.status).toBe('completed');
  expect(turn.error).toBeNull();
  expect(turn.attempt).toBe(2);
  expect(turn.previous_attempts).toEqual([{ attempt: 1, error: failed.error, ended_at: failed.completed_at }]);

  // Resumed at the failed step: nothing before synthesis ran again; synthesis ran once more and succeeded.
  const after = await ledger(turnId);
  expect(after.slice(0, before.length)).toEqual(before);
  const added = after.slice(before.length);
  expect(added[0]).toMatchObject({ step: 'synthesis', outcome: 'success' });
  expect(added.map((c) => c.step)).not.toContain('domain_expert');
  expect(added.map((c) => c.step)).not.toContain('route');
  // The bill covers both attempts, the failed calls included.
  const total = after.reduce((sum, c) => sum + Number(c.cost_usd), 0);
  expect(turn.result!.cost_usd).toBeCloseTo(total, 6);

  // The log: the failed attempt untouched, then turn.retried, the new attempt's events, one terminal event.
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
  await stream.closedByServer;
  const events = stream.events;
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) expectSchema(eventDataSchemas[e.type as TurnEventType], e.data);
  const types = events.map((e) => e.type);
  expect(types[failedEventId - 1]).toBe('turn.failed');
  expect(events[failedEventId]).toMatchObject({
    type: 'turn.retried',
    data: { turn_id: turnId, attempt: 2, previous_error: failed.error },
  });
  expect(types.filter((t) => t === 'turn.started')).toHaveLength(1);
  expect(types.filter((t) => t === 'turn.retried')).toHaveLength(1);
  expect(types.at(-1)).toBe('turn.completed');
  const newAttempt = events.slice(failedEventId + 1);
  const agents = (type: string) => newAttempt.filter((e) => e.type === type).map((e) => e.data.agent);
  expect(agents('agent.started')).toEqual(['synthesis', 'memory']);
  expect(agents('agent.completed')).toEqual(['synthesis', 'memory']);
  const answer = newAttempt
    .filter((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis')
    .map((e) => e.data.delta)
    .join('');
  expect(answer).toBe(turn.result!.answer);

  // A client that saw the turn fail picks the new attempt up from there.
  const resumed = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, {
    apiKey: user.apiKey,
    lastEventId: failedEventId,
  });
  await resumed.closedByServer;
  expect(resumed.events.map((e) => e.id)).toEqual(events.slice(failedEventId).map((e) => e.id));
}, 120_000);

test('in the Temporal Web UI every step of the turn is named by its summary', async () => {
  const { svc, user } = demo;
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'What is heart rate variability?' }], stream: false },
  });
  const history = await svc.temporal.workflow.getHandle(res.body.id).fetchHistory();
  // Full activities on their ActivityTaskScheduled event, the local bookkeeping steps on their marker.
  const summaryPayloads = (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes || localActivityType(e))
    .map((e) => e.userMetadata?.summary);
  const summaries = await Promise.all(
    summaryPayloads.map((p) => (p ? readPayload<string>(demo.svc.temporal, p) : null)),
  );
  expect(summaries).toEqual([
    'Start the turn',
    'Recall memory',
    '0 · Classify vagueness',
    '1b · Route to agents',
    '2 · Rephrase the question per agent',
    '4 · Domain Expert (main)',
    '7 · Synthesis (streamed, fact sheet)',
    '8 · Memory · extract and store',
    'Complete the turn',
  ]);
}, 60_000);

test('only a failed turn can be retried: a completed one is refused and left alone', async () => {
  const { svc, user } = demo;
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks, that was really helpful!' }], stream: false },
  });
  expect(res.body.status).toBe('completed');
  const result = await runCli('scripts/turn-retry.ts', [res.body.id], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`error: turn ${res.body.id} is completed; only a failed turn can be retried`);
  const turn = await api(svc.url, 'GET', `/v1/turns/${res.body.id}`, { key: user.apiKey });
  expect(turn.body).toMatchObject({ status: 'completed', attempt: 1 });
}, 60_000);

test('a cancelled turn is not retried: its user asked it to stop', async () => {
  const { svc, user } = demo;
  svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 3000 });
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks, that was really helpful!' }] },
  });
  const turnId = created.body.id as string;
  const stream = openEventStream(`${svc.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
  await stream.waitFor((e) => e.type === 'turn.started');
  await api(svc.url, 'POST', `/v1/turns/${turnId}/cancel`, { key: user.apiKey });
  await stream.closedByServer;
  const result = await runCli('scripts/turn-retry.ts', [turnId], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('was cancelled by its user');
}, 60_000);

test('an unknown turn: exit 2; no turn id: usage and exit 1', async () => {
  const unknown = await runCli('scripts/turn-retry.ts', ['turn_01JUNKNOWNUNKNOWNUNKNOWNXX'], env);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('no turn turn_01JUNKNOWNUNKNOWNUNKNOWNXX');
  const usage = await runCli('scripts/turn-retry.ts', [], env);
  expect(usage.code).toBe(1);
  expect(usage.stderr).toContain('usage: npm run turn:retry -- <turn_id> [--wait]');
}, 60_000);
