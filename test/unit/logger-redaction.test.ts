/**
 * The logger redacts credentials from every line, whatever a call site passes: a key in a logged URL
 * (plain or percent-encoded), a Bearer credential, an `authorization` or `api_key` field, a key inside an
 * error's message or stack, in nested fields too. What is not a secret stays readable. Fields that may
 * hold health data are withheld; on a terminal an entry is one readable line; a child process's lines
 * are relayed as entries.
 */
import { createLogger, createLogRelay, redactSecrets, temporalLogger } from '../../platform/logger';

const KEY = 'amy_live_0123456789ABCDEFGHIJabcdefghij';

function capture() {
  const lines: string[] = [];
  const sink = { write: (line: string) => lines.push(line) };
  return { lines, logger: createLogger('api', 'debug', { out: sink, err: sink }) };
}

test('every level, every field: no key survives, the rest of the line does', () => {
  const { lines, logger } = capture();
  logger.error('unhandled error', {
    request_id: 'req_1',
    method: 'GET',
    path: `/v1/turns/turn_1/events?last_event_id=7&api_key=${KEY}`,
    error: `Error: connect ECONNREFUSED while checking ${KEY}\n    at authenticate (api/auth.ts:1:1)`,
  });
  logger.warn('proxied', { url: `http://x/v1/turns?next=%2Fv1%3Fapi_key%3D${KEY}&b=1` });
  logger.info('headers', { headers: { Authorization: `Bearer ${KEY}`, accept: 'text/event-stream' } });
  logger.debug(`raw header authorization: bearer ${KEY.slice(9)}`, { apiKey: 'anything', api_key: 'x' });
  logger.info('nested', { attempts: [{ request: { query: { api_key: KEY } } }] });

  expect(lines).toHaveLength(5);
  const all = lines.join('');
  expect(all).not.toContain(KEY.slice(12));
  expect(all).not.toContain(KEY.slice(9));
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();

  const [error, proxied, headers, debug, nested] = lines.map((line) => JSON.parse(line));
  expect(error).toMatchObject({
    level: 'error',
    msg: 'unhandled error',
    request_id: 'req_1',
    path: '/v1/turns/turn_1/events',
  });
  expect(error.error).toContain('ECONNREFUSED while checking amy_live_[redacted]');
  expect(error.error).toContain('at authenticate (api/auth.ts:1:1)');
  expect(proxied.url).toBe('http://x/v1/turns?next=%2Fv1%3Fapi_key%3D[redacted]&b=1');
  expect(headers.headers).toEqual({ Authorization: '[redacted]', accept: 'text/event-stream' });
  expect(debug.msg).toBe('raw header authorization: bearer [redacted]');
  expect(debug).toMatchObject({ apiKey: '[redacted]', api_key: '[redacted]' });
  expect(nested.attempts[0].request.query.api_key).toBe('[redacted]');
});

test('what is not a credential is left alone', () => {
  const text = 'GET /v1/turns/turn_01J?last_event_id=12 prefix amy_live_AbC, 3 of 5 api keys';
  expect(redactSecrets(text)).toBe(text);
  // The first parameter of a query too, and a key with no value.
  expect(redactSecrets(`/x?api_key=${KEY}`)).toBe('/x?api_key=[redacted]');
  expect(redactSecrets('/x?api_key=&y=1')).toBe('/x?api_key=[redacted]&y=1');
});

test('what may hold health data is withheld, in the fields of a call site and of Temporal alike', () => {
  const { lines, logger } = capture();
  logger.warn('finish gate answer malformed; continuing', { turn_id: 'turn_1', answer: 'my HbA1c was 7.9' });
  temporalLogger(logger).info('Activity completed', {
    sdkComponent: 'activity',
    activityType: 'memory',
    taskToken: 'CiQwMWEy',
    spanContexts: ['x'],
    nested: { messages: [{ role: 'user', content: 'I sleep 5 hours' }], memory: 'resting HR 58' },
  });
  const all = lines.join('');
  for (const text of ['HbA1c', '7.9', 'sleep 5', 'HR 58', 'CiQwMWEy']) expect(all).not.toContain(text);
  const [gate, activity] = lines.map((line) => JSON.parse(line));
  expect(gate).toMatchObject({ level: 'warn', service: 'api', turn_id: 'turn_1', answer: '[withheld]' });
  expect(activity).toMatchObject({ level: 'info', msg: 'Activity completed', activityType: 'memory' });
  expect(activity.nested).toEqual({ messages: '[withheld]', memory: '[withheld]' });
  expect(activity).not.toHaveProperty('taskToken');
});

test('on a terminal: one readable line per entry, redacted as the JSON is', () => {
  const lines: string[] = [];
  const sink = { write: (line: string) => lines.push(line), isTTY: true };
  const logger = createLogger('worker', 'info', { out: sink, err: sink });
  logger.info('worker polling', { task_queue: 'amy-turns' });
  logger.error('bundling failed', { error: new Error(`line one\nline two ${KEY}`) });
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}worker worker polling task_queue=amy-turns\n$/);
  expect(lines[1].trimEnd()).not.toContain('\n');
  expect(lines[1]).toContain('ERROR worker bundling failed error="Error: line one\\nline two amy_live_[redacted]');
  expect(lines.join('')).not.toContain(KEY.slice(9));
});

test("a child process's lines are relayed as entries: ours keep their fields, any other line is wrapped", () => {
  const out: string[] = [];
  const err: string[] = [];
  const relay = createLogRelay({
    out: { write: (l: string) => out.push(l) },
    err: { write: (l: string) => err.push(l) },
  });
  relay(
    'api',
    JSON.stringify({ at: '2026-01-01T00:00:00.000Z', level: 'info', service: 'api', msg: 'api listening' }),
    'stdout',
  );
  relay('worker', `TypeError: boom ${KEY}`, 'stderr');
  relay('worker', '', 'stdout');
  expect(out.map((line) => JSON.parse(line))).toEqual([
    { at: '2026-01-01T00:00:00.000Z', level: 'info', service: 'api', msg: 'api listening' },
  ]);
  expect(err.map((line) => JSON.parse(line))).toEqual([
    { at: expect.any(String), level: 'error', service: 'worker', msg: 'TypeError: boom amy_live_[redacted]' },
  ]);
});

test('a key parameter whose name is percent-encoded, in part, in any case, or twice, is redacted too', () => {
  for (const name of ['api%5Fkey', 'api%5fkey', '%61pi_key', '%61%70%69%5F%6B%65%79', 'API_KEY', 'api%255Fkey']) {
    for (const equals of ['=', '%3D', '%253D']) {
      const text = `GET /v1/turns/turn_1/events?last_event_id=2&${name}${equals}${KEY}&x=1`;
      const redacted = redactSecrets(text);
      expect([name, equals, redacted]).toEqual([
        name,
        equals,
        `GET /v1/turns/turn_1/events?last_event_id=2&${name}${equals}[redacted]&x=1`,
      ]);
    }
  }
  // A key that is not ours (no amy_live_ prefix) goes too: the parameter's name says what it is.
  expect(redactSecrets('/x?%61pi%5Fkey=hunter2')).toBe('/x?%61pi%5Fkey=[redacted]');
  // Names that only end like it are other parameters.
  expect(redactSecrets('/x?my_api_keyword=1')).toBe('/x?my_api_keyword=1');
});
