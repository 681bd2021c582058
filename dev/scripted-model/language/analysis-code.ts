/**
 * Real pandas code for a Data Science spec (understanding.ts): the body of
 * `analysis(summary_df, activities_df, profile_df, population_df, labs_df)`, returning a JSON-able dict whose
 * numbers become the finding's numbers. Windows count back from the data's last day (the last daily row, or
 * without daily rows the latest workout or panel), as the spec's conventions say; a calendar window runs
 * from its first to its last day. Every frame's `date` is a datetime column.
 */
import { LAB_BIOMARKER_NAMES } from '../../../contracts/lab-biomarkers';
import type { DataSpec, SpecWindow } from './understanding';

const q = (value: string) => JSON.stringify(value);

/** A calendar day as Python: a fixed `YYYY-MM-DD`, or `MM-DD` in the year of `year` (a Python expression). */
function dayIn(date: string, year: string): string {
  if (/^\d{4}-/.test(date)) return `pd.Timestamp(${q(date)})`;
  const [month, day] = date.split('-').map(Number);
  return `pd.Timestamp(year=${year}, month=${month}, day=${day})`;
}

/** Python lines that set `end` (the data's last day) and `start`/`stop` of the window: `start < date <= stop`. */
function windowLines(window: SpecWindow): string[] {
  const lines = [
    'dates = [f["date"].max() for f in (activities_df, labs_df) if len(f)]',
    'end = summary_df["date"].max() if len(summary_df) else (max(dates) if dates else pd.Timestamp.now().normalize())',
  ];
  if ('since' in window) {
    lines.push(
      `first = ${dayIn(window.since, 'end.year')}`,
      // "since March 1" said in February means last year's March.
      /^\d{4}-/.test(window.since) ? '' : 'first = first if first <= end else first - pd.DateOffset(years=1)',
      'start = first - pd.Timedelta(days=1)',
    );
    if (window.until === undefined) lines.push('stop = end');
    else {
      lines.push(
        `last = ${dayIn(window.until, 'first.year')}`,
        // "from December to January": the first such day on or after the window's first.
        /^\d{4}-/.test(window.until) ? '' : 'last = last if last >= first else last + pd.DateOffset(years=1)',
        'stop = min(last, end)',
      );
    }
  } else if (window.days === null) {
    lines.push('start = pd.Timestamp.min', 'stop = end');
  } else {
    const offset = window.offset ?? 0;
    lines.push(`stop = end - pd.Timedelta(days=${offset})`, `start = stop - pd.Timedelta(days=${window.days})`);
  }
  return lines;
}

const inWindow = (frame: string) => `${frame}[(${frame}["date"] > start) & (${frame}["date"] <= stop)]`;

/** The workouts column a workouts spec is over (duration unless it names a measure). */
const workoutColumn = (spec: DataSpec) => spec.measure ?? 'duration_minutes';

/** The window's rows of the series the spec is about, as `values` (a date-indexed series, NaNs dropped). */
function seriesLines(spec: DataSpec): string[] {
  if (spec.feature === 'workouts') {
    const typed = spec.workout_type ? `w = w[w["type"] == ${q(spec.workout_type)}]` : 'w = w';
    return [
      `w = ${inWindow('activities_df')}`,
      typed,
      `values = w.set_index("date")[${q(workoutColumn(spec))}].dropna()`,
    ];
  }
  if (isLabFeature(spec.feature)) {
    return [
      `b = ${inWindow('labs_df')}`,
      `values = b[b["name"] == ${q(spec.feature)}].set_index("date")["value"].dropna()`,
    ];
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
      return ['return {"total": float(values.sum()), "n": int(values.count())}'];
    case 'count':
      // Every workout counts, whatever it recorded.
      return workouts
        ? ['return {"count": int(len(w)), "n": int(len(w))}']
        : ['return {"count": int(values.count()), "n": int(values.count())}'];
    case 'max':
      return [`return {"max": float(values.max()), "date": ${when('values.idxmax()')}, "n": int(values.count())}`];
    case 'min':
      return [`return {"min": float(values.min()), "date": ${when('values.idxmin()')}, "n": int(values.count())}`];
    case 'latest':
      return [
        'return {"value": float(values.iloc[-1]), "date": str(values.index[-1].date()), "n": 1} if len(values) else {"n": 0}',
      ];
    case 'per_week':
    case 'per_month': {
      // The window's length as stated (days without data count too), or with no window every day the data covers.
      const unit = spec.statistic === 'per_week' ? '7' : '(365.2425 / 12)';
      const total = spec.measure ? 'float(values.sum())' : 'float(len(w))';
      return [
        'firsts = [f["date"].min() for f in (summary_df, activities_df, labs_df) if len(f)]',
        'days = (stop - start).days if start != pd.Timestamp.min else ((stop - min(firsts)).days + 1 if firsts else 0)',
        `periods = days / ${unit}`,
        `total = ${total}`,
        `return {"${spec.statistic}": total / periods, "total": total, "n": int(${spec.measure ? 'values.count()' : 'len(w)'})} if periods else {"n": 0}`,
      ];
    }
    case 'latest_change':
      return [
        'if len(values) < 2:',
        '    return {"latest": float(values.iloc[-1]), "latest_date": str(values.index[-1].date()), "n": 1} if len(values) else {"n": 0}',
        'return {',
        '    "latest": float(values.iloc[-1]),',
        '    "latest_date": str(values.index[-1].date()),',
        '    "previous": float(values.iloc[-2]),',
        '    "previous_date": str(values.index[-2].date()),',
        '    "change": float(values.iloc[-1] - values.iloc[-2]),',
        '    "first": float(values.iloc[0]),',
        '    "first_date": str(values.index[0].date()),',
        '    "change_since_first": float(values.iloc[-1] - values.iloc[0]),',
        '    "n": int(len(values)),',
        '}',
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
      if (spec.feature === 'workouts') {
        // Minutes worked out each day (0 on a day without a workout) against the other metric that day.
        const typed = spec.workout_type ? `[activities_df["type"] == ${q(spec.workout_type)}]` : '';
        return [
          `per_day = activities_df${typed}.groupby("date")[${q(workoutColumn(spec))}].sum()`,
          `d = ${inWindow('summary_df')}`,
          'x = d["date"].map(per_day).fillna(0.0)',
          `pairs = pd.DataFrame({"x": x.values, "y": d[${q(spec.target ?? '')}].values}).dropna()`,
          'rho = pairs["x"].corr(pairs["y"], method="spearman")',
          'return {"rho": float(rho), "n": int(len(pairs))}',
        ];
      }
      return [
        `pairs = ${inWindow('summary_df')}[[${q(spec.feature)}, ${q(spec.target ?? '')}]].dropna()`,
        `rho = pairs[${q(spec.feature)}].corr(pairs[${q(spec.target ?? '')}], method="spearman")`,
        'return {"rho": float(rho), "n": int(len(pairs))}',
      ];
  }
}

/**
 * The window against the same length just before it (a trend or "this month vs last"). Daily metrics are
 * averaged per period; workouts are counted (or their measure added up) per period — "more runs this
 * month than last" — as `recent_total`, `prior_total` and `total_change`.
 */
function previousPeriodLines(spec: DataSpec, recentKey: string, priorKey: string, deltaKey: string): string[] {
  const periods = [
    'span = stop - start if start != pd.Timestamp.min else pd.Timedelta(days=30)',
    'start = stop - span',
  ];
  if (spec.feature === 'workouts') {
    const typed = spec.workout_type ? ` & (activities_df["type"] == ${q(spec.workout_type)})` : '';
    const during = (from: string, to: string) =>
      `activities_df[(activities_df["date"] > ${from}) & (activities_df["date"] <= ${to})${typed}]`;
    const amount = spec.measure ? `[${q(spec.measure)}].sum()` : '.shape[0]';
    return [
      ...periods,
      `recent = float(${during('start', 'stop')}${amount})`,
      `prior = float(${during('start - span', 'start')}${amount})`,
      'return {"recent_total": recent, "prior_total": prior, "total_change": recent - prior}',
    ];
  }
  return [
    ...periods,
    `recent = summary_df[(summary_df["date"] > start) & (summary_df["date"] <= stop)][${q(spec.feature)}].dropna()`,
    `prior = summary_df[(summary_df["date"] > start - span) & (summary_df["date"] <= start)][${q(spec.feature)}].dropna()`,
    'return {',
    `    "${recentKey}": float(recent.mean()),`,
    `    "${priorKey}": float(prior.mean()),`,
    `    "${deltaKey}": float(recent.mean() - prior.mean()),`,
    '    "n": int(recent.count() + prior.count()),',
    '}',
  ];
}

/** A lab biomarker: its values are the panels' values in labs_df. */
const LAB_FEATURES = new Set<string>(LAB_BIOMARKER_NAMES);

export const isLabFeature = (feature: string) => LAB_FEATURES.has(feature);

/** The analysis body for a spec. */
export function analysisCodeFor(spec: DataSpec): string {
  return ['import pandas as pd', ...windowLines(spec.window), ...seriesLines(spec), ...statisticLines(spec)]
    .filter((line) => line !== '')
    .join('\n');
}
