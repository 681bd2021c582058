"""What one gate reports: the `validator.gate` event's gate, verdict and detail (docs/streaming.md).

Every detail carries `applicable`, because the verdict aggregation counts only applicable gates
(docs/design.md#verdict-aggregation); a gate that does not apply is reported as `skipped`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateResult:
    gate: str
    verdict: str  # 'passed' | 'failed' | 'skipped'
    detail: dict[str, Any]

    @property
    def applicable(self) -> bool:
        return bool(self.detail['applicable'])

    def to_json(self) -> dict[str, Any]:
        return {'gate': self.gate, 'verdict': self.verdict, 'detail': self.detail}


def decided(gate: str, passed: bool, **detail: Any) -> GateResult:
    """An applicable gate whose statistic could be computed and compared with its threshold."""
    return GateResult(gate, 'passed' if passed else 'failed', {'applicable': True, **detail})


def undefined(gate: str, reason: str, **detail: Any) -> GateResult:
    """An applicable gate whose statistic does not exist for this data (a constant series, an empty
    window): it fails, saying why, rather than passing on a number that was never computed."""
    return GateResult(gate, 'failed', {'applicable': True, 'reason': reason, **detail})


def skipped(gate: str, reason: str) -> GateResult:
    return GateResult(gate, 'skipped', {'applicable': False, 'reason': reason})
