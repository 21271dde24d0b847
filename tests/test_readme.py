"""The README and the docs are true for a newcomer: the shell blocks marked runnable (a
``<!-- runnable -->`` line right before a ```` ```bash ```` fence) run in a fresh copy of the
repository (docs/collaborate.md's two-person blocks, which need an SSH server, are run by
tests/workflow/test_dvc_remote.py); every command, profile, config file and make target any
shell block names exists; every relative link points to a file (and heading); the README's
first screen is one screen and its STS excerpt is the committed table's; no user-facing file speaks of the project's history;
``CITATION.cff`` is valid CFF 1.2.0 and agrees with ``pyproject.toml``, ``LICENSE`` and the
BibTeX of the README and ``docs/papers.md``."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

from negcse.cli import command_names
from workflow_copy import committed_copy

REPO = Path(__file__).resolve().parents[1]
#: the documents a newcomer reads, with their shell blocks
DOCUMENTS = [
    "README.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")),
    "results/README.md",
]
MARKER = "<!-- runnable -->"
#: pages whose runnable blocks a test of their own runs, in a throwaway environment (the
#: tutorial installs a package: never into this one)
RUN_ELSEWHERE = {"docs/your-method.md": "tests/test_your_method.py"}
#: the pages whose shell blocks are checked: the README, then every docs page
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def shell_blocks(text: str, name: str = "README.md") -> list[tuple[int, str, bool]]:
    """(line, body, runnable) of every ```bash block; a marker not followed by one is an error."""
    blocks = []
    for m in FENCE.finditer(text):
        if m.group(1) != "bash":
            continue
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        blocks.append((text.count("\n", 0, m.start()) + 1, m.group(2), before == MARKER))
    for m in re.finditer(rf"^{re.escape(MARKER)}$", text, re.M):  # a line of its own
        after = text[m.end() :].lstrip(" ")
        if not after.startswith("\n```bash\n"):
            line = text.count("\n", 0, m.start()) + 1
            raise ValueError(f"{name}:{line}: {MARKER} must be followed by a ```bash block")
    return blocks


def commands(body: str) -> list[list[str]]:
    """The block's commands as words: continuation lines joined, comments dropped."""
    out = []
    for line in body.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for part in " ".join(words).split(" && "):
            if part.strip():
                out.append(part.split())
    return out


def test_shell_blocks_parser() -> None:
    text = "x\n<!-- runnable -->\n```bash\na --b \\\n   c  # note\nd && e\n```\n```bash\nf\n```\n"
    assert shell_blocks(text) == [(3, "a --b \\\n   c  # note\nd && e\n", True), (8, "f\n", False)]
    assert commands("a --b \\\n   c  # note\nd && e\n") == [["a", "--b", "c"], ["d"], ["e"]]
    with pytest.raises(ValueError, match=r"README.md:2: .* must be followed by a ```bash"):
        shell_blocks("x\n<!-- runnable -->\n```\nls\n```\n")
    assert shell_blocks("a `<!-- runnable -->` line\n```bash\nls\n```\n") == [(2, "ls\n", False)]


def _options(words: list[str], flag: str) -> list[str]:
    """The values after each ``flag``, up to the next option."""
    values: list[str] = []
    for i, word in enumerate(words):
        if word == flag:
            for value in words[i + 1 :]:
                if value.startswith("-"):
                    break
                values.append(value)
    return values


def _blocks() -> list[tuple[str, int, str, bool]]:
    """(document, line, body, runnable) of every shell block of :data:`DOCUMENTS`."""
    return [
        (name, line, body, run)
        for name in DOCUMENTS
        for line, body, run in shell_blocks((REPO / name).read_text(encoding="utf-8"), name)
    ]


def test_every_command_the_docs_name_exists() -> None:
    targets = set(re.findall(r"^([\w.-]+):", (REPO / "Makefile").read_text(), re.M))
    known = command_names()
    seen = {"negcse": 0, "profile": 0, "configfile": 0, "make": 0}
    blocks = _blocks()
    #: files a page's own blocks write (`cat > x.yaml`, `> x.yaml`): its later blocks read them
    written = {
        (name, target)
        for name, _, body, _ in blocks
        for target in re.findall(r">\s*([\w./-]+\.ya?ml)\b", body)
    }
    for name, line, body, _ in blocks:
        for words in commands(body):
            where = f"{name}:{line}: {' '.join(words)}"
            negcse = len(words) > 3 and words[:3] == ["python", "-m", "negcse"]
            command = words[3] if negcse else "-"
            if not command.startswith("-"):
                assert command in known, where
                seen["negcse"] += 1
            if words[0] == "make":
                make_targets = [w for w in words[1:] if "=" not in w]
                assert set(make_targets) <= targets, where
                seen["make"] += 1
            for profile in _options(words, "--profile"):
                assert (REPO / profile / "profile.yaml").is_file(), where
                seen["profile"] += 1
            for config in _options(words, "--configfile"):
                assert (REPO / config).is_file() or (name, config) in written, where
                seen["configfile"] += 1
    assert all(seen.values()), seen  # each kind is checked at least once


def _holds(tree: object, dotted: str) -> bool:
    """Whether a nested mapping holds the dotted key (``a.b.c``)."""
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def test_dvc_exp_run_sets_only_keys_params_yaml_holds_or_adds_them_with_plus_plus() -> None:
    """``dvc exp run -S key=value`` edits params.yaml: a key it does not hold fails ("Key ... is
    not in struct") unless written ``++key=value``."""
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    assert _holds(params, "workflow.profile") and not _holds(params, "methods.simcse")
    seen = 0
    for name, line, body, _ in _blocks():
        for words in commands(body):
            if words[:3] != ["dvc", "exp", "run"]:
                continue
            for value in _options(words, "-S") + _options(words, "--set-param"):
                key = value.partition("=")[0]
                seen += 1
                assert key.startswith("++") or _holds(params, key.lstrip("+")), (
                    f"{name}:{line}: dvc exp run -S {value}: params.yaml has no {key}; write ++{key}"
                )
    assert seen, "no dvc exp run -S in the docs"


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_points_to_a_file_and_heading() -> None:
    for name in DOCUMENTS:
        text = (REPO / name).read_text(encoding="utf-8")
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (REPO / name).parent / path if path else REPO / name
            assert dest.exists(), f"{name}: link to {target}: no such file"
            if anchor and dest.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", dest.read_text(encoding="utf-8"), re.M)
                assert anchor in {slug(h) for h in headings}, f"{name}: no heading #{anchor}"


def test_the_readme_reaches_its_first_result_in_one_screen() -> None:
    """What it is, what it needs, the two commands and what they print, under 60 lines: the
    first section after the commands' block starts before line 60."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    commands_at = next(i for i, line in enumerate(lines) if line.startswith("make smoke"))
    next_section = next(i for i, line in enumerate(lines) if i > commands_at and line.startswith("## "))
    assert next_section < 60, f"the first screen is {next_section} lines"
    head = "\n".join(lines[:commands_at])
    assert "Python 3.11" in head and "driver" in head  # the requirements come first


def _table_rows(text: str, marker: str) -> list[str]:
    """The Markdown table right after ``marker``'s line."""
    after = text[text.index(marker):].splitlines()[1:]
    return [line for line in after[: next(i for i, x in enumerate(after) if not x.startswith("|"))]]


def test_the_sts_excerpts_are_the_committed_table() -> None:
    committed = (REPO / "results/tables/sts.md").read_text(encoding="utf-8").splitlines()
    for name, marker in (("README.md", "<!-- sts excerpt"), ("docs/smoke.md", "<!-- sts table")):
        rows = _table_rows((REPO / name).read_text(encoding="utf-8"), marker)
        assert len(rows) >= 3, name
        missing = [row for row in rows if row not in committed]
        assert not missing, (
            f"{name}: rows not in results/tables/sts.md (copy them from there): {missing}"
        )


#: words that speak of the project's own history, not of the suite
HISTORY = re.compile(
    r"\b(issue|stop|round) \d+|\bthis box\b|\blent\b|\blast round\b|\bprevious round\b"
    r"|\b(this|that|last|other|parallel|engineering) sessions?\b|\bsessions'|\bthis branch\b",
    re.I,
)


def linked_pages(names: list[str]) -> list[str]:
    """Every Markdown file of the repository that ``names`` link to, directly or through a page
    they link to (a link's ``#heading`` dropped)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        for target in LINK.findall((REPO / name).read_text(encoding="utf-8")):
            path = target.partition("#")[0]
            if re.match(r"[a-z]+:", target) or not path.endswith(".md"):
                continue
            dest = ((REPO / name).parent / path).resolve()
            if dest.is_file() and REPO in dest.parents:
                page = str(dest.relative_to(REPO))
                if page not in seen:
                    seen.add(page)
                    todo.append(page)
    return sorted(seen - set(names))


#: what a user reads: the documents and every page they link to, the benchmarks' reports, the
#: configs' comments
USER_FILES = [
    *DOCUMENTS,
    *linked_pages(DOCUMENTS),
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "benchmarks").glob("*.md")),
    "params.yaml",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "config").glob("*.yaml")),
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "tests/smoke").glob("*.yaml")),
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "profiles").glob("*/*.yaml")),
]


def test_history_words_by_hand() -> None:
    for text in ("as in issue 23", "Stop 22: CI", "measured on this box", "no GPU was lent",
                 "the last round", "shared with other sessions", "this session's tests",
                 "other sessions' jobs", "measured on this branch"):  # fmt: skip
        assert HISTORY.search(text), text
    for text in ("tissue 3", "a non-stop run", "the lentil", "round trip", "this boxplot",
                 "an SSH session", "the session cookie"):  # fmt: skip
        assert not HISTORY.search(text), text


def test_no_user_facing_file_speaks_of_the_projects_history() -> None:
    found = [
        f"{name}:{i}: {line.strip()}"
        for name in USER_FILES
        for i, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert not found, "\n".join(found)


@pytest.mark.slow
@pytest.mark.mirror
def test_runnable_blocks_run_in_a_fresh_copy(tmp_path: Path) -> None:
    ws = committed_copy(tmp_path)
    blocks = [
        (f"{name}:{line}", body)
        for name in DOCUMENTS
        if name not in RUN_ELSEWHERE
        for line, body, run in shell_blocks((ws / name).read_text(), name)
        if run
    ]
    assert len(blocks) >= 4
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ws / "src"),
        "OMP_NUM_THREADS": "1",
    }
    outputs = []
    for line, body in blocks:
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", body],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, (
            f"{line}:\n{body}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        )
        outputs.append(proc.stdout + proc.stderr)
    joined = "\n".join(outputs)
    assert "Job stats:" in joined  # the dry run listed its jobs
    assert all(name in joined for name in command_names())  # negcse --help lists every command
    assert "results/headline.json" in joined  # dvc metrics show read the committed metrics
    assert "results/metrics/sts.json" in joined  # ... and one table's (results/README.md)
    assert any(line.startswith("results/README.md:") for line, _ in blocks)
    assert "sts.simcse.splade-tiny.avg" in joined  # ... nested, and dvc exp show listed them
    page = (ws / "dvc_plots" / "index.html").read_text(encoding="utf-8")
    assert "vegaEmbed(" in page and "<script src=" not in page  # dvc plots show, offline


# The part of CFF 1.2.0's schema this file uses (keys, types, required ones)
CFF_SCHEMA = {
    "type": "object",
    "required": ["cff-version", "message", "title", "authors"],
    "properties": {
        "cff-version": {"const": "1.2.0"},
        "message": {"type": "string", "minLength": 1},
        "title": {"type": "string", "minLength": 1},
        "type": {"enum": ["software", "dataset"]},
        "version": {"type": "string"},
        "license": {"type": "string"},
        "authors": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/person"}},
        "references": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "title", "authors"],
                "properties": {
                    "type": {"enum": ["article", "conference-paper", "software"]},
                    "authors": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"$ref": "#/$defs/person"},
                    },
                    "year": {"type": "integer"},
                    "start": {"type": "integer"},
                    "end": {"type": "integer"},
                    "doi": {"type": "string", "pattern": r"^10\.\d{4,9}(\.\d+)?/\S+$"},
                    "url": {"type": "string", "pattern": "^https://"},
                },
            },
        },
    },
    "$defs": {
        "person": {
            "oneOf": [
                {"type": "object", "required": ["family-names", "given-names"]},
                {"type": "object", "required": ["name"]},
            ]
        }
    },
}


def _words(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()


def test_citation_cff_is_valid_and_agrees_with_pyproject_licence_and_readme() -> None:
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    jsonschema.validate(cff, CFF_SCHEMA)
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert cff["version"] == project["version"]
    assert cff["license"] == project["license"]["text"] == "MIT"
    assert (REPO / "LICENSE").read_text().splitlines()[0] == "MIT License"
    docs = "".join((REPO / n).read_text(encoding="utf-8") for n in ("README.md", "docs/papers.md"))
    bibtex = "".join(re.findall(r"^```bibtex\n(.*?)^```", docs, re.S | re.M))
    titles = re.findall(r"^\s*title\s*=\s*\{(.*)\},?$", bibtex, re.M)
    bib = {_words(t.replace("{", "").replace("}", "")) for t in titles}
    refs = {_words(r["title"]) for r in cff["references"]}
    assert refs | {_words(cff["title"])} == bib  # the same papers, and the suite itself
    assert len(refs) == 8
