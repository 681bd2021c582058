import json
from collections import namedtuple

import numpy as np
import pandas as pd
import pytest

from jsonsafe import OutputTooLarge, ResultNotSerializable, encode_result


def roundtrip(value, max_bytes=10_000):
    return json.loads(encode_result(value, max_bytes))


def test_numbers_are_finite_or_null():
    assert roundtrip([np.float64(1.5), np.nan, np.inf, -np.inf, np.int64(3), np.bool_(True), pd.NA, None]) == [
        1.5,
        None,
        None,
        None,
        3,
        True,
        None,
        None,
    ]


def test_pandas_values_become_plain_json():
    dates = pd.to_datetime(['2024-01-01', '2024-01-02'])
    frame = pd.DataFrame({'date': dates, 'steps': [1.0, np.nan]})
    assert roundtrip(frame) == [{'date': '2024-01-01', 'steps': 1.0}, {'date': '2024-01-02', 'steps': None}]
    assert roundtrip(frame.set_index('date')['steps']) == {'2024-01-01': 1.0, '2024-01-02': None}
    assert roundtrip(pd.Series([1, 2])) == [1, 2]
    assert roundtrip(frame.groupby(frame['date'].dt.day_name())['steps'].mean()) == {'Monday': 1.0, 'Tuesday': None}
    assert roundtrip({pd.Timestamp('2024-01-01 12:30'): pd.Timedelta(minutes=1)}) == {'2024-01-01T12:30:00': 60.0}


def test_named_tuples_keep_their_names_and_unknown_objects_become_short_text():
    Result = namedtuple('Result', 'statistic pvalue')
    assert roundtrip(Result(2.0, 0.05)) == {'statistic': 2.0, 'pvalue': 0.05}
    assert roundtrip(object()).startswith('<object object')


def test_oversized_and_self_referencing_results_are_errors_not_truncations():
    with pytest.raises(OutputTooLarge):
        encode_result('x' * 2000, max_bytes=1000)
    with pytest.raises(OutputTooLarge):
        encode_result(list(range(10**6)), max_bytes=1000)
    loop = []
    loop.append(loop)
    with pytest.raises(ResultNotSerializable):
        encode_result(loop, max_bytes=10_000)
