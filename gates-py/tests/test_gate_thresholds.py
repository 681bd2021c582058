"""Each gate's pass/fail boundary, at the thresholds docs/design.md#the-seven-gates sets, and its honest failures."""

import numpy as np
import pytest
from builders import association, comparison, correlated_pair, permutation_with_rho, scalar, trend
from scipy.stats import spearmanr

from gates import (
    bootstrap,
    construct_validity,
    discriminative_power,
    effect_vs_noise,
    method_triangulation,
    sample_size,
    subgroup_consistency,
)
from gates.series import parse_finding_series


def run(gate, payload):
    return gate.check(parse_finding_series(payload))


def permuted_association(rho: float):
    """25 pairs whose Spearman ρ is exactly `rho` (checked against scipy)."""
    x = np.arange(25.0)
    y = permutation_with_rho(25, rho).astype(float)
    assert spearmanr(x, y).statistic == pytest.approx(rho, abs=1e-12)
    return association(x, y)


# sample_size: n ≥ 20 complete pairs for associations, n ≥ 10 observations otherwise.


@pytest.mark.parametrize('pairs, verdict', [(19, 'failed'), (20, 'passed')])
def test_sample_size_counts_complete_pairs(pairs, verdict):
    x, y = correlated_pair(pairs + 3, 0.5, seed=1)
    x_with_gaps = [None, *x[1:]]
    y_with_gaps = [*y[:-2], None, None]
    result = run(sample_size, association(x_with_gaps, y_with_gaps))
    assert (result.verdict, result.detail['n'], result.detail['min_required']) == (verdict, pairs, 20)


@pytest.mark.parametrize('observed, verdict', [(9, 'failed'), (10, 'passed')])
@pytest.mark.parametrize('build', [scalar, lambda values: trend(values, recent_start=6)])
def test_sample_size_counts_observations(build, observed, verdict):
    values = [None, *range(observed), None]
    result = run(sample_size, build(values))
    assert (result.verdict, result.detail['n'], result.detail['min_required']) == (verdict, observed, 10)


# effect_vs_noise: |effect| / metric SD ≥ 0.5, or SD = 0.


@pytest.mark.parametrize('level, verdict', [(1.0, 'passed'), (0.99, 'failed')])
def test_effect_vs_noise_boundary_for_a_scalar_comparison(level, verdict):
    # Deviations (3, −3, 3, −3, 0 × 6) give a sample SD of exactly 2, so a mean of 1 is a ratio of 0.5.
    values = level + np.array([3.0, -3, 3, -3, 0, 0, 0, 0, 0, 0])
    result = run(effect_vs_noise, comparison(values))
    assert result.verdict == verdict
    assert result.detail['metric_sd'] == pytest.approx(2.0)
    assert result.detail['ratio'] == pytest.approx(level / 2)
    assert result.detail['effect_definition'] == 'mean'


def test_effect_vs_noise_for_a_trend_is_the_shift_between_windows():
    prior, recent = [10.0, 12, 11, 13, 10, 12, 11, 13], [16.0, 18, 17, 19]
    result = run(effect_vs_noise, trend(prior + recent, recent_start=8))
    assert result.verdict == 'passed'
    assert result.detail['effect'] == pytest.approx(np.mean(recent) - np.mean(prior))
    assert result.detail['metric_sd'] == pytest.approx(np.std(prior + recent, ddof=1))
    assert (result.detail['n_prior'], result.detail['n_recent']) == (8, 4)

    flat = run(effect_vs_noise, trend([10.0, 12, 11, 13] * 3, recent_start=8))
    assert flat.verdict == 'failed'
    assert flat.detail['ratio'] == pytest.approx(0.0)


@pytest.mark.parametrize(
    'values, metric_sd',
    [([5.0] * 12, 0.0), ([1e300, -1e300] * 6, float('inf'))],
    ids=['sd=0', 'sd=inf'],
)
def test_effect_vs_noise_passes_when_the_sd_is_zero_or_infinite(values, metric_sd):
    result = run(effect_vs_noise, comparison(values))
    assert result.verdict == 'passed'
    assert result.detail['metric_sd'] == metric_sd
    assert result.detail['ratio'] is None


def test_effect_vs_noise_fails_a_trend_with_an_empty_window():
    result = run(effect_vs_noise, trend([1.0, 2, 3, 4, None, None], recent_start=4))
    assert result.verdict == 'failed'
    assert 'window' in result.detail['reason']


def test_effect_vs_noise_does_not_apply_to_associations():
    result = run(effect_vs_noise, association(*correlated_pair(30, 0.5, seed=1)))
    assert result.verdict == 'skipped'
    assert result.detail == {'applicable': False, 'reason': 'applies to trend and scalar findings only'}


# construct_validity: |ρ| ≤ 0.85 (hard).


@pytest.mark.parametrize(
    'rho, verdict', [(0.85, 'passed'), (0.86, 'failed'), (-0.85, 'passed'), (-0.86, 'failed')]
)
def test_construct_validity_boundary(rho, verdict):
    result = run(construct_validity, permuted_association(rho))
    assert result.verdict == verdict
    assert result.detail['rho'] == pytest.approx(rho, abs=1e-12)


def test_construct_validity_fails_a_constant_feature_with_a_reason():
    result = run(construct_validity, association([3.0] * 30, range(30)))
    assert result.verdict == 'failed'
    assert 'constant' in result.detail['reason']


# discriminative_power: |ρ| ≥ 0.10.


@pytest.mark.parametrize(
    'rho, verdict', [(0.10, 'passed'), (0.09, 'failed'), (-0.10, 'passed'), (-0.09, 'failed')]
)
def test_discriminative_power_boundary(rho, verdict):
    result = run(discriminative_power, permuted_association(rho))
    assert result.verdict == verdict
    assert result.detail['min_abs_rho'] == 0.10


# subgroup_consistency: ρ in the two time-ordered halves has the same sign.


def test_subgroup_consistency_compares_time_ordered_halves():
    x = np.arange(20.0)
    rising_then_falling = np.r_[np.arange(10.0), np.arange(10.0)[::-1]]
    result = run(subgroup_consistency, association(x, rising_then_falling))
    assert result.verdict == 'failed'
    assert (result.detail['rho_first_half'], result.detail['rho_second_half']) == (1.0, -1.0)
    assert (result.detail['n_first_half'], result.detail['n_second_half']) == (10, 10)

    assert (
        run(subgroup_consistency, association(x, np.r_[np.arange(10.0), 5 + np.arange(10.0)])).verdict
        == 'passed'
    )


def test_subgroup_consistency_fails_a_half_whose_target_is_constant():
    x = np.arange(20.0)
    result = run(subgroup_consistency, association(x, np.r_[np.zeros(10), np.arange(10.0)]))
    assert result.verdict == 'failed'
    assert result.detail['rho_first_half'] is None
    assert 'constant' in result.detail['reason']


# method_triangulation: Spearman ρ and Kendall τ-b agree in sign.


def test_method_triangulation_fails_when_rho_and_tau_disagree():
    result = run(method_triangulation, association(range(8), [6, 1, 2, 3, 5, 7, 0, 4]))
    assert result.verdict == 'failed'
    assert result.detail['rho'] == pytest.approx(-1 / 42)
    assert result.detail['tau'] == pytest.approx(1 / 14)


def test_method_triangulation_passes_when_they_agree():
    result = run(method_triangulation, association(*correlated_pair(40, -0.5, seed=2)))
    assert result.verdict == 'passed'
    assert result.detail['rho'] < 0 and result.detail['tau'] < 0


# bootstrap: 1000 resamples, rng 42, 95% CI [q.025, q.975].


def test_bootstrap_ci_of_rho_recomputed_independently():
    x, y = correlated_pair(50, 0.3, seed=3)
    result = run(bootstrap, association(x, y))

    drawn = np.random.default_rng(42).integers(0, 50, size=(1000, 50))
    rhos = np.array([spearmanr(x[i], y[i]).statistic for i in drawn])
    low, high = np.quantile(rhos, [0.025, 0.975])
    assert result.detail['ci_low'] == pytest.approx(low, abs=1e-12)
    assert result.detail['ci_high'] == pytest.approx(high, abs=1e-12)
    assert result.detail['boot_median'] == pytest.approx(np.median(rhos), abs=1e-12)
    assert (result.detail['iterations'], result.detail['seed'], result.detail['degenerate_resamples']) == (
        1000,
        42,
        0,
    )
    assert result.verdict == ('passed' if low > 0 or high < 0 else 'failed')


def test_bootstrap_of_rho_fails_when_the_ci_crosses_zero():
    x, y = correlated_pair(40, 0.0, seed=5)
    result = run(bootstrap, association(x, y))
    assert result.detail['ci_low'] < 0 < result.detail['ci_high']
    assert result.verdict == 'failed'


@pytest.mark.parametrize(
    'payload',
    [
        association([], []),
        association([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]),
        scalar([None]),
        trend([1.0, 2.0], 2),
    ],
    ids=['no pairs', 'constant feature', 'no observations', 'empty recent window'],
)
def test_bootstrap_fails_when_there_is_nothing_to_resample(payload):
    result = run(bootstrap, payload)
    assert result.verdict == 'failed'
    assert result.detail['reason']


def test_bootstrap_of_a_scalar_mean_recomputed_independently():
    values = np.random.default_rng(6).normal(60, 4.5, size=30)
    result = run(bootstrap, scalar(values))

    means = values[np.random.default_rng(42).integers(0, 30, size=(1000, 30))].mean(axis=1)
    assert result.detail['ci_low'] == pytest.approx(np.quantile(means, 0.025), abs=1e-12)
    assert result.detail['ci_high'] == pytest.approx(np.quantile(means, 0.975), abs=1e-12)
    assert result.detail['boot_median'] == pytest.approx(np.median(means), abs=1e-12)
    assert (result.verdict, result.detail['statistic'], result.detail['informational']) == (
        'passed',
        'mean',
        True,
    )


def test_bootstrap_of_a_trend_resamples_each_window_on_its_own():
    values = np.random.default_rng(7).normal(0, 1, size=30)
    result = run(bootstrap, trend(values, recent_start=20))

    rng = np.random.default_rng(42)
    prior, recent = values[:20], values[20:]
    recent_means = recent[rng.integers(0, 10, size=(1000, 10))].mean(axis=1)
    differences = recent_means - prior[rng.integers(0, 20, size=(1000, 20))].mean(axis=1)
    assert result.detail['ci_low'] == pytest.approx(np.quantile(differences, 0.025), abs=1e-12)
    assert result.detail['ci_high'] == pytest.approx(np.quantile(differences, 0.975), abs=1e-12)
    assert (result.verdict, result.detail['statistic']) == ('passed', 'mean_difference')
