"""The data a finding's gates run on (the `FindingSeries` contract in contracts/findings.ts).

* `feature_values`: the feature's daily values, oldest first; null where the day is missing.
* `target_values` (association only): the target on the same days, same length.
* `recent_start` (trend only): the index in `feature_values` where the recent window begins;
  everything before it is the prior window the trend is measured against.
* `statistic` (optional): what the finding computed (gates.descriptions); absent, its kind's default.
  A scalar whose statistic is descriptive is a description, judged as gates.descriptions says.

A value that is not a finite number counts as missing, like null: the gates only ever see real
observations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gates.descriptions import DEFAULT_STATISTIC, DESCRIPTIVE_STATISTICS, ESTIMATES, STATISTICS

KINDS = ('association', 'trend', 'scalar')


class SeriesError(ValueError):
    """The finding's series is malformed (wrong kind, lengths that differ, non-numeric values)."""


@dataclass(frozen=True)
class FindingSeries:
    finding_id: str
    kind: str
    feature: np.ndarray  # float64, NaN where missing
    target: np.ndarray | None  # association only
    recent_start: int | None  # trend only
    statistic: str

    @property
    def describes(self) -> bool:
        """A description: a level of the window's own data, not an inference beyond it."""
        return self.kind == 'scalar' and self.statistic in DESCRIPTIVE_STATISTICS

    @property
    def estimates(self) -> bool:
        """A description that estimates a typical level or spread (a mean, a median, an SD)."""
        return self.describes and self.statistic in ESTIMATES

    def observed(self) -> np.ndarray:
        """The feature's non-missing values, in time order."""
        return self.feature[~np.isnan(self.feature)]

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(feature, target) on the days where both were observed, in time order."""
        if self.target is None:
            raise SeriesError('only association findings have (feature, target) pairs')
        complete = ~np.isnan(self.feature) & ~np.isnan(self.target)
        return self.feature[complete], self.target[complete]

    def windows(self) -> tuple[np.ndarray, np.ndarray]:
        """(prior, recent) non-missing feature values of a trend finding."""
        if self.recent_start is None:
            raise SeriesError('only trend findings have prior and recent windows')
        prior, recent = self.feature[: self.recent_start], self.feature[self.recent_start :]
        return prior[~np.isnan(prior)], recent[~np.isnan(recent)]


def parse_finding_series(raw: Mapping[str, Any]) -> FindingSeries:
    finding = raw.get('finding')
    if not isinstance(finding, Mapping):
        raise SeriesError('finding must be an object')
    finding_id, kind = finding.get('id'), finding.get('kind')
    if not isinstance(finding_id, str):
        raise SeriesError('finding.id must be a string')
    if kind not in KINDS:
        raise SeriesError(f'finding.kind must be one of {", ".join(KINDS)}; got {kind!r}')

    feature = _values(raw.get('feature_values'), 'feature_values')
    target = None
    recent_start = None
    if kind == 'association':
        target = _values(raw.get('target_values'), 'target_values')
        if target.size != feature.size:
            raise SeriesError(f'target_values has {target.size} values but feature_values has {feature.size}')
    elif kind == 'trend':
        recent_start = raw.get('recent_start')
        if isinstance(recent_start, bool) or not isinstance(recent_start, int):
            raise SeriesError('a trend finding needs an integer recent_start')
        if not 0 <= recent_start <= feature.size:
            raise SeriesError(f'recent_start {recent_start} is outside 0..{feature.size}')
    statistic = raw.get('statistic', DEFAULT_STATISTIC[kind])
    if statistic not in STATISTICS:
        raise SeriesError(f'statistic must be one of {", ".join(STATISTICS)}; got {statistic!r}')
    return FindingSeries(finding_id, kind, feature, target, recent_start, statistic)


def _values(raw: Any, field: str) -> np.ndarray:
    if not isinstance(raw, list):
        raise SeriesError(f'{field} must be an array of numbers or nulls')
    out = np.empty(len(raw), dtype=np.float64)
    for i, v in enumerate(raw):
        if v is None:
            out[i] = np.nan
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = v if math.isfinite(v) else np.nan
        else:
            raise SeriesError(f'{field}[{i}] is {v!r}, not a number or null')
    return out
