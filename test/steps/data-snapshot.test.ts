/**
 * The turn's snapshot of its user's data (platform/health-data/snapshot.ts) against a real Postgres: taken
 * once, the same on every read however the rows change, one row when first reads race, an upload that has
 * not committed wholly out of it, equal to the live rows it was taken from, never another user's, kept when
 * data is deleted and gone with the turn or the user. The Domain Expert's profile tool reads it too. A turn that
 * says `include_biomarkers: false` takes one without the user's lab results, marked as withheld.
 */
import { Pool } from 'pg';
import { readUserProfile } from '../../activities/agents/domain-expert/user-profile';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { deleteDailyRange, upsertDailyRows } from '../../platform/health-data/daily-summaries';
import type { DailyRow } from '../../contracts/health-records';
import { readTurnHealthData, TurnDataSnapshotError } from '../../platform/health-data/snapshot';
import {
  readLabResults,
  readUserHealthData,
  replaceUserHealthData,
  writeHealthProfile,
} from '../../platform/health-data/store';
import { newId } from '../../platform/ids';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';

let database: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new Pool({ connectionString: database.url, max: 10 });
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const END = '2026-06-30';
const data = generateHealthData({ seed: 11, days: 120, endDate: new Date(`${END}T00:00:00Z`) });

/** A user with the generated history, and a turn of theirs. */
async function userWithData(): Promise<{ userId: string; turnId: string }> {
  const ids = await insertUserAndTurn(database.url);
  await replaceUserHealthData(pool, ids.userId, data);
  return ids;
}

/** Another turn of the same user, with the context it was asked with. */
async function anotherTurn(userId: string, context: object = { include_memory: true, include_biomarkers: true }) {
  const turnId = newId('turn');
  await pool.query(`INSERT INTO turns (id, user_id, status, messages, context) VALUES ($1, $2, 'running', $3, $4)`, [
    turnId,
    userId,
    JSON.stringify([{ role: 'user', content: 'hi' }]),
    JSON.stringify(context),
  ]);
  return turnId;
}

const snapshotRows = async (turnId: string) =>
  (await pool.query('SELECT 1 FROM turn_data_snapshots WHERE turn_id = $1', [turnId])).rowCount;

/** The last `days` days of the history with every step count raised, and a new day after the last. */
function changedDays(days: number): DailyRow[] {
  const raised = data.daily.slice(-days).map((row) => ({ ...row, steps: (row.steps ?? 0) + 1000 }));
  return [...raised, { ...raised[raised.length - 1], date: '2026-07-01' }];
}

test('the snapshot is the live rows as they were: every field, in the live reads’ order and key order', async () => {
  const { userId, turnId } = await userWithData();
  const live = await readUserHealthData(pool, userId);
  const labs = await readLabResults(pool, userId);
  const snapshot = await readTurnHealthData(pool, { turnId, userId });
  expect(snapshot).toStrictEqual({ ...live, labs, labsWithheld: false });
  expect(Object.keys(snapshot.daily[0])).toEqual(Object.keys(live.daily[0]));
  expect(snapshot.daily.length).toBe(120);
  const { rows } = await pool.query(
    `SELECT daily_rows, workout_rows, lab_rows, profile IS NOT NULL AS profile, labs_withheld
     FROM turn_data_snapshots WHERE turn_id = $1`,
    [turnId],
  );
  expect(rows[0]).toEqual({
    daily_rows: live.daily.length,
    workout_rows: live.workouts.length,
    lab_rows: labs.length,
    profile: true,
    labs_withheld: false,
  });
});

test('a turn that says include_biomarkers: false has no lab results in its snapshot, withheld, and the rest as usual', async () => {
  const { userId } = await userWithData();
  const live = await readUserHealthData(pool, userId);
  expect((await readLabResults(pool, userId)).length).toBeGreaterThan(0);
  const turnId = await anotherTurn(userId, { include_memory: true, include_biomarkers: false });
  const snapshot = await readTurnHealthData(pool, { turnId, userId });
  expect(snapshot).toStrictEqual({ ...live, labs: [], labsWithheld: true });
  const { rows } = await pool.query(
    'SELECT labs, lab_rows, labs_withheld FROM turn_data_snapshots WHERE turn_id = $1',
    [turnId],
  );
  expect(rows[0]).toEqual({ labs: [], lab_rows: 0, labs_withheld: true });
  // The Domain Expert's profile tool reads that snapshot: the profile, and why there are no labs.
  const profile = await readUserProfile(pool, { turnId, userId }, new Date(`${END}T12:00:00Z`));
  expect(profile).toMatchObject({
    profile: { weight_kg: data.profile.weight_kg },
    latest_biomarkers: [],
    note: 'lab results withheld: the user excluded biomarkers from this turn',
  });
  // A context stored without the flag means its default: the labs are in.
  const unflagged = await anotherTurn(userId, { include_memory: true });
  expect((await readTurnHealthData(pool, { turnId: unflagged, userId })).labs.length).toBeGreaterThan(0);
});

test('two reads of one turn give the same rows, even after the user’s data changed in between', async () => {
  const { userId, turnId } = await userWithData();
  const first = await readTurnHealthData(pool, { turnId, userId });

  await upsertDailyRows(pool, userId, changedDays(30));
  await deleteDailyRange(pool, userId, { from: data.daily[0].date, to: data.daily[9].date });
  await writeHealthProfile(pool, userId, { ...data.profile, weight_kg: data.profile.weight_kg + 10 });
  await pool.query('DELETE FROM workouts WHERE user_id = $1', [userId]);
  await pool.query('DELETE FROM lab_biomarkers WHERE user_id = $1', [userId]);

  const second = await readTurnHealthData(pool, { turnId, userId });
  expect(second).toStrictEqual(first);
  // The live rows did change, and a new turn sees them.
  const live = await readUserHealthData(pool, userId);
  expect(live.daily).not.toEqual(first.daily);
  const fresh = await readTurnHealthData(pool, { turnId: await anotherTurn(userId), userId });
  expect(fresh).toStrictEqual({ ...live, labs: [], labsWithheld: false });
  expect(fresh.daily.length).toBe(120 - 10 + 1);
  expect(fresh.workouts).toEqual([]);
});

test('concurrent first reads of one turn take one snapshot, and every read gets it', async () => {
  const { userId, turnId } = await userWithData();
  const reads = Array.from({ length: 8 }, () => readTurnHealthData(pool, { turnId, userId }));
  // A change racing the first reads: whichever way it falls, all of them see the same rows.
  const change = upsertDailyRows(pool, userId, changedDays(5));
  const [results] = await Promise.all([Promise.all(reads), change]);
  for (const result of results) expect(result).toStrictEqual(results[0]);
  expect(await snapshotRows(turnId)).toBe(1);
  expect(await readTurnHealthData(pool, { turnId, userId })).toStrictEqual(results[0]);
});

test('a first read is two statements (a look, then the take, which returns the snapshot); later reads one', async () => {
  const { userId, turnId } = await userWithData();
  const sent: string[] = [];
  const counting = {
    query: (text: string, values: unknown[]) => (sent.push(text), pool.query(text, values)),
  } as unknown as Pool;
  const first = await readTurnHealthData(counting, { turnId, userId });
  expect(sent).toHaveLength(2);
  expect(await readTurnHealthData(counting, { turnId, userId })).toStrictEqual(first);
  expect(sent).toHaveLength(3);
});

test('an upload that has not committed is wholly out of the snapshot, and stays out after it commits', async () => {
  const { userId, turnId } = await userWithData();
  const before = await readUserHealthData(pool, userId);
  const upload = await pool.connect();
  try {
    await upload.query('BEGIN');
    await upsertDailyRows(upload as unknown as Pool, userId, changedDays(20));
    const snapshot = await readTurnHealthData(pool, { turnId, userId });
    expect(snapshot.daily).toStrictEqual(before.daily);
    await upload.query('COMMIT');
    expect(await readTurnHealthData(pool, { turnId, userId })).toStrictEqual(snapshot);
  } finally {
    upload.release();
  }
  expect((await readUserHealthData(pool, userId)).daily.length).toBe(before.daily.length + 1);
});

test('a user with no data gets an empty snapshot, which stays empty when data arrives', async () => {
  const { userId, turnId } = await insertUserAndTurn(database.url);
  const empty = { profile: null, daily: [], workouts: [], labs: [], labsWithheld: false };
  expect(await readTurnHealthData(pool, { turnId, userId })).toStrictEqual(empty);
  await replaceUserHealthData(pool, userId, data);
  expect(await readTurnHealthData(pool, { turnId, userId })).toStrictEqual(empty);
});

test('a turn is only ever read as its own user’s, and a missing turn has no snapshot', async () => {
  const alice = await userWithData();
  const bob = await userWithData();
  await expect(readTurnHealthData(pool, { turnId: alice.turnId, userId: bob.userId })).rejects.toThrow(
    TurnDataSnapshotError,
  );
  expect(await snapshotRows(alice.turnId)).toBe(0);
  await readTurnHealthData(pool, alice);
  await expect(readTurnHealthData(pool, { turnId: alice.turnId, userId: bob.userId })).rejects.toThrow(
    TurnDataSnapshotError,
  );
  await expect(readTurnHealthData(pool, { turnId: newId('turn'), userId: alice.userId })).rejects.toThrow(
    TurnDataSnapshotError,
  );
});

test('a snapshot goes with its turn, and with its user', async () => {
  const first = await userWithData();
  await readTurnHealthData(pool, first);
  await pool.query('DELETE FROM turns WHERE id = $1', [first.turnId]);
  expect(await snapshotRows(first.turnId)).toBe(0);

  const second = await userWithData();
  await readTurnHealthData(pool, second);
  await pool.query('DELETE FROM users WHERE id = $1', [second.userId]);
  expect(await snapshotRows(second.turnId)).toBe(0);
});

test('the Domain Expert’s profile tool reads the snapshot: a profile changed mid-turn is not seen by the turn', async () => {
  const { userId, turnId } = await userWithData();
  const now = new Date(`${END}T12:00:00Z`);
  const before = await readUserProfile(pool, { turnId, userId }, now);
  await writeHealthProfile(pool, userId, { ...data.profile, weight_kg: data.profile.weight_kg + 10 });
  await pool.query('DELETE FROM lab_biomarkers WHERE user_id = $1', [userId]);
  expect(await readUserProfile(pool, { turnId, userId }, now)).toEqual(before);
  expect(before.profile?.weight_kg).toBe(data.profile.weight_kg);
  expect(before.latest_biomarkers.length).toBeGreaterThan(0);
});
