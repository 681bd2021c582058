/**
 * The Data Science agent (docs/design.md#data-science): plan → code → sandbox run → up to `maxDebugIterations` rewrites
 * with the previous error → summary → findings. A run that never succeeds is the "DS failed" state
 * synthesis must honour, not a failed turn. Each stage is one step; `ds_debug` and `ds_run` are
 * listed in progress once per run of the loop.
 */
import type { AgentFinding } from '../contracts/findings';
import type { Invocation } from '../contracts/steps';
import { bookkeepingSteps, computeSteps, modelSteps } from './activity-proxies';
import type { StepRunner } from './progress';

export interface DataScienceRequest {
  turnId: string;
  userId: string;
  question: string;
  invocation: Invocation;
  /** 2 for the main and supporting runs, 0 in reflection (one shot). */
  maxDebugIterations: number;
  idPrefix: string;
  /** The turn's memory summary, read once at its start: at the top of every stage's system prompt. */
  memory: string;
}

export type DataScienceOutcome =
  { status: 'ok'; summary: string; findings: AgentFinding[] } | { status: 'failed'; error: string; findings: [] };

export async function runDataScienceAgent(step: StepRunner, request: DataScienceRequest): Promise<DataScienceOutcome> {
  const { turnId, userId, question, invocation, memory } = request;
  const planned = await step('ds_plan', () =>
    modelSteps.planAnalysis({ turnId, userId, question, invocation, memory }),
  );
  const { plan, startedAt } = planned;
  let costUsd = planned.costUsd;

  const written = await step('ds_code', () =>
    modelSteps.writeAnalysisCode({ turnId, invocation, question, plan, memory }),
  );
  let { code } = written;
  costUsd += written.costUsd;
  // The plan's table: a run over one the turn left out (`include_biomarkers: false`) is refused, not debugged.
  const table = plan.spec.table;
  let run = await step('ds_run', () => computeSteps.runAnalysis({ turnId, userId, invocation, code, table }));

  for (let i = 1; run.status === 'error' && run.debuggable && i <= request.maxDebugIterations; i++) {
    const error = run.error;
    const fixed = await step('ds_debug', () =>
      modelSteps.debugAnalysisCode({ turnId, invocation, question, plan, code, error, memory }),
    );
    code = fixed.code;
    costUsd += fixed.costUsd;
    run = await step('ds_run', () => computeSteps.runAnalysis({ turnId, userId, invocation, code, table }));
  }

  if (run.status === 'error') {
    const error = run.error;
    await step('ds_finish', () =>
      bookkeepingSteps().finishDataScience({ turnId, invocation, startedAt, costUsd, status: 'failed', output: error }),
    );
    return { status: 'failed', error, findings: [] };
  }

  const result = run.result;
  const summarised = await step('ds_summary', () =>
    modelSteps.summariseAnalysis({ turnId, invocation, question, result, memory }),
  );
  costUsd += summarised.costUsd;
  const extracted = await step('ds_extract', () =>
    modelSteps.extractFindings({
      turnId,
      invocation,
      question,
      plan,
      result,
      summary: summarised.summary,
      idPrefix: request.idPrefix,
      memory,
    }),
  );
  costUsd += extracted.costUsd;
  await step('ds_finish', () =>
    bookkeepingSteps().finishDataScience({
      turnId,
      invocation,
      startedAt,
      costUsd,
      status: 'ok',
      output: summarised.summary,
    }),
  );
  return { status: 'ok', summary: summarised.summary, findings: extracted.findings };
}
