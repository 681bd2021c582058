/**
 * The LLM layer against the scripted model and a real database: the ledger row of every call
 * (failed attempts included), error mapping, the once-per-turn cost warning, streaming.
 */
import Anthropic, { APIConnectionTimeoutError, APIError, RateLimitError } from '@anthropic-ai/sdk';
import { Pool } from 'pg';
import { z } from 'zod';
import { ConfigError } from '../../platform/config';
import { createEventLog, type EventLog } from '../../platform/event-log';
import { newId } from '../../platform/ids';
import {
  createAnthropicClient,
  createLlm,
  isScriptedModel,
  parseModelJson,
  ReplyStopped,
  type Llm,
  type LlmRequest,
} from '../../platform/llm';
import {
  LlmCallAbortedError,
  mapLlmError,
  ModelOutputInvalidError,
  UpstreamRequestError,
  UpstreamUnavailableError,
} from '../../platform/llm/errors';
import { costUsd, priceOf } from '../../platform/llm/prices';
import { defaultRules } from '../../dev/scripted-model/rules';
import { startScriptedModelServer, type ScriptedModelServer } from '../../dev/scripted-model/server';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import type { ModelCallId } from '../../contracts/steps';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MODEL = 'claude-sonnet-4-6';
const NARRATION =
  'Over the last thirty days your sleep averaged a little over seven hours, with longer nights on weekends and shorter ones midweek.';
/** The fallback reply's rule, replaced: a streamed answer long enough for many deltas. */
const narrationRule: ScriptedRule = { step: 'fallback_reply', respond: () => ({ text: NARRATION }) };

let t: TestDatabase;
let pool: Pool;
let events: EventLog;
let server: ScriptedModelServer;
let pacedServer: ScriptedModelServer;
let anthropic: Anthropic;
let llm: Llm;
let userId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  pool = new Pool({ connectionString: t.url });
  events = createEventLog(pool);
  const rules = [...defaultRules.filter((rule) => rule.step !== narrationRule.step), narrationRule];
  server = await startScriptedModelServer({ rules });
  pacedServer = await startScriptedModelServer({ rules, streamChunkDelayMs: 20 });
  anthropic = createAnthropicClient({ ANTHROPIC_BASE_URL: server.url });
  llm = createLlm({ anthropic, pool, events, costWarnUsd: 100, sendStepInputs: true });
  userId = newId('user');
  await t.db.user.create({ data: { id: userId, name: 'llm-test' } });
});

afterAll(async () => {
  await Promise.all([server.close(), pacedServer.close()]);
  await pool.end();
  await t.drop();
});

afterEach(() => server.faults.clear());

async function newTurn(): Promise<string> {
  const id = newId('turn');
  await t.db.turn.create({ data: { id, userId, messages: [], context: {} } });
  return id;
}

/** The inputs of a call whose prompt is the user's message itself (route, classify_vagueness, fallback_reply). */
const conversation = (text: string) => ({ messages: [{ role: 'user' as const, content: text }] });

const question = (text: string, model = MODEL): LlmRequest => ({
  model,
  maxTokens: 256,
  system: 'You are a careful classifier.',
  messages: [{ role: 'user', content: text }],
});

const ledger = (turnId: string) => t.db.llmCall.findMany({ where: { turnId }, orderBy: { createdAt: 'asc' } });

describe('complete', () => {
  test('returns the text and records a success row with tokens, cost and request id', async () => {
    const turnId = await newTurn();
    const response = await llm.complete(
      { turnId, step: 'classify_vagueness', inputs: conversation('Is anything interesting in my data?'), attempt: 1 },
      question('Is anything interesting in my data?'),
    );

    expect(response.text).toBe('high');
    expect(response.requestId).toMatch(/^req_scripted_/);
    const { input_tokens, output_tokens } = response.message.usage;
    expect(input_tokens).toBeGreaterThan(0);
    expect(response.costUsd).toBe(costUsd(MODEL, input_tokens, output_tokens));
    expect(response.costUsd).toBeGreaterThan(0);

    const rows = await ledger(turnId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      step: 'classify_vagueness',
      model: MODEL,
      attempt: 1,
      outcome: 'success',
      inputTokens: input_tokens,
      outputTokens: output_tokens,
      requestId: response.requestId,
      errorMessage: null,
    });
    expect(rows[0].id).toMatch(/^llm_/);
    expect(rows[0].costUsd.toNumber()).toBe(response.costUsd);
    // Written as UTC, as Prisma writes timestamps, whatever the session's time zone.
    expect(Math.abs(rows[0].createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(server.requests.entries().at(-1)).toMatchObject({ step: 'classify_vagueness', model: MODEL });
  });

  test('a 529 is billed as a failed attempt (no tokens, no cost, request id kept) and the retry succeeds', async () => {
    const turnId = await newTurn();
    server.faults.inject({ kind: 'overloaded', step: 'route' });

    const err = await llm
      .complete({ turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 }, question('What is HRV?'))
      .catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    expect(err).toMatchObject({ name: 'UpstreamUnavailableError', status: 529 });
    expect(err.requestId).toMatch(/^req_scripted_/);

    const retried = await llm.complete(
      { turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 2 },
      question('What is HRV?'),
    );
    expect(JSON.parse(retried.text)).toMatchObject({ main_agent: 'Domain Expert Agent' });

    const rows = await ledger(turnId);
    expect(rows.map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'overloaded'],
      [2, 'success'],
    ]);
    expect(rows[0]).toMatchObject({ inputTokens: 0, outputTokens: 0, requestId: err.requestId });
    expect(rows[0].costUsd.toNumber()).toBe(0);
    expect(rows[0].errorMessage).toContain('Overloaded');
  });

  test('maps failures to retryable and non-retryable errors and records each outcome', async () => {
    const turnId = await newTurn();
    const call = (step: ModelCallId, ctx: { signal?: AbortSignal } = {}) =>
      llm
        .complete({ turnId, step, inputs: conversation('hello'), attempt: 1, ...ctx }, question('hello'))
        .catch((e: unknown) => e);

    server.faults.inject({ kind: 'server_error' });
    const serverError = await call('route');
    expect(serverError).toBeInstanceOf(UpstreamUnavailableError);
    expect(serverError).toMatchObject({ status: 500 });

    // A step the scripted model has no rule for (the type rules it out; a misconfigured caller could still send it).
    const unknownStep = await call('no_such_step' as ModelCallId);
    expect(unknownStep).toBeInstanceOf(UpstreamRequestError);
    expect(unknownStep).toMatchObject({ name: 'UpstreamRequestError', status: 400 });
    expect((unknownStep as Error).message).toContain('no_such_step');

    server.faults.inject({ kind: 'hang' });
    const controller = new AbortController();
    const pending = call('route', { signal: controller.signal });
    while (server.faults.pending().length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toBeInstanceOf(LlmCallAbortedError);

    const closed = await startScriptedModelServer();
    await closed.close();
    const unreachable = createLlm({
      anthropic: createAnthropicClient({ ANTHROPIC_BASE_URL: closed.url }),
      pool,
      events,
      costWarnUsd: 100,
      sendStepInputs: true,
    });
    const refused = await unreachable
      .complete({ turnId, step: 'route', inputs: conversation('hello'), attempt: 1 }, question('hello'))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamUnavailableError);
    expect(refused).toMatchObject({ status: null, requestId: null });

    const rows = await ledger(turnId);
    expect(rows.map((r) => r.outcome)).toEqual(['server_error', 'bad_request', 'aborted', 'connection_error']);
    expect(rows[1].requestId).toMatch(/^req_scripted_/);
    expect(rows.every((r) => r.inputTokens === 0 && r.costUsd.toNumber() === 0)).toBe(true);
  });

  test("a call's inputs go in the request body to the scripted model, and only when configured to", async () => {
    const turnId = await newTurn();
    const inputs = conversation('What is HRV?');
    await llm.complete({ turnId, step: 'route', inputs, attempt: 1 }, question('What is HRV?'));
    expect(server.requests.entries().at(-1)).toMatchObject({ step: 'route', inputs });

    // As for the real API (ANTHROPIC_API_KEY set): no inputs field, which the scripted model refuses.
    const unconfigured = createLlm({ anthropic, pool, events, costWarnUsd: 100, sendStepInputs: false });
    const err = await unconfigured
      .complete({ turnId, step: 'route', inputs, attempt: 1 }, question('What is HRV?'))
      .catch((e: unknown) => e);
    expect(server.requests.entries().at(-1)).toMatchObject({ step: 'route', inputs: null });
    expect(err).toBeInstanceOf(UpstreamRequestError);
    expect(err).toMatchObject({ status: 400 });
    // The SDK's message quotes the API's error body as JSON.
    expect((err as Error).message).toMatch(/step \\?"route\\?": the request has no inputs/);
    expect(isScriptedModel({ ANTHROPIC_API_KEY: 'sk-test' })).toBe(false);
    expect(isScriptedModel({})).toBe(true);
  });

  test('a hung call times out as a retryable failure', async () => {
    const turnId = await newTurn();
    server.faults.inject({ kind: 'hang' });
    const impatient = createLlm({
      anthropic: new Anthropic({ baseURL: server.url, apiKey: 'scripted', maxRetries: 0, timeout: 200 }),
      pool,
      events,
      costWarnUsd: 100,
      sendStepInputs: true,
    });
    const err = await impatient
      .complete({ turnId, step: 'route', inputs: conversation('hi'), attempt: 1 }, question('hi'))
      .catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    // `timeout` in plain Node; under jest the SDK sees undici's AbortError from another realm and
    // reports a connection error instead (see test/unit/scripted-model.test.ts).
    expect(['timeout', 'connection_error']).toContain((await ledger(turnId))[0].outcome);
  });
});

describe('mapLlmError', () => {
  const headers = new Headers({ 'request-id': 'req_x' });
  test.each([
    {
      error: new RateLimitError(429, { type: 'error' }, 'slow down', headers),
      outcome: 'rate_limited',
      retryable: true,
    },
    { error: APIError.generate(401, { type: 'error' }, 'bad key', headers), outcome: 'auth_error', retryable: false },
    { error: APIError.generate(422, { type: 'error' }, 'bad', headers), outcome: 'bad_request', retryable: false },
    { error: APIError.generate(503, { type: 'error' }, 'down', headers), outcome: 'server_error', retryable: true },
    { error: new APIConnectionTimeoutError(), outcome: 'timeout', retryable: true },
    // An `error` event inside a 200 stream has no status, only Anthropic's error type.
    {
      error: new APIError(undefined, { type: 'error', error: { type: 'overloaded_error' } }, undefined, headers),
      outcome: 'overloaded',
      retryable: true,
    },
  ])('$error.constructor.name $error.status → $outcome', ({ error, outcome, retryable }) => {
    const mapped = mapLlmError(error);
    expect(mapped?.outcome).toBe(outcome);
    expect(mapped?.error).toBeInstanceOf(retryable ? UpstreamUnavailableError : UpstreamRequestError);
    expect(mapped?.error.requestId).toBe(error.requestID ?? null);
  });

  test('errors that are not the SDK are left alone', () => {
    expect(mapLlmError(new TypeError('bug'))).toBeNull();
  });
});

describe('cost warning', () => {
  const costWarnings = async (turnId: string) =>
    (await events.readAfter(turnId, 0)).filter((event) => event.type === 'cost_warning');

  test('fires once per turn, when the running total crosses the threshold', async () => {
    const turnId = await newTurn();
    const first = await llm.complete(
      { turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
      question('What is HRV?'),
    );
    // Crossed by the second call, not by the first alone.
    const threshold = first.costUsd * 1.5;
    const watched = createLlm({ anthropic, pool, events, costWarnUsd: threshold, sendStepInputs: true });
    expect(await costWarnings(turnId)).toEqual([]);

    const second = await watched.complete(
      { turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
      question('What is HRV?'),
    );
    await watched.complete(
      { turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
      question('What is HRV?'),
    );

    const warnings = await costWarnings(turnId);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].data).toMatchObject({ threshold_usd: threshold });
    expect(warnings[0].data.cost_usd).toBeCloseTo(first.costUsd + second.costUsd, 6);
  });

  test('two calls of one turn that cross the threshold together, at the same time, still warn', async () => {
    const probe = await llm.complete(
      { turnId: await newTurn(), step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
      question('What is HRV?'),
    );
    // Neither call alone reaches it; both together do, whichever commits last.
    const watched = createLlm({ anthropic, pool, events, costWarnUsd: probe.costUsd * 1.5, sendStepInputs: true });
    for (let round = 0; round < 5; round++) {
      const pair = await newTurn();
      await Promise.all(
        [1, 2].map(() =>
          watched.complete(
            { turnId: pair, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
            question('What is HRV?'),
          ),
        ),
      );
      expect(await costWarnings(pair)).toHaveLength(1);
    }
  });

  test("writing a call's row and adding up the turn's cost so far is one statement", async () => {
    const turnId = await newTurn();
    let statements = 0;
    const counting = {
      query: ((text: string, values?: unknown[]) => {
        statements++;
        return pool.query(text, values);
      }) as Pool['query'],
    };
    const counted = createLlm({ anthropic, pool: counting, events, costWarnUsd: 100, sendStepInputs: true });
    await counted.complete(
      { turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
      question('What is HRV?'),
    );
    expect(statements).toBe(1);
    const turn = await t.db.turn.findUniqueOrThrow({ where: { id: turnId } });
    const rows = await ledger(turnId);
    expect(Number(turn.llmCostUsd)).toBeCloseTo(Number(rows[0].costUsd), 6);
  });

  test('does not fire below the threshold', async () => {
    const turnId = await newTurn();
    await llm.complete(
      { turnId, step: 'route', inputs: conversation('What is HRV?'), attempt: 1 },
      question('What is HRV?'),
    );
    expect(await costWarnings(turnId)).toEqual([]);
  });
});

describe('ledger while Postgres is away', () => {
  test('a call whose row cannot be written is still billed: the row goes in with the next one', async () => {
    const turnId = await newTurn();
    let postgresAway = true;
    // The real pool, except that the ledger insert fails while "Postgres is away".
    const flakyPool = {
      query: ((text: string, values?: unknown[]) =>
        postgresAway && text.includes('INSERT INTO llm_calls')
          ? Promise.reject(new Error('Connection terminated unexpectedly'))
          : pool.query(text, values)) as Pool['query'],
    };
    const warn = jest.fn();
    const flakyLlm = createLlm({
      anthropic,
      pool: flakyPool,
      events,
      costWarnUsd: 100,
      sendStepInputs: true,
      logger: { warn },
    });
    server.faults.inject({ kind: 'stream_cut', step: 'fallback_reply' });
    const err = await flakyLlm
      .stream(
        { turnId, step: 'fallback_reply', inputs: conversation('sleep?'), attempt: 1 },
        question('sleep?'),
        async () => {},
      )
      .catch((e) => e);
    // The caller still learns what went wrong upstream, not that the ledger could not be written.
    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    expect(await ledger(turnId)).toEqual([]);
    expect(warn).toHaveBeenCalledWith('llm_calls rows kept in memory until Postgres is back', {
      rows: 1,
      error: expect.stringContaining('Connection terminated'),
    });

    postgresAway = false;
    await flakyLlm.complete(
      { turnId, step: 'fallback_reply', inputs: conversation('sleep?'), attempt: 2 },
      question('sleep?'),
    );
    const rows = await ledger(turnId);
    expect(rows.map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'stream_interrupted'],
      [2, 'success'],
    ]);
    expect(rows[0].outputTokens).toBeGreaterThan(0);
  });
});

describe('stream', () => {
  test('delivers deltas in order, one at a time, and records the call', async () => {
    const turnId = await newTurn();
    const deltas: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const response = await llm.stream(
      { turnId, step: 'fallback_reply', inputs: conversation('narrate'), attempt: 1 },
      question('narrate'),
      async (delta) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        deltas.push(delta);
        inFlight--;
      },
    );

    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(NARRATION);
    expect(response.text).toBe(NARRATION);
    expect(maxInFlight).toBe(1);
    expect(response.requestId).toMatch(/^req_scripted_/);
    expect(server.requests.entries().at(-1)).toMatchObject({ step: 'fallback_reply', stream: true });
    const [row] = await ledger(turnId);
    expect(row).toMatchObject({
      outcome: 'success',
      outputTokens: response.message.usage.output_tokens,
      requestId: response.requestId,
    });
  });

  test('a stream cut mid-way fails retryably and bills the tokens known so far', async () => {
    const turnId = await newTurn();
    server.faults.inject({ kind: 'stream_cut' });
    let received = '';
    const err = await llm
      .stream(
        { turnId, step: 'fallback_reply', inputs: conversation('narrate'), attempt: 1 },
        question('narrate'),
        async (delta) => {
          received += delta;
        },
      )
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    expect(received.length).toBeGreaterThan(0);
    expect(NARRATION.startsWith(received) && received !== NARRATION).toBe(true);
    const [row] = await ledger(turnId);
    expect(row).toMatchObject({ outcome: 'stream_interrupted' });
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(row.costUsd.toNumber()).toBe(costUsd(MODEL, row.inputTokens, row.outputTokens));
    expect(row.costUsd.toNumber()).toBeGreaterThan(0);
    expect(row.requestId).toMatch(/^req_scripted_/);
  });

  test('a 529 before the stream starts is an overloaded attempt', async () => {
    const turnId = await newTurn();
    server.faults.inject({ kind: 'overloaded' });
    const err = await llm
      .stream({ turnId, step: 'fallback_reply', inputs: conversation('x'), attempt: 1 }, question('x'), async () => {})
      .catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    expect((await ledger(turnId))[0]).toMatchObject({ outcome: 'overloaded', inputTokens: 0 });
  });

  test('aborting mid-stream records an aborted call with the tokens known so far', async () => {
    const turnId = await newTurn();
    const paced = createLlm({
      anthropic: createAnthropicClient({ ANTHROPIC_BASE_URL: pacedServer.url }),
      pool,
      events,
      costWarnUsd: 100,
      sendStepInputs: true,
    });
    const controller = new AbortController();
    const deltas: string[] = [];
    const err = await paced
      .stream(
        { turnId, step: 'fallback_reply', inputs: conversation('x'), attempt: 1, signal: controller.signal },
        question('x'),
        async (d) => {
          deltas.push(d);
          controller.abort();
        },
      )
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(LlmCallAbortedError);
    expect(deltas.join('').length).toBeLessThan(NARRATION.length);
    const [row] = await ledger(turnId);
    expect(row.outcome).toBe('aborted');
    expect(row.inputTokens).toBeGreaterThan(0);
  });

  test("onDelta's own error reaches the caller unchanged; the call is recorded as aborted", async () => {
    const turnId = await newTurn();
    const sinkError = new Error('event log unavailable');
    const err = await llm
      .stream({ turnId, step: 'fallback_reply', inputs: conversation('x'), attempt: 1 }, question('x'), async () => {
        throw sinkError;
      })
      .catch((e: unknown) => e);

    expect(err).toBe(sinkError);
    const [row] = await ledger(turnId);
    expect(row.outcome).toBe('aborted');
    expect(row.errorMessage).toContain('event log unavailable');
  });

  test('a caller that stops the reply (ReplyStopped) gets the reply so far; the call is recorded as aborted, billed', async () => {
    const turnId = await newTurn();
    const paced = createLlm({
      anthropic: createAnthropicClient({ ANTHROPIC_BASE_URL: pacedServer.url }),
      pool,
      events,
      costWarnUsd: 100,
      sendStepInputs: true,
    });
    const deltas: string[] = [];
    const reply = await paced.stream(
      { turnId, step: 'fallback_reply', inputs: conversation('x'), attempt: 1 },
      question('x'),
      async (d) => {
        deltas.push(d);
        if (deltas.length === 2) throw new ReplyStopped('enough');
      },
    );
    expect(reply.text).toBe(deltas.join(''));
    expect(reply.text.length).toBeLessThan(NARRATION.length);
    const [row] = await ledger(turnId);
    expect(row.outcome).toBe('aborted');
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(reply.costUsd).toBeGreaterThan(0);
  });
});

describe('parseModelJson', () => {
  const routing = z.object({ main_agent: z.string(), supporting_agents: z.string() });

  test.each([
    ['bare', '{"main_agent":"Data Science Agent","supporting_agents":""}'],
    ['fenced', 'Here you go:\n```json\n{"main_agent": "Data Science Agent", "supporting_agents": ""}\n```\nDone.'],
    [
      'in prose, after bracketed text',
      'Routing [final]: {"main_agent":"Data Science Agent","supporting_agents":""} ok',
    ],
    ['with braces inside strings', 'x {"main_agent":"Data Science Agent","supporting_agents":"", "note":"a } b"}'],
  ])('extracts the object: %s', (_name, text) => {
    expect(parseModelJson(text, routing)).toEqual({ main_agent: 'Data Science Agent', supporting_agents: '' });
  });

  test('reads arrays too (memory extraction answers with one)', () => {
    expect(parseModelJson('[{"text":"likes running"}]', z.array(z.object({ text: z.string() })))).toEqual([
      { text: 'likes running' },
    ]);
  });

  test('truncated JSON is ModelOutputInvalidError', () => {
    expect(() => parseModelJson('{"main_agent": "Data Sc', routing, 'req_1')).toThrow(ModelOutputInvalidError);
    expect(() => parseModelJson('{"main_agent": "Data Sc', routing)).toThrow(/no complete JSON value/);
  });

  test('the error says how long the output was, never what it said (it can quote health data)', () => {
    const answer = 'Your resting heart rate of 58 bpm {"main_agent": 7}';
    for (const text of [answer, '{"main_agent": "Your LDL of 131']) {
      const err = (() => {
        try {
          return parseModelJson(text, routing);
        } catch (e) {
          return e as Error;
        }
      })() as Error;
      expect(err).toBeInstanceOf(ModelOutputInvalidError);
      expect(err.message).toContain(`${text.length} characters`);
      expect(err.message).not.toMatch(/58|131|heart|LDL/);
    }
  });

  test('the wrong shape names the field', () => {
    const err = (() => {
      try {
        parseModelJson('{"main_agent": 3, "supporting_agents": ""}', routing, 'req_1');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ModelOutputInvalidError);
    expect(err).toMatchObject({ name: 'ModelOutputInvalidError', requestId: 'req_1', status: null });
    expect((err as Error).message).toContain('main_agent');
  });

  test('a malformed answer from the scripted model fails to parse', async () => {
    const turnId = await newTurn();
    server.faults.inject({ kind: 'malformed', step: 'route' });
    const response = await llm.complete(
      { turnId, step: 'route', inputs: conversation('What is my average sleep?'), attempt: 1 },
      question('What is my average sleep?'),
    );
    expect(() => parseModelJson(response.text, routing, response.requestId)).toThrow(ModelOutputInvalidError);
  });
});

describe('createAnthropicClient', () => {
  test('without a key it needs the scripted model URL', () => {
    expect(() => createAnthropicClient({})).toThrow(ConfigError);
    expect(() => createAnthropicClient({})).toThrow(/ANTHROPIC_BASE_URL/);
  });

  test('SDK retries are off: Temporal owns retries', () => {
    const real = createAnthropicClient({ ANTHROPIC_API_KEY: 'sk-test' });
    expect(real.maxRetries).toBe(0);
    expect(real.baseURL).toBe('https://api.anthropic.com');
    expect(createAnthropicClient({ ANTHROPIC_BASE_URL: server.url }).maxRetries).toBe(0);
  });
});

describe('prices', () => {
  test('dated snapshots cost what their family costs', () => {
    expect(priceOf('claude-haiku-4-5-20251001')).toEqual(priceOf('claude-haiku-4-5'));
  });

  test('an unknown model is billed at the most expensive price, never zero', () => {
    expect(priceOf('claude-mystery-9')).toEqual(priceOf('claude-opus-4-7'));
    expect(costUsd('claude-mystery-9', 1000, 1000)).toBeGreaterThan(costUsd('claude-haiku-4-5', 1000, 1000));
    expect(priceOf('constructor')).toEqual(priceOf('claude-opus-4-7'));
  });

  test('cost is USD per million tokens', () => {
    expect(costUsd('claude-sonnet-4-6', 1000, 100)).toBe(0.0045);
    expect(costUsd('claude-opus-4-7', 1_000_000, 1_000_000)).toBe(30);
    expect(costUsd('claude-haiku-4-5', 0, 0)).toBe(0);
  });
});
