/**
 * Asking the user back (docs/api.md#asking-back): a turn whose request carries `interaction` may put a question to
 * the user and wait for the answer, durably. The wait is a Temporal timer and a condition: while it lasts the turn
 * holds no worker slot and makes no model call, and it outlives restarts and deploys of the worker and the API.
 *
 * The answer arrives as the `provideInput` Update (./definitions.ts). Its validator refuses, before anything changes
 * (so nothing is written to the history), an answer to a question not pending, one already answered, one past its
 * deadline, or an option the question does not offer; the handler then takes it synchronously, so of two answers
 * in the same workflow task only the first is taken. At the deadline the turn goes on with the question's default,
 * or fails with `input_expired` when the request asked for that.
 *
 * The question and what the turn went on with go to the event log and the turn's row through the `requestInput`
 * and `receiveInput` bookkeeping activities, so a client watching the stream (or reconnecting to it during the wait)
 * sees `turn.input_required`, then `turn.input_received`.
 */
import { ApplicationFailure, condition, setHandler, uuid4 } from '@temporalio/workflow';
import { choiceOf, INPUT_EXPIRED_TYPE, INPUT_REFUSALS } from '../contracts/interaction-codes';
import type { InputKind, InputOption, InputReceived, InputRequest, Interaction } from '../contracts/interaction';
import { bookkeeping } from './activity-proxies';
import { provideInputUpdate } from './definitions';

/** A question as a step drafts it; the desk gives it its id and deadline. */
export interface QuestionDraft {
  kind: InputKind;
  question: string;
  options: InputOption[];
  freeText: boolean;
  defaultOptionId: string;
  /** A confirmation's estimate, which the asking activity reads: of the Investigator's scan. */
  estimate?: 'investigator_scan';
}

export interface InputDesk {
  /** Whether the turn may ask this kind of question: its request said the client can answer it. */
  accepts(kind: InputKind): boolean;
  /**
   * Asks, waits for the answer or the deadline, and returns what the turn goes on with. Not a step of the pipeline
   * (contracts/steps.ts): its two bookkeeping activities are the wait's edges, and the wait itself is no activity.
   */
  ask(draft: QuestionDraft): Promise<InputReceived>;
}

interface Pending {
  request: InputRequest;
  expiresAtMs: number;
  answer: InputReceived | null;
}

const refuse = (message: string, type: string) => ApplicationFailure.nonRetryable(message, type);

/**
 * The turn's desk for questions. The Update handler is set up for every turn, asking or not, so an answer to a turn
 * that never asked is refused by the validator rather than left unhandled.
 */
export function openInputDesk(turnId: string, interaction: Interaction | undefined): InputDesk {
  let pending: Pending | null = null;

  setHandler(
    provideInputUpdate,
    (answer) => {
      const taken: InputReceived = {
        request_id: answer.request_id,
        ...choiceOf(answer),
        source: 'user',
        at: new Date(Date.now()).toISOString(),
      };
      pending!.answer = taken;
      return taken;
    },
    {
      validator(answer) {
        if (!pending || pending.request.request_id !== answer.request_id) {
          throw refuse('The turn is not waiting for an answer to this request.', INPUT_REFUSALS.notRequested);
        }
        if (pending.answer?.source === 'expiry' || (!pending.answer && Date.now() >= pending.expiresAtMs)) {
          throw refuse('This request has expired; the turn went on without an answer.', INPUT_REFUSALS.expired);
        }
        if (pending.answer) {
          throw refuse('This request has already been answered.', INPUT_REFUSALS.alreadyReceived);
        }
        const { request } = pending;
        const choice = choiceOf(answer);
        if (choice.option_id !== null && !request.options.some((option) => option.id === choice.option_id)) {
          throw refuse(
            `option_id must be one of ${request.options.map((o) => o.id).join(', ')}.`,
            INPUT_REFUSALS.invalidOption,
          );
        }
        if (choice.text !== null && !request.free_text) {
          throw refuse('This request takes one of its options, not text.', INPUT_REFUSALS.invalidOption);
        }
      },
    },
  );

  return {
    accepts: (kind) => interaction?.accepts.includes(kind) ?? false,

    async ask(draft) {
      if (!interaction?.accepts.includes(draft.kind)) {
        throw new Error(`the turn's request does not accept ${draft.kind} questions`);
      }
      const timeoutMs = interaction.timeout_seconds * 1000;
      const expiresAtMs = Date.now() + timeoutMs;
      const request: InputRequest = {
        request_id: `inq_${uuid4().replace(/-/g, '')}`,
        kind: draft.kind,
        question: draft.question,
        options: draft.options,
        free_text: draft.freeText,
        default_option_id: draft.defaultOptionId,
        expires_at: new Date(expiresAtMs).toISOString(),
      };
      const waiting: Pending = { request, expiresAtMs, answer: null };
      pending = waiting;
      waiting.request = await bookkeeping.requestInput({
        turnId,
        request,
        ...(draft.estimate ? { estimate: draft.estimate } : {}),
      });
      const answered = await condition(() => waiting.answer !== null, timeoutMs);
      const received: InputReceived = answered
        ? waiting.answer!
        : {
            request_id: request.request_id,
            // The default, unless the turn ends here (on_expiry: fail): then it goes on with nothing.
            option_id: interaction.on_expiry === 'fail' ? null : request.default_option_id,
            text: null,
            source: 'expiry',
            at: request.expires_at,
          };
      // Taken, or past its deadline: from here an answer to it is refused as already received.
      waiting.answer = received;
      await bookkeeping.receiveInput({ turnId, received });
      if (!answered && interaction.on_expiry === 'fail') {
        throw ApplicationFailure.nonRetryable('The question expired before it was answered.', INPUT_EXPIRED_TYPE);
      }
      return received;
    },
  };
}
