/**
 * The failures the turn workflow tells apart, by type, each with what the workflow does with it. A step's error
 * reaches the workflow as an ApplicationFailure whose type is the error's `name` (worker/upstream-failure-interceptor.ts,
 * worker/turn-run-interceptor.ts); the workflow's own reason to stop is one too. The error classes take their `name`
 * from here and the workflow reads its treatment of them from here, so a new failure type does not compile until
 * it says how the turn treats it. A type not listed (a driver's error, a bug, an activity's refusal to run) is
 * retried as its step's policy allows, then fails the turn with `internal_error`.
 *
 * Workflow code imports this: no zod, no I/O.
 */
import type { TurnErrorCode } from './errors';

/**
 * A failure that ends the turn wherever it happens is never retried either: it leaves its activity marked
 * non-retryable where it is raised, so the turn fails at once whatever the step's retry policy. The retry policies
 * name the other non-retryable types (workflows/activity-proxies.ts).
 */
export type FailureTreatment = {
  /** What a turn that fails with it tells its client (contracts/errors.ts `TURN_ERROR_CODES`). */
  turnError: TurnErrorCode;
} & (
  | {
      /** Even in a step whose other failures the turn goes on without (the Critic, the Assessment, the memory step). */
      endsTheTurn: true;
      retryable: false;
    }
  | {
      endsTheTurn: false;
      /** Whether its step runs again, within its retry policy's budget; false: a new attempt would fail the same way. */
      retryable: boolean;
    }
);

export const FAILURE_TYPES = {
  /** The model API is overloaded, failing, rate limiting or unreachable (platform/llm/errors.ts). */
  UpstreamUnavailableError: { turnError: 'upstream_unavailable', retryable: true, endsTheTurn: false },
  /** The model API refused the request itself: it would refuse it again. */
  UpstreamRequestError: { turnError: 'internal_error', retryable: false, endsTheTurn: false },
  /** The model answered, but not in the shape the step needs. */
  ModelOutputInvalidError: { turnError: 'model_output_invalid', retryable: true, endsTheTurn: false },
  /** The call was aborted because its activity was cancelled: the turn meets the cancellation. */
  LlmCallAbortedError: { turnError: 'internal_error', retryable: true, endsTheTurn: false },
  /** The turn's user reached a cost cap (platform/cost-caps.ts), which holds until its window ends. */
  CostCapExceededError: { turnError: 'cost_cap_exceeded', retryable: false, endsTheTurn: true },
  /** The turn's row does not exist (platform/event-log.ts): it can never be written. */
  TurnNotFoundError: { turnError: 'internal_error', retryable: false, endsTheTurn: false },
  /** The turn's question expired and its request said to fail then: raised by the workflow (workflows/ask-user.ts). */
  InputExpired: { turnError: 'input_expired', retryable: false, endsTheTurn: true },
} as const satisfies Record<string, FailureTreatment>;

export type FailureType = keyof typeof FAILURE_TYPES;

/** How the workflow treats a failure of `type`; undefined for a type not in the table. */
export function failureTreatment(type: string | null | undefined): FailureTreatment | undefined {
  return type && Object.hasOwn(FAILURE_TYPES, type) ? FAILURE_TYPES[type as FailureType] : undefined;
}

/**
 * The types the retry policies of the steps that call the model name non-retryable (workflows/activity-proxies.ts): those
 * no retry helps, but for the ones that end the turn, which are marked non-retryable where they are raised.
 */
export const NAMED_NON_RETRYABLE: FailureType[] = (Object.keys(FAILURE_TYPES) as FailureType[]).filter(
  (type) => !FAILURE_TYPES[type].retryable && !FAILURE_TYPES[type].endsTheTurn,
);
