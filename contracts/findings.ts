/**
 * Findings and their deterministic validation (docs/design.md#validation-and-truth-checks: the seven
 * gates, verdict aggregation). Workflow-safe: zod only, no I/O.
 *
 * A `Finding` is a quantitative claim; its numbers reach the Fact Sheet only if the gates, run on
 * the `FindingSeries` the claim was computed from, do not reject it.
 */
import { z } from 'zod';
import { GATE_NAMES, type GateName } from './gate-names';
import { ANALYSIS_STATISTICS, type AnalysisStatistic } from './statistics';

export const FINDING_KINDS = ['association', 'trend', 'scalar'] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

// What a plan computes, and which of those are descriptions: zod-free, for the workflow (./statistics.ts).
export { ANALYSIS_STATISTICS, type AnalysisStatistic } from './statistics';

export const findingSchema = z
  .object({
    id: z.string().min(1),
    claim: z.string(),
    kind: z.enum(FINDING_KINDS),
    feature: z.string().min(1),
    /** What the feature is associated with: required for an association, usually null otherwise. */
    target: z.string().min(1).nullable(),
    /** The numbers synthesis may cite, keyed as in the Fact Sheet; a pair is a CI `[low, high]`. */
    numbers: z.record(z.string(), z.union([z.number(), z.tuple([z.number(), z.number()])])),
    n: z.number().int().nonnegative(),
    window: z.string(),
    unit: z.string().nullable().optional(),
    mechanism: z.string().optional(),
  })
  .strict()
  .refine((f) => f.kind !== 'association' || f.target !== null, {
    message: 'an association names its target',
    path: ['target'],
  });
export type Finding = z.infer<typeof findingSchema>;

const dailyValues = z.array(z.number().nullable());

/**
 * The table of the user's data a finding is computed from (docs/design.md#every-table-in-the-checked-path):
 * the daily summaries, the workouts (`workout_type` narrows them) or the lab results (the feature is a
 * biomarker). Absent on a finding: `daily`.
 */
export const DATA_TABLES = ['daily', 'workouts', 'labs'] as const;
export type DataTable = (typeof DATA_TABLES)[number];

/** What a workouts finding's feature may be: `workouts` counts each workout as 1; the others are its columns. */
export const WORKOUT_FEATURES = ['workouts', 'duration_minutes', 'distance_km', 'calories', 'avg_heart_rate'] as const;

/**
 * The data one finding's gates run on, built by whoever computed the finding from the same rows:
 *
 * - `feature_values`: the feature's daily values, oldest first, `null` for a missing day.
 * - `target_values` (association only, required): the target on the same days, so the same length;
 *   days missing either value drop out of every correlation.
 * - `recent_start` (trend only, required): the index in `feature_values` where the recent window
 *   begins; the days before it are the prior window the trend is measured against (the digest's
 *   "last 30d vs prior 30d" is 60 values with `recent_start: 30`). A window left without any
 *   observation is not an input error: the gates fail the finding for it.
 */
export const findingSeriesSchema = z
  .object({
    finding: findingSchema,
    feature_values: dailyValues,
    target_values: dailyValues.optional(),
    recent_start: z.number().int().nonnegative().optional(),
    /**
     * The day (YYYY-MM-DD) of each feature value, same length. A daily series has one value per calendar
     * day; a description of workouts or lab results one per workout or panel, so a day may repeat.
     */
    dates: z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/)).optional(),
    /**
     * What the finding computed (absent: its kind's default). A scalar whose statistic is descriptive is a
     * description, and the gates judge it by what it estimates (gates-py/gates/descriptions.py).
     */
    statistic: z.enum(ANALYSIS_STATISTICS).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const kind = s.finding.kind;
    if (s.dates !== undefined && s.dates.length !== s.feature_values.length) {
      ctx.addIssue({ code: 'custom', path: ['dates'], message: 'dates has one day per feature value' });
    }
    if (kind === 'association' && s.target_values?.length !== s.feature_values.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['target_values'],
        message: 'an association needs target_values for the same days as feature_values (same length)',
      });
    }
    if (kind !== 'association' && s.target_values !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['target_values'], message: `a ${kind} finding has no target_values` });
    }
    if (kind === 'trend' && (s.recent_start === undefined || s.recent_start > s.feature_values.length)) {
      ctx.addIssue({
        code: 'custom',
        path: ['recent_start'],
        message: 'a trend needs recent_start, an index within feature_values',
      });
    }
    if (kind !== 'trend' && s.recent_start !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['recent_start'], message: `a ${kind} finding has no recent_start` });
    }
  });
export type FindingSeries = z.infer<typeof findingSeriesSchema>;

// The gates in the order they run and are reported in, kept free of zod for the SDK.
export { GATE_NAMES, type GateName } from './gate-names';

/** A failed hard gate rejects the finding outright, and the gates after it do not run. */
export const HARD_GATES = ['reproduction', 'sample_size', 'construct_validity'] as const satisfies readonly GateName[];

/** `skipped`: the gate does not apply to this finding's kind (`detail.applicable` is false). */
const GATE_RESULT_VERDICTS = ['passed', 'failed', 'skipped'] as const;

const gateResultSchema = z
  .object({
    gate: z.enum(GATE_NAMES),
    verdict: z.enum(GATE_RESULT_VERDICTS),
    /**
     * The gate's numbers (n / min_required, effect / metric_sd / ratio, rho, ci_low / ci_high /
     * boot_median / iterations, rho_first_half / rho_second_half, tau, …), a `reason` when its
     * statistic does not exist for this data, an `error` when it crashed. Shape varies by gate.
     */
    detail: z.object({ applicable: z.boolean() }).catchall(z.unknown()),
  })
  .strict()
  .refine((g) => (g.verdict === 'skipped') === !g.detail.applicable, {
    message: 'a gate is skipped exactly when it is not applicable',
    path: ['verdict'],
  });
export type GateResult = z.infer<typeof gateResultSchema>;

export const GATE_VERDICTS = ['validated', 'conditional', 'rejected'] as const;
export type GateVerdict = (typeof GATE_VERDICTS)[number];

/** Why a finding was rejected before its pass ratio was even looked at; `error`: the gates crashed. */
const HARD_REJECTIONS = [...HARD_GATES, 'error'] as const;

export const gatesOutcomeSchema = z
  .object({
    finding_id: z.string(),
    /** One result per gate that ran: fewer than all when a hard gate failed or a gate crashed. */
    gates: z.array(gateResultSchema).min(1).max(GATE_NAMES.length),
    verdict: z.enum(GATE_VERDICTS),
    hard_rejection: z.enum(HARD_REJECTIONS).nullable(),
    /** Applicable gates of the seven statistical ones (reproduction aside) that passed, out of `applicable`; skipped gates count in neither. */
    passes: z.number().int().nonnegative(),
    applicable: z.number().int().nonnegative(),
    /**
     * Only in the gates of a turn validated by a release before descriptions were gated: a reproduced
     * description, reported without the seven gates or the Critic. Read by the workflow so such a turn
     * goes on as it began (workflows/validate-findings.ts); never set any more.
     */
    fact: z.boolean().optional(),
  })
  .strict()
  .refine((o) => o.hard_rejection === null || o.verdict === 'rejected', {
    message: 'a hard rejection is a rejection',
    path: ['verdict'],
  })
  .refine((o) => o.passes <= o.applicable, { message: 'passes cannot exceed applicable', path: ['passes'] });
export type GatesOutcome = z.infer<typeof gatesOutcomeSchema>;

/**
 * A finding as an agent hands it to validation: where it came from and the trailing window (in days,
 * null = all days) of the user's data it was computed on, which is the window its gates' series span.
 * `offsetDays` (0 when absent) ends that window so many days before the data's last day ("the week
 * before last").
 */
export interface AgentFinding {
  finding: Finding;
  windowDays: number | null;
  offsetDays?: number;
  /** What was computed (the plan's statistic); absent: the kind's default (spearman, change, mean). */
  statistic?: AnalysisStatistic;
  /** The table the feature is in; absent: `daily` (an association's target is always a daily column). */
  table?: DataTable;
  /** A workouts finding's workout type (`running`…); absent: every workout. */
  workoutType?: string;
  source: 'data_science' | 'investigator';
}
