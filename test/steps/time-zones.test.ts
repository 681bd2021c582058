/**
 * Instants and calendar days mean the same thing in every time zone. A child process in
 * Pacific/Kiritimati (UTC+14), on a Postgres session set to that zone too, writes memory and health
 * data and lists turns through the service's own functions; this process, in its own zone and on a
 * session in the server's, reads the same rows back. The instants must be the same instants (the
 * columns are timestamptz) and the days the same days (date columns read as text, not as local
 * midnights), whoever wrote or reads them. And no column of the schema can hold a time without its zone.
 * test/e2e/time-zones-service.test.ts runs the whole service (API and worker processes) in such zones.
 */
import { listTurnsForUser } from '../../api/tables/turns';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { readUserHealthData } from '../../platform/health-data/store';
import { newId } from '../../platform/ids';
import { listMemoryPage } from '../../platform/memory';
import { createUserWithApiKey } from '../../platform/users';
import { runCli } from '../support/cli';
import { createTestDatabase, type TestDatabase } from '../support/database';
import type { ProbeInput } from '../support/time-zone-probe';

const FAR_ZONE = 'Pacific/Kiritimati';
const FAR_OFFSET_MINUTES = 14 * 60;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The instant as ISO-8601 local time at the given offset from UTC, e.g. `…T13:00:00.000+14:00`. */
function atOffset(instant: number, offsetMinutes: number): string {
  const wall = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, 23);
  const abs = Math.abs(offsetMinutes);
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${wall}${offsetMinutes < 0 ? '-' : '+'}${hhmm}`;
}

async function insertTurnAt(userId: string, createdAt: string): Promise<string> {
  const id = newId('turn');
  await t.pool.query(
    `INSERT INTO turns (id, user_id, status, messages, context, created_at)
     VALUES ($1, $2, 'completed', '[]', '{}', $3::timestamptz)`,
    [id, userId, createdAt],
  );
  return id;
}

test(`what a process in ${FAR_ZONE} writes and reads is what a process elsewhere reads`, async () => {
  const { user } = await createUserWithApiKey(t.pool, 'islander');
  // 10:00Z is already midnight of the next day over there; a cursor must still part turns 1 ms apart.
  const [first, second, third] = [
    await insertTurnAt(user.id, '2026-06-01T10:00:00.000Z'),
    await insertTurnAt(user.id, '2026-06-01T10:00:00.001Z'),
    await insertTurnAt(user.id, '2026-06-01T11:30:00.000Z'),
  ];
  const health = generateHealthData({ seed: 3, days: 5, endDate: new Date('2026-03-02T00:00:00Z') });
  const input: ProbeInput = { userId: user.id, turnId: third, health };
  const farSession = new URL(t.url);
  farSession.searchParams.set('options', `-c TimeZone=${FAR_ZONE}`);

  const run = await runCli('test/support/time-zone-probe.ts', [JSON.stringify(input)], {
    DATABASE_URL: farSession.toString(),
    TZ: FAR_ZONE,
  });
  expect(run).toMatchObject({ code: 0, stderr: '' });
  const probe = JSON.parse(run.stdout);
  // The child really was far from UTC, and so was its session: otherwise this test proves nothing.
  expect(probe.utcOffsetMinutes).toBe(FAR_OFFSET_MINUTES);
  expect(probe.sessionTimeZone).toBe(FAR_ZONE);
  expect(new Date().getTimezoneOffset()).not.toBe(-FAR_OFFSET_MINUTES);

  // Memory: the instant written over there is now, and it is the same instant here.
  const written = probe.memory as { id: string; created_at: string };
  expect(written.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const createdAt = Date.parse(written.created_at);
  expect(createdAt).toBeGreaterThanOrEqual(probe.writtenFrom - 1000);
  expect(createdAt).toBeLessThanOrEqual(probe.writtenUntil + 1000);
  const here = await listMemoryPage(t.pool, user.id, { limit: 10 });
  expect(here).toEqual(probe.page);
  expect(here.entries.map((entry) => entry.id)).toContain(written.id);
  const row = await t.pool.query<{ created_at: Date }>('SELECT created_at FROM memory_entries WHERE id = $1', [
    written.id,
  ]);
  expect(row.rows[0].created_at.toISOString()).toBe(written.created_at);

  // Bounds given in any offset are the same instants: strict on both sides.
  const only = (query: { after?: string; before?: string }) =>
    listMemoryPage(t.pool, user.id, { ...query, category: 'preference', limit: 10 }).then((page) =>
      page.entries.map((entry) => entry.id),
    );
  expect(await only({ after: atOffset(createdAt - 1, FAR_OFFSET_MINUTES) })).toEqual([written.id]);
  expect(await only({ after: atOffset(createdAt, FAR_OFFSET_MINUTES) })).toEqual([]);
  expect(await only({ before: atOffset(createdAt + 1, -10 * 60) })).toEqual([written.id]);
  expect(await only({ before: atOffset(createdAt, -10 * 60) })).toEqual([]);

  // The injected summary dates an entry by its UTC day, wherever the worker runs.
  expect(probe.summary).toContain(`- (${written.created_at.slice(0, 10)}) Written from the far side of the date line.`);

  // Calendar days come back as the days written, over there and here.
  expect(probe.days).toEqual(health.daily.map((row) => row.date));
  expect(probe.days.at(-1)).toBe('2026-03-02');
  expect(probe.workoutDays).toEqual(health.workouts.map((row) => row.date));
  expect(probe.labDays).toEqual(
    health.biomarkers
      .map((row) => row.taken_on)
      .sort()
      .reverse(),
  );
  const stored = await readUserHealthData(t.pool, user.id);
  expect(stored.daily).toEqual(health.daily);
  expect(stored.workouts.map((row) => row.date)).toEqual(probe.workoutDays);

  // A turns cursor made over there continues here at the same place (and the same millisecond).
  expect(probe.turns.ids).toEqual([third, second]);
  const rest = await listTurnsForUser(t.pool, user.id, { limit: 2, cursor: probe.turns.nextCursor });
  expect(rest.data.map((turn) => turn.id)).toEqual([first]);
  expect(rest.has_more).toBe(false);
});

test('no column holds a time without its zone: every instant is timestamptz, every calendar day a date', async () => {
  // Prisma maps a bare DateTime to timestamp(3), which keeps a writer's wall time and drops its zone;
  // a new column must say @db.Timestamptz(3) (an instant) or @db.Date (a day).
  const columns = await t.pool.query<{ column: string; type: string }>(
    `SELECT table_name || '.' || column_name AS column, data_type AS type FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name <> '_prisma_migrations'
        AND data_type IN ('timestamp without time zone', 'time without time zone', 'time with time zone')`,
  );
  expect(columns.rows).toEqual([]);
});
