/**
 * A step's signal (activities/runtime/step-attempt.ts): aborted when Temporal cancels the activity,
 * and when the same activity's next attempt starts in this worker, so a retry never waits behind its
 * own void predecessor (for a sandbox slot, a gates process). In Temporal's MockActivityEnvironment.
 */
import { CancelledFailure, type Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { EventLog } from '../../platform/event-log';
import { runStepAttempt } from '../../activities/runtime/step-attempt';
import { AttemptSupersededError } from '../../activities/runtime/superseded-attempts';

const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const events = { append: async () => [], readKeyed: async () => [] } as unknown as EventLog;

function environment(info: Partial<Info>) {
  return new MockActivityEnvironment(
    { activityId: '7', workflowExecution: { workflowId: 'turn_a', runId: 'run-1' }, ...info },
    { logger: quietLogger },
  );
}

/** Starts an attempt whose work waits for its signal; resolves with the signal's reason once aborted. */
function attemptUntilAborted(env: MockActivityEnvironment) {
  let seen!: (signal: AbortSignal) => void;
  const signal = new Promise<AbortSignal>((resolve) => (seen = resolve));
  const ended = env
    .run(() =>
      runStepAttempt(events, 'turn_a', 'ds_run', ({ signal: own }) => {
        seen(own);
        return new Promise<unknown>((resolve) =>
          own.addEventListener('abort', () => resolve(own.reason), { once: true }),
        );
      }),
    )
    .catch((err: unknown) => err);
  return { signal, ended };
}

describe('a step attempt’s signal', () => {
  test('the next attempt of the same activity aborts the earlier one still running here; it is not aborted itself', async () => {
    const first = attemptUntilAborted(environment({ attempt: 1 }));
    const firstSignal = await first.signal;
    expect(firstSignal.aborted).toBe(false);

    const second = attemptUntilAborted(environment({ attempt: 2 }));
    expect(await first.ended).toBeInstanceOf(AttemptSupersededError);
    const secondSignal = await second.signal;
    expect(secondSignal.aborted).toBe(false);

    // Attempt 3 supersedes attempt 2 in turn.
    const thirdEnv = environment({ attempt: 3 });
    const third = attemptUntilAborted(thirdEnv);
    expect(await second.ended).toMatchObject({ message: 'attempt 2 was superseded by attempt 3' });
    expect((await third.signal).aborted).toBe(false);
    thirdEnv.cancel();
    await third.ended;
  });

  test('another activity, or the same activity id in another run of the workflow, is left alone', async () => {
    const first = attemptUntilAborted(environment({ attempt: 1 }));
    const firstSignal = await first.signal;
    const envs = [
      environment({ attempt: 2, activityId: '8' }),
      environment({ attempt: 2, workflowExecution: { workflowId: 'turn_a', runId: 'run-2' } }),
      environment({ attempt: 2, workflowExecution: { workflowId: 'turn_b', runId: 'run-1' } }),
    ];
    const others = envs.map((env) => attemptUntilAborted(env));
    await Promise.all(others.map((other) => other.signal));
    expect(firstSignal.aborted).toBe(false);
    envs.forEach((env) => env.cancel());
    await Promise.all(others.map((other) => other.ended));
    // Only the same activity's next attempt ends it.
    const retry = environment({ attempt: 2 });
    const retried = attemptUntilAborted(retry);
    expect(await first.ended).toBeInstanceOf(AttemptSupersededError);
    retry.cancel();
    await retried.ended;
  });

  test('a cancelled activity’s signal carries Temporal’s CancelledFailure, so the activity reports itself cancelled', async () => {
    const env = environment({ attempt: 1, activityId: 'cancel-me' });
    const attempt = attemptUntilAborted(env);
    await attempt.signal;
    env.cancel('CANCELLED');
    expect(await attempt.ended).toBeInstanceOf(CancelledFailure);
  });
});
