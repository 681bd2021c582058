/**
 * The service runs under a Postgres role that reads and writes data only (docs/operations.md#database-roles):
 * deploy/postgres/service-role.sql, the very file deploy/compose.yaml runs after the migrations, is run here with
 * psql as the schema's owner on a freshly migrated database of the suites' real Postgres. Connected as that role
 * (amy_service), the compiled API and worker start, a turn is created and streamed to its end, a data question
 * is answered from the user's rows, the codec server signs in and decodes (its audit table's sequence), and an
 * account is deleted; while the role cannot create, alter, drop or truncate a table, make a temporary table or
 * a function, touch the migrations' history, read pg_authid or a server file. Running the file again (an
 * upgrade) succeeds and changes nothing, and a table a later migration creates is covered without running it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from '../../dev/stack/ports';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';

jest.setTimeout(240_000);

const SERVICE_ROLE_SQL = path.resolve(__dirname, '../../deploy/postgres/service-role.sql');
const SERVICE_PASSWORD = randomBytes(18).toString('hex');
const TOKEN = randomBytes(24).toString('hex');

let database: TestDatabase;
/** The same database as the restricted role. */
let serviceUrl: string;

/** deploy/postgres/service-role.sql through psql, as the owner, as compose's db-roles service runs it. */
async function runServiceRoleSql(env: Record<string, string> = { AMY_SERVICE_DB_PASSWORD: SERVICE_PASSWORD }) {
  return promisify(execFile)('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', SERVICE_ROLE_SQL, database.url], {
    env: { PATH: process.env.PATH, ...env },
  }).catch((err: { code?: number | string; stderr?: string }) => {
    if (err.code === 'ENOENT') throw new Error('psql is not installed (apt-get install postgresql-client)');
    throw new Error(`psql failed (${err.code}): ${err.stderr}`);
  });
}

/** What the role may do to each table, sequence and function of the schema, and to the database. */
async function privileges(): Promise<unknown> {
  const { rows } = await database.pool.query(
    `SELECT c.relname, c.relkind::text,
            -- Each one: a list of privileges asks whether any is held.
            has_table_privilege('amy_service', c.oid, 'SELECT') AND has_table_privilege('amy_service', c.oid, 'INSERT')
              AND has_table_privilege('amy_service', c.oid, 'UPDATE')
              AND has_table_privilege('amy_service', c.oid, 'DELETE') AS dml,
            has_table_privilege('amy_service', c.oid, 'TRUNCATE, REFERENCES, TRIGGER') AS beyond_dml,
            CASE WHEN c.relkind = 'S' THEN has_sequence_privilege('amy_service', c.oid, 'USAGE') END AS sequence_usage
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S')
      UNION ALL
     SELECT p.proname, 'f', has_function_privilege('amy_service', p.oid, 'EXECUTE'), false, NULL
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
      UNION ALL
     SELECT 'database', 'd', has_database_privilege('amy_service', current_database(), 'CONNECT'),
            has_database_privilege('amy_service', current_database(), 'CREATE, TEMPORARY'), NULL
      ORDER BY 1`,
  );
  return rows;
}

async function asServiceRole<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serviceUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The SQLSTATE a statement fails with as the service's role ('ok' when it does not fail). */
const refusal = (sql: string) =>
  asServiceRole((client) =>
    client.query(sql).then(
      () => 'ok',
      (err: { code?: string }) => err.code,
    ),
  );

beforeAll(async () => {
  database = await createTestDatabase();
  await runServiceRoleSql();
  const url = new URL(database.url);
  url.username = 'amy_service';
  url.password = SERVICE_PASSWORD;
  serviceUrl = url.toString();
});
afterAll(async () => {
  await database?.drop();
});

test('without AMY_SERVICE_DB_PASSWORD the file refuses, and psql fails', async () => {
  await expect(runServiceRoleSql({})).rejects.toThrow(/set AMY_SERVICE_DB_PASSWORD/);
  await expect(runServiceRoleSql({ AMY_SERVICE_DB_PASSWORD: '' })).rejects.toThrow(/set AMY_SERVICE_DB_PASSWORD/);
});

test('the role logs in, with a password, and is no superuser: no role, database or replication powers, owns nothing', async () => {
  const { rows } = await database.pool.query(
    `SELECT rolcanlogin, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolpassword IS NOT NULL AS has_password,
            (SELECT count(*)::int FROM pg_class WHERE relowner = r.oid) AS owns
       FROM pg_authid r WHERE rolname = 'amy_service'`,
  );
  expect(rows).toEqual([
    {
      rolcanlogin: true,
      rolsuper: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolreplication: false,
      rolbypassrls: false,
      has_password: true,
      owns: 0,
    },
  ]);
});

test('it reads and writes every table, uses the sequences, calls the functions; not the migrations’ history', async () => {
  const granted = (await privileges()) as Array<{
    relname: string;
    relkind: string;
    dml: boolean;
    beyond_dml: boolean;
    sequence_usage: boolean | null;
  }>;
  const tables = granted.filter((p) => p.relkind === 'r' && p.relname !== '_prisma_migrations');
  expect(tables.map((t) => t.relname)).toEqual(expect.arrayContaining(['turns', 'turn_events', 'codec_decode_audit']));
  expect(tables.filter((t) => !t.dml || t.beyond_dml)).toEqual([]);
  const sequences = granted.filter((p) => p.relkind === 'S');
  expect(sequences.length).toBeGreaterThan(0);
  expect(sequences.filter((s) => !s.sequence_usage)).toEqual([]);
  expect(granted.filter((p) => p.relkind === 'f').map((f) => [f.relname, f.dml])).toEqual(
    expect.arrayContaining([
      ['append_turn_events', true],
      ['create_queued_turn', true],
    ]),
  );
  expect(granted.find((p) => p.relname === '_prisma_migrations')).toMatchObject({ dml: false });
  expect(granted.find((p) => p.relname === 'database')).toMatchObject({ dml: true, beyond_dml: false });
});

test('it cannot change the schema, truncate, make temporary tables, or read what is not the service’s', async () => {
  const attempts: Record<string, string> = {
    'CREATE TABLE': 'CREATE TABLE intruder (id int)',
    'CREATE TEMP TABLE': 'CREATE TEMP TABLE scratch (id int)',
    'CREATE FUNCTION': 'CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
    'CREATE SCHEMA': 'CREATE SCHEMA intruder',
    'ALTER TABLE': 'ALTER TABLE turns ADD COLUMN intruder int',
    'DROP TABLE': 'DROP TABLE turn_events',
    'CREATE INDEX': 'CREATE INDEX intruder ON turns (status)',
    TRUNCATE: 'TRUNCATE turn_events',
    'CREATE ROLE': 'CREATE ROLE intruder',
    'read pg_authid': 'SELECT rolpassword FROM pg_authid',
    'read a server file': "SELECT pg_read_file('/etc/passwd')",
    'COPY from a server file': "COPY users FROM '/etc/passwd'",
    'read the migrations': 'SELECT * FROM _prisma_migrations',
    'rewrite the migrations': 'DELETE FROM _prisma_migrations',
  };
  const outcomes: Record<string, string | undefined> = {};
  for (const [what, sql] of Object.entries(attempts)) outcomes[what] = await refusal(sql);
  // 42501: insufficient privilege, whatever the statement.
  expect(outcomes).toEqual(Object.fromEntries(Object.keys(attempts).map((what) => [what, '42501'])));
  // The schema is as it was.
  const { rowCount } = await database.pool.query("SELECT 1 FROM pg_class WHERE relname = 'intruder'");
  expect(rowCount).toBe(0);
});

test('running the file again, as an upgrade does, succeeds and changes nothing', async () => {
  const before = await privileges();
  await runServiceRoleSql();
  expect(await privileges()).toEqual(before);
});

test('what a later migration creates as the owner is the role’s to use, without running the file again', async () => {
  await database.pool.query(
    `CREATE TABLE later_migration (id BIGSERIAL PRIMARY KEY, note TEXT NOT NULL);
     CREATE FUNCTION later_migration_count() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM later_migration $$;`,
  );
  try {
    const counted = await asServiceRole(async (client) => {
      await client.query("INSERT INTO later_migration (note) VALUES ('ok')");
      await client.query("UPDATE later_migration SET note = 'still ok'");
      return (await client.query('SELECT later_migration_count() AS n')).rows[0].n;
    });
    expect(counted).toBe('1');
    expect(await refusal('TRUNCATE later_migration')).toBe('42501');
  } finally {
    await database.pool.query('DROP TABLE later_migration; DROP FUNCTION later_migration_count()');
  }
});

describe('the service, connected as the role', () => {
  let svc: TestService;
  let codec: string;

  beforeAll(async () => {
    // Without the role there is nothing to run the service as (and nothing to start and leave running).
    if (!serviceUrl) throw new Error('amy_service was not made: see the first failure');
    const codecPort = await freePort();
    codec = `http://127.0.0.1:${codecPort}/codec`;
    // The suite's own fixtures go through the owner's connection; the API and the worker through the role's.
    svc = await startTestService({
      databaseUrl: database.url,
      env: {
        DATABASE_URL: serviceUrl,
        AMY_CODEC_OPERATORS: `ops:${TOKEN}`,
        AMY_CODEC_PORT: String(codecPort),
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  test('the API and the worker started on it: their connections are the role’s', async () => {
    const { rows } = await database.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'amy_service' AND datname = current_database()",
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });

  test('a turn is created and streamed to its end; a data question is answered from the user’s rows', async () => {
    const user = await svc.createUser();
    await seedDemoHealthData(svc.database.pool, user.userId);
    const created = await api(svc.url, 'POST', '/v1/turns', {
      key: user.apiKey,
      body: { messages: [{ role: 'user', content: 'thanks!' }] },
    });
    expect(created.status).toBe(201);
    const stream = openEventStream(`${svc.url}/v1/turns/${created.body.id}/events`, { apiKey: user.apiKey });
    await stream.closedByServer;
    expect(stream.events.map((e) => e.type)).toEqual(expect.arrayContaining(['turn.started', 'turn.completed']));
    expect(stream.events.at(-1)?.type).toBe('turn.completed');

    const data = await api(svc.url, 'POST', '/v1/turns', {
      key: user.apiKey,
      body: {
        messages: [{ role: 'user', content: 'What is my average resting heart rate over the last 90 days?' }],
        stream: false,
      },
    });
    expect({ status: data.status, turn: data.body.status }).toEqual({ status: 200, turn: 'completed' });
    // Computed over a snapshot of the user's rows, which the worker wrote as the role.
    const snapshot = await database.pool.query<{ daily_rows: number }>(
      'SELECT daily_rows FROM turn_data_snapshots WHERE turn_id = $1',
      [data.body.id],
    );
    expect(snapshot.rows[0]?.daily_rows).toBeGreaterThan(0);

    // The codec server's sessions and audit (a BIGSERIAL's sequence) as the role.
    const login = await fetch(`${codec}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${TOKEN}`,
    });
    expect(login.status).toBe(200);
    const decode = await fetch(`${codec}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: login.headers.get('set-cookie')!.split(';')[0] },
      body: JSON.stringify({ payloads: [] }),
    });
    expect(decode.status).toBe(200);

    const deletion = await api(svc.url, 'DELETE', '/v1/account', { key: user.apiKey });
    expect(deletion.status).toBe(200);
    expect((await database.pool.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount).toBe(0);
  });
});
