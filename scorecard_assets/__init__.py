"""scorecard: a Dagster code location that scores AI coding-agent fleets by what ships."""
