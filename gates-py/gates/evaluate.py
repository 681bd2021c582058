"""Runs the seven gates for one finding, in the order of GATES, and aggregates their verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gates import (
    bootstrap,
    construct_validity,
    discriminative_power,
    effect_vs_noise,
    method_triangulation,
    sample_size,
    subgroup_consistency,
)
from gates.aggregate import aggregate, is_hard_failure
from gates.result import GateResult
from gates.series import parse_finding_series

GATES = (
    sample_size,
    effect_vs_noise,
    construct_validity,
    bootstrap,
    subgroup_consistency,
    method_triangulation,
    discriminative_power,
)


def evaluate_finding(raw: Mapping[str, Any]) -> dict[str, Any]:
    """One `FindingSeries` in, one `GatesOutcome` out (contracts/findings.ts).

    Never raises for bad data: whatever goes wrong inside the gates (including a malformed series,
    reported by the first gate) becomes a failed gate carrying the error, and the finding is
    rejected with hard_rejection = 'error' (a crashed gate rejects).
    """
    finding_id = raw['finding']['id']
    results: list[GateResult] = []
    crashed = False
    running = GATES[0].NAME
    try:
        series = parse_finding_series(raw)
        for gate in GATES:
            running = gate.NAME
            result = gate.check(series)
            results.append(result)
            if is_hard_failure(result):
                break
    except Exception as exc:  # noqa: BLE001 — one finding's failure must not take the others down
        results.append(
            GateResult(running, 'failed', {'applicable': True, 'error': f'{type(exc).__name__}: {exc}'})
        )
        crashed = True

    verdict = aggregate(results, crashed)
    return {
        'finding_id': finding_id,
        'gates': [r.to_json() for r in results],
        'verdict': verdict.verdict,
        'hard_rejection': verdict.hard_rejection,
        'passes': verdict.passes,
        'applicable': verdict.applicable,
    }
