"""Gate 3, construct_validity (hard; associations): is the feature just the target re-expressed?

Spearman ρ on all valid pairs; |ρ| > 0.85 means a near-tautology (deep sleep minutes vs
sleep minutes) and rejects the finding. A ρ that does not exist (a constant feature or target)
fails too: no association can be claimed between variables one of which never varies.
"""

from __future__ import annotations

from gates.rank_correlation import spearman_rho
from gates.result import GateResult, decided, skipped, undefined
from gates.series import FindingSeries

NAME = 'construct_validity'
MAX_ABS_RHO = 0.85


def check(series: FindingSeries) -> GateResult:
    if series.kind != 'association':
        return skipped(NAME, 'applies to association findings only')
    x, y = series.pairs()
    rho = spearman_rho(x, y)
    if rho is None:
        return undefined(NAME, 'Spearman rho is undefined: the feature or the target is constant', n=x.size)
    return decided(NAME, abs(rho) <= MAX_ABS_RHO, rho=rho, max_abs_rho=MAX_ABS_RHO, n=x.size)
