"""Finding series built from daily rows (gates.finding_series), and the `series` op that serves them."""

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gates.finding_series import build_finding_series
from gates.protocol import handle_line

START = date(2024, 3, 1)
GATES_PY = Path(__file__).resolve().parent.parent


def day(offset: int) -> str:
    return (START + timedelta(days=offset)).isoformat()


def rows(days: list[int], **metrics) -> list[dict]:
    """One DailyRow per day offset; each metric is a function of the offset (absent metrics are null)."""
    return [{'date': day(d), **{name: value(d) for name, value in metrics.items()}} for d in days]


def finding(kind: str, feature: str, target: str | None = None) -> dict:
    return {
        'id': f'ds-{kind}',
        'claim': f'a {kind} claim',
        'kind': kind,
        'feature': feature,
        'target': target,
        'numbers': {'mean': 1.0},
        'n': 10,
        'window': 'whatever the agent wrote',
    }


def build(
    summary: list[dict],
    kind: str,
    feature: str,
    target: str | None = None,
    window_days: int | None = None,
    offset_days: int = 0,
):
    spec = {'finding': finding(kind, feature, target), 'window_days': window_days, 'offset_days': offset_days}
    [built] = build_finding_series(summary, [spec])
    return built['series'], built['missing_columns']


def test_a_scalar_window_is_the_last_n_calendar_days():
    steps = rows(list(range(10)), steps=lambda d: 1000.0 + d)

    everything, _ = build(steps, 'scalar', 'steps')
    last_three, _ = build(steps, 'scalar', 'steps', window_days=3)

    assert everything['feature_values'] == [1000.0 + d for d in range(10)]
    assert last_three['feature_values'] == [1007.0, 1008.0, 1009.0]
    assert set(last_three) == {'finding', 'feature_values', 'dates'}


def test_an_offset_window_ends_that_many_days_before_the_last_date():
    steps = rows(list(range(10)), steps=lambda d: 1000.0 + d)

    week_before, _ = build(steps, 'scalar', 'steps', window_days=3, offset_days=3)
    yesterday, _ = build(steps, 'scalar', 'steps', window_days=1, offset_days=1)
    trend, _ = build(steps, 'trend', 'steps', window_days=2, offset_days=1)

    assert week_before['feature_values'] == [1004.0, 1005.0, 1006.0]
    assert yesterday['feature_values'] == [1008.0]
    assert trend['feature_values'] == [1005.0, 1006.0, 1007.0, 1008.0]
    assert trend['recent_start'] == 2


def test_missing_days_are_nulls_on_a_continuous_calendar():
    summary = rows([0, 1, 2, 7, 8, 9], steps=lambda d: float(d))

    everything, _ = build(summary, 'scalar', 'steps')
    last_five, _ = build(summary, 'scalar', 'steps', window_days=5)

    assert everything['feature_values'] == [0.0, 1.0, 2.0, None, None, None, None, 7.0, 8.0, 9.0]
    # Five calendar days (offsets 5..9), not the last five rows.
    assert last_five['feature_values'] == [None, None, 7.0, 8.0, 9.0]


def test_rows_out_of_order_are_laid_out_by_date():
    summary = rows([2, 0, 1], steps=lambda d: float(d))
    series, _ = build(summary, 'scalar', 'steps')
    assert series['feature_values'] == [0.0, 1.0, 2.0]


def test_a_trend_takes_twice_its_window_and_starts_the_recent_half_in_the_middle():
    summary = rows(list(range(100)), resting_heart_rate=lambda d: 70.0 - d / 10)

    digest, _ = build(summary, 'trend', 'resting_heart_rate')
    fortnight, _ = build(summary, 'trend', 'resting_heart_rate', window_days=14)

    assert len(digest['feature_values']) == 60 and digest['recent_start'] == 30
    assert digest['feature_values'][0] == 70.0 - 40 / 10  # offset 40 is 60 days before the end
    assert len(fortnight['feature_values']) == 28 and fortnight['recent_start'] == 14
    assert fortnight['feature_values'][fortnight['recent_start']] == 70.0 - 86 / 10


def test_a_trend_on_a_short_history_takes_every_day_and_keeps_the_recent_window_whole():
    short = rows(list(range(45)), resting_heart_rate=lambda d: 60.0)
    shorter_than_the_window = rows(list(range(20)), resting_heart_rate=lambda d: 60.0)

    series, _ = build(short, 'trend', 'resting_heart_rate')
    clamped, _ = build(shorter_than_the_window, 'trend', 'resting_heart_rate')

    assert len(series['feature_values']) == 45 and series['recent_start'] == 15
    assert len(clamped['feature_values']) == 20 and clamped['recent_start'] == 0


def test_composite_features_are_the_columns_the_generated_code_saw():
    days = [d for d in range(40) if d % 5 != 3]  # every fifth day missing
    summary = rows(
        days,
        resting_heart_rate=lambda d: 55.0 + d % 7,
        heart_rate_variability=lambda d: 40.0 + d % 11,
        steps=lambda d: 5000.0 + 100 * (d % 13),
    )

    ratio, missing = build(summary, 'scalar', 'hrv_rhr_ratio')
    rolling_mean, _ = build(summary, 'scalar', 'steps_mean_30d')

    assert missing == []
    for d, value in enumerate(ratio['feature_values']):
        expected = (40.0 + d % 11) / (55.0 + d % 7) if d in days else None
        assert value == pytest.approx(expected)
    # Computed on the rows as they are (30 calendar days back, 7 observations at least), then laid
    # on the calendar: the missing days stay null rather than being filled by the rolling window.
    frame = pd.DataFrame(
        {'date': pd.to_datetime([day(d) for d in days]), 'steps': [5000.0 + 100 * (d % 13) for d in days]}
    )
    by_pandas = frame.rolling('30D', on='date', min_periods=7)['steps'].mean()
    expected_by_day = dict(zip(days, by_pandas, strict=True))
    assert rolling_mean['feature_values'] == [
        None if d not in expected_by_day or np.isnan(expected_by_day[d]) else pytest.approx(expected_by_day[d])
        for d in range(40)
    ]


def test_an_unknown_column_is_all_null_and_named():
    summary = rows(list(range(10)), steps=lambda d: float(d))

    scalar, scalar_missing = build(summary, 'scalar', 'vo2_max', window_days=4)
    association, association_missing = build(summary, 'association', 'steps', 'mood')
    neither, neither_missing = build(summary, 'association', 'mood', 'mood')

    assert scalar['feature_values'] == [None] * 4 and scalar_missing == ['vo2_max']
    assert association['feature_values'] == [float(d) for d in range(10)]
    assert association['target_values'] == [None] * 10 and association_missing == ['mood']
    assert neither_missing == ['mood']


def test_an_association_has_feature_and_target_on_the_same_days():
    summary = rows(
        [0, 1, 3, 4, 5, 6], steps=lambda d: 1000.0 * d, sleep_minutes=lambda d: None if d == 4 else 400.0 + d
    )

    series, _ = build(summary, 'association', 'steps', 'sleep_minutes', window_days=5)

    assert series['feature_values'] == [None, 3000.0, 4000.0, 5000.0, 6000.0]
    assert series['target_values'] == [None, 403.0, None, 405.0, 406.0]
    assert set(series) == {'finding', 'feature_values', 'target_values', 'dates'}
    assert series['finding'] == finding('association', 'steps', 'sleep_minutes')


def test_no_summary_gives_empty_series():
    series, missing = build([], 'trend', 'steps')
    assert series['feature_values'] == [] and series['recent_start'] == 0 and missing == []


def test_the_series_op_answers_in_spec_order_with_json_numbers_only():
    summary = rows(list(range(30)), resting_heart_rate=lambda d: 0.0 if d == 2 else 60.0, steps=lambda d: None)
    specs = [
        {'finding': finding('scalar', 'hrv_rhr_ratio'), 'window_days': None},
        {'finding': finding('trend', 'resting_heart_rate'), 'window_days': 7},
    ]

    response = handle_line(json.dumps({'id': 'req-9', 'op': 'series', 'summary': summary, 'specs': specs}))

    json.dumps(response, allow_nan=False)  # NaN has no JSON spelling: every gap must already be null
    assert response['id'] == 'req-9'
    assert [s['series']['finding']['kind'] for s in response['series']] == ['scalar', 'trend']
    assert response['series'][0]['series']['feature_values'] == [None] * 30
    assert response['series'][1]['series']['recent_start'] == 7


def test_one_process_builds_series_and_gates_them():
    rng = np.random.default_rng(3)
    steps = rng.normal(8000, 2000, size=120)
    stress = 50 + 10 * (steps - 8000) / 2000 + rng.normal(0, 12, size=120)  # ρ ≈ 0.6: below construct overlap
    summary = rows(
        list(range(120)), steps=lambda d: float(steps[d]), stress_management_score=lambda d: float(stress[d])
    )
    spec = {'finding': finding('association', 'steps', 'stress_management_score'), 'window_days': 90}

    with subprocess.Popen(
        [sys.executable, '-m', 'gates'], cwd=GATES_PY, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        process.stdin.write(json.dumps({'id': 's', 'op': 'series', 'summary': summary, 'specs': [spec]}) + '\n')
        process.stdin.flush()
        [built] = json.loads(process.stdout.readline())['series']
        process.stdin.write(json.dumps({'id': 'g', 'findings': [built['series']]}) + '\n')
        process.stdin.flush()
        [outcome] = json.loads(process.stdout.readline())['results']
        process.stdin.close()
        assert process.wait(timeout=30) == 0

    assert len(built['series']['feature_values']) == 90
    assert outcome['verdict'] == 'validated'
    assert outcome['gates'][0]['detail']['n'] == 90


def test_a_request_without_op_is_still_a_gates_request():
    assert handle_line(json.dumps({'id': 'r', 'findings': []})) == {'id': 'r', 'results': []}
    assert handle_line(json.dumps({'id': 'r', 'op': 'gates', 'findings': []})) == {'id': 'r', 'results': []}


def series_request(summary=(), specs=()) -> dict:
    return {'id': 'r', 'op': 'series', 'summary': list(summary), 'specs': list(specs)}


@pytest.mark.parametrize(
    'request_body, message',
    [
        ({'id': 'r', 'op': 'tables'}, 'request.op must be "gates" or "series"'),
        ({'id': 'r', 'op': 'series', 'specs': []}, 'request.summary must be an array'),
        (series_request(summary=[{'steps': 1}]), 'request.summary must be an array'),
        (series_request(specs=[{'window_days': 3}]), 'request.specs must be'),
        (series_request(specs=[{'finding': finding('scalar', 'steps'), 'window_days': 0}]), 'request.specs must be'),
        (
            series_request(specs=[{'finding': finding('association', 'steps'), 'window_days': None}]),
            'an association naming its target',
        ),
        (series_request(summary=rows([0, 0])), 'more than one row for 2024-03-01'),
    ],
)
def test_malformed_series_requests_name_the_problem(request_body, message):
    response = handle_line(json.dumps(request_body))
    assert response['id'] == 'r'
    assert message in response['error']


# --- workouts and lab results (rules 3 to 5) ---

WORKOUTS = [
    {'date': day(2), 'type': 'running', 'duration_minutes': 30, 'distance_km': 5.0, 'calories': 300, 'avg_heart_rate': 150},
    {'date': day(2), 'type': 'yoga', 'duration_minutes': 60, 'distance_km': None, 'calories': 100, 'avg_heart_rate': 90},
    {'date': day(8), 'type': 'running', 'duration_minutes': 45, 'distance_km': 8.0, 'calories': 400, 'avg_heart_rate': 155},
]
LABS = [
    {'taken_on': day(-200), 'name': 'ldl_cholesterol', 'value': 140, 'unit': 'mg/dL'},
    {'taken_on': day(1), 'name': 'ldl_cholesterol', 'value': 130, 'unit': 'mg/dL'},
    {'taken_on': day(1), 'name': 'hdl_cholesterol', 'value': 50, 'unit': 'mg/dL'},
    {'taken_on': day(7), 'name': 'ldl_cholesterol', 'value': 115, 'unit': 'mg/dL'},
]


def build_table(summary, kind, feature, table, target=None, window_days=None, workout_type=None, offset_days=0):
    spec = {
        'finding': finding(kind, feature, target),
        'window_days': window_days,
        'offset_days': offset_days,
        'table': table,
        **({'workout_type': workout_type} if workout_type else {}),
    }
    [built] = build_finding_series(summary, [spec], WORKOUTS, LABS)
    return built['series'], built['missing_columns']


def test_a_description_of_workouts_is_one_value_per_workout_of_the_type_in_the_window():
    summary = rows(list(range(10)), steps=lambda d: 1000.0 + d)
    counted, _ = build_table(summary, 'scalar', 'workouts', 'workouts')
    assert counted['feature_values'] == [1.0, 1.0, 1.0]
    assert counted['dates'] == [day(2), day(2), day(8)]
    runs, _ = build_table(summary, 'scalar', 'distance_km', 'workouts', workout_type='running', window_days=5)
    # The last 5 days end on the last daily row (day 9): only day 8's run.
    assert (runs['feature_values'], runs['dates']) == ([8.0], [day(8)])
    yoga, _ = build_table(summary, 'scalar', 'distance_km', 'workouts', workout_type='yoga')
    assert yoga['feature_values'] == [None]


def test_a_calendar_window_before_the_last_day_keeps_only_its_workouts():
    summary = rows(list(range(10)), steps=lambda d: 1000.0 + d)
    # Days 0..4: window 5 days ending 5 days before the last day (day 9).
    early, _ = build_table(summary, 'scalar', 'duration_minutes', 'workouts', window_days=5, offset_days=5)
    assert early['feature_values'] == [30.0, 60.0]


def test_workouts_in_an_association_or_trend_are_per_calendar_day_with_zero_on_rest_days():
    summary = rows(list(range(10)), sleep_score=lambda d: 70.0 + d)
    pairs, missing = build_table(summary, 'association', 'duration_minutes', 'workouts', target='sleep_score')
    assert missing == []
    assert pairs['feature_values'] == [0.0, 0.0, 90.0, 0.0, 0.0, 0.0, 0.0, 0.0, 45.0, 0.0]
    assert pairs['target_values'] == [70.0 + d for d in range(10)]
    trend, _ = build_table(summary, 'trend', 'workouts', 'workouts', workout_type='running', window_days=5)
    assert trend['feature_values'] == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    assert trend['recent_start'] == 5


def test_a_lab_description_is_its_panels_oldest_first_including_those_before_the_daily_rows():
    summary = rows(list(range(10)), steps=lambda d: 1000.0 + d)
    ldl, missing = build_table(summary, 'scalar', 'ldl_cholesterol', 'labs')
    assert missing == []
    assert (ldl['feature_values'], ldl['dates']) == ([140.0, 130.0, 115.0], [day(-200), day(1), day(7)])
    recent, _ = build_table(summary, 'scalar', 'ldl_cholesterol', 'labs', window_days=30)
    assert recent['feature_values'] == [130.0, 115.0]


def test_without_daily_rows_windows_end_on_the_latest_workout_or_panel():
    runs, _ = build_table([], 'scalar', 'workouts', 'workouts', window_days=2)
    # The latest row is day 8's run: the last 2 days are days 7 and 8.
    assert runs['dates'] == [day(8)]


def test_an_unknown_workout_column_is_named_missing():
    summary = rows(list(range(10)), steps=lambda d: 1000.0 + d)
    series, missing = build_table(summary, 'scalar', 'pace', 'workouts')
    assert missing == ['pace'] and series['feature_values'] == [None, None, None]


def test_the_series_op_takes_workouts_and_labs():
    request = {
        'id': 'r1',
        'op': 'series',
        'summary': rows(list(range(10)), steps=lambda d: 1000.0 + d),
        'workouts': WORKOUTS,
        'labs': LABS,
        'specs': [{'finding': finding('scalar', 'ldl_cholesterol'), 'window_days': None, 'table': 'labs'}],
    }
    answer = handle_line(json.dumps(request))
    assert answer['series'][0]['series']['feature_values'] == [140.0, 130.0, 115.0]
    bad = handle_line(json.dumps({**request, 'specs': [{**request['specs'][0], 'table': 'meals'}]}))
    assert 'error' in bad
