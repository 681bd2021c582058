"""The FindingSeries a finding is gated on, built from the user's rows (contracts/findings.ts).

The Data Science agent's code computes a finding from `summary_df`, `activities_df` or `labs_df`; the
gates and the reproduction must see the same rows. The rules:

1. The daily frame is `summary_df` exactly as the sandbox builds it (sandbox/frames.py `summary_frame`):
   the raw daily metrics plus the composite features (hrv_rhr_ratio, cardio_fitness_index,
   <metric>_mean_30d / _sd_30d / _cv_30d). Composite features are computed before rule 2, so their
   rolling windows are the ones the code saw. Workouts and lab results are `activities_df` and `labs_df`.
2. The daily frame is laid on a continuous daily calendar from its first to its last date; a day without
   a row is a null value. Trend windows and the halves of subgroup_consistency are positional, so
   position must mean calendar day. A user without daily rows has a calendar from their first workout or
   panel to the last day (rule 3).
3. Windows end on the data's last day: the last daily row's date, or without daily rows the latest
   workout or panel. `window_days` null is every day; N is the last N calendar days ending there
   (`date > last - N days`, the convention of the generated pandas code). `offset_days` K (0 when
   absent) moves that end K days back: `last - K - N days < date <= last - K days`.
4. The table (`table`, default `daily`) says where the feature is:
   * daily: the feature is a column of the daily frame.
   * workouts: `workout_type` (when given) keeps that type's workouts; the feature is `workouts` (each
     workout counts 1) or one of their columns (duration_minutes, distance_km, calories, avg_heart_rate).
   * labs: the feature is a biomarker (`labs_df.name`); its values are the panels' values.
5. scalar: a daily feature over the window; a workouts or labs feature is one value per workout or
   panel in the window, oldest first (a description of workouts counts, sums or ranks the workouts
   themselves). trend and association are always per calendar day: a workouts feature is the day's sum
   (its count for `workouts`, its mean for avg_heart_rate), 0 on a calendar day without a workout
   (null for avg_heart_rate); a lab feature is the day's panel value, null between panels. trend: the
   last 2·N days with `recent_start = N`, N being `window_days` or, when that is null, 30 (the digest's
   "last 30 days vs prior 30"); with fewer than 2·N days, every day, and `recent_start` = days − N, at
   least 0. association: feature and target (a daily column) over the window, the same days.
6. A daily or workouts feature or a target that is not a column gives all-null values and is named in
   `missing_columns`: the sample_size gate then rejects the finding with n = 0, which is the honest
   answer to a claim about a column nobody has. Values are finite numbers or null, never NaN.
7. Every series carries `dates`, the day of each value; the finding passes through unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from sandbox.frames import activities_frame, labs_frame, summary_frame

TREND_WINDOW_DAYS_WHEN_UNSPECIFIED = 30
WORKOUT_COLUMNS = ('duration_minutes', 'distance_km', 'calories', 'avg_heart_rate')
# A day's workouts add up, except their average heart rate, which is averaged.
_AVERAGED_WORKOUT_COLUMNS = ('avg_heart_rate',)
_PER_DAY = '__per_day__'


def build_finding_series(
    summary_rows: list[dict],
    specs: list[dict],
    workout_rows: list[dict] | None = None,
    lab_rows: list[dict] | None = None,
) -> list[dict[str, Any]]:
    """One `{series, missing_columns}` per spec (`{finding, window_days, offset_days, table, workout_type}`)."""
    data = _UserData(summary_rows, workout_rows or [], lab_rows or [])
    return [_series_for(data, spec) for spec in specs]


def daily_calendar(summary_rows: list[dict]) -> pd.DataFrame:
    """summary_df indexed by every calendar day from its first date to its last (rules 1 and 2)."""
    frame = summary_frame(summary_rows)
    repeated = frame['date'][frame['date'].duplicated()]
    if not repeated.empty:
        raise ValueError(f'the summary has more than one row for {repeated.iloc[0]:%Y-%m-%d}')
    frame = frame.set_index('date')
    if frame.empty:
        return frame
    return frame.reindex(pd.date_range(frame.index.min(), frame.index.max(), freq='D'))


class _UserData:
    def __init__(self, summary_rows: list[dict], workout_rows: list[dict], lab_rows: list[dict]):
        self.daily = daily_calendar(summary_rows)
        self.workouts = activities_frame(workout_rows)
        self.labs = labs_frame(lab_rows)
        others = [f['date'] for f in (self.workouts, self.labs) if not f.empty]
        if not self.daily.empty:
            self.calendar = self.daily
        elif others:
            days = pd.date_range(min(d.min() for d in others), max(d.max() for d in others), freq='D')
            self.calendar = self.daily.reindex(days)
        else:
            self.calendar = self.daily


def _series_for(data: _UserData, spec: dict) -> dict[str, Any]:
    finding = spec['finding']
    kind, feature = finding['kind'], finding['feature']
    table = spec.get('table') or 'daily'
    window_days, offset_days = spec.get('window_days'), spec.get('offset_days') or 0
    missing: list[str] = []

    if table != 'daily' and kind == 'scalar':
        items = _items(data, table, feature, spec.get('workout_type'), missing)
        items = _in_window(items, data.calendar, window_days, offset_days)
        series = {
            'finding': finding,
            'feature_values': [_finite(v) for v in items['value']],
            'dates': [f'{d:%Y-%m-%d}' for d in items['date']],
        }
        return {'series': series, 'missing_columns': missing}

    calendar = data.calendar
    column = feature
    if table != 'daily':
        calendar = calendar.copy()
        calendar[_PER_DAY] = _per_day(data, table, feature, spec.get('workout_type'), missing)
        column = _PER_DAY

    if kind == 'trend':
        recent_days = TREND_WINDOW_DAYS_WHEN_UNSPECIFIED if window_days is None else window_days
        days = _last_days(calendar, 2 * recent_days, offset_days)
    else:
        days = calendar if window_days is None else _last_days(calendar, window_days, offset_days)

    series: dict[str, Any] = {'finding': finding, 'feature_values': _values(days, column, missing)}
    if kind == 'association':
        series['target_values'] = _values(days, finding['target'], missing)
    if kind == 'trend':
        series['recent_start'] = max(len(days) - recent_days, 0)
    series['dates'] = [f'{d:%Y-%m-%d}' for d in days.index]
    return {'series': series, 'missing_columns': missing}


def _items(data: _UserData, table: str, feature: str, workout_type: str | None, missing: list[str]) -> pd.DataFrame:
    """`date` and `value` of each workout or panel the feature is about, oldest first."""
    if table == 'labs':
        rows = data.labs[data.labs['name'] == feature]
        return pd.DataFrame({'date': rows['date'], 'value': rows['value']})
    rows = data.workouts if workout_type is None else data.workouts[data.workouts['type'] == workout_type]
    if feature == 'workouts':
        return pd.DataFrame({'date': rows['date'], 'value': 1.0})
    if feature not in WORKOUT_COLUMNS:
        missing.append(feature)
        return pd.DataFrame({'date': rows['date'], 'value': float('nan')})
    return pd.DataFrame({'date': rows['date'], 'value': rows[feature]})


def _per_day(data: _UserData, table: str, feature: str, workout_type: str | None, missing: list[str]) -> pd.Series:
    """The feature per calendar day (rule 5), aligned on `data.calendar`."""
    items = _items(data, table, feature, workout_type, missing).dropna(subset=['value'])
    grouped = items.groupby('date')['value']
    if table == 'labs':
        return grouped.mean().reindex(data.calendar.index)
    if feature in _AVERAGED_WORKOUT_COLUMNS:
        return grouped.mean().reindex(data.calendar.index)
    if feature in missing:
        return pd.Series(float('nan'), index=data.calendar.index)
    return grouped.sum().reindex(data.calendar.index).fillna(0.0)


def _in_window(items: pd.DataFrame, calendar: pd.DataFrame, n: int | None, offset: int) -> pd.DataFrame:
    if calendar.empty:
        return items.iloc[0:0]
    end = calendar.index.max() - pd.Timedelta(days=offset)
    keep = items['date'] <= end
    if n is not None:
        keep &= items['date'] > end - pd.Timedelta(days=n)
    return items[keep]


def _last_days(calendar: pd.DataFrame, n: int, offset: int = 0) -> pd.DataFrame:
    if calendar.empty:
        return calendar
    end = calendar.index.max() - pd.Timedelta(days=offset)
    return calendar[(calendar.index > end - pd.Timedelta(days=n)) & (calendar.index <= end)]


def _finite(v: Any) -> float | None:
    return float(v) if pd.notna(v) and math.isfinite(v) else None


def _values(days: pd.DataFrame, column: str, missing: list[str]) -> list[float | None]:
    if column not in days.columns:
        if column not in missing:
            missing.append(column)
        return [None] * len(days)
    return [_finite(v) for v in days[column]]
