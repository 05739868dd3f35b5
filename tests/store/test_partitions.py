"""Partitioning: same tokens and regions at the same global positions, cut only between texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowbird.store import CwbCorpus, Encoder, VrtError
from tests.store.helpers import encode_text, regions, tokens
from tests.support import JsonObject, sample_options


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[CwbCorpus, list[CwbCorpus], JsonObject]:
    base = tmp_path_factory.mktemp("parts")
    Encoder(sample_options(base / "whole", base / "registry" / "sample")).run()
    result = Encoder(sample_options(base / "parts", base / "registry" / "sample", partition_tokens=40)).run()
    assert result.manifest is not None
    manifest = json.loads(result.manifest.read_text())
    whole = CwbCorpus.open(base / "registry", "sample")
    parts = [CwbCorpus.open(base / "registry", p["id"]) for p in manifest["partitions"]]
    return whole, parts, manifest


def test_partitions_respect_the_limit_and_cut_at_texts(
    both: tuple[CwbCorpus, list[CwbCorpus], JsonObject],
) -> None:
    whole, parts, manifest = both
    assert [p.corpus_id for p in parts] == ["sample_p01", "sample_p02", "sample_p03"]
    assert all(p.size <= 40 for p in parts)
    assert sum(p.size for p in parts) == whole.size == manifest["size"] == 93
    for part in parts:
        text = part.s_attribute("text")
        assert text.region(0).start == 0 and text.region(len(text) - 1).end == part.size - 1


def test_same_tokens_and_regions_at_the_same_global_positions(
    both: tuple[CwbCorpus, list[CwbCorpus], JsonObject],
) -> None:
    whole, parts, manifest = both
    partitions = manifest["partitions"]
    assert isinstance(partitions, list)
    offsets = [p["offset"] for p in partitions]
    assert offsets == [0, parts[0].size, parts[0].size + parts[1].size]
    for attribute in ("word", "pos", "lemma"):
        joined = [t for part in parts for t in tokens(part, attribute)]
        assert joined == tokens(whole, attribute)
    for name in ("text_id", "text_genre", "text_year", "text_url", "s_id"):
        shifted = [
            (a + off, b + off, v) for part, off in zip(parts, offsets, strict=True) for a, b, v in regions(part, name)
        ]
        assert shifted == regions(whole, name)


def test_manifest_lists_attributes_and_partitions(both: tuple[CwbCorpus, list[CwbCorpus], JsonObject]) -> None:
    _, parts, manifest = both
    assert manifest["format"] == "cowbird-manifest/2"
    assert manifest["corpus"] == "sample"
    assert manifest["p_attributes"] == ["word", "pos", "lemma"]
    assert "text_genre" in manifest["s_attributes"]
    assert manifest["meta"] == ["text_id", "text_genre", "text_year", "text_url", "s_id"]
    assert [p["size"] for p in manifest["partitions"]] == [p.size for p in parts]


def test_a_text_larger_than_a_partition_is_an_error(tmp_path: Path) -> None:
    vrt = "<text>\n" + "a\tX\n" * 5 + "</text>\n"
    with pytest.raises(VrtError) as error:
        encode_text(tmp_path, vrt, s_attributes=["text"], partition_tokens=3)
    assert "region of 5 tokens is larger than --partition-tokens 3" in str(error.value)
    assert error.value.line == 1


def test_cannot_cut_inside_an_enclosing_region(tmp_path: Path) -> None:
    vrt = "<doc>\n<text>\na\tX\nb\tX\n</text>\n<text>\nc\tX\n</text>\n</doc>\n"
    with pytest.raises(VrtError) as error:
        encode_text(tmp_path, vrt, s_attributes=["doc", "text"], partition_tokens=2)
    assert "<doc> is still open" in str(error.value)
    two_docs = vrt + vrt
    result, _ = encode_text(
        tmp_path / "ok", two_docs, s_attributes=["doc", "text"], partition_tokens=4, partition_at="doc"
    )
    assert [p.size for p in result.partitions] == [3, 3]


def test_small_partitions_in_one_batch_and_across_batches(tmp_path: Path) -> None:
    texts = "".join(f'<text id="{i}">\n' + f"w{i}\tX\n" * (i % 3 + 1) + "</text>\n" for i in range(30))
    result, registry = encode_text(tmp_path, texts, s_attributes=["text:0+id"], partition_tokens=4)
    assert all(p.size <= 4 for p in result.partitions)
    words = [t for p in result.partitions for t in tokens(CwbCorpus.open(registry, p.id))]
    assert words == [f"w{i}" for i in range(30) for _ in range(i % 3 + 1)]
