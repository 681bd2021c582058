/**
 * The OpenAPI document says what the wire does:
 *
 * - every response of every operation declares `X-Request-Id`, which every answer carries, in the form the
 *   API makes its ids;
 * - a failed turn's error code (`Turn.error.code`, `previous_attempts[].error.code`, the `turn.failed` and
 *   `turn.retried` events) is an enum, and that enum is exactly the set of codes the code can fail a turn
 *   with: what the workflow makes of every kind of failure, and the abandoned turn's. A code nothing
 *   emits (`agent_not_available` once was) is not documented.
 */
import { INPUT_EXPIRED_TYPE } from '../../contracts/interaction-codes';
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { buildOpenApiDocument } from '../../api/openapi';
import { TURN_EVENT_TYPES } from '../../contracts/event-data';
import { CostCapExceededError } from '../../platform/cost-caps';
import { newId } from '../../platform/ids';
import * as llmErrors from '../../platform/llm/errors';
import { turnAbandoned } from '../../platform/turn-ending';
import { publicTurnError, turnError } from '../../workflows/turn-errors';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const doc = buildOpenApiDocument() as Json;

/** A `$ref` within the document, resolved. */
const resolve = (node: Json): Json =>
  node?.$ref
    ? resolve(
        (node.$ref as string)
          .replace(/^#\//, '')
          .split('/')
          .reduce((at, key) => at[key], doc),
      )
    : node;

const operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
);

describe('X-Request-Id', () => {
  test('is declared on every response of every operation, required', () => {
    let responses = 0;
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        responses++;
        const header = resolve(resolve(response).headers?.['X-Request-Id']);
        expect([name, status, header?.required, header?.schema?.type]).toEqual([name, status, true, 'string']);
      }
    }
    expect(operations.length).toBeGreaterThan(15);
    expect(responses).toBeGreaterThan(100);
  });

  test('its declared form is the form of the ids the API sends', () => {
    const header = resolve(operations[0].operation.responses['200'].headers['X-Request-Id']);
    const pattern = new RegExp(header.schema.pattern);
    for (let i = 0; i < 50; i++) expect(newId('request')).toMatch(pattern);
    expect('req_not-an-id').not.toMatch(pattern);
  });
});

/** Every kind of failure that can end a turn's workflow, as the workflow meets it. */
function failuresAWorkflowMeets(): unknown[] {
  const activityFailure = (cause: Error) =>
    new ActivityFailure('activity failed', 'synthesise', '7', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', cause);
  // A failed model call leaves its activity as an ApplicationFailure of its error's name
  // (worker/upstream-failure-interceptor.ts); any other error, as one of its own name.
  const errorNames = [
    ...Object.values(llmErrors)
      .filter((value) => typeof value === 'function' && value.prototype instanceof Error)
      .map((errorClass) => errorClass.name),
    CostCapExceededError.name,
    'TurnNotFoundError',
    'TypeError',
    'Error',
  ];
  expect(errorNames).toEqual(
    expect.arrayContaining(['UpstreamUnavailableError', 'ModelOutputInvalidError', 'CostCapExceededError']),
  );
  return [
    new CancelledFailure('cancelled'),
    ...errorNames.map((type) =>
      activityFailure(ApplicationFailure.create({ type, message: 'failed', details: [{ request_id: 'req_1' }] })),
    ),
    activityFailure(new TimeoutFailure('timed out', undefined, 'START_TO_CLOSE')),
    // A question the turn asked expired, and its request said to fail then (workflows/ask-user.ts).
    ApplicationFailure.nonRetryable('The question expired before it was answered.', INPUT_EXPIRED_TYPE),
    new Error('a bug in the workflow'),
  ];
}

function emittedTurnErrorCodes(): string[] {
  const fromTheWorkflow = failuresAWorkflowMeets().map((failure) => publicTurnError(turnError(failure)).code);
  // The reconciler's, and the API's when a turn's workflow could not be started (platform/turn-ending.ts).
  const abandoned = turnAbandoned('The turn could not be started.').code;
  return [...new Set([...fromTheWorkflow, abandoned])].sort();
}

describe('turn error codes', () => {
  const emitted = emittedTurnErrorCodes();

  test('the code emits seven, and agent_not_available is none of them', () => {
    expect(emitted).toEqual([
      'cancelled',
      'cost_cap_exceeded',
      'input_expired',
      'internal_error',
      'model_output_invalid',
      'turn_abandoned',
      'upstream_unavailable',
    ]);
  });

  test('Turn.error.code, on every answer that holds a Turn, is an enum of exactly them', () => {
    let turns = 0;
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const schema = response.content?.['application/json']?.schema;
        if (!schema?.properties?.previous_attempts) continue;
        turns++;
        const error = schema.properties.error;
        expect([name, status, error.properties.code.enum?.slice().sort()]).toEqual([name, status, emitted]);
        const previous = schema.properties.previous_attempts.items.properties.error;
        expect([name, status, previous.properties.code.enum?.slice().sort()]).toEqual([name, status, emitted]);
      }
    }
    // createTurn (200, 201), getTurn, cancelTurn (200, 202), the event stream's snapshot.
    expect(turns).toBeGreaterThanOrEqual(6);
  });

  test('the turn.failed and turn.retried events carry an enum of exactly them', () => {
    const events = doc.paths['/v1/turns/{id}/events'].get.responses['200'].content['text/event-stream'].schema.oneOf;
    const payload = (type: string) =>
      events.find((variant: Json) => variant.properties.event.enum[0] === type).properties.data.contentSchema;
    expect(TURN_EVENT_TYPES).toEqual(expect.arrayContaining(['turn.failed', 'turn.retried']));
    expect(payload('turn.failed').properties.error.properties.code.enum.slice().sort()).toEqual(emitted);
    expect(payload('turn.retried').properties.previous_error.properties.code.enum.slice().sort()).toEqual(emitted);
  });
});
