"""A real HTTP server on loopback that stands in for the data files' sources: copies of the
registered files (made in a temporary folder at test time), with every request recorded."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from negcse.data.sources import registry


@dataclass
class Server:
    url: str
    root: Path
    requests: list[str] = field(default_factory=list)


def served_files(mirror: Path) -> list[str]:
    """Every registered file that has a pinned sha256 and a copy in the mirror (all but the full
    wiki1m, which the mirror lacks)."""
    return [rel for rel, e in registry().items() if e.sha256 and (mirror / "data" / rel).is_file()]


@contextmanager
def serve_copies(mirror: Path, root: Path) -> Iterator[Server]:
    """Copy the registered files from ``mirror`` to ``root`` and serve ``root`` on 127.0.0.1."""
    for rel in served_files(mirror):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mirror / "data" / rel, root / rel)
    seen: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            super().do_GET()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}", root, seen)
    finally:
        httpd.shutdown()
        httpd.server_close()
