"""Gate 4, bootstrap (soft; all kinds): does the effect survive resampling?

1000 resamples with a seeded RNG (42), the 95% CI being [q.025, q.975] of the resampled
statistic (numpy's default linear quantiles).
* association: Spearman ρ on resampled (feature, target) pairs; passes iff the CI excludes 0.
  Resamples whose feature or target came out constant have no ρ; they are left out and counted.
* trend / scalar: the mean is bootstrapped for information and the gate always passes. For a trend
  the bootstrapped mean is the trend's effect, mean(recent) − mean(prior), each window resampled
  on its own. When that mean does not exist (a window with no observations) the gate fails, saying
  so, instead of passing on a number that was never computed.
* a description (gates.descriptions): an estimate's own statistic (its mean, median or SD) is
  resampled, so the interval says how stable the number the answer states is; still informational.
  An exact record has no sample to resample: skipped.

A fresh generator per finding makes every finding's CI independent of the order it was run in.
"""

from __future__ import annotations

import numpy as np

from gates.descriptions import NOTHING_ESTIMATED, resampled_statistic
from gates.rank_correlation import bootstrap_spearman
from gates.result import GateResult, decided, skipped, undefined
from gates.series import FindingSeries

NAME = 'bootstrap'
ITERATIONS = 1000
SEED = 42
CI_QUANTILES = (0.025, 0.975)


def check(series: FindingSeries) -> GateResult:
    if series.describes and not series.estimates:
        return skipped(NAME, NOTHING_ESTIMATED)
    rng = np.random.default_rng(SEED)
    settings = {'iterations': ITERATIONS, 'seed': SEED}
    if series.kind == 'association':
        x, y = series.pairs()
        if x.size == 0:
            return undefined(NAME, 'no pairs to resample', statistic='spearman_rho', **settings)
        rhos = bootstrap_spearman(x, y, rng, ITERATIONS)
        valid = rhos[~np.isnan(rhos)]
        detail = {'statistic': 'spearman_rho', 'degenerate_resamples': ITERATIONS - valid.size, **settings}
        if valid.size == 0:
            return undefined(NAME, 'Spearman rho is undefined in every resample', **detail)
        interval = _interval(valid)
        return decided(NAME, interval['ci_low'] > 0 or interval['ci_high'] < 0, **interval, **detail)

    if series.kind == 'trend':
        prior, recent = series.windows()
        detail = {'statistic': 'mean_difference', 'informational': True, **settings}
        if prior.size == 0 or recent.size == 0:
            return undefined(NAME, 'the prior or the recent window has no observations', **detail)
        recent_means = _resampled_means(recent, rng)  # drawn first, then the prior window
        resampled = recent_means - _resampled_means(prior, rng)
    else:
        observed = series.observed()
        # A description's own statistic; a scalar inference (a comparison of days) bootstraps the mean.
        statistic = series.statistic if series.describes else 'mean'
        detail = {'statistic': statistic, 'informational': True, **settings}
        if observed.size < (2 if statistic == 'sd' else 1):
            return undefined(NAME, f'too few observations to take the {statistic} of', n=observed.size, **detail)
        drawn = rng.integers(0, observed.size, size=(ITERATIONS, observed.size))
        resampled = resampled_statistic(observed, drawn, statistic)
    return decided(NAME, True, **_interval(resampled), **detail)


def _resampled_means(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return values[rng.integers(0, values.size, size=(ITERATIONS, values.size))].mean(axis=1)


def _interval(resampled: np.ndarray) -> dict[str, float]:
    low, high = np.quantile(resampled, CI_QUANTILES)
    return {'ci_low': float(low), 'ci_high': float(high), 'boot_median': float(np.median(resampled))}
