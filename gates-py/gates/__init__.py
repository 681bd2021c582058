"""The seven deterministic validation gates (docs/design.md#the-seven-gates).

Every quantitative claim is checked against the series it was computed from before synthesis may
cite it. `evaluate_finding` runs the gates for one finding and aggregates their verdicts;
`python -m gates` serves it over newline-delimited JSON (see `gates.protocol`).
"""

from gates.evaluate import evaluate_finding

__all__ = ['evaluate_finding']
