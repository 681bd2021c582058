"""Gate 2, effect_vs_noise (soft; trend and scalar findings): is the effect at least half of the
metric's day-to-day SD? ratio = |effect| / metric_sd ≥ 0.5, or sd = 0 / inf passes.

The metric SD is the sample SD (ddof = 1) of every observed value of the feature.
* trend: effect = mean(recent window) − mean(prior window), the digest's "delta in SD units".
* scalar (an inference: a comparison of groups of days): there is no reference level, so effect =
  the mean itself, i.e. its distance from zero: the one-sample standardised effect.
A description (an average RHR of 60 bpm, a count of workouts) is a level with no reference to stand
out from: the gate does not apply to it (gates.descriptions).
"""

from __future__ import annotations

import math

import numpy as np

from gates.descriptions import NOT_AN_EFFECT
from gates.result import GateResult, decided, skipped, undefined
from gates.series import FindingSeries

NAME = 'effect_vs_noise'
MIN_RATIO = 0.5


def check(series: FindingSeries) -> GateResult:
    if series.kind == 'association':
        return skipped(NAME, 'applies to trend and scalar findings only')
    if series.describes:
        return skipped(NAME, NOT_AN_EFFECT)
    observed = series.observed()
    if observed.size < 2:
        return undefined(NAME, 'fewer than two observations: the metric SD is undefined', n=observed.size)
    with np.errstate(over='ignore'):  # an SD that overflows is handled below
        metric_sd = float(np.std(observed, ddof=1))

    if series.kind == 'trend':
        prior, recent = series.windows()
        if prior.size == 0 or recent.size == 0:
            return undefined(
                NAME,
                'the prior or the recent window has no observations',
                n_prior=prior.size,
                n_recent=recent.size,
            )
        effect = float(recent.mean() - prior.mean())
        definition = {
            'effect_definition': 'recent_mean - prior_mean',
            'n_prior': prior.size,
            'n_recent': recent.size,
        }
    else:
        effect = float(observed.mean())
        definition = {'effect_definition': 'mean'}

    # sd = 0 and sd = inf pass outright (a constant series has no noise to drown an
    # effect in; an SD that overflowed leaves no ratio to judge), so the ratio is reported as null.
    noiseless = metric_sd == 0 or not math.isfinite(metric_sd)
    ratio = None if noiseless else abs(effect) / metric_sd
    return decided(
        NAME,
        noiseless or ratio >= MIN_RATIO,
        effect=effect,
        metric_sd=metric_sd,
        ratio=ratio,
        min_ratio=MIN_RATIO,
        **definition,
    )
