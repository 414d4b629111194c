"""Real servers on 127.0.0.1 for the deployment contract test: PostgreSQL (Debian's server binaries,
a throw-away cluster in a temporary folder) and an S3 API (moto's server mode).

Nothing is skipped: when the PostgreSQL server binaries or moto are missing, the test fails with a
message saying how to get them (``make deploy-test`` installs both).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_USER = "postgres"  # the cluster's superuser, and the OS user the server runs as under root
START_TIMEOUT_S = 120
STORE_BUCKET = "scorecard"  # the bucket for the IO manager, the state stores and the reports
LOG_BUCKET = "scorecard-logs"  # the bucket for compute logs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin_dir() -> Path:
    """Where initdb and pg_ctl live: the newest Debian server package, else the PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    pytest.fail(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: run `make deploy-test`, which installs "
        "Debian's postgresql package, or `apt-get install postgresql`",
        pytrace=False,
    )


@dataclass
class Postgres:
    """A running cluster: connect to ``host:port`` as ``user`` (trust auth) and use ``database``."""

    host: str
    port: int
    user: str
    database: str

    def env(self) -> dict[str, str]:
        """The variables deploy/dagster.yaml reads (the password is unused under trust auth)."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": self.user,
            "DAGSTER_PG_PASSWORD": "unused-with-trust-auth",
            "DAGSTER_PG_DB": self.database,
        }

    def query(self, sql: str) -> list[tuple]:
        import psycopg2  # a dependency of dagster-postgres

        with (
            contextlib.closing(
                psycopg2.connect(host=self.host, port=self.port, user=self.user, dbname=self.database)
            ) as conn,
            conn.cursor() as cur,
        ):
            cur.execute(sql)
            return list(cur.fetchall())


@contextlib.contextmanager
def postgres_server(database: str = "dagster") -> Iterator[Postgres]:
    """initdb + pg_ctl start on 127.0.0.1 in a temporary folder; stopped and removed afterwards. As
    root, the server runs as the ``postgres`` user (initdb refuses root)."""
    bindir = _pg_bin_dir()
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", PG_USER, "--"] if as_root else []
    root = Path(tempfile.mkdtemp(prefix="scorecard-pg-"))
    if as_root:
        shutil.chown(root, user=PG_USER)
    data, log, port = root / "data", root / "server.log", free_port()

    def run(*argv: str) -> None:
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=START_TIMEOUT_S)
        if done.returncode != 0:
            tail = log.read_text()[-2000:] if log.is_file() else ""
            pytest.fail(f"{' '.join(argv[:2])} failed: {done.stderr[-2000:]}{tail}", pytrace=False)

    started = False
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8")
        options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
        run(
            str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "120", "start"
        )
        started = True
        server = Postgres(host="127.0.0.1", port=port, user=PG_USER, database="postgres")
        import psycopg2

        conn = psycopg2.connect(host=server.host, port=port, user=PG_USER, dbname="postgres")
        conn.autocommit = True
        with contextlib.closing(conn), conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{database}"')
        yield Postgres(host="127.0.0.1", port=port, user=PG_USER, database=database)
    finally:
        if started:
            subprocess.run(
                [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                capture_output=True,
                timeout=START_TIMEOUT_S,
            )
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class S3:
    """moto's S3 API on ``endpoint`` (any credentials are accepted)."""

    endpoint: str

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "scorecard-test",
            "AWS_SECRET_ACCESS_KEY": "scorecard-test-secret",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def client(self):  # noqa: ANN201 - a boto3 client
        import boto3

        env = self.env()
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name=env["AWS_REGION"],
        )

    def objects(self, bucket: str, prefix: str = "") -> dict[str, bytes]:
        """Every object under ``prefix``: key -> content."""
        client = self.client()
        out: dict[str, bytes] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                out[item["Key"]] = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        return out


@contextlib.contextmanager
def s3_server(*buckets: str) -> Iterator[S3]:
    """moto's threaded server on 127.0.0.1 with ``buckets`` created; stopped afterwards."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        pytest.fail(
            "moto's server mode is not installed: run `make deploy-test` (installs the deploy-test extra)",
            pytrace=False,
        )
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        s3 = S3(endpoint=f"http://127.0.0.1:{port}")
        client = s3.client()
        for bucket in buckets:
            client.create_bucket(Bucket=bucket)
        yield s3
    finally:
        server.stop()
