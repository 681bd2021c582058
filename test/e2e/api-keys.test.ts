/**
 * API keys an operator can manage, with the key scripts run as real commands
 * against the service's database and the real API over HTTP:
 *
 * - a key's `last_used_at` is set by its use, and written at most once a minute, not per request;
 * - `key:revoke` refuses the key from the next request on, on the Express routes and the event stream
 *   route alike (401 invalid_api_key, "revoked"), while the user's other keys go on working;
 * - `key:rotate` shows a new key once and revokes the old one, at once or after a grace period;
 * - `key:create` and `key:list`, and the errors an operator can make.
 */
import { errorEnvelopeSchema } from '../../contracts/errors';
import { api, expectSchema, thanks } from '../support/http';
import { runCli } from '../support/cli';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
}, 60_000);
afterAll(async () => {
  await svc?.close();
});

const keyCommand = (...args: string[]) => runCli('scripts/api-key.ts', args, { DATABASE_URL: svc.database.url });
const KEY_PATTERN = /amy_live_[0-9A-Za-z]{32}/g;

async function keyRow(apiKeyId: string) {
  const { rows } = await svc.database.pool.query<{ last_used_at: Date | null; revoked_at: Date | null }>(
    'SELECT last_used_at, revoked_at FROM api_keys WHERE id = $1',
    [apiKeyId],
  );
  return rows[0];
}

async function keyIdOf(userId: string): Promise<string[]> {
  const { rows } = await svc.database.pool.query<{ id: string }>(
    'SELECT id FROM api_keys WHERE user_id = $1 ORDER BY created_at, id',
    [userId],
  );
  return rows.map((row) => row.id);
}

/** Every way the key can be used: two Express routes and the event stream route (JSON and SSE). */
async function statusesWith(key: string, turnId: string) {
  const stream = await fetch(`${svc.url}/v1/turns/${turnId}/events`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
  });
  const streamBody = stream.status === 200 ? (await stream.body?.cancel(), null) : await stream.json();
  const byQuery = await api(svc.url, 'GET', `/v1/turns/${turnId}/events?api_key=${key}`);
  const list = await api(svc.url, 'GET', '/v1/turns', { key });
  const memory = await api(svc.url, 'POST', '/v1/memory', { key, body: { text: 'walks daily', category: 'goal' } });
  return { stream: stream.status, streamBody, byQuery, list, memory };
}

function expectRevoked(res: { status: number; body: unknown }) {
  expect(res.status).toBe(401);
  const { error } = expectSchema(errorEnvelopeSchema, res.body);
  expect(error.code).toBe('invalid_api_key');
  expect(error.message).toContain('revoked');
}

test('last_used_at is set by use, and written at most once a minute', async () => {
  const user = await svc.createUser();
  const [keyId] = await keyIdOf(user.userId);
  expect((await keyRow(keyId)).last_used_at).toBeNull();

  expect((await api(svc.url, 'GET', '/v1/turns', { key: user.apiKey })).status).toBe(200);
  const first = (await keyRow(keyId)).last_used_at;
  expect(first).toBeInstanceOf(Date);
  expect(Math.abs(first!.getTime() - Date.now())).toBeLessThan(60_000);

  // Used again within the minute: no write.
  expect((await api(svc.url, 'GET', '/v1/turns', { key: user.apiKey })).status).toBe(200);
  expect((await keyRow(keyId)).last_used_at).toEqual(first);

  // An hour-old use is brought up to date by the next request, on the stream route too.
  await svc.database.pool.query("UPDATE api_keys SET last_used_at = now() - interval '1 hour' WHERE id = $1", [keyId]);
  const res = await fetch(`${svc.url}/v1/turns/turn_01ARZ3NDEKTSV4RRFFQ69G5FAV/events?api_key=${user.apiKey}`);
  expect(res.status).toBe(404);
  const refreshed = (await keyRow(keyId)).last_used_at!;
  expect(refreshed.getTime()).toBeGreaterThan(Date.now() - 60_000);
});

test('key:revoke: the key is refused at once on every route, SSE included; the user’s other key still works', async () => {
  const user = await svc.createUser('revoking');
  const created = await keyCommand('create', 'revoking');
  expect(created.code).toBe(0);
  const [second] = created.stdout.match(KEY_PATTERN) ?? [];
  expect(second).toBeDefined();

  const turn = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...thanks, stream: false } });
  expect(turn.status).toBe(200);
  const before = await statusesWith(user.apiKey, turn.body.id);
  expect([before.stream, before.byQuery.status, before.list.status, before.memory.status]).toEqual([
    200, 200, 200, 201,
  ]);

  const [firstId] = await keyIdOf(user.userId);
  const revoked = await keyCommand('revoke', firstId);
  expect(revoked).toMatchObject({ code: 0, stderr: '' });
  expect(revoked.stdout).toContain(`Revoked: ${firstId}`);
  expect(revoked.stdout).not.toMatch(KEY_PATTERN);

  const after = await statusesWith(user.apiKey, turn.body.id);
  expectRevoked({ status: after.stream, body: after.streamBody });
  expectRevoked(after.byQuery);
  expectRevoked(after.list);
  expectRevoked(after.memory);
  expect(await svc.database.pool.query('SELECT 1 FROM memory_entries WHERE user_id = $1', [user.userId])).toMatchObject(
    {
      rowCount: 1,
    },
  );

  const other = await statusesWith(second!, turn.body.id);
  expect([other.stream, other.byQuery.status, other.list.status]).toEqual([200, 200, 200]);

  // Revoking again keeps the first revocation.
  const at = (await keyRow(firstId)).revoked_at;
  expect((await keyCommand('revoke', firstId)).code).toBe(0);
  expect((await keyRow(firstId)).revoked_at).toEqual(at);
});

test('key:rotate shows a new key once and revokes the old one, at once or after a grace period; key:list shows it all', async () => {
  const user = await svc.createUser('rotating');
  const [oldId] = await keyIdOf(user.userId);

  // With a grace period both keys work until it ends.
  const graceful = await keyCommand('rotate', user.apiKey, '--grace-minutes', '10');
  expect(graceful).toMatchObject({ code: 0, stderr: '' });
  const [middle] = graceful.stdout.match(KEY_PATTERN) ?? [];
  expect(middle).toBeDefined();
  expect(middle).not.toBe(user.apiKey);
  expect((await api(svc.url, 'GET', '/v1/turns', { key: user.apiKey })).status).toBe(200);
  expect((await api(svc.url, 'GET', '/v1/turns', { key: middle })).status).toBe(200);
  const revokesAt = (await keyRow(oldId)).revoked_at!;
  expect(revokesAt.getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
  // A key already on its way out is not rotated again; revoking it ends its grace at once.
  expect(await keyCommand('rotate', oldId)).toMatchObject({
    code: 1,
    stderr: expect.stringContaining(`API key ${oldId} is revoked from`),
  });
  expect((await keyCommand('revoke', oldId)).code).toBe(0);
  expectRevoked(await api(svc.url, 'GET', '/v1/turns', { key: user.apiKey }));

  // Without one, the old key stops at once. The key is named here by its display prefix.
  const middleId = (await keyIdOf(user.userId))[1];
  const prefix = middle!.slice(0, 12);
  const rotated = await keyCommand('rotate', prefix);
  expect(rotated).toMatchObject({ code: 0, stderr: '' });
  const [newest] = rotated.stdout.match(KEY_PATTERN) ?? [];
  expectRevoked(await api(svc.url, 'GET', '/v1/turns', { key: middle }));
  expect((await api(svc.url, 'GET', '/v1/turns', { key: newest! })).status).toBe(200);

  const listed = await keyCommand('list', 'rotating');
  expect(listed).toMatchObject({ code: 0, stderr: '' });
  expect(listed.stdout).not.toMatch(KEY_PATTERN);
  const lines = listed.stdout.trim().split('\n');
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatch(new RegExp(`^${oldId}  ${user.apiKey.slice(0, 12)}….* revoked \\d{4}-`));
  expect(lines[1]).toMatch(new RegExp(`^${middleId}  ${prefix}….* revoked \\d{4}-`));
  expect(lines[2]).toMatch(new RegExp(`^key_\\w+  ${newest!.slice(0, 12)}….*last used \\d{4}-.*  active$`));
});

test('an operator’s mistakes are one-line errors that change nothing', async () => {
  const results = await Promise.all([
    keyCommand('list', 'nobody-here'),
    keyCommand('create', 'nobody-here'),
    keyCommand('revoke', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV'),
    keyCommand('revoke', 'amy_live_0123456789ABCDEFGHIJabcdefghij'),
    keyCommand('rotate', 'amy_live_XyZ', '--grace-minutes', 'soon'),
    keyCommand('revoke', 'key_x', '--grace-minutes', '5'),
    keyCommand('drop', 'x'),
    keyCommand('list'),
  ]);
  for (const result of results) {
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: /);
    expect(result.stdout).toBe('');
  }
  expect(results[0].stderr).toContain('no user named "nobody-here"');
  expect(results[2].stderr).toContain('no API key matches');
  expect(results[3].stderr).toContain('no API key matches');
  expect(results[4].stderr).toContain('--grace-minutes takes a whole number');
});
