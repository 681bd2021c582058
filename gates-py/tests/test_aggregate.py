"""The verdict table (docs/design.md#verdict-aggregation), branch by branch."""

import pytest

from gates.aggregate import aggregate, is_hard_failure
from gates.result import GateResult

ASSOCIATION_GATES = (
    'sample_size',
    'construct_validity',
    'bootstrap',
    'subgroup_consistency',
    'method_triangulation',
    'discriminative_power',
)


def gate(name: str, verdict: str) -> GateResult:
    return GateResult(name, verdict, {'applicable': verdict != 'skipped'})


def association_gates(failed: tuple[str, ...] = ()) -> list[GateResult]:
    """The six association gates plus the skipped effect_vs_noise, with `failed` failing."""
    results = [gate(name, 'failed' if name in failed else 'passed') for name in ASSOCIATION_GATES]
    return [*results, gate('effect_vs_noise', 'skipped')]


def outcome(results, crashed=False):
    a = aggregate(results, crashed)
    return a.verdict, a.hard_rejection, a.passes, a.applicable


def test_a_crash_rejects_with_error():
    assert outcome([gate('sample_size', 'passed'), gate('effect_vs_noise', 'failed')], crashed=True) == (
        'rejected',
        'error',
        1,
        2,
    )


@pytest.mark.parametrize('hard_gate', ['sample_size', 'construct_validity'])
def test_a_failed_hard_gate_rejects_and_is_named(hard_gate):
    assert outcome(association_gates(failed=(hard_gate,))) == ('rejected', hard_gate, 5, 6)
    assert is_hard_failure(gate(hard_gate, 'failed'))
    assert not is_hard_failure(gate(hard_gate, 'passed'))


def test_a_failed_soft_gate_is_not_a_hard_failure():
    assert not is_hard_failure(gate('bootstrap', 'failed'))


def test_bootstrap_and_discriminative_power_both_failing_reject_despite_the_ratio():
    # 4 of 6 would otherwise be conditional.
    assert outcome(association_gates(failed=('bootstrap', 'discriminative_power'))) == (
        'rejected',
        None,
        4,
        6,
    )


@pytest.mark.parametrize('failed', ['bootstrap', 'discriminative_power'])
def test_one_signal_gate_failing_alone_is_judged_by_the_ratio(failed):
    assert outcome(association_gates(failed=(failed,))) == ('conditional', None, 5, 6)


def test_no_applicable_gate_is_conditional():
    assert outcome([gate('effect_vs_noise', 'skipped'), gate('bootstrap', 'skipped')]) == (
        'conditional',
        None,
        0,
        0,
    )


@pytest.mark.parametrize(
    'passes, applicable, verdict',
    [
        (6, 6, 'validated'),
        (17, 20, 'validated'),  # exactly 0.85
        (16, 20, 'conditional'),  # 0.80
        (5, 6, 'conditional'),  # 0.83: one failed association gate is enough to hedge
        (3, 6, 'conditional'),  # exactly 0.5
        (2, 3, 'conditional'),  # a scalar whose effect is lost in noise
        (9, 20, 'rejected'),  # 0.45
    ],
)
def test_the_pass_ratio_decides_the_rest(passes, applicable, verdict):
    results = [gate('subgroup_consistency', 'passed')] * passes
    results += [gate('method_triangulation', 'failed')] * (applicable - passes)
    assert outcome(results) == (verdict, None, passes, applicable)


def test_skipped_gates_count_for_nothing():
    skipped_everywhere = [
        gate('method_triangulation', 'passed'),
        *[gate('subgroup_consistency', 'skipped')] * 5,
    ]
    assert outcome(skipped_everywhere) == ('validated', None, 1, 1)
