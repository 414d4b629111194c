"""The sessions assets' data-warning checks (``defs/checks.py`` makes them)."""

from scorecard_assets.defs.checks import warning_checks

session_records_checks = warning_checks("session_records")
git_commits_checks = warning_checks("git_commits")
session_cycles_checks = warning_checks("session_cycles")
