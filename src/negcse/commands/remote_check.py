"""``negcse remote-check``: can this clone reach its DVC remote? One line either way."""

from __future__ import annotations

import argparse
import logging

from negcse.workflow.remote import check_remote

NAME = "remote-check"
HELP = "connect to the DVC remote (SSH, WebDAV, ...) and say in one line whether it answers"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--remote", help="the remote's name (default: DVC's default remote)")
    p.add_argument("--write", action="store_true", help="also write and remove a small file")


def run(args: argparse.Namespace) -> int:
    logging.getLogger("asyncssh").setLevel(logging.WARNING)  # one line, not its connection log
    print(check_remote(".", args.remote, args.write).line())
    return 0
