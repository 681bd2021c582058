/**
 * `npm run bench:notify`: what NOTIFY costs the event log's appends. Every transaction that issues NOTIFY
 * takes one instance-wide lock at commit, so that notifications are queued in commit order, and holds it
 * through the commit's WAL flush; all such commits are serialised (Recall.ai, "Postgres LISTEN/NOTIFY does
 * not scale", 2025). Each event append notifies (platform/event-log.ts), so under a turn service's write
 * rate the question is how many appends per second commit with the notify and without it.
 *
 * What runs: a throwaway Postgres with the service's schema (or DATABASE_URL), one user and `--turns`
 * running turns, and one connection LISTENing on the channel as an API process does (notifications are
 * read as they come, so the queue never fills). Then, for each durability setting and each number of
 * concurrent appenders (one connection each), appenders append one `agent.thought` event at a time,
 * each to its own turns in turn (one append per turn at a time, as the worker does), for `--seconds`,
 * with the statements of the append (lock the turn row, insert the event, advance last_event_id) and
 * the notify, then the same without the notify, alternately. The statements are the append's of
 * platform/event-log.ts, copied so that the two variants differ by the notify alone.
 *
 * Durability: `bench` is the benchmarks' Postgres (fsync and synchronous_commit off, so a commit is
 * nearly free and the lock is held briefly); `durable` is a cluster of its own with both on, and
 * full_page_writes (the production setting: each commit waits for its WAL flush, which is where NOTIFY's
 * lock keeps commits from being flushed together). Command-line settings outrank ALTER SYSTEM, hence a
 * cluster per durability rather than a reload.
 *
 *   npm run bench:notify -- [options]
 *     --appenders A[,A…]   concurrent appenders (connections), one run each        (default 8,32,128)
 *     --seconds S          per run, per variant                                      (default 5)
 *     --turns N            turns appended to, spread over the appenders              (default 1000)
 *     --durability D[,D…]  bench | durable                                           (default bench,durable)
 *     --help
 *
 * It prints a Markdown table: commits/s and commit latency with and without the notify, side by side.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { Client, type Pool, type PoolClient } from 'pg';
import { EVENTS_CHANNEL } from '../../platform/event-log';
import { newId } from '../../platform/ids';
import { createPgPool } from '../../platform/pg-pool';
import { createUserWithApiKey } from '../../platform/users';
import { applyMigrations } from '../../scripts/migrate';
import { useEphemeralMasterKey } from '../stack/dev-keys';
import { startLocalServices } from '../stack/local-services';
import { formatMs, nowMs, summarize, type Summary } from './stats';

const USAGE = fs
  .readFileSync(__filename, 'utf8')
  .split('\n')
  .filter((line) => line.startsWith(' *     ') || line.startsWith(' *   npm run bench:notify'))
  .map((line) => line.slice(3))
  .join('\n');

type Durability = 'bench' | 'durable';

interface Options {
  appenders: number[];
  seconds: number;
  turns: number;
  durability: Durability[];
}

/** A streamed delta as the worker appends one: a few words of an agent's thought. */
const DELTA = {
  agent: 'domain_expert',
  delta: 'variability is the variation in time ',
  attempt: 1,
  step: 'domain_expert',
};

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      appenders: { type: 'string' },
      seconds: { type: 'string' },
      turns: { type: 'string' },
      durability: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return null;
  const positive = (name: string, raw: string) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${raw}`);
    return n;
  };
  const durability = (values.durability ?? 'bench,durable').split(',').map((d) => {
    if (d !== 'bench' && d !== 'durable') throw new Error(`--durability must be bench or durable, not ${d}`);
    return d as Durability;
  });
  return {
    appenders: (values.appenders ?? '8,32,128').split(',').map((a) => Math.floor(positive('appenders', a))),
    seconds: positive('seconds', values.seconds ?? '5'),
    turns: Math.floor(positive('turns', values.turns ?? '1000')),
    durability,
  };
}

/** One append of one event, as platform/event-log.ts's appendTurnEvents does it, with or without the notify. */
async function append(client: PoolClient, turnId: string, notify: boolean): Promise<void> {
  await client.query('BEGIN');
  try {
    const locked = await client.query<{ last_event_id: number }>(
      'SELECT last_event_id, attempt, status FROM turns WHERE id = $1 FOR UPDATE',
      [turnId],
    );
    const id = locked.rows[0].last_event_id + 1;
    await client.query(
      `INSERT INTO turn_events (turn_id, id, type, data, dedupe_key)
       SELECT $1, * FROM unnest($2::int[], $3::text[], $4::json[], $5::text[])`,
      [turnId, [id], ['agent.thought'], [JSON.stringify(DELTA)], [null]],
    );
    await client.query('UPDATE turns SET last_event_id = $2 WHERE id = $1', [turnId, id]);
    if (notify) await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, `${turnId}:${id}`]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

interface RunResult {
  commitsPerSecond: number;
  latency: Summary;
}

/** `appenders` connections appending for `seconds`; appender i takes turns i, i + A, i + 2A, … in turn. */
async function runAppenders(
  pool: Pool,
  turnIds: string[],
  opts: { appenders: number; seconds: number; notify: boolean },
): Promise<RunResult> {
  const latencies: number[] = [];
  const startedAt = nowMs();
  const until = startedAt + opts.seconds * 1000;
  await Promise.all(
    Array.from({ length: opts.appenders }, async (_, i) => {
      const client = await pool.connect();
      try {
        for (let k = i; nowMs() < until; k += opts.appenders) {
          const t0 = nowMs();
          await append(client, turnIds[k % turnIds.length], opts.notify);
          latencies.push(nowMs() - t0);
        }
      } finally {
        client.release();
      }
    }),
  );
  return { commitsPerSecond: latencies.length / ((nowMs() - startedAt) / 1000), latency: summarize(latencies) };
}

/** The server settings of each durability; the throwaway cluster's defaults are fsync and synchronous_commit off. */
const SETTINGS: Record<Durability, Record<string, string>> = {
  bench: {},
  durable: { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' },
};

/** One cluster with the given durability: every appender count, both variants. */
async function runDurability(opts: Options, durability: Durability): Promise<{ version: string; rows: string[][] }> {
  console.log(`[notify] starting Postgres (${durability})`);
  // Postgres alone: a TEMPORAL_ADDRESS in the environment given to startLocalServices keeps it from starting one.
  const services = await startLocalServices({
    postgres: { tempDirPrefix: 'amy-bench-notify-', settings: SETTINGS[durability] },
    env: { ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: 'not-used:0' },
  });
  // Connections that the server's stop terminates are reported here, not thrown.
  const pool = createPgPool(services.databaseUrl, Math.max(...opts.appenders) + 2, () => undefined);
  const listener = new Client({ connectionString: services.databaseUrl });
  listener.on('error', () => undefined);
  try {
    applyMigrations(services.databaseUrl);
    const { user } = await createUserWithApiKey(pool, `notify_bench_${Date.now().toString(36)}`);
    const turnIds = Array.from({ length: opts.turns }, () => newId('turn'));
    await pool.query(
      `INSERT INTO turns (id, user_id, status, messages, context, started_at)
       SELECT id, $2, 'running', '[]'::jsonb, '{}'::jsonb, now() FROM unnest($1::text[]) AS id`,
      [turnIds, user.id],
    );
    let notifications = 0;
    listener.on('notification', () => notifications++);
    await listener.connect();
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
    const setting = async (name: string) => (await pool.query<Record<string, string>>(`SHOW ${name}`)).rows[0][name];
    const version = await setting('server_version');
    console.log(`[notify] fsync ${await setting('fsync')}, synchronous_commit ${await setting('synchronous_commit')}`);

    const rows: string[][] = [];
    for (const appenders of opts.appenders) {
      const results: Record<'with' | 'without', RunResult[]> = { with: [], without: [] };
      // Alternated, twice each, so that a drift of the machine's load falls on both variants.
      for (const notify of [true, false, false, true]) {
        const before = notifications;
        const result = await runAppenders(pool, turnIds, { appenders, seconds: opts.seconds / 2, notify });
        results[notify ? 'with' : 'without'].push(result);
        console.log(
          `[notify] ${durability}, ${appenders} appenders, ${notify ? 'with' : 'without'} NOTIFY: ` +
            `${result.commitsPerSecond.toFixed(0)} commits/s, p99 ${formatMs(result.latency.p99)}` +
            (notify ? `, ${notifications - before} notifications heard` : ''),
        );
      }
      const rate = (rs: RunResult[]) => rs.reduce((n, r) => n + r.commitsPerSecond, 0) / rs.length;
      const p99 = (rs: RunResult[]) => Math.max(...rs.map((r) => r.latency.p99));
      const p50 = (rs: RunResult[]) => Math.min(...rs.map((r) => r.latency.p50));
      rows.push([
        durability,
        String(appenders),
        rate(results.without).toFixed(0),
        rate(results.with).toFixed(0),
        `${((100 * rate(results.with)) / rate(results.without)).toFixed(0)} %`,
        `${formatMs(p50(results.without))} / ${formatMs(p99(results.without))}`,
        `${formatMs(p50(results.with))} / ${formatMs(p99(results.with))}`,
      ]);
    }
    return { version, rows };
  } finally {
    await listener.end().catch(() => undefined);
    await pool.end();
    await services.stop();
  }
}

async function run(opts: Options): Promise<void> {
  useEphemeralMasterKey();
  const rows: string[][] = [];
  let version = '';
  for (const durability of opts.durability) {
    const result = await runDurability(opts, durability);
    version = result.version;
    rows.push(...result.rows);
  }
  const header = [
    'Durability',
    'Appenders',
    'Commits/s without NOTIFY',
    'Commits/s with NOTIFY',
    'With / without',
    'Commit p50 / p99 without',
    'Commit p50 / p99 with',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(
    `\nPostgres ${version}, ${opts.turns} turns, ${opts.seconds} s per variant and run, one LISTENing connection\n`,
  );
  console.log([line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'));
}

async function main(): Promise<void> {
  let opts: Options | null;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : err}\n\n${USAGE}`);
    process.exit(2);
  }
  if (!opts) {
    console.log(USAGE);
    return;
  }
  await run(opts);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
