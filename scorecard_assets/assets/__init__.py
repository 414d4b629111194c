"""Thin Dagster assets wiring the pure modules: ingest, transform, report."""
