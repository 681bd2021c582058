/**
 * Run by test/steps/time-zones.test.ts as a child process whose TZ, and whose Postgres session's
 * TimeZone, are far from UTC: it writes and reads through the service's own functions and prints what
 * it saw as one JSON line, for the parent (in another zone) to compare with what it reads itself.
 *
 * Usage: DATABASE_URL=… TZ=… node --import tsx test/support/time-zone-probe.ts '<json: ProbeInput>'
 */
import { listTurnsForUser } from '../../api/tables/turns';
import { readLabResults, readUserHealthData, replaceUserHealthData } from '../../platform/health-data/store';
import type { HealthData } from '../../contracts/health-records';
import { createUserMemory, listMemoryPage, memorySummary, recordExtractedMemories } from '../../platform/memory';
import { createPgPool } from '../../platform/pg-pool';

export interface ProbeInput {
  userId: string;
  turnId: string;
  health: HealthData;
}

async function main() {
  const input = JSON.parse(process.argv[2]) as ProbeInput;
  const pool = createPgPool(process.env.DATABASE_URL!, 2);
  try {
    const session = await pool.query<{ zone: string }>('SELECT current_setting($1) AS zone', ['TimeZone']);
    const writtenFrom = Date.now();
    const memory = await createUserMemory(pool, input.userId, {
      category: 'preference',
      text: 'Written from the far side of the date line.',
      confidence: 1,
      meta: null,
    });
    await recordExtractedMemories(pool, {
      userId: input.userId,
      turnId: input.turnId,
      entries: [{ category: 'goal', text: 'Run a marathon.', confidence: 0.9 }],
    });
    const writtenUntil = Date.now();
    await replaceUserHealthData(pool, input.userId, input.health);
    const health = await readUserHealthData(pool, input.userId);
    const turnsPage = await listTurnsForUser(pool, input.userId, { limit: 2 });
    console.log(
      JSON.stringify({
        utcOffsetMinutes: -new Date().getTimezoneOffset(),
        sessionTimeZone: session.rows[0].zone,
        writtenFrom,
        writtenUntil,
        memory,
        page: await listMemoryPage(pool, input.userId, { limit: 10 }),
        summary: await memorySummary(pool, input.userId),
        days: health.daily.map((row) => row.date),
        workoutDays: health.workouts.map((row) => row.date),
        labDays: (await readLabResults(pool, input.userId)).map((row) => row.taken_on),
        turns: { ids: turnsPage.data.map((turn) => turn.id), nextCursor: turnsPage.next_cursor },
      }),
    );
  } finally {
    await pool.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
