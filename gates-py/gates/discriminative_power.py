"""Gate 7, discriminative_power (soft; associations): is the effect above the noise floor of
personal data? |ρ| ≥ 0.10. Failing it together with the bootstrap rejects the finding
(see gates.aggregate).
"""

from __future__ import annotations

from gates.rank_correlation import spearman_rho
from gates.result import GateResult, decided, skipped, undefined
from gates.series import FindingSeries

NAME = 'discriminative_power'
MIN_ABS_RHO = 0.10


def check(series: FindingSeries) -> GateResult:
    if series.kind != 'association':
        return skipped(NAME, 'applies to association findings only')
    rho = spearman_rho(*series.pairs())
    if rho is None:
        return undefined(NAME, 'Spearman rho is undefined: the feature or the target is constant')
    return decided(NAME, abs(rho) >= MIN_ABS_RHO, rho=rho, min_abs_rho=MIN_ABS_RHO)
