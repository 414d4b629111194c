"""The ``decisions:`` configuration section: defaults, strictness, cross-field checks."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from scorecard_assets.decisions.config import ALL_COVARIATES, DecisionsConfig


def test_defaults_are_valid_and_documented_values() -> None:
    config = DecisionsConfig()
    assert (config.margin_points, config.level, config.min_runs) == (5.0, 0.05, 20)
    assert config.covariates == ALL_COVARIATES
    assert config.alerts.false_alarm_rate == 0.05 and config.alerts.permutations == 999


def test_a_yaml_section_loads_with_lists_as_tuples() -> None:
    section = yaml.safe_load(
        "margin_points: 3\ncovariates: [repo, tier]\nalerts:\n  lookback_windows: 8\n  recent_windows: 2\n"
    )
    config = DecisionsConfig.model_validate(section)
    assert config.covariates == ("repo", "tier") and config.alerts.lookback_windows == 8


@pytest.mark.parametrize(
    "section",
    [
        {"margin": 5},  # unknown key
        {"level": 0.6},
        {"covariates": ["repo", "repo"]},
        {"covariates": ["plan_length"]},
        {"alerts": {"recent_windows": 12, "lookback_windows": 12}},
        {"alerts": {"permutations": 10}},
    ],
)
def test_bad_values_fail_at_load_time(section: dict) -> None:
    with pytest.raises(ValidationError):
        DecisionsConfig.model_validate(section)
