"""A hub id is looked up as given: ``nope/splade-tiny`` is not the mirror's ``models/splade-tiny``
(another model), whether it names a backbone, a guide or a teacher. Each fails with the id and
every place tried, before any training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from negcse import cli
from negcse.data.sources import ResolveError, resolve_model
from negcse.workflow.config import ConfigError, check_config, project_config, resolve_method

pytestmark = pytest.mark.mirror
REPO = Path(__file__).resolve().parents[2]
NOPE = "nope/splade-tiny"  # no such hub id; the mirror holds models/splade-tiny


@pytest.fixture
def config(mirror: Path) -> dict:
    config = project_config(REPO, check=False)
    config["mirror"] = str(mirror)
    return config


def test_unknown_hub_id_is_not_the_mirror_model_of_its_last_part(mirror: Path) -> None:
    assert (mirror / "models" / "splade-tiny" / "config.json").is_file()  # the trap is there
    with pytest.raises(ResolveError) as err:
        resolve_model(NOPE, mirror, network=False)
    msg = str(err.value)
    assert msg.startswith(f"model '{NOPE}' not found")
    assert f"mirror: {mirror / 'models' / 'nope' / 'splade-tiny'} (no config.json)" in msg
    assert str(mirror / "models" / "splade-tiny") not in msg.replace(
        str(mirror / "models" / "nope" / "splade-tiny"), ""
    )
    # the mirror's own names still resolve: a bare name, and a hub id held under its full id
    assert resolve_model("splade-tiny", mirror) == str(mirror / "models" / "splade-tiny")
    minilm = "sentence-transformers/all-MiniLM-L6-v2"
    assert resolve_model(minilm, mirror) == str(mirror / "models" / minilm)


def test_backbone_named_by_an_unknown_hub_id_is_refused_naming_where_it_looked(
    config: dict, mirror: Path
) -> None:
    config["grid"].update(methods=["simcse"], backbones=[NOPE])
    with pytest.raises(ConfigError) as err:
        check_config(config)
    msg = str(err.value)
    assert "\n" not in msg
    assert f"grid.backbones: '{NOPE}' is not a known backbone" in msg
    assert f"mirror: {mirror / 'models' / 'nope' / 'splade-tiny'}" in msg
    assert "Hugging Face cache" in msg


def _train(
    config: dict, method: str, backbone: str, guides: list[str], tmp_path: Path, capsys
) -> tuple[int, str]:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"sentence {i} of a tiny corpus.\n" for i in range(16)))
    spec = json.dumps(resolve_method(config, method, backbone))
    args = ["train", "--run", spec, "--seed", "1", "--corpus", str(corpus)]
    args += [a for g in guides for a in ("--guide", g)]
    args += ["--out", str(tmp_path / "out"), "--checkpoint-dir", str(tmp_path / "ckpt")]
    args += ["--mirror", config["mirror"]]
    try:
        code = cli.main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("role", "method", "backbone", "guides"),
    [
        ("backbone", "simcse", NOPE, []),
        ("teacher", "rankcse", "splade-tiny", [f"teacher1={NOPE}", "teacher2=splade-tiny"]),
        ("guide", "gcse", "splade-tiny", [f"evaluation={NOPE}"]),
    ],
)
def test_training_with_an_unknown_hub_id_fails_naming_it_and_every_place_tried(
    role: str,
    method: str,
    backbone: str,
    guides: list[str],
    config: dict,
    mirror: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = _train(config, method, backbone, guides, tmp_path, capsys)
    assert code == 2, err[-2000:]
    assert "Traceback" not in err
    first = next(line for line in err.splitlines() if "error" in line)
    assert f"negcse train: error: model '{NOPE}' not found" in first, (role, err[-2000:])
    assert f"mirror: {mirror / 'models' / 'nope' / 'splade-tiny'} (no config.json)" in err
    assert "Hugging Face cache: nope/splade-tiny" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "ckpt").exists()
