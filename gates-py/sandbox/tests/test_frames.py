import json

import pandas as pd

from frames import DAILY_METRICS, POPULATION_COLUMNS, load_frames

PROFILE = {'sex': 'male', 'birth_year': 1980, 'height_cm': 180, 'weight_kg': 80}


def write_input(tmp_path, summary, activities=()):
    (tmp_path / 'summary.json').write_text(json.dumps(list(summary)))
    (tmp_path / 'activities.json').write_text(json.dumps(list(activities)))
    (tmp_path / 'profile.json').write_text(json.dumps(PROFILE))
    return tmp_path


def test_empty_tables_keep_their_columns_and_types(tmp_path):
    frames = load_frames(write_input(tmp_path, []))
    summary = frames['summary_df']
    assert len(summary) == 0
    assert {'hrv_rhr_ratio', 'cardio_fitness_index', 'steps_mean_30d', 'sleep_score_cv_30d'} <= set(summary.columns)
    assert pd.api.types.is_datetime64_any_dtype(summary['date'])
    assert list(frames['activities_df'].columns) == [
        'date',
        'type',
        'duration_minutes',
        'distance_km',
        'calories',
        'avg_heart_rate',
    ]
    # No labs.json (a run directory written before lab results were analysed): an empty labs_df.
    assert list(frames['labs_df'].columns) == ['date', 'name', 'value', 'unit']
    assert list(frames['population_df'].columns) == list(POPULATION_COLUMNS)
    assert frames['profile_df'].iloc[0]['birth_year'] == 1980


def test_rows_are_sorted_by_date_and_nulls_are_nan(tmp_path):
    day = {metric: 1 for metric in DAILY_METRICS}
    rows = [{**day, 'date': '2024-01-02', 'steps': None}, {**day, 'date': '2024-01-01'}]
    summary = load_frames(write_input(tmp_path, rows))['summary_df']
    assert list(summary['date'].dt.strftime('%Y-%m-%d')) == ['2024-01-01', '2024-01-02']
    assert summary['steps'].isna().tolist() == [False, True]
    assert summary['hrv_rhr_ratio'].tolist() == [1.0, 1.0]


def test_lab_results_are_one_row_per_biomarker_per_panel_oldest_first(tmp_path):
    labs = [
        {'taken_on': '2026-09-01', 'name': 'ldl_cholesterol', 'value': 115, 'unit': 'mg/dL'},
        {'taken_on': '2026-03-01', 'name': 'ldl_cholesterol', 'value': 130, 'unit': 'mg/dL'},
    ]
    (write_input(tmp_path, []) / 'labs.json').write_text(json.dumps(labs))
    frame = load_frames(tmp_path)['labs_df']
    assert frame['date'].dt.strftime('%Y-%m-%d').tolist() == ['2026-03-01', '2026-09-01']
    assert frame['value'].tolist() == [130.0, 115.0]
    assert pd.api.types.is_datetime64_any_dtype(frame['date'])
