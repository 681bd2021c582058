/**
 * DELETE /v1/account, through the SDK (docs/api.md#deleting-an-account): after it the user's rows are gone,
 * every key of theirs is refused, their turns' workflow executions are not found in Temporal, and a history
 * exported before the deletion can no longer be decrypted, since the account's data keys are destroyed.
 * What is kept is the deletion record, which names no one. Another user's data is untouched.
 */
import { Amy, AuthenticationError } from '@amy/sdk';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { Pool } from 'pg';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { createDataKeyStore } from '../../platform/crypto/data-keys';
import { loadMasterKeyring } from '../../platform/crypto/master-key';
import { createDataConverter } from '../../platform/temporal/data-converter';
import { isEncryptedPayload } from '../../platform/temporal/encryption-codec';
import { issueApiKey } from '../../platform/users';
import { startTestService, type TestService } from '../support/service';
import { historyPayloads } from '../support/history';
import { readTestEnv } from '../support/test-env';

jest.setTimeout(180_000);

let svc: TestService;
let pool: Pool;

beforeAll(async () => {
  svc = await startTestService();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await svc?.close();
});

async function rowsOf(userId: string): Promise<Record<string, number>> {
  const tables = [
    'turns',
    'memory_entries',
    'daily_summaries',
    'workouts',
    'lab_biomarkers',
    'api_keys',
    'user_data_keys',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [
      userId,
    ]);
    counts[table] = rows[0].n;
  }
  return counts;
}

test('deleting an account erases its rows, keys, executions and data keys; an exported history stays sealed', async () => {
  const user = await svc.createUser();
  const bystander = await svc.createUser();
  await seedDemoHealthData(pool, user.userId);
  const secondKey = await issueApiKey(pool, user.userId);
  const amy = new Amy({ apiKey: user.apiKey, baseUrl: svc.url, maxRetries: 0 });
  await amy.memory.create({ text: 'Wants to run the Lofoten half marathon.', category: 'goal' });
  const turn = await amy.turns.create({
    messages: [{ role: 'user', content: 'What is my average resting heart rate over the last 30 days?' }],
  });
  await svc.temporal.workflow.getHandle(turn.id).result();
  await new Amy({ apiKey: bystander.apiKey, baseUrl: svc.url }).memory.create({
    text: 'Likes rowing.',
    category: 'preference',
  });

  // An export of the turn's history, as Temporal stores it, taken before the deletion.
  const connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  const exported = await new Client({ connection }).workflow.getHandle(turn.id).fetchHistory();
  const sealed = historyPayloads(exported).filter((p) => isEncryptedPayload(p));
  expect(sealed.length).toBeGreaterThan(0);

  const deletion = await amy.account.delete();
  expect(deletion.erased).toMatchObject({
    turns: 1,
    workflow_executions: 1,
    memory_entries: 2, // the goal, and the tested hypothesis the turn wrote
    daily_summaries: 400,
    api_keys: 2,
    data_keys: 1,
  });
  expect(deletion.kept.map((k) => k.what)).toEqual([expect.stringContaining('deletion record')]);

  // The rows are gone, the user with them; the deletion record names no one.
  expect(await rowsOf(user.userId)).toEqual({
    turns: 0,
    memory_entries: 0,
    daily_summaries: 0,
    workouts: 0,
    lab_biomarkers: 0,
    api_keys: 0,
    user_data_keys: 0,
  });
  const record = await pool.query('SELECT * FROM account_deletions');
  expect(record.rows).toHaveLength(1);
  expect(JSON.stringify(record.rows[0])).not.toContain(user.userId);

  // Both of its keys are refused.
  for (const apiKey of [user.apiKey, secondKey])
    await expect(
      new Amy({ apiKey, baseUrl: svc.url, maxRetries: 0 }).memory.list().then((page) => page),
    ).rejects.toBeInstanceOf(AuthenticationError);

  // Its execution is not found in Temporal (Temporal deletes it in the background, within seconds).
  const gone = async () => {
    for (let i = 0; i < 300; i++) {
      try {
        await svc.temporal.workflow.getHandle(turn.id).describe();
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return true;
        throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return false;
  };
  expect(await gone()).toBe(true);

  // The exported history cannot be decrypted: a codec with no cached keys finds the data key gone.
  const fresh = createDataConverter(pool, createDataKeyStore(pool, loadMasterKeyring()));
  await expect(fresh.payloadCodecs![0].decode(sealed as never)).rejects.toThrow();

  // The other user is untouched.
  expect((await rowsOf(bystander.userId)).memory_entries).toBe(1);
  await connection.close();
});
