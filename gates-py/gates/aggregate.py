"""Verdict aggregation (docs/design.md#verdict-aggregation), exactly as stated there:

    if hard_rejection:                     rejected      (a hard gate failed, or the gates crashed)
    elif bootstrap and discrim both failed: rejected     (neither "is-there-signal" gate found one)
    elif applicable == 0:                  conditional   (degenerate: no gate applied)
    else ratio = passes / applicable:      ≥ 0.85 validated, ≥ 0.5 conditional, else rejected

Gates whose detail says `applicable: False` are left out of both counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gates.result import GateResult

HARD_GATES = ('sample_size', 'construct_validity')
SIGNAL_GATES = ('bootstrap', 'discriminative_power')
VALIDATED_RATIO = 0.85
CONDITIONAL_RATIO = 0.5


@dataclass(frozen=True)
class Aggregate:
    verdict: str  # 'validated' | 'conditional' | 'rejected'
    hard_rejection: str | None  # 'sample_size' | 'construct_validity' | 'error' | None
    passes: int
    applicable: int


def is_hard_failure(result: GateResult) -> bool:
    """A failed hard gate rejects the finding and stops the gates after it, so a client
    sees fewer than 7 validator.gate events for that finding (docs/api.md#validatorgate)."""
    return result.gate in HARD_GATES and result.verdict == 'failed'


def aggregate(results: Sequence[GateResult], crashed: bool = False) -> Aggregate:
    applicable = [r for r in results if r.applicable]
    passes = sum(r.verdict == 'passed' for r in applicable)
    counts = {'passes': passes, 'applicable': len(applicable)}

    if crashed:
        return Aggregate('rejected', 'error', **counts)
    hard_failure = next((r.gate for r in results if is_hard_failure(r)), None)
    if hard_failure is not None:
        return Aggregate('rejected', hard_failure, **counts)
    failed = {r.gate for r in applicable if r.verdict == 'failed'}
    if failed.issuperset(SIGNAL_GATES):
        return Aggregate('rejected', None, **counts)
    if not applicable:
        return Aggregate('conditional', None, **counts)
    ratio = passes / len(applicable)
    if ratio >= VALIDATED_RATIO:
        return Aggregate('validated', None, **counts)
    if ratio >= CONDITIONAL_RATIO:
        return Aggregate('conditional', None, **counts)
    return Aggregate('rejected', None, **counts)
