"""Gate 1, sample_size (hard): enough real observations to say anything at all.

count the non-null observations of the feature (and of the target when there is one);
n ≥ 20 for associations, n ≥ 10 otherwise. For an association only days with both values can
enter a correlation, so n is the number of complete pairs. An exact record of the window (a count,
a latest reading) estimates nothing from a sample, so the gate does not apply to it
(gates.descriptions).
"""

from __future__ import annotations

from gates.descriptions import NOTHING_ESTIMATED
from gates.result import GateResult, decided, skipped
from gates.series import FindingSeries

NAME = 'sample_size'
MIN_PAIRS_ASSOCIATION = 20
MIN_OBSERVATIONS = 10


def check(series: FindingSeries) -> GateResult:
    if series.describes and not series.estimates:
        return skipped(NAME, NOTHING_ESTIMATED)
    if series.kind == 'association':
        n, min_required = series.pairs()[0].size, MIN_PAIRS_ASSOCIATION
    else:
        n, min_required = series.observed().size, MIN_OBSERVATIONS
    return decided(NAME, n >= min_required, n=n, min_required=min_required)
