"""A throwaway virtual environment for plug-in and portability tests: it sees this project's
installed packages (a ``.pth`` line naming the project venv's site-packages) but not the ``.pth``
files there, so negcse itself is importable only where ``PYTHONPATH`` names a checkout's src.
Packages installed into it (``pip install --no-deps --no-build-isolation``, offline: setuptools
comes from the project venv) stay out of the project's venv."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path


def make_venv(folder: Path) -> Path:
    """The venv's python: ``python -m venv --without-pip`` plus one ``.pth`` line to this
    interpreter's site-packages, and a ``snakemake`` on its PATH that runs in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    project_site = sysconfig.get_paths()["purelib"]
    (Path(site) / "project-packages.pth").write_text(project_site + "\n", encoding="utf-8")
    shim = folder / "bin" / "snakemake"
    shim.write_text(f'#!/bin/sh\nexec "{python}" -m snakemake "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return python


def pip_install(python: Path, package: Path, editable: bool = False) -> None:
    """Install ``package`` into the venv of ``python``, offline and without its dependencies."""
    args = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    args += ["--no-index", "--disable-pip-version-check", *(["-e"] if editable else [])]
    proc = subprocess.run([*args, str(package)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"pip install {package} failed:\n{proc.stdout}\n{proc.stderr}")


def venv_env(python: Path, src: Path | None = None) -> dict[str, str]:
    """This process's environment with the venv first on PATH (``python``, ``snakemake``) and,
    if given, a checkout's ``src`` as the only negcse."""
    env = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    return env
