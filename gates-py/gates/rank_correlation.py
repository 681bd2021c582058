"""Rank correlations for the association gates: Spearman ρ, Kendall τ-b and a bootstrap of ρ.

Ties get average ranks throughout, as in `scipy.stats.spearmanr`. A correlation is undefined
when either variable has a single distinct value (every rank equal); it is returned as None so
each gate can fail with that reason instead of computing on NaN.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import kendalltau


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2:
        return None
    return _pearson(average_ranks(x), average_ranks(y))


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 2 or _is_constant(x) or _is_constant(y):
        return None
    return float(kendalltau(x, y, variant='b').statistic)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    _, level_of, counts = np.unique(values, return_inverse=True, return_counts=True)
    return _doubled_level_ranks(counts)[level_of] / 2


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, iterations: int) -> np.ndarray:
    """ρ on `iterations` resamples of the (x, y) pairs, drawn as `rng.integers(0, n, (iterations, n))`.

    All resamples are ranked at once: a resample only repeats original values, so per-row counts of
    the original distinct values give every average rank without sorting. A resample whose x or y
    came out constant has no ρ and is NaN.
    """
    n = x.size
    drawn = rng.integers(0, n, size=(iterations, n))
    rx = _resampled_doubled_ranks(x, drawn)
    ry = _resampled_doubled_ranks(y, drawn)
    # ρ does not change when ranks are doubled, and doubled ranks are integers whose mean in every
    # row is n + 1: the centred sums Σab − n(n+1)² are exact in int64, and cheap.
    shift = n * (n + 1) ** 2
    sxy = np.einsum('ij,ij->i', rx, ry) - shift
    sxx = np.einsum('ij,ij->i', rx, rx) - shift
    syy = np.einsum('ij,ij->i', ry, ry) - shift
    norm = np.sqrt(sxx.astype(np.float64) * syy)
    rho = np.divide(sxy, norm, out=np.full(iterations, np.nan), where=norm > 0)
    return np.clip(rho, -1.0, 1.0)


def _resampled_doubled_ranks(values: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    _, level_of = np.unique(values, return_inverse=True)
    levels = int(level_of.max()) + 1
    rows = drawn.shape[0]
    # Each (resample, level) pair gets its own bin, so one bincount counts every row at once.
    bins = (level_of[drawn] + levels * np.arange(rows)[:, None]).ravel()
    counts = np.bincount(bins, minlength=rows * levels).reshape(rows, levels)
    return _doubled_level_ranks(counts).ravel()[bins].reshape(drawn.shape)


def _doubled_level_ranks(counts: np.ndarray) -> np.ndarray:
    """Twice the average rank of each distinct value, from how many times each occurs (in ascending
    order). A value with c copies spans ranks cum − c + 1 … cum (cum: the running count), whose mean
    is cum − (c − 1)/2; doubled, it is an integer, which keeps all the arithmetic in int64."""
    return 2 * np.cumsum(counts, axis=-1) - counts + 1


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    a = a - a.mean()
    b = b - b.mean()
    norm = np.sqrt(np.dot(a, a) * np.dot(b, b))
    if norm == 0:
        return None
    return float(np.clip(np.dot(a, b) / norm, -1.0, 1.0))


def _is_constant(values: np.ndarray) -> bool:
    return bool(values.min() == values.max())
