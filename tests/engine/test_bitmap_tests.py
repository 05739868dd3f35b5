"""Dense id tests on a compressed token stream: a query evaluated over the whole corpus marks the
test's positions in a bitmap once (from the reverse index) instead of decoding nearly every block of
the stream by gathering ids. The bitmap must say exactly what the gathered ids say, and the queries
must find the same hits as on the uncompressed files (and as real CQP: ``test_differential``)."""

from __future__ import annotations

import numpy as np
import pytest

from cowbird.engines.base import Deadline
from cowbird.engines.native import NativeEngine
from cowbird.engines.native.compile import Lookup
from cowbird.engines.native.corpus_state import bits_at
from cowbird.query import RegexValue, parse_cqp
from cowbird.store.compress import compress_corpus
from cowbird.store.registry import parse_registry
from tests.support import copy_reference_ewt, require_reference


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> tuple[NativeEngine, NativeEngine]:
    plain = NativeEngine.open(require_reference() / "cwb" / "registry", "ewt")
    registry = copy_reference_ewt(tmp_path_factory.mktemp("bitmap"))
    compress_corpus(parse_registry(registry / "ewt"))
    return plain, NativeEngine.open(registry, "ewt")


def test_a_bitmap_holds_exactly_the_positions_of_the_marked_ids(engines: tuple[NativeEngine, NativeEngine]) -> None:
    _, compressed = engines
    corpus = compressed.corpus
    table = corpus.match_table("pos", RegexValue("NNS?"))
    bits = corpus.bitmap("pos", table)
    everything = np.arange(corpus.size, dtype=np.int64)
    expected = table[corpus.ids("pos", everything)]
    assert expected.sum() > 20_000  # a frequent test, as the bitmap is made for
    assert np.array_equal(bits_at(bits, everything), expected)
    # the last bits of the last byte belong to no position and stay unset
    assert int(np.unpackbits(bits, bitorder="little").sum()) == int(expected.sum())


def test_dense_tests_on_a_compressed_stream_prefer_the_bitmap(engines: tuple[NativeEngine, NativeEngine]) -> None:
    plain, compressed = engines
    size = compressed.corpus.size
    # needles in every block of the corpus: gathering decodes the whole stream, the bitmap reads the index
    assert compressed.corpus.gather_costs_more("pos", 3_000, 1, size // 10, size)
    # a test holding at most positions costs more to mark than gathering a few thousand needles
    assert not compressed.corpus.gather_costs_more("pos", size // 2, 1, 5_000, size)
    # nor does one of very many ids, each of whose lists is decoded on its own
    assert not compressed.corpus.gather_costs_more("word", 3_000, 3_000, size // 10, size)
    # an uncompressed stream is always gathered
    assert not plain.corpus.gather_costs_more("pos", 3_000, 1, size // 10, size)


@pytest.mark.parametrize("query", [
    '[word=".*ing"] [word="to"]',
    '[lemma="the"] [] [] [lemma="of"]',
    '[pos="DT"] [pos="JJ"] [pos="NNS?"]',
    '[pos="IN"] [pos="DT"]? [pos="NN"] [word="of"]',
    '[pos="MD"] [pos="RB"]* [pos="VB"]',
])
def test_queries_find_the_same_hits_on_compressed_files(engines: tuple[NativeEngine, NativeEngine], query: str) -> None:
    plain, compressed = engines
    on_plain = plain.run(query)
    on_compressed = compressed.run(query)
    assert on_compressed.total == on_plain.total > 0
    expected = [(hit.match, hit.matchend) for hit in on_plain.hits(0, on_plain.total)]
    assert [(hit.match, hit.matchend) for hit in on_compressed.hits(0, on_compressed.total)] == expected


def test_the_bitmap_is_made_when_the_whole_corpus_is_read(engines: tuple[NativeEngine, NativeEngine]) -> None:
    _, compressed = engines
    runner = compressed._prepared(parse_cqp('[lemma="the"] [] [] [lemma="of"]'), "standard", 500, Deadline())
    assert runner is not None
    tests = runner.plan.tests
    lookups = [state.predicate for state in runner.plan.automaton.states if isinstance(state.predicate, Lookup)]
    lookup = max(lookups, key=lambda test: test.count)  # the: tested where "of" is, 3 tokens on
    needles = np.arange(0, compressed.corpus.size, 7, dtype=np.int64)
    assert tests._bitmap(lookup, needles) is None  # a first page (``first``) reads ranges: no bitmap
    tests.whole = True
    bits = tests._bitmap(lookup, needles)
    assert bits is not None
    assert np.array_equal(tests.holds(lookup, needles, {}), bits_at(bits, needles))
    assert tests._bitmap(lookup, needles[:10_000]) is bits  # made once per query
