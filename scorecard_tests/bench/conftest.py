"""A tiny history fleet (two eras of a few weeks), generated once for the bench tests."""

from __future__ import annotations

import pytest

from bench.history import ensure_history_fleet, week_dir
from scorecard_tests.factories.history import SEED, TINY, TinyHistory


@pytest.fixture(scope="session")
def tiny_history(tmp_path_factory: pytest.TempPathFactory) -> TinyHistory:
    root = tmp_path_factory.mktemp("history")
    fleet = ensure_history_fleet(TINY, root, SEED, jobs=1)
    eras = [root / ".eras" / TINY.era_key(k, SEED) for k in range(TINY.eras)]
    return TinyHistory(root, fleet, week_dir(fleet), eras)
