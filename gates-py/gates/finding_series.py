"""The FindingSeries a finding is gated on, built from the user's daily rows (contracts/findings.ts).

The Data Science agent's code computes a finding from `summary_df`; the gates must see the same
days of the same column. The rules:

1. The frame is `summary_df` exactly as the sandbox builds it (sandbox/frames.py `summary_frame`):
   the raw daily metrics plus the composite features (hrv_rhr_ratio, cardio_fitness_index,
   <metric>_mean_30d / _sd_30d / _cv_30d). Composite features are computed before rule 2, so their
   rolling windows are the ones the code saw.
2. That frame is laid on a continuous daily calendar from its first to its last date; a day without
   a row is a null value. Trend windows and the halves of subgroup_consistency are positional, so
   position must mean calendar day.
3. `window_days` null is every day; N is the last N calendar days ending at the last date
   (`date > last - N days`, the convention of the generated pandas code). `offset_days` K (0 when
   absent) moves that end K days back: `last - K - N days < date <= last - K days`.
4. scalar: the feature over the window. association: feature and target over the window, the
   same days. trend: the last 2·N days with `recent_start = N`, N being `window_days` or, when
   that is null, 30 (the digest's "last 30 days vs prior 30"); with fewer than 2·N days, every day,
   and `recent_start` = days − N, at least 0.
5. A feature or target that is not a column gives all-null values and is named in
   `missing_columns`: the sample_size gate then rejects the finding with n = 0, which is the honest
   answer to a claim about a column nobody has. Values are finite numbers or null, never NaN.
6. The finding passes through unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from sandbox.frames import summary_frame

TREND_WINDOW_DAYS_WHEN_UNSPECIFIED = 30


def build_finding_series(summary_rows: list[dict], specs: list[dict]) -> list[dict[str, Any]]:
    """One `{series, missing_columns}` per spec (`{finding, window_days}`), in order."""
    calendar = daily_calendar(summary_rows)
    return [
        _series_for(calendar, spec['finding'], spec.get('window_days'), spec.get('offset_days') or 0)
        for spec in specs
    ]


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


def _series_for(calendar: pd.DataFrame, finding: dict, window_days: int | None, offset_days: int) -> dict[str, Any]:
    kind = finding['kind']
    if kind == 'trend':
        recent_days = TREND_WINDOW_DAYS_WHEN_UNSPECIFIED if window_days is None else window_days
        days = _last_days(calendar, 2 * recent_days, offset_days)
    else:
        days = calendar if window_days is None else _last_days(calendar, window_days, offset_days)

    missing: list[str] = []
    series: dict[str, Any] = {'finding': finding, 'feature_values': _values(days, finding['feature'], missing)}
    if kind == 'association':
        series['target_values'] = _values(days, finding['target'], missing)
    if kind == 'trend':
        series['recent_start'] = max(len(days) - recent_days, 0)
    return {'series': series, 'missing_columns': missing}


def _last_days(calendar: pd.DataFrame, n: int, offset: int = 0) -> pd.DataFrame:
    if calendar.empty:
        return calendar
    end = calendar.index.max() - pd.Timedelta(days=offset)
    return calendar[(calendar.index > end - pd.Timedelta(days=n)) & (calendar.index <= end)]


def _values(days: pd.DataFrame, column: str, missing: list[str]) -> list[float | None]:
    if column not in days.columns:
        if column not in missing:
            missing.append(column)
        return [None] * len(days)
    return [float(v) if pd.notna(v) and math.isfinite(v) else None for v in days[column]]
