"""Servers for the deployment contract test: one PostgreSQL cluster and one S3 API per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scorecard_tests.factories.services import (
    LOG_BUCKET,
    S3,
    STORE_BUCKET,
    Postgres,
    postgres_server,
    s3_server,
)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    with postgres_server() as server:
        yield server


@pytest.fixture(scope="session")
def s3() -> Iterator[S3]:
    with s3_server(STORE_BUCKET, LOG_BUCKET) as server:
        yield server
