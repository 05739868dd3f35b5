"""Acceptance: encoding the reference VRT gives the files real cwb-encode + cwb-makeall wrote."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cowbird.store import CwbCorpus, Encoder, pattr_writer
from cowbird.store.strings import StringTable, parse_memory
from cowbird.store.vrt import VrtReader
from tests.support import ewt_options


@pytest.fixture(scope="module")
def encoded_ewt(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("ewt")
    Encoder(ewt_options(base / "data" / "ewt", base / "registry" / "ewt")).run()
    return base


@pytest.mark.slow  # 1.0 s here (make quick leaves it out)
def test_every_data_file_is_byte_identical(encoded_ewt: Path, reference: Path) -> None:
    expected_dir = reference / "cwb" / "data" / "ewt"
    ours = encoded_ewt / "data" / "ewt"
    expected = sorted(p.name for p in expected_dir.iterdir())
    assert sorted(p.name for p in ours.iterdir()) == expected
    assert len(expected) == 52
    different = [name for name in expected if (ours / name).read_bytes() != (expected_dir / name).read_bytes()]
    assert different == []


def test_registry_matches_cwb_encode_except_home(encoded_ewt: Path, reference: Path) -> None:
    ours = (encoded_ewt / "registry" / "ewt").read_text().splitlines()
    theirs = (reference / "cwb" / "registry" / "ewt").read_text().splitlines()
    assert len(ours) == len(theirs)
    for mine, real in zip(ours, theirs, strict=True):
        if real.startswith(("HOME ", "INFO ")):
            assert mine.split()[0] == real.split()[0]
        else:
            assert mine == real


def test_reader_opens_real_cwb_and_our_encoding_alike(encoded_ewt: Path, reference: Path) -> None:
    real = CwbCorpus.open(reference / "cwb" / "registry", "ewt")
    ours = CwbCorpus.open(encoded_ewt / "registry", "EWT")
    assert real.size == ours.size == 254_818
    for name in ("word", "lemma"):
        a, b = real.p_attribute(name), ours.p_attribute(name)
        assert a.lexicon_size == b.lexicon_size
        assert [a.cpos2str(i) for i in range(0, 254_818, 9973)] == [b.cpos2str(i) for i in range(0, 254_818, 9973)]
    assert real.s_attribute("text_genre").region(0).value == "answers"
    assert real.s_attribute("text").region(1).start == 139


@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
def test_a_small_memory_budget_spills_to_disk_and_writes_the_same_files(
    reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spilled: dict[str, int] = {}
    spill = StringTable.spill

    def counting(table: StringTable) -> None:
        spilled[table.name] = spilled.get(table.name, 0) + 1
        spill(table)

    monkeypatch.setattr(StringTable, "spill", counting)
    groups: dict[int, int] = {}
    id_groups = pattr_writer.id_groups

    def counting_groups(counts: np.ndarray, slice_positions: int) -> list[tuple[int, int]]:
        found = id_groups(counts, slice_positions)
        groups[len(counts)] = len(found)
        return found

    # the reverse index in slices of 65,536 positions (a 16th of the budget), 10,000 tokens read at a time
    monkeypatch.setattr(pattr_writer, "id_groups", counting_groups)
    monkeypatch.setattr(pattr_writer, "REV_CHUNK", 10_000)
    monkeypatch.setattr(VrtReader.__init__, "__defaults__", (1 << 16,))  # batches of 64 KB: the budget is checked often
    # 1 MB: a few thousand strings at a time, so word, lemma and the sentence ids spill many times
    Encoder(ewt_options(tmp_path / "data" / "ewt", tmp_path / "registry" / "ewt", memory=1 << 20), jobs=1).run()
    assert spilled["word"] > 5 and spilled["lemma"] > 3 and spilled["s_id"] > 3, spilled
    # every p-attribute's index (by lexicon size: word, lemma, pos, upos) in four or five passes
    assert groups == {23042: 4, 16725: 5, 49: 5, 17: 5}, groups
    expected_dir = reference / "cwb" / "data" / "ewt"
    ours = tmp_path / "data" / "ewt"
    assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in expected_dir.iterdir())  # no runs left
    different = [p.name for p in expected_dir.iterdir() if (ours / p.name).read_bytes() != p.read_bytes()]
    assert different == []


def test_ids_are_grouped_so_that_their_positions_fit_a_slice() -> None:
    counts = np.array([5, 1, 1, 10, 2, 0], dtype=np.int64)
    # an id with more positions than a slice holds (10) is a group of its own
    assert pattr_writer.id_groups(counts, 6) == [(0, 2), (2, 3), (3, 4), (4, 6)]
    assert pattr_writer.id_groups(counts, 100) == [(0, 6)]
    assert pattr_writer.id_groups(counts, 1) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6)]


def test_memory_sizes_are_read_as_people_write_them() -> None:
    assert parse_memory("2GB") == parse_memory("2G") == parse_memory("2GiB") == 2 << 30
    assert parse_memory("512MB") == 512 << 20 and parse_memory("1.5g") == 3 << 29
    with pytest.raises(ValueError, match="not a memory size"):
        parse_memory("lots")
    with pytest.raises(ValueError, match="too small"):
        parse_memory("100KB")
