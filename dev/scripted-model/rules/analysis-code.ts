/**
 * Real pandas code for the canonical asks (see analysis-ask.ts): the body of
 * `analysis(summary_df, activities_df, profile_df, population_df)`, returning a JSON-able dict whose
 * numbers later become the finding's numbers. `summary_df.date` is a datetime column.
 */
import type { AnalysisAsk } from './analysis-ask';

const windowed = (ask: AnalysisAsk) =>
  ask.windowDays === undefined
    ? ['df = summary_df.sort_values("date")']
    : [
        'df = summary_df.sort_values("date")',
        `df = df[df["date"] > df["date"].max() - pd.Timedelta(days=${ask.windowDays})]`,
      ];

export function analysisCode(ask: AnalysisAsk): string {
  const lines = ['import pandas as pd', ...windowed(ask)];
  const m = JSON.stringify(ask.metric);
  switch (ask.statistic) {
    case 'mean':
    case 'median':
      lines.push(
        `values = df[${m}].dropna()`,
        `return {"${ask.statistic}": float(values.${ask.statistic}()), "sd": float(values.std()), "n": int(values.count())}`,
      );
      break;
    case 'sd':
      lines.push(
        `values = df[${m}].dropna()`,
        'return {"sd": float(values.std()), "mean": float(values.mean()), "n": int(values.count())}',
      );
      break;
    case 'change':
      lines.push(
        `cutoff = summary_df["date"].max() - pd.Timedelta(days=${ask.windowDays})`,
        `start = cutoff - pd.Timedelta(days=${ask.windowDays})`,
        `recent = summary_df[summary_df["date"] > cutoff][${m}].dropna()`,
        `prior = summary_df[(summary_df["date"] > start) & (summary_df["date"] <= cutoff)][${m}].dropna()`,
        'return {',
        '    "recent_mean": float(recent.mean()),',
        '    "prior_mean": float(prior.mean()),',
        '    "change": float(recent.mean() - prior.mean()),',
        '    "n": int(recent.count() + prior.count()),',
        '}',
      );
      break;
    case 'correlation':
      lines.push(
        `pairs = df[[${m}, ${JSON.stringify(ask.other)}]].dropna()`,
        `rho = pairs[${m}].corr(pairs[${JSON.stringify(ask.other)}], method="spearman")`,
        'return {"rho": float(rho), "n": int(len(pairs))}',
      );
      break;
    case 'day_of_week':
      lines.push(
        `by_day = df.groupby(df["date"].dt.day_name())[${m}].mean()`,
        'best = by_day.idxmax()',
        'worst = by_day.idxmin()',
        'return {',
        '    "by_day": {day: float(v) for day, v in by_day.items()},',
        '    "highest_day": best,',
        '    "highest_mean": float(by_day[best]),',
        '    "lowest_day": worst,',
        '    "lowest_mean": float(by_day[worst]),',
        `    "n": int(df[${m}].count()),`,
        '}',
      );
      break;
  }
  return lines.join('\n');
}
