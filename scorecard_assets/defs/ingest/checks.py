"""The ingest assets' data-warning checks (``defs/checks.py`` makes them)."""

from scorecard_assets.defs.checks import warning_checks

trail_comments_checks = warning_checks("trail_comments")
run_telemetry_checks = warning_checks("run_telemetry")
dispatch_events_checks = warning_checks("dispatch_events")
agent_log_usage_checks = warning_checks("agent_log_usage")
batch_journal_checks = warning_checks("batch_journal")
batch_logs_checks = warning_checks("batch_logs")
batch_prep_checks = warning_checks("batch_prep")
batch_pull_requests_checks = warning_checks("batch_pull_requests")
