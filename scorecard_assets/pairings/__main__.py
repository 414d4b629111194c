"""Command line: ``python -m scorecard_assets.pairings verify POOL.json [--tolerance 1e-9]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from scorecard_assets.pairings.constants import VERIFY_TOLERANCE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scorecard_assets.pairings",
        description="Pragmatikos scoring tools.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser(
        "verify",
        help="recompute every group's adjusted axes, tiers, scores and imputed tiers of a pool.json",
        description=(
            "Recompute adj, tiers, tiersAdj, score, scoreAdj and imputed of every group from its raw, ev "
            "and the view's pool. Exit 0 when all match, 1 on a mismatch, 2 when the file is unusable."
        ),
    )
    verify.add_argument("pool_file", type=Path, metavar="POOL.json")
    verify.add_argument(
        "--tolerance", type=float, default=VERIFY_TOLERANCE, help="largest accepted |difference| (1e-9)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "verify":
        from scorecard_assets.pairings.verify import run_verify

        return run_verify(args.pool_file, tolerance=args.tolerance)
    return 2  # unreachable: argparse requires a known command


if __name__ == "__main__":
    sys.exit(main())
