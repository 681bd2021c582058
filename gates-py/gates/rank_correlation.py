"""Rank correlations for the association gates: Spearman ρ, Kendall τ-b and a bootstrap of ρ.

Ties get average ranks throughout, as in `scipy.stats.spearmanr`. A correlation is undefined
when either variable has a single distinct value (every rank equal); it is returned as None so
each gate can fail with that reason instead of computing on NaN.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import kendalltau, rankdata


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2:
        return None
    return _pearson(rankdata(x), rankdata(y))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2 or _is_constant(x) or _is_constant(y):
        return None
    return float(kendalltau(x, y, variant='b').statistic)


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, iterations: int) -> np.ndarray:
    """ρ on `iterations` resamples of the (x, y) pairs, drawn as `rng.integers(0, n, (iterations, n))`.

    All resamples are ranked at once: a resample only repeats original values, so the average rank
    of a value is (resampled values below it) + (its copies + 1) / 2, which per-row counts of the
    original distinct values give without sorting. A resample whose x or y came out constant has no
    ρ and is NaN.
    """
    n = x.size
    drawn = rng.integers(0, n, size=(iterations, n))
    centre = (n + 1) / 2  # the mean rank, whatever the ties
    rx = _resampled_average_ranks(x, drawn) - centre
    ry = _resampled_average_ranks(y, drawn) - centre
    sxy = np.einsum('ij,ij->i', rx, ry)
    norm = np.sqrt(np.einsum('ij,ij->i', rx, rx) * np.einsum('ij,ij->i', ry, ry))
    rho = np.divide(sxy, norm, out=np.full(iterations, np.nan), where=norm > 0)
    return np.clip(rho, -1.0, 1.0)


def _resampled_average_ranks(values: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    levels, level_of = np.unique(values, return_inverse=True)
    k = levels.size
    rows = drawn.shape[0]
    drawn_level = level_of[drawn]
    counts = np.bincount((drawn_level + k * np.arange(rows)[:, None]).ravel(), minlength=rows * k)
    counts = counts.reshape(rows, k)
    below = np.cumsum(counts, axis=1) - counts
    level_rank = below + (counts + 1) / 2
    return np.take_along_axis(level_rank, drawn_level, axis=1)


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    a = a - a.mean()
    b = b - b.mean()
    norm = np.sqrt(np.dot(a, a) * np.dot(b, b))
    if norm == 0:
        return None
    return float(np.clip(np.dot(a, b) / norm, -1.0, 1.0))


def _is_constant(values: np.ndarray) -> bool:
    return bool(values.min() == values.max())
