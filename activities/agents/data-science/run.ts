/**
 * Data Science, stage 3 (docs/design.md#data-science): run the generated body in the sandbox on the user's
 * data, after a syntax pre-flight that also repairs the commonest indentation slip. A failed run is an answer,
 * not an exception: the workflow hands its error to the debug step, or gives up and marks the agent failed.
 */
import { readTurnHealthData, turnDataCounts } from '../../../platform/health-data/snapshot';
import { ANALYSED_TABLES, lacksData, withheld } from '../../runtime/no-data-reply';
import { SandboxUnavailableError, type SandboxErrorKind } from '../../../platform/sandbox';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt } from '../../runtime/step-attempt';
import type { Invocation } from '../../../contracts/steps';
import type { DataTable } from '../../../contracts/findings';

/** Results travel in the workflow's history; a finding needs a handful of numbers, not a data dump. */
const MAX_RESULT_JSON_BYTES = 64 * 1024;

type AnalysisFailureKind = SandboxErrorKind | 'syntax' | 'result_too_large' | 'unavailable' | 'no_data' | 'withheld';

export type AnalysisRun =
  | { status: 'ok'; result: unknown; code: string; autoFixed: boolean; durationMs: number }
  | {
      status: 'error';
      kind: AnalysisFailureKind;
      /** What the debug step is shown: the error and the code's own traceback. */
      error: string;
      /** False when no rewrite of the code can help (no sandbox on this machine). */
      debuggable: boolean;
    };

export interface RunAnalysisInput {
  turnId: string;
  userId: string;
  /** The agent's role in the turn; names the run in the Web UI's activity summary (step 3, 4 or 5). */
  invocation: Invocation;
  code: string;
  /** The table the plan computes from (absent: daily, or a history from before it was passed). */
  table?: DataTable;
}

/** `signal` is the attempt's: a cancelled or timed-out attempt leaves the sandbox's queue, or is killed. */
async function runOnce(deps: StepDeps, input: RunAnalysisInput, signal: AbortSignal): Promise<AnalysisRun> {
  const data = await readTurnHealthData(deps.pool, { turnId: input.turnId, userId: input.userId });
  if (lacksData(turnDataCounts(data), ANALYSED_TABLES)) {
    // No rewrite of the code can help: the agent fails, and synthesis answers with the no-data reply.
    return {
      status: 'error',
      kind: 'no_data',
      error: 'the user has no daily summaries, which every finding is validated on',
      debuggable: false,
    };
  }
  if (withheld(turnDataCounts(data), input.table ?? 'daily')) {
    // Nothing of the table is in the snapshot, by the user's choice: no finding is made, so none is judged or
    // remembered as if it had been tested on their rows.
    return {
      status: 'error',
      kind: 'withheld',
      error: 'the user left their lab results out of this turn (include_biomarkers: false)',
      debuggable: false,
    };
  }
  const checked = await deps.sandbox.preflight(input.code, { signal });
  if (!checked.ok) {
    const { line, col, message } = checked.error;
    return {
      status: 'error',
      kind: 'syntax',
      error: `SyntaxError at line ${line}, column ${col}: ${message}`,
      debuggable: true,
    };
  }
  const run = await deps.sandbox.run({
    code: checked.code,
    data: { summary: data.daily, activities: data.workouts, labs: data.labs, profile: data.profile },
    signal,
  });
  if (run.status === 'error') {
    const error = [run.message, run.traceback].filter(Boolean).join('\n');
    return { status: 'error', kind: run.kind, error, debuggable: true };
  }
  const bytes = Buffer.byteLength(JSON.stringify(run.result ?? null));
  if (bytes > MAX_RESULT_JSON_BYTES) {
    return {
      status: 'error',
      kind: 'result_too_large',
      error: `the returned value is ${bytes} bytes of JSON; return a small dict of summary numbers (at most ${MAX_RESULT_JSON_BYTES} bytes)`,
      debuggable: true,
    };
  }
  return {
    status: 'ok',
    result: run.result ?? null,
    code: checked.code,
    autoFixed: checked.autoFixed,
    durationMs: run.durationMs,
  };
}

/** One line for the agent's narration, so a client watching the turn sees the run and its fate. */
function narrate(run: AnalysisRun): string {
  if (run.status === 'ok')
    return `\n[analysis ran in ${run.durationMs} ms${run.autoFixed ? ', indentation repaired' : ''}]\n`;
  const firstLine = run.error.split('\n')[0];
  return `\n[analysis failed (${run.kind}): ${firstLine}]\n`;
}

export function createRunAnalysis(deps: StepDeps) {
  return async function runAnalysis(input: RunAnalysisInput): Promise<AnalysisRun> {
    const step = 'ds_run';
    return runStepAttempt(deps.events, input.turnId, step, async ({ narration, signal }) => {
      let run: AnalysisRun;
      try {
        run = await runOnce(deps, input, signal);
      } catch (err) {
        if (!(err instanceof SandboxUnavailableError)) throw err;
        // No code is ever run unconfined: the agent fails, honestly, and synthesis is told so.
        run = { status: 'error', kind: 'unavailable', error: err.message, debuggable: false };
      }
      await narration.write('data_science', narrate(run));
      return run;
    });
  };
}
