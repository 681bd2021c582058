"""What the gates judge in a description (docs/design.md#descriptions-are-judged-by-what-they-estimate).

A description is a scalar finding whose statistic reports the window's own data (contracts/statistics.ts
`DESCRIPTIVE_STATISTICS`); the other statistics are inferences the seven gates were written for. The
product contract's example judges one, an average resting heart rate, on `sample_size` and `bootstrap`
alone. Which of the seven apply depends on what the number is:

* An estimate of a typical level or spread (ESTIMATES: mean, median, sd) stands for the user's usual
  value, which a handful of days can make up: it needs n ≥ 10 observations (`sample_size`, hard), and
  `bootstrap` resamples that very statistic to report how stable it is (informational, as for every
  scalar in the contract).
* An exact record of the window (RECORDS: count, total, min, max, latest, latest_change, per_week,
  per_month), such as a count of workouts, a lab's latest panel or the longest run, estimates nothing:
  three runs last week are three runs, however few. Neither `sample_size` nor `bootstrap` has a sample
  to question, so both are skipped, saying so; its reproduction is its check.
* `effect_vs_noise` sets an effect against the metric's noise; a level has no reference to stand out
  from (its distance from zero is no effect), so it is skipped for every description.

The association gates are skipped for every scalar, as before.
"""

from __future__ import annotations

import numpy as np

ESTIMATES = ('mean', 'median', 'sd')
RECORDS = ('count', 'total', 'min', 'max', 'latest', 'latest_change', 'per_week', 'per_month')
DESCRIPTIVE_STATISTICS = ESTIMATES + RECORDS
INFERENCE_STATISTICS = ('change', 'difference', 'day_of_week', 'spearman')
STATISTICS = DESCRIPTIVE_STATISTICS + INFERENCE_STATISTICS

# What each kind computes when a finding does not name its statistic (the Investigator's tests).
DEFAULT_STATISTIC = {'association': 'spearman', 'trend': 'change', 'scalar': 'mean'}

NOT_AN_EFFECT = 'a description reports a level of the window, not an effect to set against its noise'
NOTHING_ESTIMATED = 'an exact record of the window (a count, total, extreme or reading) estimates nothing from a sample'


def resampled_statistic(values: np.ndarray, drawn: np.ndarray, statistic: str) -> np.ndarray:
    """`statistic` (an ESTIMATES name) of each resample `values[drawn[i]]`."""
    resamples = values[drawn]
    if statistic == 'median':
        return np.median(resamples, axis=1)
    if statistic == 'sd':
        return resamples.std(axis=1, ddof=1)
    return resamples.mean(axis=1)
