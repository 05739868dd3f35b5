"""CWB's compressed p-attributes: ``cowbird compress`` writes what real ``cwb-huffcode`` and
``cwb-compress-rdx`` write, byte for byte, and never leaves an attribute half done; the reader and
the native engine serve compressed and mixed corpora with every parity hit of real CQP."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.engines.base import EngineOptions
from cowbird.engines.native import NativeEngine, corpus_state
from cowbird.query import parse_cqp
from cowbird.store import CorpusFormatError, CwbCorpus
from cowbird.store.compress import compress_attribute
from cowbird.store.compression import HuffmanCode, write_index, write_stream
from cowbird.store.cwbformat import BE_INT32, write_ints
from tests.support import copy_reference_ewt, parity_hits, parity_queries, reference_cqp, require_reference

ATTRIBUTES = ("word", "pos", "upos", "lemma")
COMPRESSED = (".hcd", ".huf", ".huf.syn", ".crc", ".crx")
ORIGINALS = (".corpus", ".corpus.rev", ".corpus.rdx")


@pytest.fixture(scope="module")
def tools() -> Path:
    return reference_cqp().parent


def real_cwb_compress(tools: Path, registry: Path, *attributes: str) -> None:
    """What a CWB user runs: cwb-huffcode, then cwb-compress-rdx, for some attributes (one -P each
    run: the tools take one) or all (-A)."""
    for selection in [["-P", name] for name in attributes] or [["-A"]]:
        for tool in ("cwb-huffcode", "cwb-compress-rdx"):
            subprocess.run([str(tools / tool), "-r", str(registry), *selection, "EWT"], check=True,
                           capture_output=True)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """EWT compressed by ``cowbird compress`` (originals removed)."""
    registry = copy_reference_ewt(tmp_path_factory.mktemp("ours"))
    result = CliRunner().invoke(main, ["compress", "-r", str(registry), "ewt"])
    assert result.exit_code == 0, result.output
    assert "ewt.word: stream 1.0 MB -> 0.4 MB (42%), index 1.1 MB -> 0.5 MB (43%)" in result.output
    assert "compressed ewt in" in result.output and "7.9 MB -> 2.2 MB (28%)" in result.output
    return registry


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory, tools: Path) -> Path:
    """EWT compressed by real CWB (originals kept, as its tools keep them)."""
    registry = copy_reference_ewt(tmp_path_factory.mktemp("theirs"))
    real_cwb_compress(tools, registry)
    return registry


def data(registry: Path) -> Path:
    return registry.parent / "data"


def test_compress_writes_the_bytes_real_cwb_writes_and_then_removes_the_originals(ours: Path, theirs: Path) -> None:
    for name in ATTRIBUTES:
        for suffix in COMPRESSED:
            mine, real = data(ours) / f"{name}{suffix}", data(theirs) / f"{name}{suffix}"
            assert mine.read_bytes() == real.read_bytes(), f"{name}{suffix}"
        for suffix in ORIGINALS:
            assert not (data(ours) / f"{name}{suffix}").exists()
        for suffix in (".corpus.cnt", ".lexicon", ".lexicon.idx", ".lexicon.srt"):  # CWB still reads these
            assert (data(ours) / f"{name}{suffix}").exists()
    assert not list(data(ours).glob(".*"))  # no temporary files left behind


def test_real_cqp_reads_what_cowbird_compressed(ours: Path, tools: Path) -> None:
    script = 'EWT; A = [lemma="go"] []{0,2} [word="to"]; size A; B = [pos="JJ"] [upos="NOUN"]; size B; dump B 7 9;'

    def run(registry: Path) -> str:
        return subprocess.run([str(tools / "cqp"), "-c", "-r", str(registry)], input=script, capture_output=True,
                              text=True, check=True).stdout

    assert run(ours) == run(plain_registry())


def plain_registry() -> Path:
    return require_reference() / "cwb" / "registry"


def test_reader_decodes_every_attribute_as_the_uncompressed_files(ours: Path) -> None:
    compressed = CwbCorpus.open(ours, "ewt")
    plain = CwbCorpus.open(plain_registry(), "ewt")
    assert compressed.size == plain.size == 254_818
    for name in ATTRIBUTES:
        a, b = compressed.p_attribute(name), plain.p_attribute(name)
        assert a.compressed == (True, True) and b.compressed == (False, False)
        assert np.array_equal(a.id_range(0, a.size), b.id_range(0, b.size))
        anywhere = np.random.default_rng(7).integers(0, a.size, (50, 40))  # any shape, any order
        assert np.array_equal(a.ids_at(anywhere), b.ids_at(anywhere))
        ids = np.arange(a.lexicon_size)
        assert np.array_equal(a.positions_of(ids), b.positions_of(ids))
        some = min(17, a.lexicon_size - 1)
        assert np.array_equal(a.positions(some), b.positions(some))
        assert a.cpos2str(254_817) == b.cpos2str(254_817)


@pytest.fixture(scope="module")
def compressed_engine(theirs: Path) -> NativeEngine:
    """The native engine on EWT compressed by real CWB, the uncompressed files deleted."""
    for name in ATTRIBUTES:
        for suffix in ORIGINALS:
            (data(theirs) / f"{name}{suffix}").unlink(missing_ok=True)
    return NativeEngine.open(theirs, "ewt")


@pytest.fixture(scope="module")
def mixed_engine(tmp_path_factory: pytest.TempPathFactory, tools: Path) -> NativeEngine:
    """Some attributes compressed by real CWB, some not; word only half (its index)."""
    registry = copy_reference_ewt(tmp_path_factory.mktemp("mixed"))
    real_cwb_compress(tools, registry, "pos", "lemma")
    subprocess.run([str(tools / "cwb-compress-rdx"), "-r", str(registry), "-P", "word", "EWT"], check=True,
                   capture_output=True)
    for name in ("pos", "lemma"):
        for suffix in ORIGINALS:
            (data(registry) / f"{name}{suffix}").unlink()
    for suffix in (".corpus.rev", ".corpus.rdx"):
        (data(registry) / f"word{suffix}").unlink()
    engine = NativeEngine.open(registry, "ewt")
    assert engine.corpus.store.p_attribute("word").compressed == (False, True)
    assert engine.corpus.store.p_attribute("upos").compressed == (False, False)
    return engine


@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_native_engine_on_compressed_and_mixed_corpora_returns_every_parity_hit(
    compressed_engine: NativeEngine, mixed_engine: NativeEngine, query_id: str, query: str
) -> None:
    expected = parity_hits(query_id)
    for engine in (compressed_engine, mixed_engine):
        found = engine.evaluate(parse_cqp(query))
        assert list(zip(found.match.tolist(), found.matchend.tolist(), strict=True)) == expected


def test_many_ids_read_a_group_at_a_time_give_the_positions_a_scan_gives(
    compressed_engine: NativeEngine, mixed_engine: NativeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus_state, "MARK_POSITIONS", 5000)  # many groups of ids
    for engine in (compressed_engine, mixed_engine, NativeEngine.open(plain_registry(), "ewt")):
        corpus = engine.corpus
        attr = corpus.p("word")
        strings = attr.strings
        frequencies = corpus.frequencies("word")
        # the mask path with many ids: more positions than an eighth of the corpus, few ids
        initial = np.array([strings[i][:1] in ("a", "s", "t") for i in range(len(strings))], dtype=np.bool_)
        count = int(frequencies[initial].sum())
        ids = int(initial.sum())
        assert ids > corpus_state.GATHER_IDS and count * 8 >= corpus.size and ids * 4 < len(initial)
        every_initial = corpus.scan("word", initial)
        assert len(every_initial) == count == 62_081
        assert np.array_equal(corpus.cpos_of("word", initial, count), every_initial)
        # a range with few ids for its size: the groups are cut to the range, not scanned
        frequent = np.zeros(len(strings), dtype=np.bool_)
        frequent[np.argsort(-frequencies, kind="stable")[:40]] = True
        count = int(frequencies[frequent].sum())
        lo, hi = 20_000, 210_003
        assert not corpus._range_scan_pays(attr, 40, count, hi - lo) and count * 8 >= corpus.size
        everywhere = corpus.scan("word", frequent)
        found = corpus.cpos_of("word", frequent, count, lo, hi)
        assert len(found) > 50_000
        assert np.array_equal(found, everywhere[(everywhere >= lo) & (everywhere < hi)])
        # many ids on a short range: its tokens are read
        assert corpus._range_scan_pays(attr, ids, count, 50_003)
        every_initial = corpus.scan("word", initial)
        part = corpus.cpos_of("word", initial, len(every_initial), 100_000, 150_003)
        assert np.array_equal(part, every_initial[(every_initial >= 100_000) & (every_initial < 150_003)])


def test_ranges_decode_an_id_on_from_where_the_last_range_stopped(ours: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cowbird.store import compression

    monkeypatch.setattr(compression, "POSITIONS_CACHED_FROM", 10_000)  # EWT's "the" is kept once decoded whole
    compressed = CwbCorpus.open(ours, "ewt").p_attribute("word")
    plain = CwbCorpus.open(plain_registry(), "ewt").p_attribute("word")
    frequencies = np.asarray(plain.frequencies)
    the, rare = int(np.argmax(frequencies)), int(np.flatnonzero(frequencies == 3)[0])
    assert frequencies[the] == 10_899

    def expected(i: int, lo: int, hi: int) -> list[int]:
        positions = plain.positions(i)
        within: list[int] = positions[(positions >= lo) & (positions < hi)].tolist()
        return within

    edges = [0, 1, 17, 5_000, 5_001, 120_000, 254_817, 254_818]
    for i in (the, rare, 0):
        for lo, hi in zip(edges, edges[1:], strict=False):  # ascending ranges: decoding goes on
            assert compressed.positions_between(i, lo, hi).tolist() == expected(i, lo, hi)
        # a range before where the last one stopped decodes from the id's start; one with a gap after it skips
        for lo, hi in ((100, 90_000), (30_000, 40_000), (200_000, 254_818), (0, 254_818), (7, 7)):
            assert compressed.positions_between(i, lo, hi).tolist() == expected(i, lo, hi)
    # two ids decoded range by range in turn keep a place each
    for lo in range(0, 254_818, 30_000):
        for i in (the, rare):
            assert compressed.positions_between(i, lo, lo + 30_000).tolist() == expected(i, lo, lo + 30_000)
    # threads ask for neighbouring ranges out of order: each goes on from the latest place at or
    # before its start (not from the id's first position), and its own stop is kept beside the others
    golomb = compressed._golomb
    assert golomb is not None
    for order in ([1, 0, 3, 2, 5, 4, 7, 6], [0, 2, 1, 3, 5, 4, 6, 7], [7, 6, 5, 4, 3, 2, 1, 0]):
        for k in order:
            lo, hi = k * 32_000, (k + 1) * 32_000
            assert compressed.positions_between(the, lo, hi).tolist() == expected(the, lo, hi)
    stops = [stop for stop, _ in golomb._cursors.peek(the) or []]
    assert stops == [128_000, 96_000, 64_000, 32_000]  # the latest four, whatever their places
    # an id whose whole positions are kept is sliced
    assert np.array_equal(compressed.positions(the), plain.positions(the))
    assert compressed.positions_between(the, 1_000, 2_000).tolist() == expected(the, 1_000, 2_000)


@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_small_ranges_and_read_ahead_on_compressed_streams_return_every_parity_hit(
    theirs: Path, compressed_engine: NativeEngine, monkeypatch: pytest.MonkeyPatch, query_id: str, query: str
) -> None:
    """What a 1-GT partition does, on EWT: queries evaluated in many ranges (each decoding its part
    of an id's positions), a small block cache, and every step of a pass reading tokens ahead."""
    from cowbird.engines.native import simulate
    from cowbird.store import compression

    monkeypatch.setattr(simulate, "AHEAD_ROWS", 0)
    monkeypatch.setattr(simulate, "AHEAD_IDS", 5_000)  # windows of 2 to 32 tokens, as rows drop out
    monkeypatch.setattr(compression, "CACHE_BLOCKS", 64)
    monkeypatch.setattr(compression, "POSITIONS_KEPT", 2_000)
    assert compressed_engine.corpus.p("word").compressed == (True, True)  # the originals are gone
    engine = NativeEngine.open(theirs, "ewt", EngineOptions(chunk_positions=20_000))
    found = engine.evaluate(parse_cqp(query))
    assert list(zip(found.match.tolist(), found.matchend.tolist(), strict=True)) == parity_hits(query_id)


def test_keep_one_attribute_and_compress_again(tmp_path: Path) -> None:
    registry = copy_reference_ewt(tmp_path)
    runner = CliRunner()
    kept = runner.invoke(main, ["compress", "-r", str(registry), "ewt", "-P", "word", "--keep"])
    assert kept.exit_code == 0, kept.output
    assert "ewt.word: stream" in kept.output and "ewt.pos" not in kept.output and "originals kept" in kept.output
    for suffix in COMPRESSED + ORIGINALS:
        assert (tmp_path / "data" / f"word{suffix}").exists()
    assert not (tmp_path / "data" / "pos.huf").exists()
    again = runner.invoke(main, ["compress", "-r", str(registry), "ewt", "-P", "word"])
    assert again.exit_code == 0 and not (tmp_path / "data" / "word.corpus").exists()
    done = runner.invoke(main, ["compress", "-r", str(registry), "ewt", "-P", "word"])
    assert done.exit_code == 0 and "stream already compressed, index already compressed" in done.output
    unknown = runner.invoke(main, ["compress", "-r", str(registry), "ewt", "-P", "tag"])
    assert unknown.exit_code != 0 and "has no p-attribute 'tag'" in unknown.output


def test_chunked_writing_gives_the_same_bytes(tmp_path: Path) -> None:
    home = plain_registry().parent / "data" / "ewt"
    ids = np.fromfile(home / "word.corpus", dtype=BE_INT32)
    counts = np.fromfile(home / "word.corpus.cnt", dtype=BE_INT32)
    rev = np.fromfile(home / "word.corpus.rev", dtype=BE_INT32)
    code = HuffmanCode.build(counts, len(ids))
    for chunk, folder in ((1 << 23, "whole"), (1000, "small")):
        (tmp_path / folder).mkdir()
        write_stream(tmp_path / folder / "word", ids, code, chunk=chunk)
        write_index(tmp_path / folder / "word", rev, counts, len(ids), chunk=chunk)
    for suffix in (".huf", ".huf.syn", ".crc", ".crx"):
        whole, small = (tmp_path / folder / f"word{suffix}" for folder in ("whole", "small"))
        assert whole.read_bytes() == small.read_bytes()


def tiny(home: Path, name: str, ids: list[int]) -> None:
    """An attribute's .corpus, .cnt, .rev and .rdx for this id sequence (what cwb-makeall writes)."""
    array = np.asarray(ids)
    counts = np.bincount(array)
    write_ints(home / f"{name}.corpus", array)
    write_ints(home / f"{name}.corpus.cnt", counts)
    write_ints(home / f"{name}.corpus.rev", np.argsort(array, kind="stable"))
    write_ints(home / f"{name}.corpus.rdx", np.cumsum(counts) - counts)


def test_the_worked_examples_of_the_format_notes(tmp_path: Path) -> None:
    tiny(tmp_path, "xyx", [0, 1, 0])  # x y x: codes 0 and 1; b = 2 for both ids
    compress_attribute(tmp_path, "xyx")
    assert (tmp_path / "xyx.huf").read_bytes() == bytes([0x40])
    assert (tmp_path / "xyx.crc").read_bytes() == bytes([0x20, 0x40])
    assert (tmp_path / "xyx.crx").read_bytes() == bytes([0, 0, 0, 0, 0, 0, 0, 1])
    tiny(tmp_path, "aaa", [0, 0, 0])  # one type: the 1-bit code 0, and p = 1 gives b = 2
    compress_attribute(tmp_path, "aaa")
    assert (tmp_path / "aaa.huf").read_bytes() == bytes([0x00])
    assert (tmp_path / "aaa.crc").read_bytes() == bytes([0x14])
    assert np.fromfile(tmp_path / "aaa.hcd", dtype=BE_INT32)[:4].tolist() == [1, 3, 1, 1]


def test_a_failed_compression_leaves_the_attribute_as_it_was(tmp_path: Path) -> None:
    tiny(tmp_path, "zero", [0, 0, 2])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(CorpusFormatError, match="p-attribute 'zero': lexicon id 1 occurs nowhere"):
        compress_attribute(tmp_path, "zero")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # the stream was fine: not installed either


def test_encode_with_compress_gives_a_compressed_corpus_that_answers_alike(tmp_path: Path,
                                                                           sample_registry: Path) -> None:
    from tests.support import SAMPLE_P, SAMPLE_S, SAMPLE_VRT

    args = ["encode", "-f", str(SAMPLE_VRT), "-d", str(tmp_path / "data"), "-R", str(tmp_path / "registry" / "sample"),
            "-c", "utf8", "-xsB", *(a for name in SAMPLE_P[1:] for a in ("-P", name)),
            *(a for d in SAMPLE_S for a in ("-S", d)), "--compress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "encoded 93 tokens" in result.output and "compressed sample in" in result.output
    assert not list((tmp_path / "data").glob("*.corpus")) and len(list((tmp_path / "data").glob("*.huf"))) == 3
    plain, packed = NativeEngine.open(sample_registry, "sample"), NativeEngine.open(tmp_path / "registry", "sample")
    for query in ('[pos="NN.*"]', '"the" [] [lemma="house"]', "[]"):
        assert plain.run(query).hits() == packed.run(query).hits()


def test_gathers_through_a_small_block_cache_give_the_same_ids(ours: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cowbird.store import compression

    monkeypatch.setattr(compression, "CACHE_BLOCKS", 3)  # every gather evicts blocks it read a moment ago
    word = CwbCorpus.open(ours, "ewt").p_attribute("word")
    plain = CwbCorpus.open(plain_registry(), "ewt").p_attribute("word")
    rng = np.random.default_rng(3)
    for _ in range(5):
        positions = np.sort(rng.integers(0, word.size, 2000))
        positions = np.concatenate([positions, positions + 1, positions[::-1]]) % word.size
        assert np.array_equal(word.ids_at(positions), plain.ids_at(positions))


def test_a_read_only_installation_compiles_the_decoders_without_a_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba refuses ``cache=True`` at decoration when neither ``__pycache__``, the user's cache
    folder nor NUMBA_CACHE_DIR is writable (a container's read-only install, a user without home):
    the decoders are then compiled at first use instead of failing the import."""
    import numba

    from cowbird.store import compression

    njit = numba.njit

    def no_cache_location(*args: Any, **kwargs: Any) -> Any:  # numba.njit's own arguments, passed through
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'f': no locator available for file 'x.py'")
        return njit(*args, **kwargs)

    monkeypatch.setattr(numba, "njit", no_cache_location)

    def add(a: int, b: int) -> int:
        return a + b

    assert compression.compiled(add)(2, 3) == 5
