/**
 * What the scripted model understands of a user's message: the routing pattern it belongs to and, for
 * a question about the user's own numbers, the one computation that answers it. Classification,
 * routing, rephrase and the Data Science steps all read a question through `understand()`
 * (./understand-question.ts), so the agents a turn brings in and the number it computes always agree.
 *
 * The conventions below are the contract the phrasing corpus (test/fixtures/phrasing-corpus.json) is
 * written against; change them there and here together.
 */

/**
 * The six collaboration patterns (docs/design.md#collaboration-patterns), plus the paths that bypass them:
 * - `knowledge` (1): a health topic, no personal data → Domain Expert.
 * - `my_data` (2): the user's own numbers → Data Science.
 * - `my_data_judged` (3): the user's own number and what it means ("is my X a concern / normal?", labs)
 *   → Domain Expert, with Data Science supporting.
 * - `coaching` (4): advice or a goal with no personal data → Health Coach.
 * - `coaching_on_my_data` (5): advice grounded in the user's numbers → Health Coach + Data Science.
 * - `coaching_with_context` (6): advice grounded in the user's numbers and medical context (labs,
 *   a condition, medication, "is it safe") → Health Coach + Data Science + Domain Expert.
 * - `investigate`: open-ended, no anchor at all ("anything I should know?") → the Investigator.
 * - `conversation`: greetings, thanks, goodbyes, small talk about Amy, device or app help → a
 *   conversational reply.
 * - `unavailable`: asks about the user's own measurement of something the data does not hold (blood
 *   pressure, weight history, VO2 max, calories eaten…) → a reply that says so and names what is there.
 * - `unclear`: none of the above can be read → a short clarifying reply with example questions.
 */
export type RoutingPattern =
  | 'knowledge'
  | 'my_data'
  | 'my_data_judged'
  | 'coaching'
  | 'coaching_on_my_data'
  | 'coaching_with_context'
  | 'investigate'
  | 'conversation'
  | 'unavailable'
  | 'unclear';

/**
 * What is computed (docs/design.md#descriptions-are-judged-by-what-they-estimate): a `description` reports
 * what happened (a mean, total, extreme or count over a stated window); `trend`, `comparison` and
 * `association` are inferences.
 */
export type SpecKind = 'description' | 'trend' | 'comparison' | 'association';

/**
 * - description: `mean` (average, typical, usual, normally, how much/many … per day), `median`, `min`
 *   (least, lowest, worst for steps/sleep/HRV/scores), `max` (most, highest, best), `total` (in all,
 *   altogether, sum), `sd` (spread, consistency, how regular/variable), `count` (how many days/workouts),
 *   `latest` (a lab's last value, "last night", "today", "yesterday" for a single day's value),
 *   `latest_change` (a lab over its panels: "has my LDL changed / gone up or down / got better since my
 *   last test", "across my blood tests", "is my A1c getting better": the latest panel against the one
 *   before and the first, a description of the panels, never an inference from three or four tests).
 *   `per_week` / `per_month` (workouts only, a rate: how many or how far / how long "per week", "a week",
 *   "weekly", "each month", "how often do I …"): the window's total (a count for `workouts` without a
 *   measure) divided by its length in weeks or months; no window given → all days.
 * - trend: `change` (going up or down, improving, getting worse, trending): the mean of the window
 *   against the mean of the same length just before.
 * - comparison: `difference` between two groups of days (target `weekend` for weekdays vs weekends,
 *   `previous_period` for this period vs the one before — "this month vs last month"), or
 *   `day_of_week` (which weekday is highest/lowest; target null).
 * - association: `spearman` between `feature` (the one said to act) and `target` (the one acted on);
 *   when the question does not say which acts, feature is the first mentioned. A comparison conditioned
 *   on another metric ("do I sleep better on days when I work out?", "on days I walk more, is my
 *   stress lower?") is an association too: the condition is the feature (`workouts`, with
 *   `workout_type` when named, is the minutes worked out each day, 0 on a day without), the
 *   outcome the target.
 *
 * Everyday verbs stand for metrics: how much I walk / move → steps, how much / how long I sleep →
 * sleep_minutes, how well I sleep → sleep_score, how hard I train / exercise → active_zone_minutes,
 * how stressed I am → stress_management_score, how much I work out → workouts.
 * "Better or worse than …" about the user's own numbers asks about the data (`my_data`, a comparison or
 * a trend), not for advice. "Am I getting enough exercise / active enough?" is `my_data_judged` with the
 * mean of active_zone_minutes over the last 30 days (the guideline is about activity minutes a week).
 * A general-knowledge question that is not about health ("what's the capital of France?") is
 * `conversation`: the conversational fallback says what Amy is for, no agent is brought in.
 */
export type SpecStatistic =
  | 'mean'
  | 'median'
  | 'min'
  | 'max'
  | 'total'
  | 'sd'
  | 'count'
  | 'latest'
  | 'latest_change'
  | 'per_week'
  | 'per_month'
  | 'change'
  | 'difference'
  | 'day_of_week'
  | 'spearman';

/**
 * Days counted back from the last day in the user's data (not the wall clock: demo and imported data
 * end when they end). `days: null` is all available days; `offset` skips that many most recent days
 * first ("the week before" = { days: 7, offset: 7 }).
 *
 * Everyday words: today / last night / yesterday's sleep → 1 day (a night's sleep is recorded on the day
 * it ends, so "last night" is the last day); yesterday (activity) → { days: 1, offset: 1 };
 * this week / last week / past week / past 7 days → 7; last two weeks / fortnight → 14; this month /
 * last month / past month / past 30 days → 30; lately / recently / these days / nowadays → 30;
 * last N days / weeks (×7) / months (×30) → N days; since <date> → from that date;
 * "the week/month before" → the same length with the offset; no window given → all days.
 *
 * Calendar windows are dates: `since` (and `until`, both included) as `MM-DD`, the latest such day on
 * or before the data's last day (`until` the first on or after `since`), or `YYYY-MM-DD` when the
 * question names the year. This year / so far this year / since January → { since: '01-01' };
 * in / during / last October → { since: '10-01', until: '10-31' } (February ends on '02-28', or
 * '02-29' in a leap year named as such); in 2025 → { since: '2025-01-01', until: '2025-12-31' };
 * since March → { since: '03-01' }.
 */
export type SpecWindow = { days: number | null; offset?: number } | { since: string; until?: string };

/**
 * Features are daily-summary columns (steps, sleep_minutes, deep_sleep_minutes, rem_sleep_minutes,
 * light_sleep_minutes, awake_minutes, sleep_score, resting_heart_rate, heart_rate_variability,
 * stress_management_score, active_zone_minutes), `workouts` (one row per workout; `workout_type`
 * narrows it; `count` counts them, other statistics are over `duration_minutes`, or over `measure`
 * when the question is about distance — how far, km, miles, farthest — or calories), or a lab
 * biomarker (ldl_cholesterol, hdl_cholesterol, total_cholesterol, triglycerides, hba1c,
 * fasting_glucose, ferritin, vitamin_d, tsh, hs_crp). "Longest" is the duration, "farthest" the distance.
 */
export interface DataSpec {
  kind: SpecKind;
  statistic: SpecStatistic;
  feature: string;
  /** An association's other metric, or a comparison's other group (`weekend`, `previous_period`); else null. */
  target: string | null;
  window: SpecWindow;
  workout_type?: 'running' | 'cycling' | 'strength' | 'yoga' | 'walking' | 'swimming' | 'HIIT';
  /**
   * What a workouts statistic other than `count` is over; absent: `duration_minutes`, except for a rate,
   * which counts workouts unless it names a measure (`duration_minutes`: "minutes of cycling a week").
   */
  measure?: 'distance_km' | 'calories' | 'duration_minutes';
}

export interface Understanding {
  pattern: RoutingPattern;
  /** The computation for Data Science, when the pattern brings it in and the question names a number to compute. */
  spec: DataSpec | null;
  /** Everyday names of the metrics the question mentions that the data does not hold (for `unavailable`). */
  missing: string[];
}
