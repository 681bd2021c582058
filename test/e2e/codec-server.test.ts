/**
 * The codec server (docs/operations.md#the-codec-server) on the real API: a turn's encrypted payloads decode
 * for an operator, on a Bearer token (the `temporal` CLI's `--codec-auth`) or on the cookie `/codec/login`
 * sets (the Web UI); without the operator credential, or with a user's API key, it refuses. CORS answers
 * the Web UI's origin and no other. `temporal workflow show --codec-endpoint` shows the turn's message.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporalCliPath } from '../../dev/stack/local-temporal';
import { isEncryptedPayload } from '../../platform/temporal/encryption-codec';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { readTestEnv } from '../support/test-env';

jest.setTimeout(120_000);

const TOKEN = randomBytes(24).toString('hex');
const MESSAGE = 'thanks, that was the albatross answer I needed!';
const UI_ORIGIN = 'http://127.0.0.1:8233';

let svc: TestService;
let turnId: string;
let sealed: { metadata: Record<string, string>; data: string };

const wire = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

beforeAll(async () => {
  svc = await startTestService({ env: { AMY_CODEC_OPERATORS: `ops-alice:${TOKEN}` } });
  const user = await svc.createUser();
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: MESSAGE }] },
  });
  turnId = created.body.id;
  await svc.temporal.workflow.getHandle(turnId).result();
  const connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  const raw = await new Client({ connection }).workflow.getHandle(turnId).fetchHistory();
  await connection.close();
  const input = raw.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
  expect(isEncryptedPayload(input)).toBe(true);
  sealed = wire(input);
});
afterAll(() => svc?.close());

async function decode(headers: Record<string, string>, path = '/codec/decode') {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ payloads: [sealed] }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const textOf = (body: Record<string, unknown>) =>
  Buffer.from((body.payloads as Array<{ data: string }>)[0].data, 'base64').toString('utf8');

test('an operator token decodes a turn payload; none, a wrong one or a user key is refused', async () => {
  const decoded = await decode({ authorization: `Bearer ${TOKEN}`, 'x-namespace': 'default' });
  expect(decoded.status).toBe(200);
  expect(textOf(decoded.body)).toContain(MESSAGE);
  expect((await decode({ authorization: `Bearer ${TOKEN}` }, '/codec/default/decode')).status).toBe(200);

  const user = await svc.createUser();
  const attempts: Array<Record<string, string>> = [
    {},
    { authorization: `Bearer ${TOKEN}x` },
    { authorization: `Bearer ${user.apiKey}` },
  ];
  for (const headers of attempts) {
    const refused = await decode(headers);
    expect({ status: refused.status, code: (refused.body.error as { code: string }).code }).toEqual({
      status: 401,
      code: 'authentication_required',
    });
  }
});

test("the Web UI's way in: a login cookie, and CORS for its origin only", async () => {
  const login = await fetch(`${svc.url}/codec/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${TOKEN}`,
  });
  expect(login.status).toBe(200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  expect(cookie).toMatch(/^amy_codec=/);
  expect(login.headers.get('set-cookie')).toMatch(/HttpOnly/);
  expect(textOf((await decode({ cookie, origin: UI_ORIGIN })).body)).toContain(MESSAGE);

  const preflight = await fetch(`${svc.url}/codec/decode`, { method: 'OPTIONS', headers: { origin: UI_ORIGIN } });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
  expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
  const elsewhere = await fetch(`${svc.url}/codec/decode`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example' },
  });
  expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
});

test('temporal workflow show --codec-endpoint shows the turn decoded; without it, sealed', async () => {
  // Spawned, never run synchronously: the API under test answers from this process's event loop.
  const show = async (...codec: string[]) =>
    (
      await promisify(execFile)(temporalCliPath(), [
        'workflow',
        'show',
        '--address',
        readTestEnv().temporalAddress,
        '--workflow-id',
        turnId,
        '--output',
        'json',
        ...codec,
      ])
    ).stdout;
  // The CLI prints each payload's data in base64: read every one.
  const readable = (json: string) =>
    [...json.matchAll(/"data": "([A-Za-z0-9+/=]*)"/g)]
      .map((m) => Buffer.from(m[1], 'base64').toString('utf8'))
      .join('\n');
  expect(readable(await show())).not.toContain('albatross');
  const decoded = await show('--codec-endpoint', `${svc.url}/codec`, '--codec-auth', `Bearer ${TOKEN}`);
  expect(readable(decoded)).toContain('albatross');
});
