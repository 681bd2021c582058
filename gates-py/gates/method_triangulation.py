"""Gate 6, method_triangulation (soft; associations): do two rank methods agree on the direction?

Spearman ρ vs Kendall τ-b on all valid pairs, passing on the same sign. Same sign is
read strictly (ρ · τ > 0): a zero from either method states no direction to agree with.
"""

from __future__ import annotations

from gates.rank_correlation import kendall_tau_b, spearman_rho
from gates.result import GateResult, decided, skipped, undefined
from gates.series import FindingSeries

NAME = 'method_triangulation'


def check(series: FindingSeries) -> GateResult:
    if series.kind != 'association':
        return skipped(NAME, 'applies to association findings only')
    x, y = series.pairs()
    rho, tau = spearman_rho(x, y), kendall_tau_b(x, y)
    if rho is None or tau is None:
        return undefined(
            NAME, 'rank correlations are undefined: the feature or the target is constant', rho=rho, tau=tau
        )
    return decided(NAME, rho * tau > 0, rho=rho, tau=tau)
