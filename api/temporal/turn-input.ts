/**
 * POST /v1/turns/:id/input: the answer to the question a turn is waiting on goes to its workflow as the
 * `provideInput` Update (workflows/ask-user.ts), whose validator decides, with nothing changed on a refusal. This
 * module only maps its outcome to the API's errors. With `Idempotency-Key`, the Update's id is derived from the
 * user and the key, so Temporal applies a retried answer once and returns the first outcome; a retry with another
 * answer is told so (422), since the first one is what the turn took.
 */
import { createHash } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { InputAnswer, InputReceived } from '../../contracts/interaction';
import { choiceOf, INPUT_REFUSALS } from '../../contracts/interaction-codes';
import { provideInputUpdate } from '../../workflows/definitions';
import { ApiError } from '../errors';

const REFUSAL_ERRORS: Record<string, () => ApiError> = {
  [INPUT_REFUSALS.notRequested]: () =>
    new ApiError('input_not_requested', 'The turn is not waiting for an answer to this request.', 'request_id'),
  [INPUT_REFUSALS.alreadyReceived]: () =>
    new ApiError('input_already_received', 'This request has already been answered.', 'request_id'),
  [INPUT_REFUSALS.expired]: () =>
    new ApiError('input_expired', 'This request expired; the turn went on without an answer.', 'request_id'),
};

const turnEnded = () => new ApiError('input_not_requested', 'The turn has ended; it waits for no answer.');

/** The Update's id for an answer sent with an Idempotency-Key: one per user and key. */
const updateIdOf = (userId: string, key: string) =>
  `input-${createHash('sha256').update(`${userId}\n${key}`).digest('hex').slice(0, 32)}`;

const sameAnswer = (answer: InputAnswer, taken: InputReceived) => {
  const choice = choiceOf(answer);
  return taken.request_id === answer.request_id && taken.option_id === choice.option_id && taken.text === choice.text;
};

export async function answerTurnInput(
  temporal: Client,
  args: { userId: string; turnId: string; answer: InputAnswer; idempotencyKey?: string },
): Promise<InputReceived> {
  const handle = temporal.workflow.getHandle(args.turnId);
  let taken: InputReceived;
  try {
    taken = await handle.executeUpdate(provideInputUpdate, {
      args: [args.answer],
      ...(args.idempotencyKey ? { updateId: updateIdOf(args.userId, args.idempotencyKey) } : {}),
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const type = (err.cause as { type?: string } | undefined)?.type ?? '';
      if (type === INPUT_REFUSALS.invalidOption) {
        throw new ApiError('invalid_field', (err.cause as Error).message, 'option_id');
      }
      const refusal = REFUSAL_ERRORS[type];
      if (refusal) throw refusal();
    }
    // The workflow has closed (completed, failed, cancelled): nothing waits for an answer.
    if (err instanceof WorkflowNotFoundError || /workflow execution already completed/i.test(String(err))) {
      throw turnEnded();
    }
    throw err;
  }
  if (args.idempotencyKey && !sameAnswer(args.answer, taken)) {
    throw new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with another answer; the turn took the first.',
      'Idempotency-Key',
    );
  }
  return taken;
}
