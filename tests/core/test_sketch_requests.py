"""How the front end packs word sketch look-ups into node requests (``core/search/sketches.py``): each
request within a node's body limit and ``MAX_SKETCH_RELATIONS``, naming each table it reads once, and
every relation asked exactly once, in order; a request whose relation names no table is refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cowbird.core.search.sketches import REQUEST_BYTES, _Ask, _pieces
from cowbird.core.wire import MAX_SKETCH_RELATIONS, SketchRequest, SketchTable

TABLES = [SketchTable(queries=[f'@[pos="NN.*"] []{{0,3}} @1[pos="{tag}"] within s'] * 3, symmetric=tag == "CC")
          for tag in ("JJ", "VB", "CC", "IN", "RB")]


def requests(items: list[tuple[_Ask, list[str]]]) -> list[SketchRequest]:
    return [SketchRequest(partition="p", attribute="lemma", headword="house", tables=[TABLES[i] for i in named],
                          relations=relations) for named, relations in _pieces(TABLES, items)]


def test_many_words_whole_sketches_go_in_few_requests_each_naming_its_tables_once() -> None:
    asks = [_Ask(table, table % 2 == 1, f"word{n}") for n in range(600) for table in range(len(TABLES))]
    made = requests([(ask, []) for ask in asks])
    assert len(made) < len(asks) / 200  # not a request per relation, nor per 128 of them
    back = []
    for request in made:
        assert len(request.model_dump_json()) <= REQUEST_BYTES + 200
        assert len(request.relations) <= MAX_SKETCH_RELATIONS
        assert len({t.model_dump_json() for t in request.tables}) == len(request.tables)
        back += [(TABLES.index(request.tables[r.table]), r.swapped, r.headword) for r in request.relations]
    assert back == [(a.table, a.swapped, a.headword) for a in asks]


def test_long_lists_of_totals_are_split_by_their_size() -> None:
    values = [f"collocate-{n:06d}" for n in range(4_000)]
    items = [(_Ask(0, False), values[:2_000]), (_Ask(3, True), values[2_000:])]
    made = requests(items)
    assert [len(r.relations) for r in made] == [1, 1] and all(len(r.tables) == 1 for r in made)
    assert [r.relations[0].totals_of for r in made] == [values[:2_000], values[2_000:]]


def test_a_relation_must_read_a_table_the_request_names() -> None:
    with pytest.raises(ValidationError, match="reads table 1: the request names 1"):
        SketchRequest(partition="p", attribute="lemma", tables=[TABLES[0]], relations=[{"table": 1}])
