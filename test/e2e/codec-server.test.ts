/**
 * The codec server (docs/operations.md#the-codec-server) on the real API's listener of its own: a turn's encrypted
 * payloads decode for an operator, on a Bearer token (the `temporal` CLI's `--codec-auth`) or on a signed-in
 * session (the Web UI); without an operator credential, or with a user's API key, it refuses, and the public port
 * has no codec server at all. The session cookie holds a random id, never the token, stored hashed in Postgres, so
 * any API process honours it until it is signed out, expires or its token changes; it is Secure when the codec
 * server's public URL is https. Wrong tokens are throttled per client address and overall. Every decode leaves an
 * audit row and a log line naming the operator, the data keys and their users, and never the payload; the rows
 * go after their retention. CORS answers the Web UI's origin and no other. `temporal workflow show
 * --codec-endpoint` shows the turn's message.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../dev/stack/ports';
import { temporalCliPath } from '../../dev/stack/local-temporal';
import { isEncryptedPayload } from '../../platform/temporal/encryption-codec';
import {
  MAX_SIGN_IN_FAILURES_OVERALL,
  MAX_SIGN_IN_FAILURES_PER_ADDRESS,
  SIGN_IN_WINDOW_SECONDS,
} from '../../api/codec/sign-in-throttle';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { readTestEnv } from '../support/test-env';

jest.setTimeout(180_000);

const TOKEN = randomBytes(24).toString('hex');
const OPERATORS = `ops-alice:${TOKEN}`;
const MESSAGE = 'thanks, that was the albatross answer I needed!';
const UI_ORIGIN = 'http://127.0.0.1:8233';
const TLS_PUBLIC_URL = 'https://codec.ops.example/codec';

let svc: TestService;
/** The codec listener of the suite's API process. */
let codec: string;
/** A second API process on the same database, its codec server's public URL https (behind a TLS proxy). */
let tlsApi: ApiProcess;
let tlsCodec: string;
const tlsApiLines: string[] = [];
/** A third, where ops-alice has another token and the audit is kept 30 days. */
let rotatedApi: ApiProcess;
let rotatedCodec: string;
let turnId: string;
let userId: string;
let sealed: { metadata: Record<string, string>; data: string };

const wire = (p: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function codecProcess(env: Record<string, string>, onLine?: (line: string) => void) {
  const port = await freePort();
  const codecPort = await freePort();
  const process = await spawnApiProcess(svc.config, port, {
    env: { AMY_CODEC_OPERATORS: OPERATORS, AMY_CODEC_PORT: String(codecPort), ...env },
    onLine,
  });
  return { process, codec: `http://127.0.0.1:${codecPort}/codec` };
}

beforeAll(async () => {
  const codecPort = await freePort();
  svc = await startTestService({ env: { AMY_CODEC_OPERATORS: OPERATORS, AMY_CODEC_PORT: String(codecPort) } });
  codec = `http://127.0.0.1:${codecPort}/codec`;
  const user = await svc.createUser();
  userId = user.userId;
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

  // Audit rows from 40 and 20 days ago, before the process that keeps 30 days starts.
  await svc.database.pool.query(
    `INSERT INTO codec_decode_audit (decoded_at, operator, client_address, payloads, key_ids, user_ids)
     VALUES (now() - interval '40 days', 'ops-old', '127.0.0.1', 1, '{}', '{}'),
            (now() - interval '20 days', 'ops-recent', '127.0.0.1', 1, '{}', '{}')`,
  );
  [{ process: tlsApi, codec: tlsCodec }, { process: rotatedApi, codec: rotatedCodec }] = await Promise.all([
    codecProcess({ AMY_CODEC_PUBLIC_URL: TLS_PUBLIC_URL }, (line) => tlsApiLines.push(line)),
    codecProcess({
      AMY_CODEC_OPERATORS: `ops-alice:${randomBytes(24).toString('hex')}`,
      AMY_CODEC_AUDIT_RETENTION_DAYS: '30',
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([tlsApi?.stop(), rotatedApi?.stop()]);
  await svc?.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> & { error?: { code: string; message: string; request_id: string } };
}

/** An HTTP request, from `from` (another loopback address than 127.0.0.1, for the throttle's per-address count). */
function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'POST', headers: opts.headers, ...(opts.from ? { localAddress: opts.from } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = (res.headers['content-type'] ?? '').includes('json');
          resolve({ status: res.statusCode!, headers: res.headers, body: json && text ? JSON.parse(text) : { text } });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const decode = (base: string, headers: Record<string, string>, from?: string) =>
  send(`${base}/decode`, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ payloads: [sealed] }),
    from,
  });

const signIn = (base: string, token: string, from?: string) =>
  send(`${base}/login`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${encodeURIComponent(token)}`,
    from,
  });

/** The session cookie a sign-in set, as a browser sends it back, and the whole Set-Cookie. */
function sessionCookie(answer: Answer): { cookie: string; setCookie: string } {
  const setCookie = answer.headers['set-cookie']![0];
  return { cookie: setCookie.split(';')[0], setCookie };
}

const textOf = (body: Record<string, unknown>) =>
  Buffer.from((body.payloads as Array<{ data: string }>)[0].data, 'base64').toString('utf8');

test('an operator token decodes a turn payload on the codec listener; none, a wrong one or a user key is refused', async () => {
  const decoded = await decode(codec, { authorization: `Bearer ${TOKEN}`, 'x-namespace': 'default' });
  expect(decoded.status).toBe(200);
  expect(textOf(decoded.body)).toContain(MESSAGE);
  expect((await decode(`${codec}/default`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);

  const user = await svc.createUser();
  const attempts: Array<Record<string, string>> = [
    {},
    { authorization: `Bearer ${TOKEN}x` },
    { authorization: `Bearer ${user.apiKey}` },
  ];
  for (const headers of attempts) {
    const refused = await decode(codec, headers);
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({
      status: 401,
      code: 'authentication_required',
    });
  }
});

test('the public port has no codec server: 404 for its routes, whatever the credential', async () => {
  for (const [method, path] of [
    ['POST', '/codec/decode'],
    ['POST', '/codec/default/decode'],
    ['GET', '/codec/login'],
    ['POST', '/codec/login'],
  ]) {
    const answer = await send(`${svc.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: method === 'POST' ? JSON.stringify({ payloads: [sealed] }) : undefined,
    });
    expect({ path, status: answer.status, code: answer.body.error?.code }).toEqual({
      path,
      status: 404,
      code: 'not_found',
    });
  }
});

test('signing in sets a session id in the cookie, never the token; Postgres keeps only its hash', async () => {
  const login = await signIn(codec, TOKEN);
  expect(login.status).toBe(200);
  expect(login.body.text).toContain('Signed in to the codec server as ops-alice.');
  const { cookie, setCookie } = sessionCookie(login);
  const sessionId = cookie.slice('amy_codec_session='.length);
  expect(sessionId.length).toBeGreaterThanOrEqual(40);
  expect(setCookie).not.toContain(TOKEN);
  expect(setCookie.split('; ').slice(1).sort()).toEqual([
    'HttpOnly',
    'Max-Age=43200',
    'Path=/codec',
    'SameSite=Strict',
  ]);

  const { rows } = await svc.database.pool.query('SELECT * FROM codec_sessions WHERE id_hash = $1', [
    sha256(sessionId),
  ]);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ operator: 'ops-alice', token_hash: sha256(TOKEN) });
  const stored = JSON.stringify(await svc.database.pool.query('SELECT * FROM codec_sessions').then((r) => r.rows));
  expect(stored).not.toContain(sessionId);
  expect(stored).not.toContain(TOKEN);

  expect(textOf((await decode(codec, { cookie, origin: UI_ORIGIN })).body)).toContain(MESSAGE);
});

test('CORS lets the Web UI’s origin in with credentials, and no other origin', async () => {
  const preflight = await send(`${codec}/decode`, { method: 'OPTIONS', headers: { origin: UI_ORIGIN } });
  expect(preflight.status).toBe(204);
  expect(preflight.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
  expect(preflight.headers['access-control-allow-credentials']).toBe('true');
  const elsewhere = await send(`${codec}/decode`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
  expect(elsewhere.headers['access-control-allow-origin']).toBeUndefined();
});

test('a session holds on every API process; over https its cookie is Secure and SameSite=None', async () => {
  const { cookie } = sessionCookie(await signIn(codec, TOKEN));
  expect(textOf((await decode(tlsCodec, { cookie })).body)).toContain(MESSAGE);

  const { setCookie } = sessionCookie(await signIn(tlsCodec, TOKEN));
  expect(setCookie.split('; ').slice(1).sort()).toEqual([
    'HttpOnly',
    'Max-Age=43200',
    'Path=/codec',
    'SameSite=None',
    'Secure',
  ]);
});

test('a session ends when signed out, when it expires, and when its operator’s token changes', async () => {
  const signedOut = sessionCookie(await signIn(codec, TOKEN)).cookie;
  expect((await decode(codec, { cookie: signedOut })).status).toBe(200);
  const logout = await send(`${codec}/logout`, { headers: { cookie: signedOut } });
  expect(logout.status).toBe(200);
  expect(logout.headers['set-cookie']![0]).toMatch(/^amy_codec_session=; .*Max-Age=0/);
  expect((await decode(codec, { cookie: signedOut })).status).toBe(401);
  expect((await decode(tlsCodec, { cookie: signedOut })).status).toBe(401);

  const expired = sessionCookie(await signIn(codec, TOKEN)).cookie;
  await svc.database.pool.query(
    "UPDATE codec_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = $1",
    [sha256(expired.split('=')[1])],
  );
  expect((await decode(codec, { cookie: expired })).status).toBe(401);

  // The same operator with another token on the third process: the session of the old token is not theirs.
  const oldToken = sessionCookie(await signIn(codec, TOKEN)).cookie;
  expect((await decode(codec, { cookie: oldToken })).status).toBe(200);
  expect((await decode(rotatedCodec, { cookie: oldToken })).status).toBe(401);
});

test('every decode is audited, with the operator, the data keys and their users, and logged; never the payload', async () => {
  const page = `${UI_ORIGIN}/namespaces/default/workflows/${turnId}/run/history`;
  const before = Date.now();
  const decoded = await decode(tlsCodec, { authorization: `Bearer ${TOKEN}`, 'x-namespace': 'default', referer: page });
  expect(decoded.status).toBe(200);

  const keyId = Buffer.from(sealed.metadata['encryption-key-id'], 'base64').toString('utf8');
  expect(keyId).toMatch(/^dk_/);
  const { rows } = await svc.database.pool.query(
    'SELECT * FROM codec_decode_audit WHERE workflow_id = $1 ORDER BY id DESC LIMIT 1',
    [turnId],
  );
  expect(rows[0]).toMatchObject({
    operator: 'ops-alice',
    client_address: '127.0.0.1',
    namespace: 'default',
    workflow_id: turnId,
    payloads: 1,
    key_ids: [keyId],
    user_ids: [userId],
  });
  expect((rows[0].decoded_at as Date).getTime()).toBeGreaterThanOrEqual(before - 1000);
  const audit = JSON.stringify(await svc.database.pool.query('SELECT * FROM codec_decode_audit').then((r) => r.rows));
  expect(audit).not.toContain('albatross');

  const line = tlsApiLines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'codec server decode')
    .at(-1);
  expect(line).toMatchObject({ operator: 'ops-alice', workflow_id: turnId, key_ids: [keyId], user_ids: [userId] });
  expect(tlsApiLines.join('\n')).not.toContain('albatross');
});

test('audit rows past AMY_CODEC_AUDIT_RETENTION_DAYS are deleted; younger ones stay', async () => {
  // The third process keeps 30 days, and cleared the older rows before it answered.
  const { rows } = await svc.database.pool.query<{ operator: string }>(
    "SELECT operator FROM codec_decode_audit WHERE operator IN ('ops-old', 'ops-recent')",
  );
  expect(rows.map((r) => r.operator)).toEqual(['ops-recent']);
});

test('wrong tokens are throttled per client address, then overall: 429 with Retry-After, before the token is looked at', async () => {
  const failures = async () =>
    Number((await svc.database.pool.query('SELECT count(*) FROM codec_sign_in_failures')).rows[0].count);
  const session = sessionCookie(await signIn(codec, TOKEN)).cookie;
  const throttled = (answer: Answer) => {
    expect(answer.status).toBe(429);
    expect(answer.body.error).toMatchObject({ code: 'rate_limited', request_id: expect.stringMatching(/^req_/) });
    const retryAfter = Number(answer.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_WINDOW_SECONDS);
  };

  for (let i = 0; i < MAX_SIGN_IN_FAILURES_PER_ADDRESS; i++)
    expect((await signIn(codec, `${TOKEN}-wrong`, '127.0.0.2')).status).toBe(401);
  // From that address even the right token is refused, on the form and as a Bearer token.
  throttled(await signIn(codec, TOKEN, '127.0.0.2'));
  throttled(await decode(codec, { authorization: `Bearer ${TOKEN}` }, '127.0.0.2'));
  // A session already open is not a guess: it still decodes from there.
  expect((await decode(codec, { cookie: session }, '127.0.0.2')).status).toBe(200);
  // Another address is not held back by that one.
  expect((await signIn(codec, TOKEN, '127.0.0.3')).status).toBe(200);

  // Fewer than the per-address limit from each of several addresses, until the overall limit is reached.
  let address = 4;
  while ((await failures()) < MAX_SIGN_IN_FAILURES_OVERALL) {
    for (let i = 0; i < MAX_SIGN_IN_FAILURES_PER_ADDRESS - 1 && (await failures()) < MAX_SIGN_IN_FAILURES_OVERALL; i++)
      expect((await signIn(codec, `${TOKEN}-wrong`, `127.0.0.${address}`)).status).toBe(401);
    address++;
  }
  throttled(await signIn(codec, TOKEN, '127.0.0.200'));
  throttled(await signIn(tlsCodec, TOKEN, '127.0.0.200'));
  expect((await decode(codec, { cookie: session }, '127.0.0.200')).status).toBe(200);

  await svc.database.pool.query('DELETE FROM codec_sign_in_failures');
  expect((await signIn(codec, TOKEN, '127.0.0.2')).status).toBe(200);
});

test('temporal workflow show --codec-endpoint shows the turn decoded; without it, sealed', async () => {
  // Spawned, never run synchronously: the API under test answers from this process's event loop.
  const show = async (...codecArgs: string[]) =>
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
        ...codecArgs,
      ])
    ).stdout;
  // The CLI prints each payload's data in base64: read every one.
  const readable = (json: string) =>
    [...json.matchAll(/"data": "([A-Za-z0-9+/=]*)"/g)]
      .map((m) => Buffer.from(m[1], 'base64').toString('utf8'))
      .join('\n');
  expect(readable(await show())).not.toContain('albatross');
  const decoded = await show('--codec-endpoint', codec, '--codec-auth', `Bearer ${TOKEN}`);
  expect(readable(decoded)).toContain('albatross');
});
