/**
 * The series a finding was computed from (GET /v1/turns/{id}/findings/{finding_id}/series): the days (or the
 * workouts or panels) of its window, cut from the turn's snapshot of the user's data by the same rules the gates use
 * (gates-py/gates/finding_series.py), so a chart of it shows what was judged.
 */
import { z } from 'zod';
import { ANALYSIS_STATISTICS, FINDING_KINDS } from './findings';

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** One day of a scalar or trend series; `value` is null on a day without a measurement. */
const valuePointSchema = z.object({ date: day, value: z.number().nullable() }).strict();

/** One day of an association: the feature (`x`) and the target (`y`), each null when not measured that day. */
const pairPointSchema = z.object({ date: day, x: z.number().nullable(), y: z.number().nullable() }).strict();

export const findingSeriesResponseSchema = z
  .object({
    turn_id: z.string(),
    finding_id: z.string(),
    kind: z.enum(FINDING_KINDS),
    statistic: z
      .enum(ANALYSIS_STATISTICS)
      .nullable()
      .describe("What was computed, as the plan named it; null: the kind's default (spearman, change, mean)."),
    feature: z.string(),
    target: z.string().nullable().describe("An association's target (the points' `y`); null otherwise."),
    unit: z.string().nullable(),
    window: z.string().describe("The finding's window, as the finding states it."),
    first_day: day.nullable().describe('The first day of the series; null when the window holds no day.'),
    last_day: day.nullable().describe('The last day of the series; null when the window holds no day.'),
    recent_from: day
      .nullable()
      .describe(
        'A trend: the first day of the recent period (the days before it are the prior period it is compared with); null otherwise.',
      ),
    points: z
      .array(z.union([valuePointSchema, pairPointSchema]))
      .describe(
        'Every calendar day of the window, oldest first: `{ date, value }`, or `{ date, x, y }` for an association. ' +
          'A description of workouts or lab results has one point per workout or panel instead, on its day (a day may repeat).',
      ),
  })
  .strict();
export type FindingSeriesResponse = z.infer<typeof findingSeriesResponseSchema>;
