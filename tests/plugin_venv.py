"""A throwaway virtual environment for plug-in and portability tests: it sees this project's
installed packages (a ``.pth`` line naming the project venv's site-packages) but not the ``.pth``
files there, so negcse itself is importable only where ``PYTHONPATH`` names a checkout's src.
Packages installed into it (``pip install --no-deps --no-build-isolation``, offline: setuptools
comes from the project venv) stay out of the project's venv. ``load_without_negcse`` encodes
with sentence-transformers in such a venv, negcse not importable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np


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


#: what the environment without negcse runs: each folder through sentence-transformers
CLEAN_ENCODE = """
import importlib.util, json, sys
import numpy as np
from sentence_transformers import SentenceTransformer
assert importlib.util.find_spec("negcse") is None, "negcse is importable"
sentences = json.loads(sys.argv[1])
for i, folder in enumerate(sys.argv[2:]):
    model = SentenceTransformer(folder, device="cpu", trust_remote_code=True)
    np.save(f"{i}.npy", model.encode(sentences, batch_size=2))
"""


def load_without_negcse(folders: list[Path], sentences: list[str], venv: Path) -> list[np.ndarray]:
    """Each folder's embeddings by sentence-transformers in a fresh venv that sees this project's
    packages but not negcse (nothing on PYTHONPATH; the modules cache and the arrays in the
    venv's folder)."""
    python = make_venv(venv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HF_MODULES_CACHE"] = str(venv / "hf-modules")
    proc = subprocess.run(
        [str(python), "-c", CLEAN_ENCODE, json.dumps(sentences), *map(str, folders)],
        capture_output=True,
        text=True,
        env=env,
        cwd=venv,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [np.load(venv / f"{i}.npy") for i in range(len(folders))]
