"""Hypothesis profiles of the fuzz targets (docs/reliability.md "Fuzz targets").

``make test`` runs them with the ``quick`` profile (few examples, derandomized: the same examples on
every run); ``make fuzz`` sets ``SCORECARD_FUZZ=1`` for the ``fuzz`` profile (``FUZZ_EXAMPLES``
examples per target, random seeds, bounded by the Makefile's timeout).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "quick",
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "20000")),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile("fuzz" if os.environ.get("SCORECARD_FUZZ") else "quick")
