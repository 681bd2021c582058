/**
 * The edges of a turn's wait for the user's answer (workflows/ask-user.ts): the question goes to the event log
 * (`turn.input_required`) and onto the turn's row (`pending_input`, which GET /v1/turns/:id shows as the status
 * `waiting_for_input`); what the turn went on with goes to the log (`turn.input_received`) and the row is cleared.
 * Each is idempotent (the events' dedupe keys, updates that find their work done), so a retry finishes the job.
 */
import type { InputReceived, InputRequest } from '../../contracts/interaction';
import { recordWebhookEvents, turnInputRequiredEvent } from '../../platform/webhooks/outbox';
import type { StepDeps } from '../runtime/step-deps';
import { estimateInvestigatorScan } from './scan-estimate';

type Deps = Pick<StepDeps, 'pool' | 'events' | 'clock'>;

export function createTurnInput({ pool, events, clock }: Deps) {
  /**
   * Puts the question to the user; returns it as asked. A confirmation of the Investigator's scan (`estimate:
   * 'investigator_scan'`) is given its estimate here, from the recent scans (./scan-estimate.ts).
   */
  async function requestInput({
    turnId,
    request: drafted,
    estimate,
  }: {
    turnId: string;
    request: InputRequest;
    estimate?: 'investigator_scan';
  }): Promise<InputRequest> {
    const request: InputRequest =
      estimate === 'investigator_scan' ? { ...drafted, estimate: await estimateInvestigatorScan(pool) } : drafted;
    // The row first, with its webhook in the same transaction (the outbox: the event exists iff the wait does), so
    // a client that sees the stream's event and reads the turn finds it waiting.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ user_id: string }>(
        `UPDATE turns SET pending_input = $2 WHERE id = $1 AND status = 'running' RETURNING user_id`,
        [turnId, request],
      );
      if (rows[0]) {
        await recordWebhookEvents(client, [
          turnInputRequiredEvent({
            turnId,
            userId: rows[0].user_id,
            requestId: request.request_id,
            kind: request.kind,
            expiresAt: request.expires_at,
            at: clock(),
          }),
        ]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    await events.append(turnId, [
      {
        type: 'turn.input_required',
        data: { turn_id: turnId, ...request },
        dedupeKey: `input_required:${request.request_id}`,
      },
    ]);
    return request;
  }

  async function receiveInput({ turnId, received }: { turnId: string; received: InputReceived }): Promise<void> {
    await events.append(turnId, [
      {
        type: 'turn.input_received',
        data: { turn_id: turnId, ...received },
        dedupeKey: `input_received:${received.request_id}`,
      },
    ]);
    await pool.query(`UPDATE turns SET pending_input = NULL WHERE id = $1 AND pending_input->>'request_id' = $2`, [
      turnId,
      received.request_id,
    ]);
  }

  return { requestInput, receiveInput };
}
