"""Write deploy/requirements.txt: the resolved dependency tree of ``pip install '.[deploy]'``.

``make deploy-lock`` runs it. pip resolves the extra against the package index without installing
anything (``--dry-run --ignore-installed --report``), and every package it would install is written
as ``name==version``, sorted, without the project itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = """\
# The whole dependency tree of `pip install '.[deploy]'` at exact versions: what deploy/Dockerfile
# installs (then the package itself with --no-deps). Regenerate with `make deploy-lock` after a change
# to the pins in pyproject.toml; scorecard_tests/deploy/test_deploy_files.py checks that the two agree.
# Resolved for CPython 3.11 on Linux x86_64 (the image's platform).
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--dry-run",
                "--ignore-installed",
                "--report",
                str(report),
                f"{HERE.parent}[deploy]",
            ],
            check=True,
        )
        resolved = json.loads(report.read_text())["install"]
    pins = sorted(
        (m["name"].lower(), f"{m['name']}=={m['version']}")
        for m in (item["metadata"] for item in resolved)
        if m["name"].lower() != "scorecard"
    )
    (HERE / "requirements.txt").write_text(HEADER + "".join(f"{line}\n" for _, line in pins))
    print(f"deploy/requirements.txt: {len(pins)} packages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
