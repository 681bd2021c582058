/**
 * The one table of failure types (contracts/failure-types.ts): the error classes are named by it, and what the
 * workflow derives from it is what it did before the table existed.
 */
import { FAILURE_TYPES, NAMED_NON_RETRYABLE, failureTreatment } from '../../contracts/failure-types';
import { INPUT_EXPIRED_TYPE } from '../../contracts/interaction-codes';
import { CostCapExceededError } from '../../platform/cost-caps';
import { TurnNotFoundError } from '../../platform/event-log';
import * as llmErrors from '../../platform/llm/errors';

test('every error class a step throws is named by a failure type of the table', () => {
  const concrete = (Object.values(llmErrors) as unknown[]).filter(
    (value): value is new (message: string) => Error =>
      typeof value === 'function' && value.prototype instanceof llmErrors.LlmError,
  );
  expect(concrete.length).toBeGreaterThanOrEqual(4);
  const errorClasses: Array<new (message: string) => Error> = [...concrete, CostCapExceededError, TurnNotFoundError];
  const names = errorClasses.map((errorClass) => new errorClass('x').name);
  for (const name of [...names, INPUT_EXPIRED_TYPE]) expect(Object.keys(FAILURE_TYPES)).toContain(name);
});

test('the model and agent steps name the same non-retryable types as they did before the table', () => {
  expect(NAMED_NON_RETRYABLE).toEqual(['UpstreamRequestError', 'TurnNotFoundError']);
});

test('only a cost cap and an expired question end the turn wherever they happen, and neither is retried', () => {
  const ending = Object.entries(FAILURE_TYPES).filter(([, treatment]) => treatment.endsTheTurn);
  expect(ending.map(([type]) => type)).toEqual(['CostCapExceededError', 'InputExpired']);
  expect(ending.every(([, treatment]) => !treatment.retryable)).toBe(true);
});

test('a type the table does not list has no treatment, whatever its name', () => {
  for (const type of ['TypeError', 'Error', 'toString', 'constructor', '', null, undefined]) {
    expect(failureTreatment(type)).toBeUndefined();
  }
  expect(failureTreatment('CostCapExceededError')?.turnError).toBe('cost_cap_exceeded');
});
