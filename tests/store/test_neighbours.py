"""Each partition carries the tokens around it (``neighbours.json``): the encoder writes them, ``cowbird
partitions neighbours`` writes them for an older corpus, and they are the whole corpus's tokens."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.core.errors import CorpusFormatError
from cowbird.store import CwbCorpus
from cowbird.store.neighbours import NEIGHBOURS_FILE, Neighbours, RegionMark, write_neighbours
from cowbird.store.sketch_tables import FORMAT, current, neighbours_stamp
from tests.store.helpers import sample_whole_and_in_parts, tokens
from tests.support import SAMPLE_VRT


@pytest.fixture(scope="module")
def encoded(tmp_path_factory: pytest.TempPathFactory) -> tuple[CwbCorpus, list[CwbCorpus], Path]:
    return sample_whole_and_in_parts(tmp_path_factory.mktemp("neighbours"))


def test_each_partition_carries_the_whole_corpus_tokens_around_it(
    encoded: tuple[CwbCorpus, list[CwbCorpus], Path],
) -> None:
    whole, parts, _ = encoded
    assert [p.size for p in parts] == [22, 31, 40]
    first, middle, last = (Neighbours.load(p.entry.home) for p in parts)
    assert first is not None and middle is not None and last is not None
    assert first.before == [] and last.after == []
    words = tokens(whole, "word")
    lemmas = tokens(whole, "lemma")
    # 128 tokens are more than any partition: they span as many partitions as they reach
    assert first.after_values("word") == words[22:93] and first.after_offset == 22
    assert middle.before_values("word") == words[:22] and middle.after_values("lemma") == lemmas[53:]
    assert last.before_values("word") == words[:53] and last.before_offset == 0 and last.after_offset == 93
    assert middle.before_offset == 0 and middle.after_offset == 53
    # what CQP's past-the-end rule reads of the whole corpus: its size and its small lexicons
    assert first.corpus_size == last.corpus_size == 93
    assert last.small_lexicon("pos") == dict(Counter(tokens(whole, "pos")))


def test_a_neighbour_token_carries_its_regions(encoded: tuple[CwbCorpus, list[CwbCorpus], Path]) -> None:
    whole, parts, _ = encoded
    first = Neighbours.load(parts[0].entry.home)
    assert first is not None
    text_id, s = whole.s_attribute("text_id"), whole.s_attribute("s")
    for k, (mark, s_mark) in enumerate(zip(first.after_regions("text_id"), first.after_regions("s"), strict=True)):
        cpos = 22 + k
        region = text_id.region_at(cpos)
        assert region is not None and mark == RegionMark(region.value, region.start == cpos, region.end == cpos)
        sentence = s.region_at(cpos)
        assert sentence is not None and s_mark == RegionMark(None, sentence.start == cpos, sentence.end == cpos)
    assert first.after_regions("text_id")[0] == RegionMark(text_id.value(1), True, False)
    assert first.after[0].regions["text"] == RegionMark(None, True, False)


def test_a_partition_without_the_file_has_no_neighbours_and_the_command_writes_it(
    encoded: tuple[CwbCorpus, list[CwbCorpus], Path],
) -> None:
    _, parts, manifest = encoded
    homes = [p.entry.home for p in parts]
    written = [(h / NEIGHBOURS_FILE).read_text() for h in homes]
    for home in homes:
        (home / NEIGHBOURS_FILE).unlink()
    try:
        assert Neighbours.load(homes[1]) is None
        registry = str(parts[0].entry.path.parent) if parts[0].entry.path else ""
        runner = CliRunner()
        info = runner.invoke(main, ["info", "-r", registry, "--manifest", str(manifest)])
        assert info.exit_code == 0, info.output
        assert "sample_p02\t22\t31\t0\tno neighbours file (write it: cowbird partitions neighbours)" in info.output
        done = runner.invoke(main, ["partitions", "neighbours", "-r", registry, "--manifest", str(manifest)])
        assert done.exit_code == 0, done.output
        assert "wrote the neighbours of 3 partitions" in done.output
        assert [(h / NEIGHBOURS_FILE).read_text() for h in homes] == written
        info = runner.invoke(main, ["info", "-r", registry, "--manifest", str(manifest)])
        assert "sample_p02\t22\t31\t0\t22 before, 40 after" in info.output
    finally:
        for home, text in zip(homes, written, strict=True):
            (home / NEIGHBOURS_FILE).write_text(text)


def test_fewer_tokens_and_a_broken_file(encoded: tuple[CwbCorpus, list[CwbCorpus], Path], tmp_path: Path) -> None:
    whole, parts, _ = encoded
    home = parts[1].entry.home
    kept = (home / NEIGHBOURS_FILE).read_text()
    try:
        write_neighbours(parts, tokens=3)
        middle = Neighbours.load(home)
        assert middle is not None
        words = tokens(whole, "word")
        assert middle.before_values("word") == words[19:22] and middle.after_values("word") == words[53:56]
        assert middle.before_offset == 19
        with pytest.raises(CorpusFormatError, match="no p-attribute 'upos'"):
            middle.after_values("upos")
        (home / NEIGHBOURS_FILE).write_text(json.dumps({"format": "other"}))
        with pytest.raises(CorpusFormatError, match="format 'other' is not 'cowbird-neighbours/1'"):
            Neighbours.load(home)
    finally:
        (home / NEIGHBOURS_FILE).write_text(kept)


def test_the_cli_encoding_writes_them_and_a_corpus_in_one_piece_has_none(tmp_path: Path) -> None:
    base = ["encode", "-f", str(SAMPLE_VRT), "-c", "utf8", "-xsB", "-P", "pos", "-P", "lemma",
            "-S", "text:0+id+genre+year+url", "-S", "s:0+id"]  # fmt: skip
    runner = CliRunner()
    assert runner.invoke(main, [*base, "-d", str(tmp_path / "whole"), "-R", str(tmp_path / "r" / "w")]).exit_code == 0
    assert Neighbours.load(tmp_path / "whole") is None
    parted = runner.invoke(main, [*base, "-d", str(tmp_path / "parts"), "-R", str(tmp_path / "r" / "p"),
                                  "--partition-tokens", "100"])  # fmt: skip
    assert parted.exit_code == 0, parted.output
    one = Neighbours.load(tmp_path / "parts" / "p01")
    assert one is not None and one.before == [] and one.after == []


def test_a_sketch_table_counted_without_these_neighbours_is_stale(
    encoded: tuple[CwbCorpus, list[CwbCorpus], Path],
) -> None:
    """A table saved before the partition carried its neighbours counted other instances at its ends."""
    whole, parts, _ = encoded
    old: dict[str, object] = {"format": FORMAT, "size": parts[1].size}  # what a table of an older build says of itself
    assert not current(parts[1], old) and current(whole, {"format": FORMAT, "size": whole.size})
    assert current(parts[1], {**old, "neighbours": neighbours_stamp(parts[1])})
    assert neighbours_stamp(parts[1]) != neighbours_stamp(parts[0]) and neighbours_stamp(whole) is None
