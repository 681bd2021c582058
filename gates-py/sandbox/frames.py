"""The four DataFrames handed to the generated `analysis(...)`, read from the run's input files.

The input directory holds JSON written by platform/sandbox/: `summary.json`, `activities.json` and
`labs.json` (lists of row objects) and `profile.json` (one object, or null). Columns are fixed here, so
an empty table still has the columns the generated code expects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

DAILY_METRICS = (
    'steps',
    'sleep_minutes',
    'deep_sleep_minutes',
    'rem_sleep_minutes',
    'light_sleep_minutes',
    'awake_minutes',
    'resting_heart_rate',
    'heart_rate_variability',
    'stress_management_score',
    'active_zone_minutes',
    'sleep_score',
)
SUMMARY_COLUMNS = ('date', *DAILY_METRICS)
ACTIVITY_COLUMNS = ('date', 'type', 'duration_minutes', 'distance_km', 'calories', 'avg_heart_rate')
# One row per biomarker per panel: `name` is the biomarker (ldl_cholesterol…), `value` in `unit`, its canonical one.
LAB_COLUMNS = ('date', 'name', 'value', 'unit')
PROFILE_COLUMNS = ('sex', 'birth_year', 'height_cm', 'weight_kg')
# Reference statistics for people like the user (one row per metric, sex and age band). Nothing
# supplies them yet, so the frame is empty; its columns are the contract for whoever does.
POPULATION_COLUMNS = ('metric', 'sex', 'age_band', 'mean', 'sd', 'n')

# Rolling statistics look back 30 calendar days including the day itself (gaps in the data are
# not skipped over) and need a week of observations, so early values are not one-day noise.
ROLLING_WINDOW = '30D'
ROLLING_MIN_OBSERVATIONS = 7

# cardio_fitness_index inputs (see add_composite_features).
RHR_BEST, RHR_WORST = 45.0, 90.0
STEPS_TARGET = 10_000.0
AZM_TARGET_PER_DAY = 150.0 / 7  # WHO: 150 minutes of moderate activity a week
ACTIVITY_WINDOW = '7D'
ACTIVITY_MIN_OBSERVATIONS = 4


def _table(
    rows: list[dict],
    columns: tuple[str, ...],
    text_columns: tuple[str, ...] = (),
    integer_columns: tuple[str, ...] = (),
) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows, columns=list(columns))
    for column in columns:
        if column == 'date':
            frame[column] = pd.to_datetime(frame[column], format='%Y-%m-%d')
        elif column in text_columns:
            frame[column] = frame[column].astype(object)
        elif column in integer_columns:
            frame[column] = pd.to_numeric(frame[column], errors='coerce').astype('Int64')
        else:
            # Metrics stay float even when whole (steps): missing days are NaN, as pandas code expects.
            frame[column] = pd.to_numeric(frame[column], errors='coerce').astype('float64')
    return frame


def _rolling(summary: pd.DataFrame, column: str, window: str, min_periods: int):
    return summary.rolling(window, on='date', min_periods=min_periods)[column]


def add_composite_features(summary: pd.DataFrame) -> pd.DataFrame:
    """Deterministic features the generated code is promised (docs/design.md#data-science), computed once here.

    * hrv_rhr_ratio = heart_rate_variability / resting_heart_rate.
    * cardio_fitness_index, 0-100: half resting heart rate (45 bpm scores 1, 90 bpm scores 0,
      linear and clipped), a quarter the trailing 7-day mean of steps against 10,000 a day, a
      quarter the trailing 7-day mean of active zone minutes against 150 a week; each part clipped
      to [0, 1]. Missing when resting heart rate is missing or the week has fewer than 4 days of
      steps or active minutes.
    * <metric>_mean_30d, <metric>_sd_30d (sample SD) and <metric>_cv_30d (SD / mean) for every daily
      metric over the trailing 30 days; missing with fewer than 7 observations or a zero mean.
    """
    summary = summary.sort_values('date', kind='stable').reset_index(drop=True)
    rhr = summary['resting_heart_rate'].where(summary['resting_heart_rate'] > 0)
    summary['hrv_rhr_ratio'] = summary['heart_rate_variability'] / rhr

    rhr_part = ((RHR_WORST - rhr) / (RHR_WORST - RHR_BEST)).clip(0, 1)
    steps_part = (
        _rolling(summary, 'steps', ACTIVITY_WINDOW, ACTIVITY_MIN_OBSERVATIONS).mean() / STEPS_TARGET
    ).clip(0, 1)
    azm_part = (
        _rolling(summary, 'active_zone_minutes', ACTIVITY_WINDOW, ACTIVITY_MIN_OBSERVATIONS).mean()
        / AZM_TARGET_PER_DAY
    ).clip(0, 1)
    summary['cardio_fitness_index'] = 100 * (0.5 * rhr_part + 0.25 * steps_part + 0.25 * azm_part)

    for metric in DAILY_METRICS:
        window = _rolling(summary, metric, ROLLING_WINDOW, ROLLING_MIN_OBSERVATIONS)
        mean = window.mean()
        sd = window.std()
        summary[f'{metric}_mean_30d'] = mean
        summary[f'{metric}_sd_30d'] = sd
        summary[f'{metric}_cv_30d'] = (sd / mean).replace([np.inf, -np.inf], np.nan)
    return summary


def summary_frame(rows: list[dict]) -> pd.DataFrame:
    """`summary_df` as the generated code sees it: the daily rows with the composite features added.

    The gates build their finding series from this too (gates/finding_series.py), so a column the
    code computed a finding from means the same thing when the finding is checked.
    """
    return add_composite_features(_table(rows, SUMMARY_COLUMNS))


def activities_frame(rows: list[dict]) -> pd.DataFrame:
    """`activities_df`: one row per workout, oldest first (a row without a distance has NaN there)."""
    activities = _table(rows, ACTIVITY_COLUMNS, text_columns=('type',))
    return activities.sort_values('date', kind='stable').reset_index(drop=True)


def labs_frame(rows: list[dict]) -> pd.DataFrame:
    """`labs_df`: one row per biomarker per panel, oldest first. Rows arrive with `taken_on` as their day."""
    renamed = [{**row, 'date': row.get('date', row.get('taken_on'))} for row in rows]
    labs = _table(renamed, LAB_COLUMNS, text_columns=('name', 'unit'))
    return labs.sort_values(['date', 'name'], kind='stable').reset_index(drop=True)


def load_frames(input_dir: Path) -> dict[str, pd.DataFrame]:
    """The keyword arguments of `analysis(...)`, from the input directory's files."""

    def read(name: str) -> str | None:
        path = input_dir / name
        return path.read_text(encoding='utf-8') if path.exists() else None

    return frames_from(read)


def frames_from(read: Callable[[str], str | None]) -> dict[str, pd.DataFrame]:
    """The keyword arguments of `analysis(...)`, from the input files `read(name)` returns (None: missing)."""

    def parsed(name: str, missing=None):
        text = read(name)
        return json.loads(text) if text is not None else missing

    activities = activities_frame(parsed('activities.json'))
    profile_row = parsed('profile.json')  # null when the user has no profile: an empty profile_df
    profile = _table(
        [profile_row] if profile_row else [], PROFILE_COLUMNS, text_columns=('sex',), integer_columns=('birth_year',)
    )
    population = _table([], POPULATION_COLUMNS, text_columns=('metric', 'sex', 'age_band'))
    return {
        'summary_df': summary_frame(parsed('summary.json')),
        'activities_df': activities,
        'profile_df': profile,
        'population_df': population,
        'labs_df': labs_frame(parsed('labs.json', [])),
    }
