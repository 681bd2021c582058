"""A description through the seven gates (gates.descriptions): an estimate of a level or a spread is judged
on sample_size and on the bootstrap of its own statistic; an exact record of the window has nothing a sample
size or a resample could question; effect_vs_noise never applies to a level."""

import numpy as np
import pytest
from builders import scalar

from gates import bootstrap, evaluate_finding
from gates.descriptions import ESTIMATES, NOT_AN_EFFECT, NOTHING_ESTIMATED, RECORDS
from gates.series import parse_finding_series

SKIPPED_FOR_A_SCALAR = ('construct_validity', 'subgroup_consistency', 'method_triangulation', 'discriminative_power')


def by_gate(outcome):
    return {g['gate']: g for g in outcome['gates']}


def test_an_average_is_judged_as_the_contract_example_shows():
    values = np.random.default_rng(3).normal(60.4, 4.47, size=160)
    outcome = evaluate_finding(scalar(values, 'ds-001', statistic='mean'))
    gates = by_gate(outcome)

    assert gates['sample_size'] == {
        'gate': 'sample_size',
        'verdict': 'passed',
        'detail': {'applicable': True, 'n': 160, 'min_required': 10},
    }
    assert gates['bootstrap']['verdict'] == 'passed'
    assert gates['bootstrap']['detail']['statistic'] == 'mean'
    assert gates['bootstrap']['detail']['ci_low'] < values.mean() < gates['bootstrap']['detail']['ci_high']
    assert gates['effect_vs_noise'] == {
        'gate': 'effect_vs_noise',
        'verdict': 'skipped',
        'detail': {'applicable': False, 'reason': NOT_AN_EFFECT},
    }
    assert all(gates[name]['verdict'] == 'skipped' for name in SKIPPED_FOR_A_SCALAR)
    assert (outcome['verdict'], outcome['passes'], outcome['applicable']) == ('validated', 2, 2)


@pytest.mark.parametrize('statistic', ESTIMATES)
@pytest.mark.parametrize('observed, verdict', [(9, 'rejected'), (10, 'validated')])
def test_an_estimate_needs_ten_observations(statistic, observed, verdict):
    # Nine nights of sleep, a missing one between them: too few to stand for the usual level or spread.
    values = [None, *np.random.default_rng(observed).normal(420, 40, size=observed), None]
    outcome = evaluate_finding(scalar(values, statistic=statistic))
    assert outcome['verdict'] == verdict
    assert outcome['gates'][0]['detail']['n'] == observed
    if verdict == 'rejected':
        # A hard gate: the gates after it do not run.
        assert outcome['hard_rejection'] == 'sample_size'
        assert [g['gate'] for g in outcome['gates']] == ['sample_size']


@pytest.mark.parametrize('statistic', RECORDS)
def test_an_exact_record_of_the_window_is_not_judged_as_a_sample(statistic):
    # Three runs last week are three runs: no gate questions how few they are.
    outcome = evaluate_finding(scalar([1.0, 1.0, 1.0], statistic=statistic))
    gates = by_gate(outcome)
    assert [g['verdict'] for g in outcome['gates']] == ['skipped'] * 7
    assert gates['sample_size']['detail'] == {'applicable': False, 'reason': NOTHING_ESTIMATED}
    assert gates['bootstrap']['detail'] == {'applicable': False, 'reason': NOTHING_ESTIMATED}
    assert gates['effect_vs_noise']['detail']['reason'] == NOT_AN_EFFECT
    # No gate applied: the contract's degenerate `conditional`; its reproduction is what validates it.
    assert (outcome['verdict'], outcome['hard_rejection'], outcome['passes'], outcome['applicable']) == (
        'conditional',
        None,
        0,
        0,
    )


@pytest.mark.parametrize(
    'statistic, of_each_resample',
    [
        ('median', lambda resamples: np.median(resamples, axis=1)),
        ('sd', lambda resamples: resamples.std(axis=1, ddof=1)),
    ],
)
def test_the_bootstrap_resamples_the_statistic_the_description_states(statistic, of_each_resample):
    values = np.random.default_rng(8).gamma(2.0, 30.0, size=40)
    result = bootstrap.check(parse_finding_series(scalar([*values[:20], None, *values[20:]], statistic=statistic)))

    resampled = of_each_resample(values[np.random.default_rng(42).integers(0, 40, size=(1000, 40))])
    assert result.detail['ci_low'] == pytest.approx(np.quantile(resampled, 0.025), abs=1e-12)
    assert result.detail['ci_high'] == pytest.approx(np.quantile(resampled, 0.975), abs=1e-12)
    assert result.detail['boot_median'] == pytest.approx(np.median(resampled), abs=1e-12)
    assert (result.verdict, result.detail['statistic'], result.detail['informational']) == ('passed', statistic, True)


def test_a_spread_of_one_observation_cannot_be_bootstrapped():
    result = bootstrap.check(parse_finding_series(scalar([None, 7.0], statistic='sd')))
    assert result.verdict == 'failed'
    assert result.detail['reason'] == 'too few observations to take the sd of'


def test_a_scalar_without_a_statistic_is_a_mean_and_a_comparison_stays_an_inference():
    values = np.random.default_rng(4).normal(7.0, 1.0, size=30)
    assert by_gate(evaluate_finding(scalar(values)))['effect_vs_noise']['verdict'] == 'skipped'
    for inference in ('difference', 'day_of_week'):
        gates = by_gate(evaluate_finding(scalar(values, statistic=inference)))
        assert gates['effect_vs_noise']['verdict'] == 'passed'
        assert gates['bootstrap']['detail']['statistic'] == 'mean'


def test_an_unknown_statistic_is_a_malformed_series():
    outcome = evaluate_finding(scalar([1.0] * 12, statistic='mode'))
    assert (outcome['verdict'], outcome['hard_rejection']) == ('rejected', 'error')
    assert 'statistic must be one of' in outcome['gates'][0]['detail']['error']
