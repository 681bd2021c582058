import {
  createUserWithApiKey,
  ensureUser,
  findUserIdByApiKey,
  hashApiKey,
  InvalidUserNameError,
  issueApiKey,
  UserExistsError,
} from '../../platform/users';
import { runCli } from '../support/cli';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { DEMO_HISTORY_DAYS } from '../../dev/synthetic-data/demo-user';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

test('a new key finds its user; a wrong key finds no one', async () => {
  const { user, apiKey } = await createUserWithApiKey(t.pool, 'alice');
  expect(user).toEqual({ id: expect.stringMatching(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/), name: 'alice' });
  expect(apiKey).toMatch(/^amy_live_[0-9A-Za-z]{32}$/);
  expect(await findUserIdByApiKey(t.pool, apiKey)).toBe(user.id);

  const lastChar = apiKey.at(-1) === 'a' ? 'b' : 'a';
  expect(await findUserIdByApiKey(t.pool, apiKey.slice(0, -1) + lastChar)).toBeNull();
  expect(await findUserIdByApiKey(t.pool, `${apiKey}x`)).toBeNull();
  expect(await findUserIdByApiKey(t.pool, hashApiKey(apiKey))).toBeNull();
  expect(await findUserIdByApiKey(t.pool, '')).toBeNull();
});

test('only the hash and a short display prefix of the key are stored', async () => {
  const { user, apiKey } = await createUserWithApiKey(t.pool, 'bob');
  const [stored] = await t.db.apiKey.findMany({ where: { userId: user.id } });
  expect(stored.keyHash).toBe(hashApiKey(apiKey));
  expect(stored.keyHash).toMatch(/^[0-9a-f]{64}$/);
  expect(stored.prefix).toBe(apiKey.slice(0, 12));
  expect(stored.id).toMatch(/^key_/);
  const rows = await t.db.$queryRaw<{ row: string }[]>`SELECT row_to_json(k)::text AS row FROM api_keys k`;
  expect(rows.length).toBeGreaterThan(0);
  for (const { row } of rows) {
    expect(row).not.toContain(apiKey);
    expect(row).not.toContain(apiKey.slice(12)); // the secret part, past the display prefix
  }
});

test('keys are random: two users never share one', async () => {
  const keys = await Promise.all(
    ['k1', 'k2', 'k3'].map(async (name) => (await createUserWithApiKey(t.pool, name)).apiKey),
  );
  expect(new Set(keys).size).toBe(3);
});

test('a taken name is a UserExistsError and leaves the first user alone', async () => {
  const first = await createUserWithApiKey(t.pool, 'carol');
  const failure = await createUserWithApiKey(t.pool, 'carol').catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(UserExistsError);
  expect(failure).toMatchObject({ name: 'UserExistsError', userName: 'carol' });
  expect(await t.db.user.count({ where: { name: 'carol' } })).toBe(1);
  expect(await t.db.apiKey.count({ where: { userId: first.user.id } })).toBe(1);
  expect(await findUserIdByApiKey(t.pool, first.apiKey)).toBe(first.user.id);
});

test.each(['', 'a'.repeat(65), 'with space', 'slash/name', 'émile', 'semi;colon'])(
  'rejects the name %j before touching the database',
  async (name) => {
    await expect(createUserWithApiKey(t.pool, name)).rejects.toBeInstanceOf(InvalidUserNameError);
    await expect(ensureUser(t.pool, name)).rejects.toBeInstanceOf(InvalidUserNameError);
  },
);

test('accepts names of 1 to 64 characters from a-z A-Z 0-9 _ . -', async () => {
  for (const name of ['x', 'a'.repeat(64), 'Dr.Who_2-b']) {
    await expect(createUserWithApiKey(t.pool, name)).resolves.toMatchObject({ user: { name } });
  }
});

test('ensureUser returns the same user every time, even when called concurrently', async () => {
  const existing = await createUserWithApiKey(t.pool, 'dave');
  expect(await ensureUser(t.pool, 'dave')).toEqual(existing.user);

  const created = await Promise.all(Array.from({ length: 5 }, () => ensureUser(t.pool, 'demo')));
  expect(new Set(created.map((user) => user.id)).size).toBe(1);
  expect(await t.db.user.count({ where: { name: 'demo' } })).toBe(1);
});

test('issueApiKey adds a working key without revoking the others', async () => {
  const { user, apiKey } = await createUserWithApiKey(t.pool, 'erin');
  const second = await issueApiKey(t.pool, user.id);
  expect(second).not.toBe(apiKey);
  expect(await findUserIdByApiKey(t.pool, second)).toBe(user.id);
  expect(await findUserIdByApiKey(t.pool, apiKey)).toBe(user.id);
});

test('scripts/user-create.ts prints a working key once, with no health data, and refuses a taken name', async () => {
  const run = (...args: string[]) => runCli('scripts/user-create.ts', args, { DATABASE_URL: t.url });

  const created = await run('frank');
  expect(created.code).toBe(0);
  const apiKey = /amy_live_[0-9A-Za-z]{32}/.exec(created.stdout)?.[0];
  expect(apiKey).toBeDefined();
  const userId = await findUserIdByApiKey(t.pool, apiKey!);
  expect(userId).not.toBeNull();
  expect(await t.db.dailySummary.count({ where: { userId: userId! } })).toBe(0);

  const [taken, invalid, flag, demo] = await Promise.all([
    run('frank'),
    run('bad name'),
    run('gina', '--no-data'),
    run('hana', '--demo-data'),
  ]);
  expect(taken).toMatchObject({ code: 1, stderr: expect.stringContaining('a user named "frank" already exists') });
  expect(invalid).toMatchObject({ code: 1, stderr: expect.stringContaining('invalid user name') });
  expect(flag).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown option --no-data') });
  // Synthetic data is opt-in, from the dev tooling: the option names the command that gives it.
  expect(demo).toMatchObject({ code: 1, stderr: expect.stringContaining('npm run demo:user -- hana') });
  expect(await t.db.user.count({ where: { name: { in: ['gina', 'hana'] } } })).toBe(0);
});

test('dev/synthetic-data/demo-user-create.ts gives the new user the demo history', async () => {
  const run = (...args: string[]) => runCli('dev/synthetic-data/demo-user-create.ts', args, { DATABASE_URL: t.url });

  const created = await run('hana');
  expect(created.code).toBe(0);
  const apiKey = /amy_live_[0-9A-Za-z]{32}/.exec(created.stdout)?.[0];
  const userId = await findUserIdByApiKey(t.pool, apiKey!);
  expect(await t.db.dailySummary.count({ where: { userId: userId! } })).toBe(DEMO_HISTORY_DAYS);
  expect(await t.db.healthProfile.count({ where: { userId: userId! } })).toBe(1);
  expect(await run('hana')).toMatchObject({ code: 1, stderr: expect.stringContaining('already exists') });
});
