"""Turns whatever `analysis(...)` returned into strict JSON, within a size budget.

Numbers come out finite or null (NaN and infinities have no JSON form); pandas and numpy values
become their plain equivalents. Nothing is truncated silently: a result over the budget is an
error, because a cut-off table would read as a complete one.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

MAX_DEPTH = 32
MAX_REPR_CHARS = 200


class OutputTooLarge(Exception):
    pass


class ResultNotSerializable(Exception):
    pass


class _Budget:
    """Counts values as they are converted, so a ten-million-row result fails fast."""

    def __init__(self, max_values: int):
        self.left = max_values

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise OutputTooLarge('the result is larger than the output limit')


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _key(value: object) -> str:
    if isinstance(value, (pd.Timestamp, dt.date)):
        return _timestamp(value)
    if isinstance(value, tuple):
        return ', '.join(_key(part) for part in value)
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


def _timestamp(value: pd.Timestamp | dt.date) -> str:
    # Daily data: midnight timestamps read better as plain dates.
    if isinstance(value, pd.Timestamp) and value.tzinfo is None and value == value.normalize():
        return value.strftime('%Y-%m-%d')
    return value.isoformat()


def _has_default_index(obj: pd.Series | pd.DataFrame) -> bool:
    return isinstance(obj.index, pd.RangeIndex) and obj.index.start == 0 and obj.index.step == 1


def _convert(value: object, budget: _Budget, depth: int) -> object:
    budget.spend()
    if depth > MAX_DEPTH:
        raise ResultNotSerializable(f'the result is nested more than {MAX_DEPTH} levels deep')
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, (pd.Timestamp, dt.date)):
        return _timestamp(value)
    if isinstance(value, np.datetime64):
        return _convert(pd.Timestamp(value), budget, depth)
    if isinstance(value, (pd.Timedelta, dt.timedelta)):
        return _number(value.total_seconds())
    if isinstance(value, np.timedelta64):
        return _convert(pd.Timedelta(value), budget, depth)
    if isinstance(value, pd.DataFrame):
        frame = value if _has_default_index(value) else value.reset_index()
        columns = [_key(column) for column in frame.columns]
        return [
            dict(zip(columns, (_convert(cell, budget, depth + 1) for cell in row)))
            for row in frame.itertuples(index=False, name=None)
        ]
    if isinstance(value, pd.Series):
        if _has_default_index(value):
            return [_convert(item, budget, depth + 1) for item in value.tolist()]
        return {_key(index): _convert(item, budget, depth + 1) for index, item in value.items()}
    if isinstance(value, pd.Index):
        return [_convert(item, budget, depth + 1) for item in value.tolist()]
    if isinstance(value, np.ndarray):
        # tolist() of a 0-d array is a scalar.
        return _convert(value.tolist(), budget, depth)
    if isinstance(value, Mapping):
        return {_key(key): _convert(item, budget, depth + 1) for key, item in value.items()}
    # Named tuples (scipy's test results among them) keep their public field names.
    if isinstance(value, tuple) and hasattr(value, '_asdict'):
        fields = {name: item for name, item in value._asdict().items() if not name.startswith('_')}
        return _convert(fields, budget, depth)
    if isinstance(value, (list, tuple)):
        return [_convert(item, budget, depth + 1) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [_convert(item, budget, depth + 1) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, np.generic):
        return _convert(value.item(), budget, depth)
    text = repr(value)
    return text if len(text) <= MAX_REPR_CHARS else text[: MAX_REPR_CHARS - 1] + '…'


def encode_result(value: object, max_bytes: int) -> str:
    """The result as one line of strict JSON no longer than max_bytes (UTF-8)."""
    try:
        # Every JSON value takes at least one byte, so this many values cannot fit anyway.
        safe = _convert(value, _Budget(max_values=max_bytes), depth=0)
    except (OutputTooLarge, ResultNotSerializable, MemoryError):
        raise
    except Exception as exc:  # an object whose own conversion methods fail
        raise ResultNotSerializable(f'the result could not be converted to JSON: {exc!r}') from exc
    text = json.dumps(safe, allow_nan=False, ensure_ascii=False, separators=(',', ':'))
    if len(text.encode('utf-8')) > max_bytes:
        raise OutputTooLarge(f'the result is larger than the output limit of {max_bytes} bytes')
    return text
