/**
 * `npm run turn:retry -- <turn_id> [--wait]`: runs a failed turn again from the step that failed.
 *
 * It finds, in the turn's workflow history, the activity whose failure failed the turn, and resets
 * the workflow (a Temporal reset) to the workflow task that scheduled it. Temporal starts a new run
 * that replays everything before that step from history — those steps are not executed again — and
 * runs the failed step and the rest of the pipeline. The new run's first activity opens the turn's
 * next attempt (activities/bookkeeping/turn-attempts.ts): the row goes back to running with `attempt + 1` and the
 * failed attempt's error in `previous_attempts`, and `turn.retried` follows the old `turn.failed`.
 * The same reset from the Temporal Web UI ("Reset" on the workflow, at the event this prints) gives
 * the same result.
 *
 * Exit 0: reset done (with --wait: and the turn completed); 1: refused or failed (the reason is
 * printed); 2: no such turn.
 */
import { readPayload } from '../platform/temporal/read-payload';
import { createDataKeyStore } from '../platform/crypto/data-keys';
import { loadMasterKeyring } from '../platform/crypto/master-key';
import { createDataConverter } from '../platform/temporal/data-converter';
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { Pool } from 'pg';
import type { ErrorBody } from '../contracts/errors';
import { loadConfig } from '../platform/config';
import { CliError, failCommand, masterKeyEnv, resolveDatabaseUrl } from './cli-env';

const USAGE = 'usage: npm run turn:retry -- <turn_id> [--wait]';
const EXIT_UNKNOWN_TURN = 2;

type History = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];

export interface FailedStep {
  activityType: string;
  summary: string | null;
  /** The WorkflowTaskCompleted event that scheduled the step: the reset point. */
  resetEventId: NonNullable<HistoryEvent['eventId']>;
  attempts: number;
}

/**
 * The step whose failure failed the turn: the last activity that failed or timed out for good
 * before the workflow scheduled `failTurn` to record the failure. Null when no step failed (a
 * cancelled turn, or a failure in workflow code itself).
 */
export async function findFailedStep(history: History, client: Client): Promise<FailedStep | null> {
  const scheduled = new Map<string, HistoryEvent>();
  let failed: { scheduledId: string; attempts: number } | null = null;
  for (const event of history.events ?? []) {
    const attrs = event.activityTaskScheduledEventAttributes;
    if (attrs) {
      if (attrs.activityType?.name === 'failTurn') break;
      scheduled.set(String(event.eventId), event);
    }
    const failure = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
    if (failure) {
      const started = history.events?.find((e) => String(e.eventId) === String(failure.startedEventId));
      failed = {
        scheduledId: String(failure.scheduledEventId),
        attempts: started?.activityTaskStartedEventAttributes?.attempt ?? 1,
      };
    }
  }
  const step = failed && scheduled.get(failed.scheduledId);
  const attrs = step?.activityTaskScheduledEventAttributes;
  if (!failed || !attrs?.workflowTaskCompletedEventId) return null;
  const summaryPayload = step?.userMetadata?.summary;
  return {
    activityType: attrs.activityType?.name ?? 'unknown',
    // Step summaries are payloads like any other: encrypted with the turn's.
    summary: summaryPayload ? await readPayload<string>(client, summaryPayload) : null,
    resetEventId: attrs.workflowTaskCompletedEventId,
    attempts: failed.attempts,
  };
}

async function run() {
  const args = process.argv.slice(2);
  const wait = args.includes('--wait');
  const positional = args.filter((a) => a !== '--wait');
  if (positional.length !== 1 || positional[0].startsWith('-')) throw new CliError(USAGE);
  const [turnId] = positional;
  const config = loadConfig({ ...process.env, DATABASE_URL: resolveDatabaseUrl() });
  const pool = new Pool({ connectionString: config.DATABASE_URL, max: 1 });
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    const row = await pool.query<{ status: string; error: ErrorBody | null; attempt: number }>(
      'SELECT status, error, attempt FROM turns WHERE id = $1',
      [turnId],
    );
    const turn = row.rows[0];
    if (!turn) {
      console.error(`error: no turn ${turnId} in the database`);
      process.exitCode = EXIT_UNKNOWN_TURN;
      return;
    }
    if (turn.status !== 'failed') {
      throw new CliError(`turn ${turnId} is ${turn.status}; only a failed turn can be retried`);
    }
    if (turn.error?.code === 'cancelled') {
      throw new CliError(`turn ${turnId} was cancelled by its user; a cancelled turn is not retried`);
    }

    const client = new Client({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      dataConverter: createDataConverter(pool, createDataKeyStore(pool, loadMasterKeyring(masterKeyEnv()))),
    });
    const handle = client.workflow.getHandle(turnId);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      throw new CliError(`turn ${turnId} has no workflow in Temporal namespace ${config.TEMPORAL_NAMESPACE}`);
    }
    if (description.status.name !== 'FAILED') {
      throw new CliError(
        `turn ${turnId}'s workflow is ${description.status.name}, not FAILED; wait until it has closed`,
      );
    }
    const step = await findFailedStep(await handle.fetchHistory(), client);
    if (!step) {
      throw new CliError(
        `turn ${turnId} did not fail in a step (error ${turn.error?.code}); there is nothing to resume`,
      );
    }

    const reset = await client.workflowService.resetWorkflowExecution({
      namespace: config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId: turnId, runId: description.runId },
      workflowTaskFinishEventId: step.resetEventId,
      reason: `npm run turn:retry: resume at ${step.activityType} after ${turn.error?.code}`,
      requestId: randomUUID(),
    });
    console.log(
      `turn ${turnId}: attempt ${turn.attempt + 1} resumes at ${step.summary ? `${step.summary} [${step.activityType}]` : step.activityType} ` +
        `(failed after ${step.attempts} attempt(s) with ${turn.error?.code}); ` +
        `workflow reset at event ${step.resetEventId.toString()}, run ${description.runId} → ${reset.runId}`,
    );
    if (!wait) return;

    try {
      await client.workflow.getHandle(turnId, reset.runId ?? undefined).result();
    } catch {
      // The turn's row says how it ended; the workflow's own failure adds nothing for the operator.
    }
    const after = await pool.query<{ status: string; error: ErrorBody | null; attempt: number }>(
      'SELECT status, error, attempt FROM turns WHERE id = $1',
      [turnId],
    );
    const ended = after.rows[0];
    console.log(
      `turn ${turnId}: attempt ${ended.attempt} ${ended.status}${ended.error ? ` (${ended.error.code})` : ''}`,
    );
    if (ended.status !== 'completed') process.exitCode = 1;
  } finally {
    await connection.close();
    await pool.end();
  }
}

run().catch((err) => failCommand(err));
