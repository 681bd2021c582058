/**
 * Model faults through whole turns, over the HTTP API and SSE: the scripted model answers 529 and 500
 * storms, slow replies past the client's timeout, malformed JSON and streams cut off mid-answer.
 *
 * - Fewer failures than the retry budget (modelSteps: 4 attempts): the step is retried with backoff,
 *   each retry announced by `step.retry`, and the turn completes. Every failed attempt is in the
 *   `llm_calls` ledger, and the result's `cost_usd` is the ledger's sum, failed attempts included
 *   (a 529 carries no usage and costs 0; a cut stream and a malformed answer are billed, and counted).
 * - Past the budget: `turn.failed`, last and once, with `upstream_unavailable` or `model_output_invalid`
 *   in the documented error shape, whose `request_id` is the failing call's, and the turn's `cost_usd`
 *   (every failed attempt included) on the event and on GET.
 * - A streamed step that is retried: its narration is append-only, as the contract says. The new attempt
 *   goes on from the text the cut one showed, so a client that concatenates the deltas ends with the
 *   answer; `step.retry` still announces the attempt, for clients that show it.
 *
 * Production's SDK request timeout is two minutes and not configurable, so the timeout case runs on a
 * worker process wired as production's except for a 3 s SDK timeout (test/support/short-timeout-worker.ts).
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { docsUrl } from '../../contracts/docs-url';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { eventDataSchemas, type TurnEventType } from '../../contracts/event-data';
import { turnSchema, type Turn } from '../../contracts/turn';
import type { FaultSpec } from '../../dev/scripted-model/faults';
import type { LoggedRequest } from '../../dev/scripted-model/request-log';
import { api, expectSchema } from '../support/http';
import { startDemoService, startTestService, type DemoService, type TestService } from '../support/service';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

/** Coaching on the user's data: the coach's draft makes an answer of several sentences. */
const COACHING = 'Can you give me some tips for building a morning routine?';
const THANKS = 'thanks!';
/** modelSteps' retry policy (workflows/activity-proxies.ts): attempts, and the backoff before attempts 2, 3, 4. */
const MAX_ATTEMPTS = 4;
const BACKOFF_MS = [1000, 2000, 4000];

let demo: DemoService;

beforeAll(async () => {
  demo = await startDemoService();
});
afterAll(async () => {
  await demo?.close();
});

type LedgerRow = Awaited<ReturnType<TestService['database']['db']['llmCall']['findMany']>>[number];

interface Asked {
  turn: Turn;
  events: ReceivedEvent[];
  ledger: LedgerRow[];
  /** What the scripted model was sent during this turn, in order. */
  requests: LoggedRequest[];
}

/** Injects the faults, asks the question, follows the turn over SSE to its end, then reads the turn and its ledger. */
async function ask(svc: TestService, key: string, question: string, faults: FaultSpec[]): Promise<Asked> {
  for (const fault of faults) svc.scripted.faults.inject(fault);
  const requestsBefore = svc.scripted.requests.entries().length;
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key,
    body: { messages: [{ role: 'user', content: question }] },
  });
  expect(created.status).toBe(201);
  const stream = openEventStream(`${svc.url}/v1/turns/${created.body.id}/events`, { apiKey: key });
  await stream.closedByServer;
  expect(svc.scripted.faults.pending()).toEqual([]); // every fault was taken by this turn
  const fetched = await api(svc.url, 'GET', `/v1/turns/${created.body.id}`, { key });
  const turn = expectSchema(turnSchema, fetched.body);
  const ledger = await svc.database.db.llmCall.findMany({ where: { turnId: turn.id }, orderBy: { createdAt: 'asc' } });
  const { events } = stream;
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) expectSchema(eventDataSchemas[e.type as TurnEventType], e.data);
  return { turn, events, ledger, requests: svc.scripted.requests.entries().slice(requestsBefore) };
}

const askDemo = (question: string, faults: FaultSpec[]) => ask(demo.svc, demo.user.apiKey, question, faults);

const ofType = (events: ReceivedEvent[], type: string) => events.filter((e) => e.type === type);
const retriesOf = (events: ReceivedEvent[], step: string) =>
  ofType(events, 'step.retry')
    .filter((e) => e.data.step === step)
    .map((e) => e.data.attempt);
const callsOf = (ledger: LedgerRow[], step: string) =>
  ledger.filter((r) => r.step === step).map((r) => ({ attempt: r.attempt, outcome: r.outcome }));
const ledgerSum = (ledger: LedgerRow[]) => ledger.reduce((sum, r) => sum + r.costUsd.toNumber(), 0);

function expectCompleted({ turn, events, ledger }: Asked) {
  expect(turn.status).toBe('completed');
  expect(turn.error).toBeNull();
  expect(ofType(events, 'turn.failed')).toEqual([]);
  expect(ofType(events, 'turn.completed')).toHaveLength(1);
  expect(events.at(-1)!.type).toBe('turn.completed');
  // cost_usd is every call of the turn, failed attempts included.
  expect(turn.result!.cost_usd).toBeCloseTo(ledgerSum(ledger), 6);
  expect(turn.cost_usd).toBe(turn.result!.cost_usd);
}

function expectFailed({ turn, events, ledger }: Asked, code: string) {
  expect(turn.status).toBe('failed');
  expect(turn.result).toBeNull();
  expect(ofType(events, 'turn.completed')).toEqual([]);
  expect(ofType(events, 'turn.failed')).toHaveLength(1);
  const last = events.at(-1)!;
  expect(last.type).toBe('turn.failed');
  // The error in the documented envelope shape, the same on the stream and on GET.
  const { error } = expectSchema(errorEnvelopeSchema, { error: turn.error });
  expect(error).toMatchObject({ code, docs_url: docsUrl(code) });
  expect(error.message).not.toBe('');
  expect(last.data.error).toEqual(turn.error);
  // What the failed turn cost, every failed attempt included: on the event and on GET.
  expect(last.data.cost_usd).toBeCloseTo(ledgerSum(ledger), 6);
  expect(turn.cost_usd).toBeCloseTo(ledgerSum(ledger), 6);
  return error;
}

/** The ledger rows of a step are written when each attempt ends, so their spacing bounds the backoff from below. */
function expectBackoff(rows: LedgerRow[]) {
  for (let i = 1; i < rows.length; i++) {
    const gap = rows[i].createdAt.getTime() - rows[i - 1].createdAt.getTime();
    expect(gap).toBeGreaterThanOrEqual(BACKOFF_MS[i - 1]);
  }
}

describe('fewer failures than the retry budget', () => {
  test('a 529 storm on route: retried with backoff, step.retry for each new attempt, then the turn completes', async () => {
    const storm = MAX_ATTEMPTS - 1;
    const asked = await askDemo(THANKS, [{ kind: 'overloaded', step: 'route', times: storm }]);
    expectCompleted(asked);
    expect(retriesOf(asked.events, 'route')).toEqual([2, 3, 4]);
    expect(callsOf(asked.ledger, 'route')).toEqual([
      { attempt: 1, outcome: 'overloaded' },
      { attempt: 2, outcome: 'overloaded' },
      { attempt: 3, outcome: 'overloaded' },
      { attempt: 4, outcome: 'success' },
    ]);
    const route = asked.ledger.filter((r) => r.step === 'route');
    expectBackoff(route);
    // A 529 carries no usage, so it costs nothing; it is still a ledger row with Anthropic's request id.
    for (const failed of route.slice(0, storm)) {
      expect(failed.costUsd.toNumber()).toBe(0);
      expect(failed.requestId).toMatch(/^req_scripted_/);
    }
    // Earlier steps ran once; the turn went on past route.
    expect(callsOf(asked.ledger, 'classify_vagueness')).toEqual([{ attempt: 1, outcome: 'success' }]);
    expect(callsOf(asked.ledger, 'fallback_reply')).toEqual([{ attempt: 1, outcome: 'success' }]);
  });

  test('malformed JSON from route twice: retried, then the turn completes; the malformed answers are billed and in cost_usd', async () => {
    const asked = await askDemo(THANKS, [{ kind: 'malformed', step: 'route', times: 2 }]);
    expectCompleted(asked);
    expect(retriesOf(asked.events, 'route')).toEqual([2, 3]);
    // The calls themselves succeeded (the model answered, and is paid); their output failed to parse.
    const route = asked.ledger.filter((r) => r.step === 'route');
    expect(route.map((r) => r.attempt)).toEqual([1, 2, 3]);
    for (const call of route) expect(call.costUsd.toNumber()).toBeGreaterThan(0);
  });
});

describe('a streamed step cut off mid-answer (synthesis of a coached turn)', () => {
  let asked: Asked;
  beforeAll(async () => {
    // An answer of several sentences, so that whole checked sentences have gone out when the cut comes.
    asked = await askDemo(COACHING, [{ kind: 'stream_cut', step: 'synthesis', times: 1 }]);
  });

  test('is retried and the turn completes; the cut attempt is billed for its tokens and counted in cost_usd', () => {
    expectCompleted(asked);
    expect(asked.turn.result!.agents_used).toContain('health_coach');
    expect(callsOf(asked.ledger, 'synthesis')).toEqual([
      { attempt: 1, outcome: 'stream_interrupted' },
      { attempt: 2, outcome: 'success' },
    ]);
    const cut = asked.ledger.find((r) => r.step === 'synthesis' && r.attempt === 1)!;
    expect(cut.inputTokens).toBeGreaterThan(0);
    expect(cut.costUsd.toNumber()).toBeGreaterThan(0);
    const succeeded = asked.ledger.filter((r) => r.outcome === 'success');
    expect(asked.turn.result!.cost_usd).toBeCloseTo(ledgerSum(succeeded) + cut.costUsd.toNumber(), 6);
  });

  test("the stream is append-only: the new attempt goes on from the cut one's text, and the deltas concatenated are the answer", () => {
    const { events, turn } = asked;
    const deltas = (attempt: number) =>
      ofType(events, 'agent.thought').filter((e) => e.data.agent === 'synthesis' && e.data.attempt === attempt);
    const partial = deltas(1);
    const retried = deltas(2);
    const retry = ofType(events, 'step.retry');
    expect(retry.map((e) => e.data)).toEqual([expect.objectContaining({ step: 'synthesis', attempt: 2 })]);
    for (const thought of [...partial, ...retried]) expect(thought.data.step).toBe(retry[0].data.step);
    // The cut attempt showed whole checked sentences before the cut; the new attempt adds what follows them.
    expect(partial.length).toBeGreaterThan(0);
    expect(retried.length).toBeGreaterThan(0);
    expect(Math.max(...partial.map((e) => e.id))).toBeLessThan(retry[0].id);
    expect(Math.min(...retried.map((e) => e.id))).toBeGreaterThan(retry[0].id);
    const answer = turn.result!.answer;
    const partialText = partial.map((e) => e.data.delta).join('');
    const retriedText = retried.map((e) => e.data.delta).join('');
    expect(partialText).not.toBe('');
    expect(partialText + retriedText).toBe(answer);
    expect(
      ofType(events, 'agent.thought')
        .filter((e) => e.data.agent === 'synthesis')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe(answer);
    // The agent's brackets are deterministic: once each, around the answer that counts.
    const synthesisEvents = (type: string) => ofType(events, type).filter((e) => e.data.agent === 'synthesis');
    expect(synthesisEvents('agent.started')).toHaveLength(1);
    expect(synthesisEvents('agent.completed')).toHaveLength(1);
    expect(synthesisEvents('agent.completed')[0].id).toBeGreaterThan(Math.max(...retried.map((e) => e.id)));
  });

  test('the new attempt asked the model to go on from the text already shown (the Messages API prefill)', () => {
    const synthesis = asked.requests.filter((r) => r.step === 'synthesis');
    expect(synthesis).toHaveLength(2);
    expect(synthesis[0].messages.at(-1)?.role).toBe('user');
    const prefill = synthesis[1].messages.at(-1);
    expect(prefill?.role).toBe('assistant');
    expect(asked.turn.result!.answer.startsWith(String(prefill?.content))).toBe(true);
  });
});

describe('past the retry budget', () => {
  test('a 500 storm on route: turn.failed with upstream_unavailable and the request id of the last failed call', async () => {
    const asked = await askDemo(THANKS, [{ kind: 'server_error', step: 'route', times: MAX_ATTEMPTS }]);
    const error = expectFailed(asked, 'upstream_unavailable');
    expect(retriesOf(asked.events, 'route')).toEqual([2, 3, 4]);
    expect(callsOf(asked.ledger, 'route')).toEqual([
      { attempt: 1, outcome: 'server_error' },
      { attempt: 2, outcome: 'server_error' },
      { attempt: 3, outcome: 'server_error' },
      { attempt: 4, outcome: 'server_error' },
    ]);
    const route = asked.ledger.filter((r) => r.step === 'route');
    expectBackoff(route);
    const lastFailed = route.at(-1)!;
    expect(lastFailed.requestId).toMatch(/^req_scripted_/);
    expect(error.request_id).toBe(lastFailed.requestId);
    // Nothing after route ran.
    expect(asked.ledger.map((r) => r.step)).toEqual(['classify_vagueness', 'route', 'route', 'route', 'route']);
    expect(ofType(asked.events, 'agent.started')).toEqual([]);
  });

  test('malformed JSON from route on every attempt: turn.failed with model_output_invalid', async () => {
    const asked = await askDemo(THANKS, [{ kind: 'malformed', step: 'route', times: MAX_ATTEMPTS }]);
    const error = expectFailed(asked, 'model_output_invalid');
    // The request id of the very answer that could not be used: the last attempt's.
    expect(error.request_id).toBe(asked.ledger.filter((r) => r.step === 'route').at(-1)!.requestId);
    expect(error.request_id).toMatch(/^req_scripted_/);
    expect(retriesOf(asked.events, 'route')).toEqual([2, 3, 4]);
    const route = asked.ledger.filter((r) => r.step === 'route');
    expect(route.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    for (const call of route) expect(call.costUsd.toNumber()).toBeGreaterThan(0);
    expect(asked.ledger.map((r) => r.step)).toEqual(['classify_vagueness', 'route', 'route', 'route', 'route']);
  });
});

describe('a model call slower than the client timeout', () => {
  const TIMEOUT_MS = 3000;
  let svc: TestService;
  let worker: ChildProcess | null = null;
  beforeAll(async () => {
    svc = await startTestService();
    await svc.stopWorker();
    worker = await spawnWorkerProcess(svc.config, {
      script: path.join(__dirname, '..', 'support', 'short-timeout-worker.ts'),
      env: { AMY_TEST_LLM_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
  });
  afterAll(async () => {
    if (worker) await killHard(worker);
    await svc?.close();
  });

  test('times out, is recorded as a timeout, retried, and the turn completes', async () => {
    const { apiKey } = await svc.createUser();
    const asked = await ask(svc, apiKey, THANKS, [{ kind: 'slow', step: 'route', times: 1, delay_ms: 5 * TIMEOUT_MS }]);
    expectCompleted(asked);
    expect(retriesOf(asked.events, 'route')).toEqual([2]);
    expect(callsOf(asked.ledger, 'route')).toEqual([
      { attempt: 1, outcome: 'timeout' },
      { attempt: 2, outcome: 'success' },
    ]);
    const timedOut = asked.ledger.find((r) => r.step === 'route' && r.attempt === 1)!;
    expect(timedOut.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
  });
});
