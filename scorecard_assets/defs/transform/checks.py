"""The transform assets' data-warning checks (``defs/checks.py`` makes them)."""

from scorecard_assets.defs.checks import warning_checks

trail_runs_checks = warning_checks("trail_runs")
run_table_checks = warning_checks("run_table")
cycles_checks = warning_checks("cycles")
