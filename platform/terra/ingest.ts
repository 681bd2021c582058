/**
 * Ingestion of one stored Terra event (docs/terra.md#what-happens-to-an-event), in one transaction: whose it is,
 * what it changes (a connection, rows of the three tables or the profile, a backfill's progress), and the webhook
 * events that tell the backend, all committed together with the event's outcome. Running it again — Temporal's
 * retry of a step that failed after its commit, `npm run terra:replay` after a mapping fix — writes the same rows:
 * every write is an upsert keyed by what the record is, and an older record never overwrites a newer one.
 *
 * Whose an event is: the Amy user its `reference_id` names (a user id, or the name a user was created with), else the
 * user its Terra user is connected for. When the two disagree the event is refused, never attached to either; when
 * neither exists it waits, unmatched, for TERRA_UNMATCHED_RETENTION_DAYS (./inbox.ts).
 */
import type { Pool, PoolClient } from 'pg';
import type { DataTable } from '../../contracts/webhooks';
import type { MasterKeyring } from '../crypto/master-key';
import { upsertLabResults } from '../health-data/lab-results';
import type { LabRow } from '../health-data/labs';
import { DAILY_METRICS, METRIC_SPECS, formatIsoDate, type DailyRow } from '../../contracts/health-records';
import { dailyRowsProblem, labRowsFromInput } from '../health-data/validate';
import { upsertWorkouts } from '../health-data/workouts';
import { inTransaction } from '../pg-pool';
import { connectionChangedEvent, dataUpdatedEvent, recordWebhookEvents, type OutboxEvent } from '../webhooks/outbox';
import { applyConnectionEvent, userOfTerraUser, type TerraConnectionChange } from './connections';
import {
  TERRA_BACKFILL_TYPES,
  TERRA_CONNECTION_TYPES,
  TERRA_DATA_TYPES,
  TERRA_LAB_TYPES,
  connectionEventUsers,
  identifyTerraEvent,
  largeRequestSchema,
} from './events';
import { lockTerraEvent, recordTerraOutcome, type StoredTerraEvent, type TerraEventStatus } from './inbox';
import {
  chooseWorkouts,
  combineDay,
  mapLabReport,
  mapTerraDataEvent,
  type DayContribution,
  type ProfileContribution,
  type SkippedField,
  type WorkoutContribution,
} from './mapping';

export interface TerraIngestDeps {
  pool: Pool;
  keyring: MasterKeyring;
  now?: () => Date;
  /** Called between the writes of a long event (a large request's chunk): the activity's heartbeat. */
  heartbeat?: () => void;
}

/** What ingestion did, for the event's row, the workflow's result and the log: counts and paths, never a value. */
export interface TerraIngestOutcome {
  status: TerraEventStatus | 'gone';
  type: string;
  userId: string | null;
  /** Why an event was refused or ignored. */
  note?: string;
  tables?: DataTable[];
  days?: number;
  workouts?: number;
  labResults?: number;
  skipped?: SkippedField[];
  connectionChanges?: number;
  backfill?: { reference: string; received: number; expected: number | null; complete: boolean };
}

const MAX_SKIPPED_KEPT = 50;

/** Terra's days are the user's local days, which run up to 14 hours ahead of UTC: tomorrow (UTC) is not yet refused. */
const latestAcceptedDay = (now: Date) => formatIsoDate(new Date(now.getTime() + 24 * 3600 * 1000));

/** The part of a `terra-reference` that a large request's chunks share. */
const backfillReferenceOf = (terraReference: string) => terraReference.split(':')[0];

export async function ingestTerraEvent(deps: TerraIngestDeps, eventId: string): Promise<TerraIngestOutcome> {
  const now = deps.now?.() ?? new Date();
  return inTransaction(deps.pool, async (client) => {
    const event = await lockTerraEvent(client, deps.keyring, eventId);
    if (!event) return { status: 'gone', type: 'unknown', userId: null };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(event.body.toString('utf8')) as Record<string, unknown>;
      identifyTerraEvent(body);
    } catch {
      return finish(client, event, { status: 'refused', type: event.type, userId: null, note: 'not a Terra event' });
    }
    const owner = await ownerOf(client, event);
    if ('refused' in owner) {
      return finish(client, event, { status: 'refused', type: event.type, userId: null, note: owner.refused });
    }
    if (owner.userId === null) {
      if (!isAboutAUser(event.type)) {
        return finish(client, event, { status: 'applied', type: event.type, userId: null, note: 'ignored' });
      }
      return finish(client, event, { status: 'unmatched', type: event.type, userId: null });
    }
    const userId = owner.userId;
    // One user's events are ingested one at a time: a day is recombined from every provider's records, which a
    // concurrent event's uncommitted record would be missing from.
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('terra ingest ' || $1, 0))`, [userId]);
    const webhooks: OutboxEvent[] = [];
    let outcome: TerraIngestOutcome;
    if (is(TERRA_CONNECTION_TYPES, event.type)) {
      const changes = await applyConnectionEvent(client, userId, {
        type: event.type,
        ...connectionEventUsers(body),
        orderedAt: event.orderedAt,
      });
      webhooks.push(...changes.map((change) => connectionWebhook(event, userId, change, now)));
      outcome = { status: 'applied', type: event.type, userId, connectionChanges: changes.length };
    } else if (is(TERRA_BACKFILL_TYPES, event.type)) {
      outcome = await announceBackfill(client, event, userId, body, webhooks, now);
    } else if (is(TERRA_DATA_TYPES, event.type)) {
      outcome = await applyData(client, event, userId, mapTerraDataEvent(body), now, deps.heartbeat);
      await countTowardsBackfill(client, event, userId, outcome, webhooks, now);
    } else if (event.type === 'lab_report.completed') {
      outcome = await applyLabReport(client, event, userId, body, now);
      if (outcome.tables?.length) webhooks.push(updatedWebhook(event.id, userId, outcome, null, now));
    } else if (event.type === 'lab_report.failed') {
      outcome = { status: 'applied', type: event.type, userId, note: 'lab report failed at Terra' };
    } else {
      outcome = { status: 'applied', type: event.type, userId, note: 'ignored' };
    }
    await recordWebhookEvents(client, webhooks);
    return finish(client, event, outcome);
  });
}

const is = <T extends string>(types: readonly T[], type: string): type is T =>
  (types as readonly string[]).includes(type);

/** Every type Amy acts on names a user; others (Terra's healthcheck, s3 payload notices…) are acknowledged only. */
const isAboutAUser = (type: string) =>
  is(TERRA_CONNECTION_TYPES, type) ||
  is(TERRA_BACKFILL_TYPES, type) ||
  is(TERRA_DATA_TYPES, type) ||
  is(TERRA_LAB_TYPES, type);

async function finish(
  client: PoolClient,
  event: StoredTerraEvent,
  outcome: TerraIngestOutcome,
): Promise<TerraIngestOutcome> {
  const { status, userId, ...rest } = outcome;
  if (status !== 'gone') await recordTerraOutcome(client, event.id, { status, userId, outcome: rest });
  return outcome;
}

/** The Amy user an event belongs to, none yet, or a refusal when its two ways of naming one disagree. */
async function ownerOf(
  client: PoolClient,
  event: StoredTerraEvent,
): Promise<{ userId: string | null } | { refused: string }> {
  let byReference: string | null = null;
  if (event.referenceId) {
    const { rows } = await client.query<{ id: string; deleting: boolean }>(
      `SELECT id, deleting_since IS NOT NULL AS deleting FROM users WHERE id = $1 OR name = $1
       ORDER BY (id = $1) DESC LIMIT 1`,
      [event.referenceId],
    );
    if (rows[0]?.deleting) return { refused: 'the account is being deleted' };
    byReference = rows[0]?.id ?? null;
  }
  const byConnection = event.terraUserId ? await userOfTerraUser(client, event.terraUserId) : null;
  if (byReference && byConnection && byReference !== byConnection) {
    return { refused: 'its reference_id and its Terra user belong to different Amy users' };
  }
  return { userId: byReference ?? byConnection };
}

function connectionWebhook(
  event: StoredTerraEvent,
  userId: string,
  change: TerraConnectionChange,
  now: Date,
): OutboxEvent {
  return connectionChangedEvent({
    dedupeKey: `data.connection_changed:${event.id}:${change.terraUserId ?? ''}:${change.status}`,
    userId,
    change,
    at: now,
  });
}

function updatedWebhook(
  dedupe: string,
  userId: string,
  outcome: { tables?: DataTable[]; from?: string | null; to?: string | null },
  backfillReference: string | null,
  now: Date,
  range?: { from: string | null; to: string | null },
): OutboxEvent {
  return dataUpdatedEvent({
    dedupeKey: `data.updated:${dedupe}`,
    userId,
    tables: outcome.tables ?? [],
    from: range?.from ?? outcome.from ?? null,
    to: range?.to ?? outcome.to ?? null,
    backfillReference,
    at: now,
  });
}

/** Rows written by one data event: the days it touches recombined, its workouts, the profile. */
async function applyData(
  client: PoolClient,
  event: StoredTerraEvent,
  userId: string,
  mapped: ReturnType<typeof mapTerraDataEvent>,
  now: Date,
  heartbeat: () => void = () => undefined,
): Promise<TerraIngestOutcome & { from?: string | null; to?: string | null }> {
  const skipped = [...mapped.skipped];
  for (const day of mapped.days) await saveContribution(client, userId, event, day.kind, day.key, day.date, day);
  for (const workout of mapped.workouts) {
    await saveContribution(client, userId, event, 'activity', workout.key, workout.date, workout);
  }
  for (const measured of mapped.profile) {
    await saveContribution(
      client,
      userId,
      event,
      'profile',
      measured.measuredAt,
      measured.measuredAt.slice(0, 10),
      measured,
    );
  }
  const tables = new Set<DataTable>();
  const days = [...new Set([...mapped.days.map((d) => d.date), ...mapped.workouts.map((w) => w.date)])].sort();
  let dayRows = 0;
  let workoutRows = 0;
  for (const date of new Set(mapped.days.map((d) => d.date))) {
    heartbeat();
    const written = await recombineDay(client, userId, date, latestAcceptedDay(now));
    if (written.problem) skipped.push(written.problem);
    if (written.ok) {
      dayRows += 1;
      tables.add('daily_summaries');
    }
  }
  for (const date of new Set(mapped.workouts.map((w) => w.date))) {
    heartbeat();
    workoutRows += await recombineWorkouts(client, userId, date);
    tables.add('workouts');
  }
  if (mapped.profile.length > 0 && (await refreshProfile(client, userId))) tables.add('profile');
  return {
    status: 'applied',
    type: event.type,
    userId,
    tables: [...tables],
    days: dayRows,
    workouts: workoutRows,
    skipped: skipped.slice(0, MAX_SKIPPED_KEPT),
    from: days[0] ?? null,
    to: days[days.length - 1] ?? null,
  };
}

async function saveContribution(
  client: PoolClient,
  userId: string,
  event: StoredTerraEvent,
  kind: string,
  key: string,
  date: string,
  payload: DayContribution | WorkoutContribution | ProfileContribution,
): Promise<void> {
  await client.query(
    `INSERT INTO terra_contributions (user_id, provider, kind, key, date, payload, event_ordered_at)
     VALUES ($1, $2, $3, $4, $5::date, $6, $7)
     ON CONFLICT (user_id, provider, kind, key) DO UPDATE SET
       date = EXCLUDED.date, payload = EXCLUDED.payload, event_ordered_at = EXCLUDED.event_ordered_at, updated_at = now()
     WHERE terra_contributions.event_ordered_at <= EXCLUDED.event_ordered_at`,
    [userId, payload.provider, kind, key, date, JSON.stringify(payload), event.orderedAt],
  );
}

async function contributionsOn<T>(client: PoolClient, userId: string, date: string, kinds: string[]): Promise<T[]> {
  const { rows } = await client.query<{ payload: T }>(
    `SELECT payload FROM terra_contributions WHERE user_id = $1 AND date = $2::date AND kind = ANY($3::text[])
     ORDER BY provider, kind, key`,
    [userId, date, kinds],
  );
  return rows.map((row) => row.payload);
}

/**
 * The day's row from every provider's records of it (./mapping combineDay), written over the metrics Terra has: a
 * metric no Terra record has keeps what the backend sent through /v1/data. Checked by the validator every writer uses.
 */
async function recombineDay(
  client: PoolClient,
  userId: string,
  date: string,
  latestDay: string,
): Promise<{ ok: boolean; problem?: SkippedField }> {
  const values = combineDay(await contributionsOn<DayContribution>(client, userId, date, ['daily', 'sleep', 'body']));
  const row = { date } as DailyRow;
  for (const metric of DAILY_METRICS) row[metric] = values[metric] ?? null;
  const problem = dailyRowsProblem([row], latestDay);
  if (problem)
    return {
      ok: false,
      problem: {
        path: `day ${date}: ${problem.field.replace(/^rows\[0\]\./, '')}`,
        reason: 'refused by the validator',
      },
    };
  if (DAILY_METRICS.every((metric) => row[metric] === null)) return { ok: false };
  const columns = DAILY_METRICS.join(', ');
  const casts = DAILY_METRICS.map((metric, i) => `$${i + 3}::${METRIC_SPECS[metric].integer ? 'int' : 'float8'}`);
  await client.query(
    `INSERT INTO daily_summaries (user_id, date, ${columns}) VALUES ($1, $2::date, ${casts.join(', ')})
     ON CONFLICT (user_id, date) DO UPDATE SET
       ${DAILY_METRICS.map((metric) => `${metric} = COALESCE(EXCLUDED.${metric}, daily_summaries.${metric})`).join(', ')}`,
    [userId, date, ...DAILY_METRICS.map((metric) => row[metric])],
  );
  return { ok: true };
}

/** The day's Terra workouts: the chosen sessions upserted, any other Terra session of that day removed. */
async function recombineWorkouts(client: PoolClient, userId: string, date: string): Promise<number> {
  const chosen = chooseWorkouts(await contributionsOn<WorkoutContribution>(client, userId, date, ['activity']));
  await upsertWorkouts(
    client,
    userId,
    chosen.map((c) => c.workout),
  );
  await client.query(
    `DELETE FROM workouts WHERE user_id = $1 AND date = $2::date AND external_id LIKE 'terra:%'
       AND NOT (external_id = ANY($3::text[]))`,
    [userId, date, chosen.map((c) => c.workout.external_id)],
  );
  return chosen.length;
}

/**
 * The newest weight and height measured, onto the profile the backend created: Terra knows neither sex nor birth
 * year, so it never creates one. Returns whether the profile changed.
 */
async function refreshProfile(client: PoolClient, userId: string): Promise<boolean> {
  const { rows } = await client.query<{ payload: ProfileContribution }>(
    `SELECT payload FROM terra_contributions WHERE user_id = $1 AND kind = 'profile'`,
    [userId],
  );
  const newest = (field: 'weight_kg' | 'height_cm') =>
    rows
      .map((row) => row.payload)
      .filter((p) => typeof p[field] === 'number')
      .sort((a, b) => Date.parse(b.measuredAt) - Date.parse(a.measuredAt))[0]?.[field] ?? null;
  const { rowCount } = await client.query(
    `UPDATE health_profiles SET weight_kg = COALESCE($2, weight_kg), height_cm = COALESCE($3, height_cm)
     WHERE user_id = $1 AND (weight_kg IS DISTINCT FROM COALESCE($2, weight_kg) OR height_cm IS DISTINCT FROM COALESCE($3, height_cm))`,
    [userId, newest('weight_kg'), newest('height_cm')],
  );
  return (rowCount ?? 0) > 0;
}

async function applyLabReport(
  client: PoolClient,
  event: StoredTerraEvent,
  userId: string,
  body: Record<string, unknown>,
  now: Date,
): Promise<TerraIngestOutcome & { from?: string | null; to?: string | null }> {
  const mapped = mapLabReport(body);
  const skipped = [...mapped.skipped];
  const rows: LabRow[] = [];
  for (const [i, input] of mapped.rows.entries()) {
    const converted = labRowsFromInput([input], latestAcceptedDay(now));
    if (converted.ok) rows.push(...converted.rows);
    else
      skipped.push({
        path: `result ${i}: ${converted.problem.field.replace(/^rows\[0\]\./, '')}`,
        reason: 'refused by the validator',
      });
  }
  await upsertLabResults(client, userId, rows);
  const days = rows.map((row) => row.date).sort();
  return {
    status: 'applied',
    type: event.type,
    userId,
    tables: rows.length ? ['lab_results'] : [],
    labResults: rows.length,
    skipped: skipped.slice(0, MAX_SKIPPED_KEPT),
    from: days[0] ?? null,
    to: days[days.length - 1] ?? null,
  };
}

/** `large_request_processing` opens a backfill, `large_request_sending` says how many chunks will come. */
async function announceBackfill(
  client: PoolClient,
  event: StoredTerraEvent,
  userId: string,
  body: Record<string, unknown>,
  webhooks: OutboxEvent[],
  now: Date,
): Promise<TerraIngestOutcome> {
  const parsed = largeRequestSchema.safeParse(body);
  if (!parsed.success || !event.terraUserId) {
    return { status: 'refused', type: event.type, userId, note: 'no reference or user' };
  }
  const { reference, expected_payloads: expected } = parsed.data;
  await client.query(
    `INSERT INTO terra_backfills (reference, user_id, terra_user_id, provider, expected_payloads)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (reference) DO UPDATE SET expected_payloads = COALESCE(EXCLUDED.expected_payloads, terra_backfills.expected_payloads)`,
    [
      reference,
      userId,
      event.terraUserId,
      event.provider ?? '',
      event.type === 'large_request_sending' ? (expected ?? null) : null,
    ],
  );
  const backfill = await refreshBackfill(client, reference, userId, webhooks, now);
  return { status: 'applied', type: event.type, userId, backfill };
}

/** A data event that is a chunk of a large request counts towards it, and is reported with the whole of it. */
async function countTowardsBackfill(
  client: PoolClient,
  event: StoredTerraEvent,
  userId: string,
  outcome: TerraIngestOutcome & { from?: string | null; to?: string | null },
  webhooks: OutboxEvent[],
  now: Date,
): Promise<void> {
  const reference = event.terraReference ? backfillReferenceOf(event.terraReference) : null;
  const known = reference
    ? (await client.query('SELECT 1 FROM terra_backfills WHERE reference = $1 FOR UPDATE', [reference])).rowCount
    : 0;
  if (!reference || !known) {
    if (outcome.tables?.length) webhooks.push(updatedWebhook(event.id, userId, outcome, null, now));
    return;
  }
  outcome.backfill = await refreshBackfill(client, reference, userId, webhooks, now, {
    id: event.id,
    tables: outcome.tables ?? [],
    from: outcome.from ?? null,
    to: outcome.to ?? null,
  });
}

/**
 * A backfill's progress, counted again from its chunks' recorded outcomes (so a chunk counts once however often it
 * is ingested, and chunks that came before the announcement count too), and its one report once every expected
 * chunk is in. `chunk` is the chunk being ingested, whose outcome is not recorded yet.
 */
async function refreshBackfill(
  client: PoolClient,
  reference: string,
  userId: string,
  webhooks: OutboxEvent[],
  now: Date,
  chunk?: { id: string; tables: readonly DataTable[]; from: string | null; to: string | null },
): Promise<NonNullable<TerraIngestOutcome['backfill']>> {
  const { rows } = await client.query<{
    expected: number | null;
    received: number;
    first_day: string | null;
    last_day: string | null;
    completed: boolean;
  }>(
    `WITH chunks AS (
       SELECT outcome FROM terra_events
       WHERE split_part(terra_reference, ':', 1) = $1 AND type = ANY($2::text[]) AND status = 'applied'
         AND id IS DISTINCT FROM $3
     ), progress AS (
       SELECT count(*)::int + $4 AS received,
         LEAST(min((outcome ->> 'from')::date), $5::date) AS first_day,
         GREATEST(max((outcome ->> 'to')::date), $6::date) AS last_day
       FROM chunks
     )
     UPDATE terra_backfills b SET received_payloads = p.received, first_day = p.first_day, last_day = p.last_day,
       completed_at = COALESCE(b.completed_at,
         CASE WHEN b.expected_payloads IS NOT NULL AND p.received >= b.expected_payloads THEN now() END)
     FROM progress p
     WHERE b.reference = $1
     RETURNING b.expected_payloads AS expected, b.received_payloads AS received,
       to_char(b.first_day, 'YYYY-MM-DD') AS first_day, to_char(b.last_day, 'YYYY-MM-DD') AS last_day,
       b.completed_at IS NOT NULL AS completed`,
    [reference, TERRA_DATA_TYPES, chunk?.id ?? null, chunk ? 1 : 0, chunk?.from ?? null, chunk?.to ?? null],
  );
  const backfill = rows[0];
  if (backfill?.completed) {
    const tables = [...new Set([...(await tablesOfBackfill(client, reference)), ...(chunk?.tables ?? [])])].sort();
    webhooks.push(
      updatedWebhook(`backfill:${reference}`, userId, { tables }, reference, now, {
        from: backfill.first_day,
        to: backfill.last_day,
      }),
    );
  }
  return {
    reference,
    received: backfill?.received ?? 0,
    expected: backfill?.expected ?? null,
    complete: backfill?.completed ?? false,
  };
}

/** The tables a backfill's chunks wrote, from their recorded outcomes. */
async function tablesOfBackfill(client: PoolClient, reference: string): Promise<DataTable[]> {
  const { rows } = await client.query<{ table: DataTable }>(
    `SELECT DISTINCT jsonb_array_elements_text(outcome -> 'tables') AS table FROM terra_events
     WHERE split_part(terra_reference, ':', 1) = $1 AND outcome ? 'tables'`,
    [reference],
  );
  return rows.map((row) => row.table).sort();
}
