"""``scorecard sessions export --out FILE [--preview]`` (alias: ``python -m scorecard_assets.sessions
export …``): the contributed rows (schema 3) of your session cycles (docs/sessions.md "Contributing").

The stores and repositories of the config's ``sessions:`` section are read from scratch (no Dagster
instance needed), cut, ship-attributed and turned into the payload that ``export.py`` builds and
checks. ``--preview`` prints exactly the rows that would leave the machine and writes nothing.
Exit status: 0 written (or previewed), 1 the privacy check refused the payload, 2 bad configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

GROUP = "sessions"
INSTALL_FILE = "sessions-install-id"


def add_commands(commands: argparse._SubParsersAction) -> None:
    """``scorecard sessions export`` (registered in ``scorecard_assets/cli.py``)."""
    export = commands.add_parser(
        "export",
        help="write your session cycles as contributed rows (schema 3), after a preview",
        description=(
            "Read the session stores and git repositories of the config's sessions: section, cut them "
            "into cycles and write the 26-field contributed rows a Pragmatikos-style pool accepts. No "
            "path, prompt, file name, session id, project or repository name, commit hash or email is "
            "written: the payload is checked before anything is written, and refused on a hit."
        ),
    )
    export.add_argument("--out", type=Path, required=True, metavar="FILE", help="where to write the JSON")
    export.add_argument(
        "--preview", action="store_true", help="print the rows that would be written; write nothing"
    )
    export.add_argument(
        "--config",
        type=Path,
        default=None,
        help="scorecard YAML (default: $SCORECARD_CONFIG, else the bundled sample fleet)",
    )
    export.add_argument(
        "--install-file",
        type=Path,
        default=None,
        help=f"the random install id that keys the rows (default: <state dir>/{INSTALL_FILE})",
    )
    export.set_defaults(func=_export)


def _export(args: argparse.Namespace) -> int:
    from scorecard_assets.config import ConfigError, load_config
    from scorecard_assets.sessions.export import PrivacyError, load_install, preview_text, write_export
    from scorecard_assets.sessions.wiring import export_from_config, snapshot_ms
    from scorecard_assets.storage.settings import state_dir

    cfg = load_config(args.config)
    if not cfg.sessions.enabled:
        raise ConfigError(
            f"{cfg.config_path}: sessions.enabled is false; turn the sessions: section on first"
        )
    work = state_dir()
    work.mkdir(parents=True, exist_ok=True)
    install = load_install(args.install_file or work / INSTALL_FILE)
    try:
        export, counts = export_from_config(
            cfg.sessions,
            work_dir=work,
            install=install,
            model_prices=cfg.models.prices,
            now_ms=snapshot_ms(cfg.as_of),
        )
    except PrivacyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    summary = (
        f"{counts.get('cycles', 0)} cycle(s) of {counts.get('top_level_sessions', 0)} session(s): "
        f"{counts.get('judged', 0)} judged, {counts.get('shipped', 0)} shipped, "
        f"{counts.get('pending', 0)} pending"
    )
    if args.preview:
        print(preview_text(export), end="")
        print(
            f"{summary}\npreview only: nothing was written (run again without --preview to write {args.out})"
        )
        return 0
    out = Path(os.path.abspath(args.out))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_export(export, out)
    rows = len(export.payload["rows"])
    print(
        f"{summary}\nwrote {rows} contributed row(s) (schema 3, {export.redacted} value(s) redacted) to {out}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scorecard_assets.sessions …`` = ``scorecard sessions …``."""
    from scorecard_assets.cli import main as scorecard_main

    return scorecard_main([GROUP, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
