/**
 * The Data Science agent's prompts (docs/design.md#data-science): plan, code-gen, debug, summary and
 * findings extraction. The code runs as the body of `analysis(...)` in the sandbox, so the prompts
 * describe exactly the frames and columns the sandbox wrapper provides (gates-py/sandbox/frames.py).
 */
import { DAILY_METRICS, WORKOUT_TYPES } from '../../../contracts/health-records';
import { LAB_BIOMARKER_NAMES } from '../../../platform/health-data/labs';
import { ANALYSIS_STATISTICS, WORKOUT_FEATURES } from '../../../contracts/findings';
import type { AnalysisSpec } from './analysis-spec';

const COMPOSITES = [
  'hrv_rhr_ratio (heart_rate_variability / resting_heart_rate)',
  'cardio_fitness_index (0-100, from resting heart rate and trailing 7-day steps and active zone minutes)',
  '<metric>_mean_30d, <metric>_sd_30d, <metric>_cv_30d for every daily metric (trailing 30 days)',
];

const DATA_DESCRIPTION = `The data, as pandas DataFrames:
- summary_df: one row per day. Columns: date (datetime64), ${DAILY_METRICS.join(', ')}; missing values are NaN.
  Derived columns: ${COMPOSITES.join('; ')}.
- activities_df: one row per workout, oldest first. Columns: date (datetime64), type (${WORKOUT_TYPES.join(', ')}), duration_minutes, distance_km, calories, avg_heart_rate.
- labs_df: one row per biomarker per lab panel, oldest first. Columns: date (datetime64), name (${LAB_BIOMARKER_NAMES.join(', ')}), value, unit (each biomarker's one unit).
- profile_df: at most one row. Columns: sex, birth_year, height_cm, weight_kg.
- population_df: reference statistics. Columns: metric, sex, age_band, mean, sd, n (may be empty).
Windows end on the data's last day: the last date of summary_df, or without daily rows the latest workout or lab date. "The last N days" means date > last - pd.Timedelta(days=N); a calendar window ("in October") is the dates from its first to its last day, both included.`;

export const PLAN_SYSTEM = `You are the Data Science agent of a personal health assistant. Plan ONE narrow computation on the user's own data that answers the question. Do not compute anything yet.
${DATA_DESCRIPTION}
Answer in exactly this format:
== Approach ==
<two to four sentences: what to compute, over which days, and how>
== Spec ==
kind: <scalar | trend | association>
statistic: <${ANALYSIS_STATISTICS.join(' | ')}>
table: <daily | workouts | labs>
feature: <the column the computation is about>
workout_type: <for the workouts table, one type to keep; otherwise none>
target: <for an association, a summary_df column; otherwise none>
window_days: <the trailing window in days, or all>
offset_days: <days between the window's end and the last date, usually 0>
since: <for a window that starts on a date, that date as YYYY-MM-DD (window_days then counts from it to the last date); otherwise none>
until: <for a calendar window that ends before the last date ("in October"), its last day as YYYY-MM-DD; otherwise none>
The table says where the feature is: daily (a summary_df column), workouts (feature: ${WORKOUT_FEATURES.join(', ')}, where workouts counts each workout as 1; a scalar statistic is over the workouts themselves: count, total, mean, longest = max), labs (feature: the biomarker's name; a scalar statistic is over its panels: latest, latest_change = the latest value against the one before and the first).
Use scalar for a level (mean, median, min, max, total, sd, count, latest, latest_change, day_of_week, a weekend-versus-weekday difference), trend for a recent-versus-prior change or difference (window_days is the recent window; the prior window has the same length; workouts are added up per day, 0 on a day without one), association (statistic spearman) for a relationship between two columns per day (a workouts feature is that day's total, 0 on a day without one).
Windows count back from the last date in the data, not from today: "yesterday" is window_days 1 with offset_days 1, "the week before last" is 7 with offset 7, "since <date>" is that date as since, with window_days the days from it to the last date, both included; "in October" is since the 1st of the latest October up to the last date and until its 31st.`;

export const CODE_SYSTEM = `You write the body of a Python function analysis(summary_df, activities_df, profile_df, population_df, labs_df) that carries out the given plan with pandas and numpy.
${DATA_DESCRIPTION}
Rules:
- Return a flat dict of JSON-serialisable results: numbers as float/int, with an "n" (the observations used). Keep it small.
- No file, network or process access; no plotting; no printing needed.
- Answer with the function body only, in one \`\`\`python block, indented at the top level (no def line).`;

export const DEBUG_SYSTEM = `${CODE_SYSTEM}
The previous body failed. Fix the cause of the error and answer with the whole corrected body.`;

const INDENTATION_HELP = `Indentation help: every line after a block opener (if/for/while/def/with/try/else/elif/except) must be indented one level deeper than the opener, with spaces only.`;

export const SUMMARY_SYSTEM = `You are the Data Science agent. In two or three sentences, state what the computation found, citing only numbers that appear in RESULT, exactly as they appear there (rounding to two decimals is fine). No advice.`;

export const EXTRACT_SYSTEM = `You turn a Data Science result into structured findings for statistical validation.
Answer with a JSON array (no prose). Each element:
{"claim": "<one sentence>", "kind": "association" | "trend" | "scalar", "feature": "<column>", "target": "<column>" | null,
 "numbers": {"<key>": <number> | [<low>, <high>]}, "n": <int>, "window": "<e.g. last 90 days>", "unit": "<unit>" | null}
Rules: numbers MUST be copied from RESULT, never computed or invented; use "rho" for a correlation, "recent_mean", "prior_mean" and "effect" for a change of means, and RESULT's own keys otherwise (e.g. "recent_total", "prior_total", "total_change" for workouts counted per period); feature and target are the SPEC's; one finding per distinct claim; [] when there is none.`;

/*
 * Each user prompt is rendered from an inputs object, the same object the scripted model reads for the
 * call (activities/runtime/model-call-inputs.ts).
 */

export interface PlanPromptInputs {
  /** The Data Science agent's (rephrased) question. */
  question: string;
  /** The days the user's data covers (YYYY-MM-DD), null when there are none: windows count back from `last`. */
  dataDays: { first: string; last: string } | null;
}

export const planUserPrompt = ({ question, dataDays }: PlanPromptInputs) =>
  `QUESTION:\n${question}\n\nDATA:\n${
    dataDays ? `Rows from ${dataDays.first} to ${dataDays.last} (the last date).` : 'No rows.'
  }`;

export interface CodePromptInputs {
  question: string;
  /** The plan's `== Approach ==`. */
  approach: string;
}

export function codeUserPrompt({ question, approach }: CodePromptInputs): string {
  return `QUESTION:\n${question}\n\nPLAN:\n${approach}`;
}

export interface DebugPromptInputs extends CodePromptInputs {
  /** The body that failed. */
  code: string;
  /** What its run reported. */
  error: string;
}

export function debugUserPrompt(input: DebugPromptInputs): string {
  const indentation = /IndentationError|expected an indented block|unindent/.test(input.error)
    ? `\n\n${INDENTATION_HELP}`
    : '';
  return `QUESTION:\n${input.question}\n\nPLAN:\n${input.approach}\n\nPREVIOUS BODY:\n\`\`\`python\n${input.code}\n\`\`\`\n\nERROR:\n${input.error}${indentation}`;
}

export interface SummaryPromptInputs {
  question: string;
  /** The sandbox's result, as the analysis returned it. */
  result: unknown;
}

export function summaryUserPrompt({ question, result }: SummaryPromptInputs): string {
  return `QUESTION:\n${question}\n\nRESULT:\n${JSON.stringify(result)}`;
}

export interface ExtractPromptInputs {
  question: string;
  /** The plan's machine-readable spec. */
  spec: AnalysisSpec;
  result: unknown;
  /** The agent's summary of the result. */
  summary: string;
}

export function extractUserPrompt(input: ExtractPromptInputs): string {
  return `QUESTION:\n${input.question}\n\nSPEC:\n${JSON.stringify(input.spec)}\n\nRESULT:\n${JSON.stringify(input.result)}\n\nSUMMARY:\n${input.summary}`;
}
