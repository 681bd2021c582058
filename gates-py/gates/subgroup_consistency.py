"""Gate 5, subgroup_consistency (soft; associations): does the association hold in both halves of
the window? Spearman ρ in time-ordered halves, passing when ρ₁ · ρ₂ > 0.

The halves split the complete pairs (in time order) by count, first ⌊n/2⌋ and the rest, so both
halves carry the same evidence even when missing days cluster in one part of the window.
"""

from __future__ import annotations

from gates.rank_correlation import spearman_rho
from gates.result import GateResult, decided, skipped, undefined
from gates.series import FindingSeries

NAME = 'subgroup_consistency'


def check(series: FindingSeries) -> GateResult:
    if series.kind != 'association':
        return skipped(NAME, 'applies to association findings only')
    x, y = series.pairs()
    half = x.size // 2
    rho_first = spearman_rho(x[:half], y[:half])
    rho_second = spearman_rho(x[half:], y[half:])
    detail = {
        'rho_first_half': rho_first,
        'rho_second_half': rho_second,
        'n_first_half': half,
        'n_second_half': x.size - half,
    }
    if rho_first is None or rho_second is None:
        return undefined(
            NAME, 'Spearman rho is undefined in a half: the feature or the target is constant there', **detail
        )
    return decided(NAME, rho_first * rho_second > 0, **detail)
