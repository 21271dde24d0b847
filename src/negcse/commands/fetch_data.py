"""``negcse fetch-data``: obtain and verify registered data files; optionally fill a mirror."""

from __future__ import annotations

import argparse
import fnmatch
import logging
import shutil
from pathlib import Path

from negcse.data.sources import registry, resolve_data, resolve_model, sha256_of
from negcse.io_utils import atomic_open

NAME = "fetch-data"
HELP = (
    "download (or find in the mirror) and sha256-verify data files; --fill-mirror copies them out"
)
logger = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--files", nargs="+", default=["*"], help="glob(s) over registered paths")
    p.add_argument("--manifest", help="TSV written with path, sha256 and where each file was found")
    p.add_argument(
        "--models", nargs="*", default=[], help="model ids to fetch too (with --fill-mirror)"
    )
    p.add_argument("--fill-mirror", help="copy everything into this folder, laid out as a mirror")
    p.add_argument("--mirror", default=None)


def run(args: argparse.Namespace) -> int:
    wanted = [r for r in registry() if any(fnmatch.fnmatch(r, g) for g in args.files)]
    if not wanted:
        raise SystemExit(f"no registered data file matches {args.files}")
    rows = []
    for rel in wanted:
        path = resolve_data(rel, args.mirror)
        rows.append((rel, sha256_of(path), str(path)))
        if args.fill_mirror:
            dest = Path(args.fill_mirror) / "data" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
    for model in args.models:
        src = Path(resolve_model(model, args.mirror))
        if args.fill_mirror:
            shutil.copytree(src, Path(args.fill_mirror) / "models" / model, dirs_exist_ok=True)
    if args.manifest:
        with atomic_open(args.manifest) as fh:
            fh.write("relative_path\tsha256\tfound_at\n")
            for row in rows:
                fh.write("\t".join(row) + "\n")
    logger.info("%d data file(s) verified", len(rows))
    return 0
