"""The line protocol `python -m gates` speaks (the TypeScript side is activities/services/gates.ts).

One request per line on stdin, `{"id": "...", "findings": [FindingSeries, ...]}`, answered by one
line on stdout, in order: `{"id": ..., "results": [GatesOutcome, ...]}`, or `{"id": ..., "error":
"..."}` when the request itself is unusable (`id` is null when it could not be read). Output holds
finite numbers only: NaN and ±Inf become null, because JSON has no spelling for them and the Fact
Sheet admits only finite numbers.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from gates.evaluate import evaluate_finding


class RequestError(ValueError):
    """The request line is not a well-formed gates request."""


def handle_line(line: str) -> dict[str, Any]:
    request_id = None
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise RequestError('a request must be a JSON object')
        request_id = request.get('id')
        if not isinstance(request_id, str):
            request_id = None
            raise RequestError('request.id must be a string')
        findings = request.get('findings')
        if not isinstance(findings, list) or not all(_names_its_finding(f) for f in findings):
            raise RequestError('request.findings must be an array of {finding: {id: string, ...}, ...}')
        return {'id': request_id, 'results': [evaluate_finding(f) for f in findings]}
    except Exception as exc:  # noqa: BLE001 — a bad request is answered, never fatal to the process
        return {'id': request_id, 'error': f'{type(exc).__name__}: {exc}'}


def encode(response: dict[str, Any]) -> str:
    return json.dumps(_finite(response), allow_nan=False, separators=(',', ':'))


def _names_its_finding(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get('finding'), dict)
        and isinstance(item['finding'].get('id'), str)
    )


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value
