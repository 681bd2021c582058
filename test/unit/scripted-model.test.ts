/**
 * The scripted model through the real Anthropic SDK: message shape, the SSE sequence, tool use,
 * the request log, every fault kind, request validation (a call's inputs included), the control
 * endpoints' refusal of requests not addressed to the server itself, and the default rules, which
 * answer from a call's inputs, never from its prompt.
 */
import { NO_WEB } from '../../dev/scripted-model/web-tools';
import Anthropic, {
  APIConnectionError,
  APIError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
} from '@anthropic-ai/sdk';
import http from 'node:http';
import { RequestLog } from '../../dev/scripted-model/request-log';
import { defaultRules } from '../../dev/scripted-model/rules';
import { startScriptedModelServer, type ScriptedModelServer } from '../../dev/scripted-model/server';
import type { ScriptedRequest, ScriptedRule } from '../../dev/scripted-model/types';
import { STEP_INPUTS_FIELD, type ModelCallId } from '../../contracts/steps';

const MODEL = 'claude-sonnet-4-6';
const ECHO_TEXT =
  'Your resting heart rate has been steady this month, and your sleep looks a little longer on weekends than on weekdays.';

/** Replaces the fallback reply's rule: always the same paragraph, long enough for many deltas, so a cut stream is visibly partial. */
const echoRule: ScriptedRule = { step: 'fallback_reply', respond: () => ({ text: ECHO_TEXT }) };

/** Replaces the Domain Expert's rule: asks for a tool first, then answers from the tool's result. */
const lookupRule: ScriptedRule = {
  step: 'domain_expert',
  respond(req) {
    const last = req.messages[req.messages.length - 1];
    const result = Array.isArray(last.content) ? last.content.find((b) => b.type === 'tool_result') : undefined;
    if (result && result.type === 'tool_result') return { text: `The tool said: ${String(result.content)}` };
    return { text: 'Let me look that up.', toolUse: [{ name: 'lookup_metric', input: { metric: 'steps', days: 30 } }] };
  },
};

const LOOKUP_TOOL: Anthropic.Tool = {
  name: 'lookup_metric',
  description: 'Average of a daily metric',
  input_schema: { type: 'object', properties: { metric: { type: 'string' }, days: { type: 'number' } } },
};

let server: ScriptedModelServer;
let client: Anthropic;

beforeAll(async () => {
  const replaced = [echoRule.step, lookupRule.step];
  server = await startScriptedModelServer({
    rules: [...defaultRules.filter((rule) => !replaced.includes(rule.step)), echoRule, lookupRule],
  });
  client = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
});

afterAll(() => server.close());

afterEach(() => {
  server.faults.clear();
  server.requests.clear();
});

/** A call's inputs when the user's message is all it is asked (the Domain Expert: its question). */
const inputsFor = (step: string, content: string) =>
  step === 'domain_expert' ? { question: content, supportingInsights: '' } : { messages: [{ role: 'user', content }] };

/** The request body as the platform's LLM client sends it to the scripted model: with the call's inputs. */
const withInputs = <Params extends object>(params: Params, step: string, content: string): Params =>
  ({ ...params, [STEP_INPUTS_FIELD]: inputsFor(step, content) }) as Params;

const ask = (step: string, content: string, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
  client.messages.create(
    withInputs({ model: MODEL, max_tokens: 512, messages: [{ role: 'user', content }], ...extra }, step, content),
    { headers: { 'x-amy-step': step } },
  );

const streamOf = (step: string, content: string) =>
  client.messages.stream(
    withInputs({ model: MODEL, max_tokens: 512, messages: [{ role: 'user', content }] }, step, content),
    { headers: { 'x-amy-step': step } },
  );

const textOf = (message: Anthropic.Message) =>
  message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function postMessages(body: string, step = 'route') {
  const res = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-amy-step': step },
    body,
  });
  return { status: res.status, requestId: res.headers.get('request-id'), body: await res.json() };
}

describe('Messages API', () => {
  test('answers with a complete Message, usage estimated from characters, and a request id', async () => {
    const question = 'Is anything interesting in my data?';
    const { data, request_id } = await ask('classify_vagueness', question, { system: 'Classify.' }).withResponse();
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'high' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: Math.ceil(`Classify.\n${question}`.length / 4), output_tokens: 1 },
    });
    expect(data.id).toMatch(/^msg_/);
    expect(request_id).toMatch(/^req_scripted_/);
  });

  test('cuts the answer at max_tokens and says so', async () => {
    const message = await ask('fallback_reply', 'hi', { max_tokens: 5 });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(5);
    expect(textOf(message)).toBe(ECHO_TEXT.slice(0, 20));
  });

  test('messages.stream: text deltas of a few words concatenate to the final text', async () => {
    const stream = streamOf('fallback_reply', 'hi');
    const deltas: string[] = [];
    const eventTypes: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    stream.on('streamEvent', (event) => eventTypes.push(event.type));
    const final = await stream.finalMessage();

    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(ECHO_TEXT);
    expect(textOf(final)).toBe(ECHO_TEXT);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(Math.ceil(ECHO_TEXT.length / 4));
    expect(stream.request_id).toMatch(/^req_scripted_/);
    expect(eventTypes[0]).toBe('message_start');
    expect(eventTypes[1]).toBe('content_block_start');
    expect(eventTypes.slice(2, 2 + deltas.length).every((t) => t === 'content_block_delta')).toBe(true);
    expect(eventTypes.slice(2 + deltas.length)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  test('create({ stream: true }) yields the raw event sequence', async () => {
    const events = await client.messages.create(
      withInputs(
        { model: MODEL, max_tokens: 512, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        'fallback_reply',
        'hi',
      ),
      { headers: { 'x-amy-step': 'fallback_reply' } },
    );
    let text = '';
    let stopReason: string | null = null;
    for await (const event of events) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
    }
    expect(text).toBe(ECHO_TEXT);
    expect(stopReason).toBe('end_turn');
  });

  test('tool use round trip, non-streaming', async () => {
    const asked = 'How many steps do I average?';
    const question: Anthropic.MessageParam = { role: 'user', content: asked };
    const first = await client.messages.create(
      withInputs({ model: MODEL, max_tokens: 512, tools: [LOOKUP_TOOL], messages: [question] }, 'domain_expert', asked),
      { headers: { 'x-amy-step': 'domain_expert' } },
    );
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'lookup_metric', input: { metric: 'steps', days: 30 } });
    expect(toolUse?.id).toMatch(/^toolu_/);

    const second = await client.messages.create(
      withInputs(
        {
          model: MODEL,
          max_tokens: 512,
          tools: [LOOKUP_TOOL],
          messages: [
            question,
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.id, content: '8123 steps' }] },
          ],
        },
        'domain_expert',
        asked,
      ),
      { headers: { 'x-amy-step': 'domain_expert' } },
    );
    expect(second.stop_reason).toBe('end_turn');
    expect(textOf(second)).toBe('The tool said: 8123 steps');
  });

  test('tool use streams as input_json_delta and parses back to the same input', async () => {
    const stream = client.messages.stream(
      withInputs(
        { model: MODEL, max_tokens: 512, tools: [LOOKUP_TOOL], messages: [{ role: 'user', content: 'steps?' }] },
        'domain_expert',
        'steps?',
      ),
      { headers: { 'x-amy-step': 'domain_expert' } },
    );
    const jsonDeltas: string[] = [];
    stream.on('inputJson', (partial) => jsonDeltas.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toMatchObject([
      { type: 'text', text: 'Let me look that up.' },
      { type: 'tool_use', name: 'lookup_metric', input: { metric: 'steps', days: 30 } },
    ]);
    expect(jsonDeltas.join('')).toBe(JSON.stringify({ metric: 'steps', days: 30 }));
  });
});

describe('request validation', () => {
  test('an unknown step is a 400 that names the step, never a made-up answer', async () => {
    const err = await ask('no_such_step', 'hi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).status).toBe(400);
    expect((err as BadRequestError).error).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'No scripted rule for step "no_such_step"' },
    });
  });

  test('a request without its inputs, or with inputs of another shape, is a 400 that names the call', async () => {
    const plain = { model: MODEL, max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }] };
    const missing = await client.messages
      .create(plain, { headers: { 'x-amy-step': 'route' } })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(BadRequestError);
    expect((missing as BadRequestError).error).toMatchObject({
      error: {
        type: 'invalid_request_error',
        message: expect.stringContaining('step "route": the request has no inputs'),
      },
    });

    const wrongShape = await client.messages
      .create(withInputs(plain, 'domain_expert', 'hi'), { headers: { 'x-amy-step': 'route' } })
      .catch((e: unknown) => e);
    expect(wrongShape).toBeInstanceOf(BadRequestError);
    expect((wrongShape as BadRequestError).error).toMatchObject({
      error: { message: expect.stringContaining('step "route": invalid inputs: messages:') },
    });
    // Neither consumed a fault nor reached a rule; both are in the log as sent.
    expect(server.requests.entries().map((r) => r.inputs)).toEqual([null, { question: 'hi', supportingInsights: '' }]);
  });

  test('a request without the step header is a 400', async () => {
    const err = await client.messages
      .create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).message).toContain('x-amy-step');
  });

  test.each([
    ['not JSON', '{"model":', 'Request body is not valid JSON'],
    ['missing max_tokens', JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }), 'max_tokens'],
    ['no messages', JSON.stringify({ model: MODEL, max_tokens: 10, messages: [] }), 'messages'],
    [
      'a bad role',
      JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: 'robot', content: 'x' }] }),
      'messages.0.role',
    ],
    [
      'an empty text block',
      JSON.stringify({
        model: MODEL,
        max_tokens: 10,
        messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }],
      }),
      'messages.0.content',
    ],
  ])('garbage (%s) gets an Anthropic-shaped 400', async (_name, body, mentions) => {
    const res = await postMessages(body);
    expect(res.status).toBe(400);
    expect(res.requestId).toMatch(/^req_scripted_/);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect((res.body as { error: { message: string } }).error.message).toContain(mentions);
  });
});

describe('request log', () => {
  test('records what each step was asked, newest last, and clears', async () => {
    await ask('classify_vagueness', 'first', { system: 'sys one' });
    await streamOf('route', 'second').finalMessage();

    const listed = await control('GET', '/_control/requests');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toMatchObject([
      {
        step: 'classify_vagueness',
        inputs: { messages: [{ role: 'user', content: 'first' }] },
        model: MODEL,
        system: 'sys one',
        stream: false,
        fault: null,
      },
      { step: 'route', model: MODEL, system: '', stream: true, messages: [{ role: 'user', content: 'second' }] },
    ]);
    expect(await control('DELETE', '/_control/requests')).toEqual({ status: 200, body: { data: [] } });
    expect(server.requests.entries()).toEqual([]);
  });

  test('keeps only the newest 1000 entries', () => {
    const log = new RequestLog();
    for (let i = 0; i < 1005; i++) {
      log.add({
        step: `s${i}`,
        inputs: null,
        model: MODEL,
        system: '',
        messages: [],
        stream: false,
        tools: [],
        betas: [],
        fault: null,
        at: '',
      });
    }
    const entries = log.entries();
    expect(entries).toHaveLength(1000);
    expect(entries[0].step).toBe('s5');
    expect(entries[999].step).toBe('s1004');
  });
});

/** A request with headers `fetch` would not let us forge (Host), over a real socket. */
function rawRequest(method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; body: { type?: string; error?: { type: string; message: string } } }>(
    (resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end(body);
    },
  );
}

describe('control endpoints: only for requests addressed to the server itself', () => {
  const fault = JSON.stringify({ kind: 'overloaded', times: -1 });

  test.each([
    ['a DNS-rebinding name', 'rebind.attacker.example'],
    ['another port', '127.0.0.1:80'],
    ['no port', '127.0.0.1'],
  ])('a Host of %s is refused with a 403 and changes nothing', async (_name, host) => {
    const hostHeader = host.includes(':') || host === '127.0.0.1' ? host : `${host}:${server.port}`;
    const injected = await rawRequest(
      'POST',
      '/_control/faults',
      { host: hostHeader, 'content-type': 'application/json' },
      fault,
    );
    expect(injected.status).toBe(403);
    expect(injected.body).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    expect(injected.body.error!.message).toContain(`127.0.0.1:${server.port}`);
    expect(injected.body.error!.message).toContain(hostHeader);
    expect(server.faults.pending()).toEqual([]);

    await ask('route', 'a prompt a web page should not read');
    const log = await rawRequest('GET', '/_control/requests', { host: hostHeader });
    expect(log.status).toBe(403);
    expect(JSON.stringify(log.body)).not.toContain('a prompt a web page should not read');
  });

  test("a web page's cross-origin post is refused, even addressed to the right host", async () => {
    const res = await rawRequest(
      'POST',
      '/_control/faults',
      { host: `127.0.0.1:${server.port}`, origin: 'http://attacker.example', 'content-type': 'text/plain' },
      fault,
    );
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    expect(server.faults.pending()).toEqual([]);
  });

  test.each(['127.0.0.1', 'localhost', 'LOCALHOST', '[::1]'])('%s:<port> is the server itself', async (name) => {
    const res = await rawRequest(
      'POST',
      '/_control/faults',
      { host: `${name}:${server.port}`, 'content-type': 'application/json' },
      fault,
    );
    expect(res.status).toBe(201);
    expect(server.faults.pending()).toHaveLength(1);
  });

  test('the Messages API itself answers whatever the Host', async () => {
    const res = await rawRequest(
      'POST',
      '/v1/messages',
      { host: 'api.anthropic.example', 'content-type': 'application/json', 'x-amy-step': 'route' },
      JSON.stringify(
        withInputs({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, 'route', 'hi'),
      ),
    );
    expect(res.status).toBe(200);
  });
});

describe('faults', () => {
  test('overloaded: a 529 the SDK reports as an APIError, then the next call succeeds', async () => {
    const injected = await control('POST', '/_control/faults', { kind: 'overloaded', step: 'classify_vagueness' });
    expect(injected).toEqual({
      status: 201,
      body: { kind: 'overloaded', step: 'classify_vagueness', remaining: 1, delay_ms: 1000 },
    });

    const err = await ask('classify_vagueness', 'hi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(529);
    expect((err as APIError).error).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    expect((err as APIError).requestID).toMatch(/^req_scripted_/);

    expect(textOf(await ask('classify_vagueness', 'hi'))).toBe('low');
    expect(server.requests.entries().map((r) => r.fault)).toEqual(['overloaded', null]);
  });

  test('a fault for one step leaves other steps alone', async () => {
    server.faults.inject({ kind: 'overloaded', step: 'route' });
    expect(textOf(await ask('classify_vagueness', 'hi'))).toBe('low');
    expect(server.faults.pending()).toHaveLength(1);
    await expect(ask('route', 'hi')).rejects.toMatchObject({ status: 529 });
  });

  test('server_error: a 500 api_error', async () => {
    server.faults.inject({ kind: 'server_error' });
    const err = await ask('route', 'hi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as APIError).error).toMatchObject({ error: { type: 'api_error' } });
  });

  test('times: n requests fail, -1 fails until cleared', async () => {
    server.faults.inject({ kind: 'server_error', times: 2 });
    await expect(ask('route', 'hi')).rejects.toMatchObject({ status: 500 });
    await expect(ask('route', 'hi')).rejects.toMatchObject({ status: 500 });
    await expect(ask('route', 'hi')).resolves.toMatchObject({ stop_reason: 'end_turn' });

    await control('POST', '/_control/faults', { kind: 'overloaded', times: -1 });
    for (let i = 0; i < 3; i++) await expect(ask('route', 'hi')).rejects.toMatchObject({ status: 529 });
    expect((await control('GET', '/_control/faults')).body.data).toEqual([
      { kind: 'overloaded', step: null, remaining: -1, delay_ms: 1000 },
    ]);
    await control('DELETE', '/_control/faults');
    await expect(ask('route', 'hi')).resolves.toMatchObject({ stop_reason: 'end_turn' });
  });

  test('slow: the normal answer, later', async () => {
    server.faults.inject({ kind: 'slow', delay_ms: 50 });
    expect(textOf(await ask('classify_vagueness', 'anything to worry about?'))).toBe('high');
    expect(server.requests.entries()[0].fault).toBe('slow');
  });

  test('malformed: a 200 whose text is the truncated answer, not valid JSON', async () => {
    const normal = textOf(await ask('route', 'What is my average sleep?'));
    server.faults.inject({ kind: 'malformed', step: 'route' });
    const broken = textOf(await ask('route', 'What is my average sleep?'));
    expect(() => JSON.parse(normal)).not.toThrow();
    expect(() => JSON.parse(broken)).toThrow(SyntaxError);
    expect(normal.startsWith(broken)).toBe(true);
    expect(broken.length).toBeLessThan(normal.length);
  });

  test('hang: no answer until the client gives up', async () => {
    server.faults.inject({ kind: 'hang' });
    const impatient = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0, timeout: 200 });
    const timedOut = await impatient.messages
      .create(
        withInputs({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, 'route', 'hi'),
        {
          headers: { 'x-amy-step': 'route' },
        },
      )
      .catch((e: unknown) => e);
    // Plain Node gives APIConnectionTimeoutError (a subclass); under jest the SDK cannot recognise
    // undici's AbortError across the vm realm and reports the base class.
    expect(timedOut).toBeInstanceOf(APIConnectionError);

    server.faults.inject({ kind: 'hang' });
    const controller = new AbortController();
    const pending = client.messages
      .create(
        withInputs({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, 'route', 'hi'),
        {
          headers: { 'x-amy-step': 'route' },
          signal: controller.signal,
        },
      )
      .catch((e: unknown) => e);
    // Abort only once the server holds the request, so the fault is consumed by this call.
    await until(() => server.requests.entries().length === 2);
    controller.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
    expect(server.faults.pending()).toEqual([]);

    await expect(ask('route', 'hi')).resolves.toMatchObject({ stop_reason: 'end_turn' });
  });

  test('stream_cut: half the deltas, then the connection drops', async () => {
    server.faults.inject({ kind: 'stream_cut' });
    // A non-streaming request does not consume a stream fault.
    await expect(ask('fallback_reply', 'hi')).resolves.toMatchObject({ stop_reason: 'end_turn' });

    const stream = streamOf('fallback_reply', 'hi');
    let received = '';
    stream.on('text', (delta) => (received += delta));
    await expect(stream.finalMessage()).rejects.toThrow();
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThan(ECHO_TEXT.length);
    expect(ECHO_TEXT.startsWith(received)).toBe(true);
    expect(server.faults.pending()).toEqual([]);

    await expect(streamOf('fallback_reply', 'hi').finalText()).resolves.toBe(ECHO_TEXT);
  });

  test('a bad fault spec is a 400', async () => {
    const res = await control('POST', '/_control/faults', { kind: 'meteor_strike' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(server.faults.pending()).toEqual([]);
  });
});

describe('default rules', () => {
  const rule = (step: ModelCallId) => defaultRules.find((r) => r.step === step)!;
  /** A call whose inputs are the conversation (classify_vagueness, route, fallback_reply), the user's message last. */
  const request = (message: string, step: ModelCallId): ScriptedRequest => ({
    step,
    inputs: { messages: [{ role: 'user', content: message }] },
    model: MODEL,
    messages: [{ role: 'user', content: message }],
    tools: [],
    web: NO_WEB,
  });
  const answer = (step: ModelCallId, text: string) => {
    const response = rule(step).respond(request(text, step));
    return 'text' in response ? response.text : undefined;
  };

  test.each([
    ['Is anything interesting in my data?', 'high'],
    ['anything to worry about?', 'high'],
    ['What should I know about my health data?', 'high'],
    ['Is anything interesting in my sleep?', 'medium'],
    ['What is my average resting heart rate?', 'low'],
    ['I want to set a SMART goal for my steps', 'low'],
    ['thanks!', 'low'],
    ['What is HRV?', 'low'],
  ])('classify_vagueness: %j → %s', (question, expected) => {
    expect(answer('classify_vagueness', question)).toBe(expected);
  });

  test('a rule answers from the call’s inputs, not from the prompt’s wording, through the SDK', async () => {
    const prompt = 'Classify how vague this is.\nUser message: anything to worry about?';
    const message = await client.messages.create(
      withInputs(
        { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: prompt }] },
        'classify_vagueness',
        'What is HRV?',
      ),
      { headers: { 'x-amy-step': 'classify_vagueness' } },
    );
    expect(textOf(message)).toBe('low');
    expect(textOf(await ask('classify_vagueness', 'anything to worry about?'))).toBe('high');
  });

  const DS = 'Data Science Agent';
  const DE = 'Domain Expert Agent';
  const HC = 'Health Coach Agent';
  test.each([
    ['thanks!', '', ''],
    ['Hi there', '', ''],
    ["My watch won't sync my sleep data", '', ''],
    ['What can you do?', '', ''],
    ['What are you good at?', '', ''],
    ['What is my average sleep?', DS, ''],
    ['How has my resting heart rate changed?', DS, ''],
    ['What is HRV?', DE, ''],
    ['Is a high LDL dangerous?', DE, ''],
    // The forcing rule: a measurement named with its value is the user's own, so Data Science checks it.
    ['Is LDL of 124 high?', DE, DS],
    ['Is an LDL of 124 something to worry about?', DE, DS],
    ['Is my LDL of 124 something to worry about?', DE, DS],
    ['Help me plan a better bedtime routine', HC, ''],
    ['Based on my data, what goal should I set for steps?', HC, DS],
    ['Give me advice on my sleep given my high cholesterol', HC, `${DS}; ${DE}`],
  ])('route: %j → main %j, supporting %j', (question, main, supporting) => {
    const routing = JSON.parse(answer('route', question)!);
    expect(routing).toMatchObject({ main_agent: main, supporting_agents: supporting });
    expect(typeof routing.collaboration_workflow).toBe('string');
  });

  test('fallback_reply: friendly, digit-free, deterministic, and not always the same', () => {
    const inputs = [
      'thanks!',
      'thank you so much',
      'hello',
      'hey Amy',
      'how do I pair my ring',
      'bye',
      'tell me a joke',
    ];
    const replies = inputs.map((text) => answer('fallback_reply', text)!);
    for (const reply of replies) expect(reply).not.toMatch(/\d/);
    expect(replies[0]).toMatch(/welcome|happy|anytime/i);
    expect(inputs.map((text) => answer('fallback_reply', text))).toEqual(replies);
    const thanksVariants = new Set(
      ['thanks!', 'thanks', 'thank you', 'thanks a lot', 'cheers'].map((t) => answer('fallback_reply', t)),
    );
    expect(thanksVariants.size).toBeGreaterThan(1);
  });
});
