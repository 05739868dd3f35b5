"""The corpus manifest: one model written by the encoder and read by the front end, versioned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowbird.store import MANIFEST_FORMAT, Encoder, Manifest, ManifestError
from tests.support import sample_options


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("manifest")
    result = Encoder(sample_options(base / "data", base / "registry" / "sample", partition_tokens=40)).run()
    assert result.manifest is not None
    return result.manifest


def test_the_encoder_writes_what_the_reader_reads(written: Path) -> None:
    manifest = Manifest.load(written)
    assert manifest.format == MANIFEST_FORMAT == "cowbird-manifest/2"
    assert (manifest.corpus, manifest.size, manifest.charset) == ("sample", 93, "utf8")
    assert [(p.id, p.size, p.offset) for p in manifest.partitions] == [
        ("sample_p01", 22, 0), ("sample_p02", 31, 22), ("sample_p03", 40, 53)]
    assert manifest.meta == ["text_id", "text_genre", "text_year", "text_url", "s_id"]
    assert all(p.data.is_dir() for p in manifest.partitions)


def _edited(written: Path, tmp_path: Path, change: dict[str, object], drop: str | None = None) -> Path:
    data = json.loads(written.read_text())
    data.update(change)
    if drop is not None:
        del data[drop]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def test_a_version_1_manifest_is_still_read(written: Path, tmp_path: Path) -> None:
    data = json.loads(written.read_text())
    data["format"] = "cowbird-manifest/1"
    data["annotated_s_attributes"] = data.pop("meta")
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(data))
    assert Manifest.load(path).meta == ["text_id", "text_genre", "text_year", "text_url", "s_id"]


@pytest.mark.parametrize(
    ("change", "drop", "message"),
    [
        ({}, "partitions", r"manifest .*edited\.json: partitions: missing$"),
        ({}, "format", r"has no 'format' member: it is not a cowbird manifest"),
        ({"format": "cowbird-manifest/9"}, None, r"unknown manifest format 'cowbird-manifest/9'"),
        ({"size": 94}, None, r"the partitions hold 93 tokens, but 'size' says 94"),
        ({"meta": ["nope"]}, None, r"'meta' names nope, which are not s-attributes"),
        ({"p_attributes": "word"}, None, r"p_attributes: Input should be a valid list"),
    ],
)
def test_a_bad_manifest_is_one_line_naming_the_file(
    written: Path, tmp_path: Path, change: dict[str, object], drop: str | None, message: str
) -> None:
    with pytest.raises(ManifestError, match=message) as error:
        Manifest.load(_edited(written, tmp_path, change, drop))
    assert "\n" not in error.value.detail and str(tmp_path) in error.value.detail


def test_unreadable_and_non_json_manifests(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read manifest .*missing.json"):
        Manifest.load(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(ManifestError, match="is not JSON"):
        Manifest.load(tmp_path / "x.json")
