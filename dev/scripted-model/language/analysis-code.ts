/**
 * Real pandas code for a Data Science spec (understanding.ts): the body of
 * `analysis(summary_df, activities_df, profile_df, population_df)`, returning a JSON-able dict whose
 * numbers become the finding's numbers. Windows count back from the last day of the user's daily data,
 * as the spec's conventions say; `summary_df.date` and `activities_df.date` are datetime columns.
 * Lab results are not among the frames the generated code is given: a lab spec computes nothing here (the
 * Domain Expert reads the labs).
 */
import type { DataSpec, SpecWindow } from './understanding';

const q = (value: string) => JSON.stringify(value);

/** Python lines that set `end` (the data's last day) and `start`/`stop` of the window: `start < date <= stop`. */
function windowLines(window: SpecWindow): string[] {
  const lines = ['end = summary_df["date"].max() if len(summary_df) else activities_df["date"].max()'];
  if ('since' in window) {
    const [month, day] = window.since.split('-').map(Number);
    lines.push(
      `start = pd.Timestamp(year=end.year, month=${month}, day=${day}) - pd.Timedelta(days=1)`,
      // "since March 1" said in February means last year's March.
      'start = start if start < end else start - pd.DateOffset(years=1)',
      'stop = end',
    );
  } else if (window.days === null) {
    lines.push('start = pd.Timestamp.min', 'stop = end');
  } else {
    const offset = window.offset ?? 0;
    lines.push(`stop = end - pd.Timedelta(days=${offset})`, `start = stop - pd.Timedelta(days=${window.days})`);
  }
  return lines;
}

const inWindow = (frame: string) => `${frame}[(${frame}["date"] > start) & (${frame}["date"] <= stop)]`;

/** The window's rows of the series the spec is about, as `values` (a date-indexed series, NaNs dropped). */
function seriesLines(spec: DataSpec): string[] {
  if (spec.feature === 'workouts') {
    const typed = spec.workout_type ? `w = w[w["type"] == ${q(spec.workout_type)}]` : 'w = w';
    return [`w = ${inWindow('activities_df')}`, typed, 'values = w.set_index("date")["duration_minutes"].dropna()'];
  }
  return [`d = ${inWindow('summary_df')}`, `values = d.set_index("date")[${q(spec.feature)}].dropna()`];
}

const when = (expression: string) => `str(${expression}.date()) if len(values) else None`;

function statisticLines(spec: DataSpec): string[] {
  const workouts = spec.feature === 'workouts';
  switch (spec.statistic) {
    case 'mean':
    case 'median':
      return [`return {"${spec.statistic}": float(values.${spec.statistic}()), "n": int(values.count())}`];
    case 'sd':
      return ['return {"sd": float(values.std()), "mean": float(values.mean()), "n": int(values.count())}'];
    case 'total':
      return [
        `return {"total": float(values.sum()), "n": int(values.count())${workouts ? ', "workouts": int(len(values))' : ''}}`,
      ];
    case 'count':
      return workouts
        ? ['return {"count": int(len(values)), "n": int(len(values))}']
        : ['return {"count": int(values.count()), "n": int(values.count())}'];
    case 'max':
      return [`return {"max": float(values.max()), "date": ${when('values.idxmax()')}, "n": int(values.count())}`];
    case 'min':
      return [`return {"min": float(values.min()), "date": ${when('values.idxmin()')}, "n": int(values.count())}`];
    case 'latest':
      return [
        'return {"value": float(values.iloc[-1]), "date": str(values.index[-1].date()), "n": 1} if len(values) else {"n": 0}',
      ];
    case 'day_of_week':
      return [
        'by_day = values.groupby(values.index.day_name()).mean()',
        'best = by_day.idxmax()',
        'worst = by_day.idxmin()',
        'return {',
        '    "by_day": {day: float(v) for day, v in by_day.items()},',
        '    "highest_day": best,',
        '    "highest_mean": float(by_day[best]),',
        '    "lowest_day": worst,',
        '    "lowest_mean": float(by_day[worst]),',
        '    "n": int(values.count()),',
        '}',
      ];
    case 'difference':
      if (spec.target === 'weekend') {
        return [
          'weekend = values[values.index.dayofweek >= 5]',
          'weekday = values[values.index.dayofweek < 5]',
          'return {',
          '    "weekend_mean": float(weekend.mean()),',
          '    "weekday_mean": float(weekday.mean()),',
          '    "difference": float(weekend.mean() - weekday.mean()),',
          '    "n": int(values.count()),',
          '}',
        ];
      }
      return previousPeriodLines(spec, 'current_mean', 'previous_mean', 'difference');
    case 'change':
      return previousPeriodLines(spec, 'recent_mean', 'prior_mean', 'change');
    case 'spearman':
      return [
        `pairs = ${inWindow('summary_df')}[[${q(spec.feature)}, ${q(spec.target ?? '')}]].dropna()`,
        `rho = pairs[${q(spec.feature)}].corr(pairs[${q(spec.target ?? '')}], method="spearman")`,
        'return {"rho": float(rho), "n": int(len(pairs))}',
      ];
  }
}

/** The window against the same length just before it (a lab-free trend or "this month vs last"). */
function previousPeriodLines(spec: DataSpec, recentKey: string, priorKey: string, deltaKey: string): string[] {
  const frame = spec.feature === 'workouts' ? 'activities_df' : 'summary_df';
  const column = spec.feature === 'workouts' ? 'duration_minutes' : spec.feature;
  const typed = spec.workout_type ? ` & (${frame}["type"] == ${q(spec.workout_type)})` : '';
  const aggregate = spec.feature === 'workouts' ? 'count' : 'mean';
  // Workouts are counted per period ("more runs this month than last"), daily metrics averaged.
  if (aggregate === 'count')
    [recentKey, priorKey] = [recentKey.replace('mean', 'count'), priorKey.replace('mean', 'count')];
  return [
    'span = stop - start if start != pd.Timestamp.min else pd.Timedelta(days=30)',
    'start = stop - span',
    `recent = ${frame}[(${frame}["date"] > start) & (${frame}["date"] <= stop)${typed}][${q(column)}].dropna()`,
    `prior = ${frame}[(${frame}["date"] > start - span) & (${frame}["date"] <= start)${typed}][${q(column)}].dropna()`,
    'return {',
    `    "${recentKey}": float(recent.${aggregate}()),`,
    `    "${priorKey}": float(prior.${aggregate}()),`,
    `    "${deltaKey}": float(recent.${aggregate}() - prior.${aggregate}()),`,
    '    "n": int(recent.count() + prior.count()),',
    '}',
  ];
}

const LAB_FEATURES = new Set([
  'ldl_cholesterol',
  'hdl_cholesterol',
  'total_cholesterol',
  'triglycerides',
  'hba1c',
  'fasting_glucose',
  'ferritin',
  'vitamin_d',
  'tsh',
  'hs_crp',
]);

const isLabFeature = (feature: string) => LAB_FEATURES.has(feature);

/** The analysis body for a spec; a lab spec returns why nothing was computed. */
export function analysisCodeFor(spec: DataSpec): string {
  if (isLabFeature(spec.feature)) {
    return 'return {"computed": "nothing: lab results are not in the analysis data; the Domain Expert reads them"}';
  }
  return ['import pandas as pd', ...windowLines(spec.window), ...seriesLines(spec), ...statisticLines(spec)].join('\n');
}
