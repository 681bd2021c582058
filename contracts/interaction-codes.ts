/**
 * What workflow code needs of asking back at run time (workflows/ask-user.ts), kept free of zod like ./docs-url.ts
 * and ./event-catalog.ts: the workflow bundle leaves zod out (test/e2e/history-replay.test.ts). The schemas are in
 * ./interaction.ts.
 */
import type { FailureType } from './failure-types';
import type { InputAnswer } from './interaction';

/** The most questions one turn asks: the run timeout grows by this many waits (api/temporal/turn-workflows.ts). */
export const MAX_INPUT_REQUESTS_PER_TURN = 2;

/**
 * The type of the failure a turn ends with when its question expired and its request said `on_expiry: fail`; its
 * treatment is ./failure-types.ts's.
 */
export const INPUT_EXPIRED_TYPE = 'InputExpired' satisfies FailureType;

/** The `provideInput` Update's refusals, by failure type: the API gives each its error code (api/temporal/turn-input.ts). */
export const INPUT_REFUSALS = {
  notRequested: 'InputNotRequested',
  alreadyReceived: 'InputAlreadyReceived',
  expired: 'InputExpiredRefusal',
  invalidOption: 'InputOptionInvalid',
} as const;

/** An answer's choice, both fields present: the option chosen or the text given, the other null. */
export const choiceOf = (answer: InputAnswer): { option_id: string | null; text: string | null } =>
  'option_id' in answer ? { option_id: answer.option_id, text: null } : { option_id: null, text: answer.text };
