"""Partitioning: same tokens and regions at the same global positions, cut only between texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cowbird.store import CwbCorpus, VrtError
from cowbird.store.batch import Batch
from cowbird.store.partitioner import Partitioner
from cowbird.store.vrt import VrtOptions, VrtReader
from tests.store.helpers import encode_text, regions, sample_whole_and_in_parts, tokens
from tests.support import JsonObject


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[CwbCorpus, list[CwbCorpus], JsonObject]:
    base = tmp_path_factory.mktemp("parts")
    whole, _, manifest_file = sample_whole_and_in_parts(base)
    manifest = json.loads(manifest_file.read_text())
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


class Collected:
    """A partition writer that keeps what it is given: the tokens and tags of each added batch."""

    def __init__(self, offset: int, done: list[Collected]) -> None:
        self.offset, self.size, self.adds = offset, 0, 0
        self.words: list[str] = []
        self.where = ""
        done.append(self)

    def add(self, batch: Batch) -> None:
        self.size += batch.size
        self.words += [w.decode() for w in batch.columns[0]]
        self.adds += 1

    def open_elements(self) -> list[str]:
        return []

    def finish(self, where: str) -> None:
        self.where = where


def test_units_are_added_many_at_once_and_material_before_the_first_boundary_is_kept(tmp_path: Path) -> None:
    """Read in batches of a few lines: the lead-in before the first <text> (longer than a batch)
    stays in the first partition, and a partition's units arrive as few batches, not one each."""
    lead_in = "".join(f"lead{i}\tX\n" for i in range(12))
    texts = "".join(f'<text id="{i}">\n' + f"w{i}\tX\n" * 2 + "</text>\n" for i in range(40))
    source = tmp_path / "input.vrt"
    source.write_text(lead_in + texts, encoding="utf-8")
    batches = list(VrtReader(source, VrtOptions(columns=2, s_attributes=("text",)), chunk_bytes=64))
    assert len(batches) > 10 and not any(batches[0].tags.element == 0)  # the lead-in is longer than a batch
    written: list[Collected] = []
    Partitioner(30, "text", 0, "input.vrt", lambda offset: Collected(offset, written)).run(batches, lambda: None)
    assert [w.size for w in written] == [30, 30, 30, 2]
    assert [w for part in written for w in part.words] == [f"lead{i}" for i in range(12)] + [
        f"w{i}" for i in range(40) for _ in range(2)]
    assert [w.offset for w in written] == [0, 30, 60, 90]
    assert written[-1].where == "input.vrt:end of input"
    assert sum(w.adds for w in written) < 40 + len(batches)  # far fewer adds than units


def test_a_unit_too_large_is_reported_at_its_line_after_the_units_before_it(tmp_path: Path) -> None:
    vrt = '<text id="a">\nx\tX\n</text>\n<text id="b">\n' + "y\tX\n" * 6 + "</text>\n"
    source = tmp_path / "input.vrt"
    source.write_text(vrt, encoding="utf-8")
    written: list[Collected] = []
    with pytest.raises(VrtError) as error:
        Partitioner(4, "text", 0, "input.vrt", lambda offset: Collected(offset, written)).run(
            VrtReader(source, VrtOptions(columns=2, s_attributes=("text",))), lambda: None)
    assert error.value.line == 4 and "region of 6 tokens is larger than --partition-tokens 4" in str(error.value)
    assert written[0].words == ["x"]
