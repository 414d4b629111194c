"""Pragmatikos scoring: planner -> builder pairings ranked by what ships (docs/pairings.md).

Modules (pure, no Dagster):

- ``constants``      every constant of the method (axes, kinds, tiers and weights, k, span, floor)
- ``engine``         cycle rows -> ``pool.json``-shaped result: ``score_cycles``, ``score_group``
- ``bootstrap``      90 % bootstrap intervals of ``scoreAdj``, ranks and ties: ``attach_intervals``
- ``verify``         recompute a published ``pool.json`` (``python -m scorecard_assets.pairings verify``)
- ``imported``       pooled cycle rows from JSONL / CSV files: ``read_cycle_files``
- ``window``         one report window's pairing scores: ``score_window``

Nothing is imported here so that the command line starts without loading pandas or numpy twice.
"""
