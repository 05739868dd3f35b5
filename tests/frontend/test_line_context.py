"""``/api/v1/context/{corpus}/{position}``: a concordance line widened in place — N tokens each side
inside the text, the whole sentence, the attributes of each token — checked against the corpus as
the reader reads it, partition by partition."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from cowbird.core.manifest import Manifest
from cowbird.store.reader import CwbCorpus
from tests.frontend.conftest import Partitioned

pytestmark = pytest.mark.anyio


class Whole:
    """The sample corpus read straight from its partitions, by global position."""

    def __init__(self, parts: Partitioned) -> None:
        manifest = Manifest.load(parts.manifest)
        self.parts = [(p.offset, p.size, CwbCorpus.open(parts.registry, p.id)) for p in manifest.partitions]

    def _at(self, position: int) -> tuple[int, CwbCorpus]:
        return next((offset, corpus) for offset, size, corpus in self.parts if offset <= position < offset + size)

    def tokens(self, lo: int, hi: int, attributes: list[str]) -> list[list[str]]:
        out = []
        for position in range(lo, hi):
            offset, corpus = self._at(position)
            out.append([corpus.p_attribute(a).cpos2str(position - offset) for a in attributes])
        return out

    def region(self, name: str, position: int) -> tuple[int, int]:
        offset, corpus = self._at(position)
        found = corpus.s_attribute(name).region_at(position - offset)
        assert found is not None
        return offset + found.start, offset + found.end


@pytest.fixture(scope="module")
def whole(sample_parts: Partitioned) -> Iterator[Whole]:
    yield Whole(sample_parts)


async def hits(client: httpx.AsyncClient, q: str) -> list[dict[str, object]]:
    answer = (await client.get("/api/v1/query", params={"corpus": "sample", "q": q, "syntax": "cqp"})).json()
    found: list[dict[str, object]] = answer["hits"]
    return found


async def test_a_line_widens_to_n_tokens_inside_its_text(client: httpx.AsyncClient, whole: Whole) -> None:
    found = await hits(client, '[word="house"]')
    assert len(found) == 3
    for hit in found:
        position = int(str(hit["position"]))
        text_start, text_end = whole.region("text", position)
        for tokens in (0, 3, 20, 100):
            answer = await client.get(f"/api/v1/context/sample/{position}", params={"tokens": tokens, "show": "pos"})
            assert answer.status_code == 200, answer.text
            line = answer.json()
            lo, hi = max(text_start, position - tokens), min(text_end, position + tokens)
            assert line["left"] == whole.tokens(lo, position, ["word", "pos"])
            assert line["match"] == whole.tokens(position, position + 1, ["word", "pos"])
            assert line["right"] == whole.tokens(position + 1, hi + 1, ["word", "pos"])
            assert line["attributes"] == ["word", "pos"] and line["region"] == "text" and line["tokens"] == tokens
            assert line["more_before"] == (lo > text_start) and line["more_after"] == (hi < text_end)
            assert line["text"]["left"] == " ".join(t[0] for t in line["left"])
            assert line["text"]["match"] == hit["match"] == "house"


async def test_a_line_widens_to_its_sentence_and_a_long_match_stays_whole(client: httpx.AsyncClient,
                                                                          whole: Whole) -> None:
    found = await hits(client, '[pos="DT"] [pos="JJ"]+ [pos="NNS?"]')
    assert found and any(int(str(h["matchend"])) > int(str(h["position"])) + 1 for h in found)
    for hit in found:
        position, end = int(str(hit["position"])), int(str(hit["matchend"]))
        start, stop = whole.region("s", position)
        line = (await client.get(f"/api/v1/context/sample/{position}",
                                 params={"end": end, "region": "s", "tokens": 100})).json()
        assert line["region"] == "s" and line["attributes"] == ["word"]
        assert line["left"] + line["match"] + line["right"] == whole.tokens(start, stop + 1, ["word"])
        assert line["text"]["match"] == hit["match"] and line["matchend"] == end
        assert (line["more_before"], line["more_after"]) == (False, False)
        clipped = (await client.get(f"/api/v1/context/sample/{position}",
                                    params={"end": end, "region": "s", "tokens": 1})).json()
        assert clipped["more_before"] == (position > start) and clipped["more_after"] == (end < stop)


async def test_what_cannot_be_shown_is_said(client: httpx.AsyncClient) -> None:
    cases: list[tuple[dict[str, str | int], int, str]] = [
             ({"tokens": 101}, 400, "tokens=101: a line is widened to at most 100 tokens each side"),
             ({"region": "chapter"}, 400, "region=chapter: corpus sample has no s-attribute 'chapter'"),
             ({"show": "tag"}, 400, "show=tag: corpus sample has no p-attribute 'tag'"),
             ({"end": 1}, 400, "end=1: the match end must be at or after position 5"),
             ({"tokens": 5, "context": 3}, 400, "unknown parameter context")]
    for params, status, detail in cases:
        answer = await client.get("/api/v1/context/sample/5", params=params)
        assert answer.status_code == status and detail in answer.json()["detail"], (params, answer.text)
    outside = await client.get("/api/v1/context/sample/999999")
    assert outside.status_code == 404 and "position 999999 is outside corpus sample" in outside.json()["detail"]
    unknown = await client.get("/api/v1/context/nosuch/5")
    assert unknown.status_code == 404


async def test_tokens_written_with_their_attributes_in_the_kwic_and_downloads(client: httpx.AsyncClient,
                                                                             whole: Whole) -> None:
    """inline=pos,lemma writes each token as word/pos/lemma in left, match and right — in the preview
    and in every download format — as CQPweb's and NoSketch Engine's "word/tag" display does."""
    plain = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "house", "context": "3"})).json()
    asked = {"corpus": "sample", "q": "house", "context": "3", "inline": "pos,lemma"}
    inline = (await client.get("/api/v1/query", params=asked)).json()
    assert inline["total"] == plain["total"] == 3
    for hit, bare in zip(inline["hits"], plain["hits"], strict=True):
        position = hit["position"]
        for side in ("left", "match", "right"):
            written = hit[side].split(" ") if hit[side] else []
            assert [w.split("/")[0] for w in written] == (bare[side].split(" ") if bare[side] else [])
            first = {"left": position - len(written), "match": position, "right": position + 1}[side]
            assert written == ["/".join(t) for t in whole.tokens(first, first + len(written), ["word", "pos", "lemma"])]
        assert hit["match"] == "house/NN/house" and hit["attributes"] == {}  # nothing else asked for
    export = await client.get("/api/v1/export", params={**asked, "format": "tsv", "provenance": "1"})
    assert export.status_code == 200
    lines = export.text.splitlines()
    assert '# inline: ["pos", "lemma"]' in lines
    header = next(line for line in lines if line.startswith("corpus\t"))
    rows = [dict(zip(header.split("\t"), line.split("\t"), strict=True)) for line in lines[lines.index(header) + 1:]]
    assert [(r["left"], r["match"], r["right"]) for r in rows] == [(h["left"], h["match"], h["right"])
                                                                  for h in inline["hits"]]
    wrong = await client.get("/api/v1/query", params={**asked, "inline": "tag"})
    assert wrong.status_code == 400 and "inline=tag: corpus sample has no p-attribute 'tag'" in wrong.json()["detail"]


async def test_a_line_widens_across_texts_with_their_edges_marked(client: httpx.AsyncClient, whole: Whole,
                                                                   sample_parts: Partitioned) -> None:
    """region=none: tokens each side run across texts (a text may be shorter than the line) and across
    the cuts between partitions (each carries its neighbours' tokens), to the corpus's ends; breaks
    names the tokens where another text or sentence begins, as the corpus files have them."""
    manifest = Manifest.load(sample_parts.manifest)
    size = sum(p.size for p in manifest.partitions)
    for hit in await hits(client, '[word="house"]'):
        position = int(str(hit["position"]))
        answer = await client.get(f"/api/v1/context/sample/{position}", params={"tokens": 40, "region": "none"})
        assert answer.status_code == 200, answer.text
        line = answer.json()
        lo, hi = max(0, position - 40), min(size - 1, position + 40)
        assert line["region"] is None
        assert line["left"] + line["match"] + line["right"] == whole.tokens(lo, hi + 1, ["word"])
        for name in ("text", "s"):
            expected = [k for k in range(1, hi - lo + 1)
                        if whole.region(name, lo + k) != whole.region(name, lo + k - 1)]
            assert line["breaks"][name] == expected, (name, position)
        assert line["breaks"]["text"] or hi - lo < 40  # the sample's texts are shorter than 81 tokens
    inside = (await client.get(f"/api/v1/context/sample/{position}", params={"tokens": 40})).json()
    assert inside["region"] == "text" and inside["breaks"]["text"] == []


async def test_concordance_lines_give_where_texts_and_sentences_change(client: httpx.AsyncClient, whole: Whole,
                                                                       sample_parts: Partitioned) -> None:
    """boundaries=text,s: each hit says before which character of its left, match or right a region
    of text or s begins or ends, as the corpus files have them."""
    manifest = Manifest.load(sample_parts.manifest)
    size = sum(p.size for p in manifest.partitions)
    answer = await client.get("/api/v1/query", params={"corpus": "sample", "q": "the", "context": 10,
                                                       "boundaries": "text,s"})
    assert answer.status_code == 200, answer.text
    seen = 0
    for hit in answer.json()["hits"]:
        position, matchend = hit["position"], hit["matchend"]
        lo, hi = max(0, position - 10), min(size - 1, matchend + 10)  # across the cuts between partitions
        words = [t[0] for t in whole.tokens(lo, hi + 1, ["word"])]
        expected = []
        for name in ("text", "s"):
            for k in range(1, hi - lo + 1):
                if whole.region(name, lo + k) != whole.region(name, lo + k - 1):
                    p = lo + k
                    part, first = (("left", lo) if p < position else ("match", position) if p <= matchend
                                   else ("right", matchend + 1))
                    expected.append({"region": name, "part": part,
                                     "at": len(" ".join(words[first - lo:p - lo])) + (1 if p > first else 0)})
        key = lambda b: (("left", "match", "right").index(b["part"]), b["at"], b["region"])  # noqa: E731
        assert hit["breaks"] == sorted(expected, key=key), hit
        for b in hit["breaks"]:  # the character there begins a word
            assert hit[b["part"]][b["at"]:].split(" ")[0] in words
        seen += len(expected)
    assert seen > 0
    plain = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "the"})).json()
    assert all(h["breaks"] == [] for h in plain["hits"])
    wrong = await client.get("/api/v1/query", params={"corpus": "sample", "q": "the", "boundaries": "chapter"})
    assert wrong.status_code == 400 and "boundaries=chapter" in wrong.json()["detail"]
