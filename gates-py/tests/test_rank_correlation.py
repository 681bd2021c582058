"""Known answers for the rank statistics, checked by hand and against scipy."""

import numpy as np
import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from gates.rank_correlation import average_ranks, bootstrap_spearman, kendall_tau_b, spearman_rho


def tied_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Correlated data rounded coarsely enough that both variables have many ties."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n), 0)
    return x, np.round(0.4 * x + rng.normal(size=n), 0)


def test_hand_computed_rho_and_tau():
    # Rank differences y − x = (6, 0, 0, 0, 1, 2, −6, −3): Σd² = 86, so ρ = 1 − 6·86/(8·63) = −1/42.
    # 15 concordant and 13 discordant pairs: τ = (15 − 13)/28 = 1/14. The two disagree in sign.
    x = np.arange(8.0)
    y = np.array([6.0, 1, 2, 3, 5, 7, 0, 4])
    assert spearman_rho(x, y) == pytest.approx(-1 / 42, abs=1e-15)
    assert kendall_tau_b(x, y) == pytest.approx(1 / 14, abs=1e-15)


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_rho_and_tau_b_match_scipy_with_ties(seed):
    x, y = tied_pair(60, seed)
    assert spearman_rho(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y, variant='b').statistic, abs=1e-12)


def test_average_ranks_match_scipy():
    values = np.array([3.0, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
    np.testing.assert_array_equal(average_ranks(values), rankdata(values))


@pytest.mark.parametrize('x', [np.full(10, 4.0), np.array([7.0]), np.array([])])
def test_correlations_are_undefined_without_variation(x):
    y = np.arange(float(x.size))
    assert spearman_rho(x, y) is None
    assert kendall_tau_b(x, y) is None
    assert spearman_rho(y, x) is None


def test_bootstrap_matches_scipy_on_every_resample():
    x, y = tied_pair(40, 4)
    rhos = bootstrap_spearman(x, y, np.random.default_rng(42), 1000)

    drawn = np.random.default_rng(42).integers(0, x.size, size=(1000, x.size))
    expected = np.array([spearmanr(x[i], y[i]).statistic for i in drawn])
    np.testing.assert_allclose(rhos, expected, rtol=0, atol=1e-12)


def test_bootstrap_resamples_without_variation_are_nan():
    # With three distinct targets out of twelve, some resamples draw a single target value.
    x = np.arange(12.0)
    y = np.array([0.0] * 10 + [1.0, 2.0])
    rhos = bootstrap_spearman(x, y, np.random.default_rng(42), 1000)

    drawn = np.random.default_rng(42).integers(0, x.size, size=(1000, x.size))
    constant = np.array([np.ptp(y[i]) == 0 for i in drawn])
    assert constant.any()
    np.testing.assert_array_equal(np.isnan(rhos), constant)
