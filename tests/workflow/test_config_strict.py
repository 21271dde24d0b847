"""Config values that used to pass without a word (issue 24): a key written twice in one YAML
mapping (the loader kept the last), a per-method override of a generator the method never reads
(recorded in negcse.json, never applied), and method params out of type or bounds; each fails
the config check, and Snakemake's dry run, naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from negcse.workflow.config import (
    ConfigError,
    check_config,
    check_unique_keys,
    config_files,
    project_config,
)
from test_reliability import test_workflow_config_error_is_the_suites_message as dry_run_fails
from test_reliability import workflow_copy  # noqa: F401 (a fixture)

REPO = Path(__file__).resolve().parents[2]

TWICE = """\
grid:
  methods: [simcse]
methods:
  simcse:
    params:
      temperature: 0.05
      temperature: 0.1
"""


def test_key_written_twice_is_named_with_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text(TWICE)
    message = (
        f"{path}: key 'methods.simcse.params.temperature' written twice (lines 6 and 7); keep one"
    )
    with pytest.raises(ConfigError) as caught:
        check_unique_keys([REPO / "params.yaml", path])
    assert str(caught.value) == message
    with pytest.raises(ConfigError) as caught:
        project_config(REPO, path)
    assert str(caught.value) == message


def test_flow_mappings_and_lists_are_searched_and_merges_may_override(tmp_path: Path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("corpora:\n  mix:\n    domain:\n      - {reader: lines, files: [a], files: [b]}\n")
    with pytest.raises(ConfigError, match=r"'corpora\.mix\.domain\[0\]\.files' written twice "
                       r"\(lines 4 and 4\)"):
        check_unique_keys([flow])
    merged = tmp_path / "merged.yaml"  # a key over a merged anchor is an override, not a repeat
    merged.write_text("base: &b {sigma: 0.01, form: paper}\nother: {<<: *b, sigma: 0.32}\n")
    check_unique_keys([merged])
    # the committed configs write no key twice (params.yaml merges anchors this way)
    check_unique_keys([*config_files(REPO), *sorted((REPO / "tests/smoke").glob("*.yaml"))])


def test_override_of_a_generator_the_method_never_reads_is_an_error() -> None:
    config = project_config(REPO, check=False)
    check_config(config)  # una_random_select's una override: UNA reads una_negative
    config["methods"]["simcse"]["generators"] = {"una": {"select": "random"}}
    with pytest.raises(ConfigError) as caught:
        check_config(config)
    assert str(caught.value) == (
        "params.yaml: methods.simcse.generators.una: simcse (implementation simcse) reads no "
        "column of generator una (una_negative), so the setting would never apply; remove it"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "methods:\n  simcse:\n    params: {temperature: -0.05}\n",
            "key 'methods.simcse.params.temperature': -0.05 is less than or equal to the minimum",
        ),
        (
            "methods:\n  simcse:\n    params: {temperature: 0}\n",
            "key 'methods.simcse.params.temperature': 0 is less than or equal to the minimum",
        ),
        (
            "methods:\n  simcse:\n    params: {temperature: '0.05'}\n",
            "key 'methods.simcse.params.temperature': '0.05' is not of type 'number'",
        ),
        (TWICE, "key 'methods.simcse.params.temperature' written twice (lines 6 and 7)"),
        (
            "methods:\n  simcse:\n    generators:\n      negation: {reference_quirks: true}\n",
            "methods.simcse.generators.negation: simcse (implementation simcse) reads no column",
        ),
    ],
    ids=["negative-temperature", "zero-temperature", "string-temperature", "key-twice",
         "unread-generator-override"],
)
def test_dry_run_stops_at_the_config_naming_file_and_key(
    text: str, message: str, workflow_copy: Path, tmp_path: Path  # noqa: F811
) -> None:
    dry_run_fails(text, message, workflow_copy, tmp_path)  # one line naming the file and key
