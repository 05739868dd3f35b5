"""No answer depends on where a corpus is cut: a lookahead or an opening tag at a partition's last token
reads the next partition's first, a closing tag at its first token sees the region before close, an MU window
reaches across the cut — as over the corpus in one piece (the expected hits are counted by eye)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.commands.cli import main
from cowbird.core.manifest import Manifest
from cowbird.engines import open_engine
from cowbird.engines.base import EngineOptions
from cowbird.engines.native import NativeEngine
from cowbird.query import parse_cqp, reads_past_edges
from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from cowbird.store.neighbours import NEIGHBOURS_FILE
from tests.support import reference_cqp, unavailable

# four texts: "a dog | cat runs | fish | birds fly" — positions 0..6; each text is one partition
SEAMS_VRT = """<text id="t1">
<s>
a\tDT
dog\tNN
</s>
</text>
<text id="t2">
<s>
cat\tNN
runs\tVBZ
</s>
</text>
<text id="t3">
<s>
fish\tNN
</s>
</text>
<text id="t4">
<s>
birds\tNNS
fly\tVBP
</s>
</text>
"""

CASES = [
    # the repro of issue 64: a noun not followed by a noun (dog is followed by cat)
    ('[pos="NN"] [:pos!="NN":]', [2, 4]),
    ('[pos="NN"] [:pos="NN":]', [1]),
    ('[pos="NN"] [:word="c.*|b.*":]', [1, 4]),
    ('[pos="NN"] [:!(pos="NN.*"):]', [2]),
    ('[pos="VBZ"] [:_.text_id="t3":]', [3]),
    ('[pos="NN"] [:lbound(text):]', [1, 4]),
    ('[pos="NN"] [:pos = "N.*" & word != "birds":]', [1]),
    ('[] [:word="cat":]', [1]),
    ('[pos="NN"] [:word="CAT"%c:]', [1]),
    ('[pos="NN"] [pos="VBZ"]? [:pos="NNS":]', [4]),
    # past the real corpus end CQP's rule reads the whole lexicon (5 tags), not the last partition's (2)
    ('[] [:pos!="N.*":]', [2, 5]),
    ('</text> [pos="NN"]', [2, 4]),
    ('</s> [pos="NN.*"]', [2, 4, 5]),
    ('</text> <text_id="t3"> []', [4]),
    ('MU(meet [pos="NN"] [pos="VBZ"] 1 2)', [1, 2]),
    ('MU(meet [pos="VBZ"] [pos="NN"] -2 -1)', [3]),
    ('MU(meet [pos="NNS"] [pos="NN"] -1 -1)', [5]),
    ('MU(meet [pos="DT"] [pos="NN"] -3 -1)', []),  # a window before the real corpus start finds nothing
    ('TAB [pos="NN"] [pos="VBZ"]', [2]),  # the neighbours' own tokens start no match
    # an opening tag just past a partition's last token is read on the next partition's first token
    ('[pos="NN"] <s>', [1, 4]),
    ('[pos="NN"] <text>', [1, 4]),
    ('[] <text_id="t3">', [3]),
    ('[pos="NN"] <text_id="t4">', [4]),
    ("[] <s>", [1, 3, 4]),  # never past the real corpus end (fly, the last token)
    ('[pos="NN"] <s> within s', []),  # the boundary is the sentence's end, as in one piece
    ('[pos="NN"] <s> within text', []),
    ('[pos="NN"] <s> within 1', [1, 4]),
    ('[pos="NN"] <s> within 2 s', [1, 4]),  # the second sentence is the next partition's
    ('[pos="NN"] </s> <s>', [1, 4]),  # StrictRegions: the tag closing at the cut, the next opening
    ('<s> [pos="NN"] </s> <s>', [4]),
    ("<s> []", [0, 2, 4, 5]),  # nothing starts at the neighbour's position
    # a lookahead that compares labels reads the next partition's first token too
    ('a:[pos="NN"] [:word != a.word:]', [1, 2, 4]),
    ('a:[pos="NN"] [:pos = a.pos:]', [1]),
    ('a:[] [:pos = a.pos & word="c.*":]', [1]),
    ("a:[] [:_.text_id != a.text_id:]", [1, 3, 4]),  # past the real corpus end the comparison fails
    ("a:[] [:!(_.text_id = a.text_id):]", [1, 3, 4, 6]),
    ('a:[pos="NN"] [:!(pos = a.pos):]', [2, 4]),
]


@pytest.fixture(scope="module")
def seams(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("seams")
    source = base / "seams.vrt"
    source.write_text(SEAMS_VRT)

    def options(data: str, partition_tokens: int | None = None) -> EncodeOptions:
        declared = [parse_s_declaration("text:0+id"), parse_s_declaration("s:0")]
        return EncodeOptions(
            source,
            base / data,
            base / "registry" / data,
            ["word", "pos"],
            declared,
            charset="utf8",
            xml=True,
            skip_blank=True,
            strip_blanks=True,
            partition_tokens=partition_tokens,
        )

    Encoder(options("whole")).run()
    result = Encoder(options("parts", partition_tokens=2)).run()
    assert [p.size for p in result.partitions] == [2, 2, 1, 2]
    assert result.manifest is not None
    return base / "registry", result.manifest


def hits(registry: Path, where: list[str], query: str) -> list[int]:
    answer = CliRunner().invoke(main, ["query", "-r", str(registry), *where, query])
    assert answer.exit_code == 0, answer.output
    return [int(line.split("\t")[0]) for line in answer.output.splitlines()]


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[q for q, _ in CASES])
def test_a_query_over_partitions_is_the_query_over_the_corpus_in_one_piece(
    seams: tuple[Path, Path], query: str, expected: list[int]
) -> None:
    registry, manifest = seams
    assert hits(registry, ["-C", "whole"], query) == expected
    assert hits(registry, ["--manifest", str(manifest)], query) == expected


def test_a_match_that_would_span_two_partitions_is_the_one_exception(seams: tuple[Path, Path]) -> None:
    registry, manifest = seams
    spanning = {'TAB [pos="NN"] {0,3} [pos="NNS"]': [1], '[pos="NN"] [pos="NN"]': [1]}
    for query, whole in spanning.items():
        assert hits(registry, ["-C", "whole"], query) == whole, query
        assert hits(registry, ["--manifest", str(manifest)], query) == [], query


def test_cqps_own_automaton_reads_the_neighbours_too(seams: tuple[Path, Path]) -> None:
    """``automaton="cqp"`` (CQP's DFA, ``dfa_simulate.py``) gives the same hits over the partitions."""
    registry, manifest = seams
    engines = [(p.offset, NativeEngine.open(registry, p.id, EngineOptions(automaton="cqp")))
               for p in Manifest.load(manifest).partitions]  # fmt: skip
    for query, expected in CASES:
        found = [int(m) + offset for offset, engine in engines for m in engine.evaluate(parse_cqp(query)).match]
        assert found == expected, query


def test_a_partition_without_neighbours_keeps_the_past_the_end_rule(seams: tuple[Path, Path]) -> None:
    """An old corpus (no ``neighbours.json``) behaves as before: each partition's ends are corpus ends."""
    registry, manifest = seams
    homes = sorted(p for p in manifest.parent.iterdir() if (p / NEIGHBOURS_FILE).exists())
    kept = {home: (home / NEIGHBOURS_FILE).read_text() for home in homes}
    try:
        for home in homes:
            (home / NEIGHBOURS_FILE).unlink()
        assert hits(registry, ["--manifest", str(manifest)], '[pos="NN"] [:pos!="NN":]') == [2]
        assert hits(registry, ["--manifest", str(manifest)], '</text> [pos="NN"]') == []
    finally:
        for home, text in kept.items():
            (home / NEIGHBOURS_FILE).write_text(text)


def test_the_cwb_engine_answers_over_partitions_as_over_the_corpus_in_one_piece(seams: tuple[Path, Path]) -> None:
    """Real CQP sees a partition alone; a query that can read past its edge is answered by the native
    engine on the same files (``reads_past_edges``), so the ``cwb`` engine gives the same hits."""
    binary = reference_cqp()
    try:
        import ccc  # noqa: F401 - only: is cwb-ccc installed?
    except ImportError:
        unavailable("cwb-ccc is not installed: pip install -e '.[cwb]' with cwb-config on PATH")
    from cowbird.engines.cwb import CwbEngine

    registry, manifest = seams
    partitions = Manifest.load(manifest).partitions
    options = EngineOptions(cqp_binary=str(binary))
    engines = [(p.offset, open_engine(registry, p.id, "cwb", options)) for p in partitions]
    whole = open_engine(registry, "whole", "cwb", options)
    alone = CwbEngine(registry, partitions[2].id, options)  # made without across_cut: CQP's answer alone
    try:
        assert [h.match for h in alone.run('[pos="NN"] [:pos!="NN":]').hits()] == []  # its end is a corpus end
        assert [h.match for h in engines[2][1].run('[pos="NN"] [:pos!="NN":]').hits()] == [0]  # reads "birds"
        for query, expected in CASES:
            assert [h.match for h in whole.run(query).hits()] == expected, query  # real CQP over the whole
            found = [h.match + offset for offset, engine in engines for h in engine.run(query).hits()]
            assert found == expected, query
            assert reads_past_edges(parse_cqp(query)) != (query.startswith("TAB") or query == "<s> []"), query
        assert [h.match for h in engines[1][1].run('[pos="VBZ"]').hits()] == [1]  # CQP's own answer elsewhere
    finally:
        alone.close()
        for _, engine in [*engines, (0, whole)]:
            assert isinstance(engine, CwbEngine)
            engine.close()
