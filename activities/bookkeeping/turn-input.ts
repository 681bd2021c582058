/**
 * The edges of a turn's wait for the user's answer (workflows/ask-user.ts): the question goes to the event log
 * (`turn.input_required`) and onto the turn's row (`pending_input`, which GET /v1/turns/:id shows as the status
 * `waiting_for_input`); what the turn went on with goes to the log (`turn.input_received`) and the row is cleared.
 * Each is idempotent (the events' dedupe keys, updates that find their work done), so a retry finishes the job.
 */
import type { InputReceived, InputRequest } from '../../contracts/interaction';
import type { StepDeps } from '../runtime/step-deps';

type Deps = Pick<StepDeps, 'pool' | 'events'>;

export function createTurnInput({ pool, events }: Deps) {
  async function requestInput({ turnId, request }: { turnId: string; request: InputRequest }): Promise<void> {
    // The row first: a client that sees the event and reads the turn finds it waiting.
    await pool.query(`UPDATE turns SET pending_input = $2 WHERE id = $1 AND status = 'running'`, [turnId, request]);
    await events.append(turnId, [
      {
        type: 'turn.input_required',
        data: { turn_id: turnId, ...request },
        dedupeKey: `input_required:${request.request_id}`,
      },
    ]);
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
