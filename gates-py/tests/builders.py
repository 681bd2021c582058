"""FindingSeries payloads for the tests, shaped as the TypeScript side sends them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Values = Sequence[float | None]


def _finding(kind: str, finding_id: str) -> dict:
    return {
        'id': finding_id,
        'claim': f'a {kind} finding under test',
        'kind': kind,
        'feature': 'steps',
        'target': 'sleep_minutes' if kind == 'association' else None,
        'numbers': {},
        'n': 0,
        'window': 'all',
    }


def association(x: Values, y: Values, finding_id: str = 'f-assoc') -> dict:
    return {
        'finding': _finding('association', finding_id),
        'feature_values': _plain(x),
        'target_values': _plain(y),
    }


def trend(values: Values, recent_start: int, finding_id: str = 'f-trend') -> dict:
    return {
        'finding': _finding('trend', finding_id),
        'feature_values': _plain(values),
        'recent_start': recent_start,
    }


def scalar(values: Values, finding_id: str = 'f-scalar', statistic: str | None = None) -> dict:
    """A scalar finding; without `statistic` it is its kind's default, a mean: a description."""
    payload = {'finding': _finding('scalar', finding_id), 'feature_values': _plain(values)}
    return payload if statistic is None else {**payload, 'statistic': statistic}


def comparison(values: Values, finding_id: str = 'f-comparison') -> dict:
    """A scalar inference (weekends against weekdays): the seven gates as written for an effect."""
    return scalar(values, finding_id, statistic='difference')


def correlated_pair(n: int, rho: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian (x, y) with population correlation `rho`."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, rho * x + np.sqrt(1 - rho**2) * rng.normal(size=n)


def permutation_with_rho(n: int, rho: float) -> np.ndarray:
    """A permutation of 0..n−1 whose Spearman ρ against 0..n−1 is exactly `rho`, when one exists.

    ρ = 1 − 6 Σd² / (n (n² − 1)), and swapping the values at distance k apart adds 2k² to Σd², so
    disjoint swaps are chosen greedily, longest first, until Σd² reaches its target.
    """
    remaining = round((1 - rho) * n * (n * n - 1) / 6) // 2
    perm = np.arange(n)
    free = set(range(n))
    for k in range(n - 1, 0, -1):
        for i in range(n - k):
            if k * k <= remaining and i in free and i + k in free:
                perm[[i, i + k]] = perm[[i + k, i]]
                free -= {i, i + k}
                remaining -= k * k
    if remaining:
        raise ValueError(f'no permutation found for rho={rho} at n={n}')
    return perm


def _plain(values: Values) -> list[float | None]:
    return [None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v) for v in values]
