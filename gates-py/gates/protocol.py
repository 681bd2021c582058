"""The line protocol `python -m gates` speaks (the TypeScript side is platform/gates/).

One request per line on stdin, answered by one line on stdout, in order. The request's `op` says
what it asks for:

* `"gates"` (also a request without `op`): `{"id": "...", "findings": [FindingSeries, ...]}`,
  answered by `{"id": ..., "results": [GatesOutcome, ...]}`.
* `"series"`: `{"id": "...", "op": "series", "summary": [DailyRow, ...], "specs": [{"finding":
  Finding, "window_days": int | null, "offset_days": int (optional, 0)}, ...]}`, answered by `{"id": ..., "series": [{"series":
  FindingSeries, "missing_columns": [str, ...]}, ...]}` in spec order (rules in gates.finding_series).

A request that is itself unusable is answered `{"id": ..., "error": "..."}` (`id` is null when it
could not be read). Output holds finite numbers only: NaN and ±Inf become null, because JSON has no
spelling for them and the Fact Sheet admits only finite numbers.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from gates.evaluate import evaluate_finding
from gates.finding_series import build_finding_series

FINDING_KINDS = ('association', 'trend', 'scalar')
DATA_TABLES = ('daily', 'workouts', 'labs')


class RequestError(ValueError):
    """The request line is not a well-formed request."""


def handle_line(line: str) -> dict[str, Any]:
    request_id = None
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise RequestError('a request must be a JSON object')
        request_id = request.get('id')
        if not isinstance(request_id, str):
            request_id = None
            raise RequestError('request.id must be a string')
        op = request.get('op', 'gates')
        if op == 'gates':
            return {'id': request_id, 'results': _evaluate(request)}
        if op == 'series':
            return {'id': request_id, 'series': _build_series(request)}
        raise RequestError(f'request.op must be "gates" or "series", not {op!r}')
    except Exception as exc:  # noqa: BLE001 — a bad request is answered, never fatal to the process
        return {'id': request_id, 'error': f'{type(exc).__name__}: {exc}'}


def _evaluate(request: dict) -> list[dict[str, Any]]:
    findings = request.get('findings')
    if not isinstance(findings, list) or not all(_names_its_finding(f) for f in findings):
        raise RequestError('request.findings must be an array of {finding: {id: string, ...}, ...}')
    return [evaluate_finding(f) for f in findings]


def _build_series(request: dict) -> list[dict[str, Any]]:
    summary = request.get('summary')
    if not isinstance(summary, list) or not all(_is_daily_row(row) for row in summary):
        raise RequestError("request.summary must be an array of daily rows {date: 'YYYY-MM-DD', ...}")
    specs = request.get('specs')
    if not isinstance(specs, list) or not all(_is_series_spec(s) for s in specs):
        raise RequestError(
            'request.specs must be an array of {finding: {id, kind, feature, target, ...}, window_days: positive'
            ' integer | null, offset_days?: non-negative integer (only with window_days), table?: daily | workouts |'
            ' labs, workout_type?: string}, an association naming its target'
        )
    workouts, labs = request.get('workouts', []), request.get('labs', [])
    if not isinstance(workouts, list) or not all(_is_dated_row(row, 'date') for row in workouts):
        raise RequestError("request.workouts must be an array of workouts {date: 'YYYY-MM-DD', type, ...}")
    if not isinstance(labs, list) or not all(_is_dated_row(row, 'taken_on') for row in labs):
        raise RequestError("request.labs must be an array of lab results {taken_on: 'YYYY-MM-DD', name, value, ...}")
    return build_finding_series(summary, specs, workouts, labs)


def encode(response: dict[str, Any]) -> str:
    return json.dumps(_finite(response), allow_nan=False, separators=(',', ':'))


def _names_its_finding(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get('finding'), dict)
        and isinstance(item['finding'].get('id'), str)
    )


def _is_daily_row(item: Any) -> bool:
    return _is_dated_row(item, 'date')


def _is_dated_row(item: Any, day: str) -> bool:
    return isinstance(item, dict) and isinstance(item.get(day), str)


def _is_series_spec(item: Any) -> bool:
    if not isinstance(item, dict) or not _names_its_finding(item):
        return False
    finding, window_days = item['finding'], item.get('window_days')
    target_ok = isinstance(finding.get('target'), str) or (
        finding.get('kind') != 'association' and finding.get('target') is None
    )
    window_ok = window_days is None or (type(window_days) is int and window_days > 0)
    offset_days = item.get('offset_days', 0)
    offset_ok = type(offset_days) is int and offset_days >= 0 and (offset_days == 0 or window_days is not None)
    table_ok = item.get('table', 'daily') in DATA_TABLES and (
        item.get('workout_type') is None or isinstance(item.get('workout_type'), str)
    )
    return (
        table_ok
        and offset_ok
        and finding.get('kind') in FINDING_KINDS
        and isinstance(finding.get('feature'), str)
        and target_ok
        and window_ok
    )


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value
