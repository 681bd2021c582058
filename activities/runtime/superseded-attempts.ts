/**
 * An activity's earlier attempt still running in this worker is stopped when its retry starts here.
 *
 * Temporal schedules attempt N+1 only after attempt N has failed or timed out, so by then N's work is
 * void: the server refuses its result. But N may still be running in this worker (a timeout reaches it
 * through a heartbeat's answer, seconds later, or not at all while the server is unreachable), holding
 * a sandbox slot or a gates process the retry would queue behind. Its retry's start is the surest sign
 * that it is void, so the retry aborts it at once.
 */

/** The reason an attempt's signal carries when its retry started in this worker. */
export class AttemptSupersededError extends Error {
  override name = 'AttemptSupersededError';
}

interface RunningAttempt {
  attempt: number;
  controller: AbortController;
}

/** Running attempts, by activity (workflow id, run id and activity id). */
const running = new Map<string, RunningAttempt[]>();

/**
 * Registers attempt `attempt` of the activity `key` and aborts its earlier attempts still running
 * here. The signal aborts when a later attempt starts; `end` unregisters the attempt.
 */
export function startAttempt(key: string, attempt: number): { signal: AbortSignal; end(): void } {
  const attempts = running.get(key) ?? [];
  for (const earlier of attempts.filter((other) => other.attempt < attempt)) {
    earlier.controller.abort(
      new AttemptSupersededError(`attempt ${earlier.attempt} was superseded by attempt ${attempt}`),
    );
  }
  const own: RunningAttempt = { attempt, controller: new AbortController() };
  running.set(key, [...attempts.filter((other) => other.attempt >= attempt), own]);
  return {
    signal: own.controller.signal,
    end() {
      const left = (running.get(key) ?? []).filter((other) => other !== own);
      if (left.length > 0) running.set(key, left);
      else running.delete(key);
    },
  };
}
