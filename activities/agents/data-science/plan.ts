/**
 * Data Science, stage 1 (docs/design.md#data-science): the plan. The model writes an `== Approach ==` for the code step
 * and a machine-readable `== Spec ==` (kind, feature, target, window) that fixes, before any code
 * exists, which of the user's series the findings will be validated on.
 */
import {
  ANALYSIS_STATISTICS,
  DATA_TABLES,
  FINDING_KINDS,
  WORKOUT_FEATURES,
  type AnalysisStatistic,
  type DataTable,
  type FindingKind,
} from '../../../contracts/findings';
import { WORKOUT_TYPES } from '../../../contracts/health-records';
import type { AnalysisSpec } from './analysis-spec';
import type { Invocation } from '../../../contracts/steps';
import { PLAN_SYSTEM, planUserPrompt } from './prompt';
import { withMemory } from '../../runtime/memory-injection';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import type { StepDeps } from '../../runtime/step-deps';
import { dataDateRange, readTurnHealthData, turnDataCounts } from '../../../platform/health-data/snapshot';
import { ANALYSED_TABLES, lacksData } from '../../runtime/no-data-reply';
import { runStepAttempt } from '../../runtime/step-attempt';
import { announceAgentStarted, streamThoughts } from '../../runtime/stream-agent-reply';

export interface AnalysisPlan {
  approach: string;
  spec: AnalysisSpec;
}

const COLUMN = /^[a-z][a-z0-9_]*$/;

/** A field's value on its own line: a blank value (`target:`) is absent, never the next line's text. */
function specField(spec: string, name: string): string | undefined {
  return new RegExp(`^[^\\S\\n]*${name}[^\\S\\n]*:[^\\S\\n]*(\\S.*?)[^\\S\\n]*$`, 'mi').exec(spec)?.[1];
}

const DAY_MS = 86_400_000;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/**
 * Reads the plan's two sections; anything unusable is the model's fault, so the step is retried. `lastDay`,
 * the day the data's windows end on, turns a calendar window (`since`, `until`) into the trailing window
 * the series are cut by, so a model that miscounted the days between two dates cannot shift it.
 */
export function parsePlan(text: string, requestId: string | null = null, lastDay?: string): AnalysisPlan {
  const invalid = (why: string) => new ModelOutputInvalidError(`the analysis plan ${why}`, { requestId });
  const approach = /==\s*Approach\s*==\s*([\s\S]*?)(?:==\s*Spec\s*==|$)/i.exec(text)?.[1].trim();
  const spec = /==\s*Spec\s*==\s*([\s\S]*)$/i.exec(text)?.[1];
  if (!approach) throw invalid('has no == Approach == section');
  if (!spec) throw invalid('has no == Spec == section');

  const kind = specField(spec, 'kind')?.toLowerCase();
  if (!FINDING_KINDS.includes(kind as FindingKind)) throw invalid(`names no valid kind (got ${kind ?? 'none'})`);
  const feature = specField(spec, 'feature');
  if (!feature || !COLUMN.test(feature)) throw invalid(`names no valid feature column (got ${feature ?? 'none'})`);
  const rawTarget = specField(spec, 'target');
  const target = rawTarget && !/^(none|null|-|n\/a)$/i.test(rawTarget) ? rawTarget : null;
  if (target !== null && !COLUMN.test(target)) throw invalid(`names an invalid target column (${target})`);
  if (kind === 'association' && target === null) throw invalid('is an association without a target');
  const rawWindow = specField(spec, 'window_days') ?? 'all';
  const windowDays = /^(all|none|null)$/i.test(rawWindow) ? null : /^\d+$/.test(rawWindow) ? Number(rawWindow) : NaN;
  if (windowDays !== null && !(Number.isInteger(windowDays) && windowDays > 0)) {
    throw invalid(`has an invalid window_days (${rawWindow})`);
  }
  const rawStatistic = specField(spec, 'statistic')?.toLowerCase();
  if (rawStatistic !== undefined && !ANALYSIS_STATISTICS.includes(rawStatistic as AnalysisStatistic)) {
    throw invalid(`names an unknown statistic (${rawStatistic})`);
  }
  const rawOffset = specField(spec, 'offset_days') ?? '0';
  if (!/^\d+$/.test(rawOffset)) throw invalid(`has an invalid offset_days (${rawOffset})`);
  const offsetDays = Number(rawOffset);
  if (offsetDays > 0 && windowDays === null) throw invalid('has an offset_days without a window_days');
  const date = (name: string) => {
    const value = specField(spec, name);
    if (value === undefined || /^(none|null|-)$/i.test(value)) return undefined;
    if (!ISO_DAY.test(value) || Number.isNaN(Date.parse(value))) throw invalid(`has an invalid ${name} (${value})`);
    return value;
  };
  const since = date('since');
  const until = date('until');
  if (until !== undefined && since === undefined) throw invalid('has an until without a since');
  if (since !== undefined && until !== undefined && until < since) throw invalid('has an until before its since');
  const window = { windowDays, offsetDays };
  if (since !== undefined && lastDay !== undefined) {
    // A calendar window, counted here from the data's last day (a window past it ends there).
    const end = until !== undefined && until < lastDay ? until : lastDay;
    if (since > end) throw invalid(`has a since (${since}) after the data's last day (${lastDay})`);
    Object.assign(window, { windowDays: daysBetween(since, end) + 1, offsetDays: daysBetween(end, lastDay) });
  } else if (since !== undefined && (windowDays === null || (offsetDays > 0 && until === undefined))) {
    throw invalid('has a since without a window_days counted to the last date');
  }
  const rawTable = specField(spec, 'table')?.toLowerCase() ?? 'daily';
  if (!DATA_TABLES.includes(rawTable as DataTable)) throw invalid(`names an unknown table (${rawTable})`);
  if (rawTable === 'workouts' && !(WORKOUT_FEATURES as readonly string[]).includes(feature))
    throw invalid(`names a workouts feature that is none of ${WORKOUT_FEATURES.join(', ')} (${feature})`);
  const rawType = specField(spec, 'workout_type');
  const workoutType = rawType && !/^(none|null|-|all|any)$/i.test(rawType) ? rawType : undefined;
  if (
    workoutType !== undefined &&
    (rawTable !== 'workouts' || !(WORKOUT_TYPES as readonly string[]).includes(workoutType))
  )
    throw invalid(
      `has a workout_type (${workoutType}) that is not one of ${WORKOUT_TYPES.join(', ')} on the workouts table`,
    );
  const parsed: AnalysisSpec = {
    kind: kind as FindingKind,
    feature,
    target: kind === 'association' ? target : null,
    windowDays: window.windowDays,
  };
  if (rawStatistic !== undefined) parsed.statistic = rawStatistic as AnalysisStatistic;
  if (window.offsetDays > 0) parsed.offsetDays = window.offsetDays;
  if (since !== undefined) parsed.since = since;
  if (until !== undefined) parsed.until = until;
  if (rawTable !== 'daily') parsed.table = rawTable as DataTable;
  if (workoutType !== undefined) parsed.workoutType = workoutType;
  return { approach, spec: parsed };
}

/**
 * The plan of a turn whose snapshot has no daily summaries, workouts or lab results, what every finding is
 * computed and validated on: a placeholder no code is written for.
 */
const NO_DATA_PLAN: AnalysisPlan = {
  approach: 'No health data to analyse.',
  spec: { kind: 'scalar', feature: 'none', target: null, windowDays: null },
};

export interface PlanAnalysisInput {
  turnId: string;
  /** Whose data the plan is for: the plan is told the dates it covers. Absent in histories from before it was. */
  userId?: string;
  /** The Data Science agent's (rephrased) question. */
  question: string;
  invocation: Invocation;
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface PlanAnalysisOutput {
  plan: AnalysisPlan;
  /** When the agent started, for its `agent.completed` duration. */
  startedAt: string;
  costUsd: number;
}

export function createPlanAnalysis(deps: StepDeps) {
  return async function planAnalysis(input: PlanAnalysisInput): Promise<PlanAnalysisOutput> {
    const { turnId, question } = input;
    const startedAt = deps.clock();
    await announceAgentStarted(deps.events, {
      turnId,
      agent: 'data_science',
      invocation: input.invocation,
      question,
      at: startedAt,
    });
    const { userId } = input;
    const data = userId ? await readTurnHealthData(deps.pool, { turnId, userId }) : null;
    if (data && lacksData(turnDataCounts(data), ANALYSED_TABLES)) {
      // Nothing to plan over: no model call; the run refuses too, and synthesis gives the no-data reply.
      return { plan: NO_DATA_PLAN, startedAt: startedAt.toISOString(), costUsd: 0 };
    }
    const dataDays = data ? dataDateRange(data) : null;
    return runStepAttempt(deps.events, turnId, 'ds_plan', async ({ narration, signal }) => {
      const response = await streamThoughts(deps, {
        turnId,
        modelCall: 'ds_plan',
        inputs: { question, dataDays },
        narration,
        signal,
        agent: 'data_science',
        request: {
          model: deps.models.dataScience,
          system: withMemory(PLAN_SYSTEM, input.memory),
          maxTokens: 600,
          messages: [{ role: 'user', content: planUserPrompt({ question, dataDays }) }],
        },
      });
      return {
        plan: parsePlan(response.text, response.requestId, dataDays?.last),
        startedAt: startedAt.toISOString(),
        costUsd: response.costUsd,
      };
    });
  };
}
