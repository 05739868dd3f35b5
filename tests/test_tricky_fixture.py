"""The in-repo corpus ``tests/fixtures/tricky.vrt``: it is what ``make_tricky.py`` writes, and the
facts ``tests.support`` states about it (counted there by hand) are its own."""

from __future__ import annotations

import importlib.util
import re

from tests.support import TRICKY_SENTENCES, TRICKY_TOKENS, TRICKY_VRT, TRICKY_WORDS, read_tricky


def test_the_checked_in_vrt_is_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_tricky", TRICKY_VRT.parent / "make_tricky.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == TRICKY_VRT.read_text(encoding="utf-8"), "run python tests/fixtures/make_tricky.py"


def test_the_stated_counts_and_tokens_are_those_of_the_vrt() -> None:
    lines = TRICKY_VRT.read_text(encoding="utf-8").split("\n")
    assert sum(1 for line in lines if line and not line.startswith("<")) == TRICKY_TOKENS
    assert sum(1 for line in lines if line.startswith("<s ")) == TRICKY_SENTENCES
    assert all("\t" not in word for word in TRICKY_WORDS)
    tokens = read_tricky()
    assert len(tokens) == TRICKY_TOKENS and tokens[-1].s == TRICKY_SENTENCES - 1
    words = {token.word for token in tokens}
    assert [word for word in TRICKY_WORDS if word not in words] == []
    # what the fixture promises beyond the words: entities to decode, NFD to normalise, empty metadata,
    # a url of more than 2,000 characters, a long sentence, and ids of one text and sentence each
    raw = "\n".join(lines)
    assert all(entity in raw for entity in ("&amp;", "&quot;", "&apos;", "&lt;", "&gt;")) and "e\u0301" in raw
    texts = {token.text["id"]: token.text for token in tokens}
    assert len(texts) == 40 and len({token.text["genre"] for token in tokens}) == 6
    for key in ("genre", "host", "year", "date", "url"):
        assert any(text[key] == "" for text in texts.values()), key
    assert max(len(text["url"]) for text in texts.values()) > 2000
    assert all(re.fullmatch(r"20(0[3-9]|1[0-2])|", text["year"]) for text in texts.values())
    sentence_ids = re.findall(r'<s id="([^"]*)">', raw)
    assert len(set(sentence_ids)) == len(sentence_ids) == TRICKY_SENTENCES
    lengths: dict[int, int] = {}
    for token in tokens:
        lengths[token.s] = lengths.get(token.s, 0) + 1
    assert max(lengths.values()) > 350
