/**
 * GET /v1/data/connections (docs/api.md#connections) over real HTTP against a real database: the rows Terra's
 * connection events write, put here with SQL for two users, come back as the contract says, by provider then
 * Terra user id, every status included, and only ever the caller's own; through the SDK and through the built
 * `amy data connections` run as a child process, as a user with none sees them too.
 */
import { Amy } from '@amy/sdk';
import { TERRA_CONNECTION_STATUSES, terraConnectionListSchema, type TerraConnection } from '../../contracts/data';
import { api, expectSchema } from '../support/http';
import { ensureCliBuilt } from '../support/workspace-build';
import { runAmy } from '../support/cli/run-amy';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(90_000);

let svc: TestService;
let alice: { userId: string; apiKey: string };
let bob: { userId: string; apiKey: string };
let carol: { userId: string; apiKey: string };

/** A connection row as the connection events' writer (platform/terra/connections.ts) leaves it. */
interface Row {
  terra_user_id: string;
  provider: string;
  status: string;
  scopes: string | null;
  state_at: string;
  connected_at: string | null;
  updated_at: string;
}

async function insert(userId: string, rows: Row[]) {
  for (const row of rows) {
    await svc.database.pool.query(
      `INSERT INTO terra_connections
         (terra_user_id, user_id, provider, status, scopes, last_event, state_at, connected_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'auth', $6, $7, $8)`,
      [row.terra_user_id, userId, row.provider, row.status, row.scopes, row.state_at, row.connected_at, row.updated_at],
    );
  }
}

/** What the API answers for a row: scopes as a list, instants as ISO 8601 in UTC. */
const answered = (row: Row): TerraConnection => ({
  terra_user_id: row.terra_user_id,
  provider: row.provider,
  status: row.status as TerraConnection['status'],
  scopes: row.scopes ? row.scopes.split(',') : [],
  connected_at: row.connected_at && new Date(row.connected_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

// One of Alice's per status, under providers that sort otherwise than they were written; two of hers at
// one provider, told apart by their Terra user id; instants sent with an offset, answered in UTC.
const aliceRows: Row[] = TERRA_CONNECTION_STATUSES.map((status, i) => ({
  terra_user_id: `terra_alice_${i}`,
  provider: ['WHOOP', 'OURA', 'GARMIN', 'POLAR', 'FITBIT'][i],
  status,
  scopes: i === 0 ? 'sleep,daily,activity' : null,
  state_at: `2026-11-2${i}T08:00:00.000Z`,
  connected_at: status === 'error' ? null : `2026-11-1${i}T09:30:00.000+02:00`,
  updated_at: `2026-11-2${i}T08:00:01.250Z`,
}));
aliceRows.push({ ...aliceRows[1], terra_user_id: 'terra_alice_0b', status: 'connected' });
const bobRows: Row[] = [
  {
    terra_user_id: 'terra_bob_1',
    provider: 'APPLE',
    status: 'connected',
    scopes: 'daily',
    state_at: '2026-11-01T00:00:00.000Z',
    connected_at: '2026-11-01T00:00:00.000Z',
    updated_at: '2026-11-01T00:00:00.000Z',
  },
  { ...aliceRows[1], terra_user_id: 'terra_bob_2' },
];

/** Alice's rows in the order the API lists them: by provider, then Terra user id. */
const aliceListed = [...aliceRows]
  .sort((a, b) => a.provider.localeCompare(b.provider) || a.terra_user_id.localeCompare(b.terra_user_id))
  .map(answered);

beforeAll(async () => {
  ensureCliBuilt();
  svc = await startTestService();
  alice = await svc.createUser('conn_alice');
  bob = await svc.createUser('conn_bob');
  carol = await svc.createUser('conn_carol');
  await insert(alice.userId, aliceRows);
  await insert(bob.userId, bobRows);
}, 120_000);
afterAll(() => svc?.close());

const cliEnv = (user: { apiKey: string }) => ({ AMY_API_KEY: user.apiKey, AMY_BASE_URL: svc.url });

describe('the route', () => {
  test("lists the caller's connections, every status, by provider then Terra user id, as the contract says", async () => {
    const res = await api(svc.url, 'GET', '/v1/data/connections', { key: alice.apiKey });
    expect(res.status).toBe(200);
    const body = expectSchema(terraConnectionListSchema, res.body);
    expect(body.data).toEqual(aliceListed);
    expect(body.data.map((c) => c.provider)).toEqual(['FITBIT', 'GARMIN', 'OURA', 'OURA', 'POLAR', 'WHOOP']);
    expect(new Set(body.data.map((c) => c.status))).toEqual(new Set(TERRA_CONNECTION_STATUSES));
    expect(body.data.find((c) => c.provider === 'WHOOP')).toMatchObject({
      scopes: ['sleep', 'daily', 'activity'],
      connected_at: '2026-11-10T07:30:00.000Z',
    });
  });

  test("another user's connections are never listed, not even at the same provider", async () => {
    const res = await api(svc.url, 'GET', '/v1/data/connections', { key: bob.apiKey });
    expect(res.status).toBe(200);
    expect(expectSchema(terraConnectionListSchema, res.body).data).toEqual(bobRows.map(answered));
    const mine = (await api(svc.url, 'GET', '/v1/data/connections', { key: alice.apiKey })).body;
    expect(JSON.stringify(mine)).not.toContain('terra_bob');
  });

  test('a user with none gets an empty list', async () => {
    const res = await api(svc.url, 'GET', '/v1/data/connections', { key: carol.apiKey });
    expect(res.status).toBe(200);
    expect(expectSchema(terraConnectionListSchema, res.body)).toEqual({ data: [] });
  });

  test('without a key it is a 401, and the OpenAPI document describes the route', async () => {
    expect((await api(svc.url, 'GET', '/v1/data/connections')).status).toBe(401);
    const doc = (await api(svc.url, 'GET', '/openapi.json')).body;
    const op = doc.paths['/v1/data/connections'].get;
    expect(op.operationId).toBe('listConnections');
    const status = op.responses['200'].content['application/json'].schema.properties.data.items.properties.status;
    expect(status.enum).toEqual([...TERRA_CONNECTION_STATUSES]);
  });
});

test('the SDK resolves to the same connections', async () => {
  const amy = new Amy({ apiKey: alice.apiKey, baseUrl: svc.url, maxRetries: 0 });
  expect(await amy.data.connections.list()).toEqual(aliceListed);
});

describe('amy data connections', () => {
  test("--json prints the API's connections, one per line", async () => {
    const run = await runAmy(['data', 'connections', '--json'], { env: cliEnv(alice) });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const printed = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as unknown);
    expect(printed).toEqual(aliceListed);
  });

  test("a table of the caller's own, with the hint to reconnect", async () => {
    const run = await runAmy(['data', 'connections'], { env: cliEnv(alice) });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^provider +status +connected \(UTC\) +updated \(UTC\) +terra_user_id$/);
    expect(lines.slice(1).map((line) => line.split(/ {2,}/)[0])).toEqual(aliceListed.map((c) => c.provider));
    expect(lines.find((line) => line.startsWith('WHOOP'))).toMatch(
      /^WHOOP +connected +2026-11-10 07:30 +2026-11-20 08:00 +terra_alice_0$/,
    );
    expect(run.stdout).not.toContain('terra_bob');
    expect(run.stderr).toMatch(/reconnect it through Terra's widget/);
  });

  test('none: says how a provider is connected', async () => {
    const run = await runAmy(['data', 'connections'], { env: cliEnv(carol) });
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toContain('No connections.');
    expect(run.stderr).toContain('docs/terra.md');
  });
});
