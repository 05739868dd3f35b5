"""The demo corpus: English-like web text made by a small grammar, deterministically, offline.

Texts come from made-up sites (``url host tld genre year lastmod``); each sentence is generated
by a handful of clause patterns over a lexicon with agreement (a singular subject takes *runs*,
a plural one *run*; *a* before a consonant, *an* before a vowel), words drawn with Zipfian
weights, and every token carries a Penn-style POS and a lemma. Like COW, the sentences of the
whole corpus are then shuffled, so that neighbouring sentences rarely come from the same text.
The same seed always gives the same file.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

VERSION = 1
"""Bump when the output changes: the demo re-encodes when the version in its stamp differs."""

NOUNS = [  # singular, plural
    ("house", "houses"), ("time", "times"), ("people", "people"), ("year", "years"), ("way", "ways"),
    ("day", "days"), ("man", "men"), ("woman", "women"), ("child", "children"), ("world", "worlds"),
    ("school", "schools"), ("family", "families"), ("student", "students"), ("book", "books"),
    ("city", "cities"), ("car", "cars"), ("garden", "gardens"), ("game", "games"), ("company", "companies"),
    ("problem", "problems"), ("friend", "friends"), ("question", "questions"), ("idea", "ideas"),
    ("recipe", "recipes"), ("phone", "phones"), ("teacher", "teachers"), ("story", "stories"),
    ("price", "prices"), ("team", "teams"), ("movie", "movies"), ("apple", "apples"), ("engine", "engines"),
    ("island", "islands"), ("office", "offices"), ("answer", "answers"), ("window", "windows"),
]  # fmt: skip
VERBS = [  # base, 3rd singular, past
    ("see", "sees", "saw"), ("make", "makes", "made"), ("like", "likes", "liked"), ("need", "needs", "needed"),
    ("find", "finds", "found"), ("want", "wants", "wanted"), ("buy", "buys", "bought"), ("love", "loves", "loved"),
    ("build", "builds", "built"), ("read", "reads", "read"), ("visit", "visits", "visited"),
    ("sell", "sells", "sold"), ("fix", "fixes", "fixed"), ("paint", "paints", "painted"),
    ("open", "opens", "opened"), ("share", "shares", "shared"), ("eat", "eats", "ate"), ("use", "uses", "used"),
]  # fmt: skip
INTRANSITIVE = [
    ("work", "works", "worked"), ("run", "runs", "ran"), ("live", "lives", "lived"), ("wait", "waits", "waited"),
    ("laugh", "laughs", "laughed"), ("travel", "travels", "travelled"), ("arrive", "arrives", "arrived"),
]  # fmt: skip
ADJECTIVES = ["new", "old", "good", "big", "small", "great", "little", "long", "young", "important", "large",
              "cheap", "beautiful", "early", "quiet", "red", "expensive", "simple", "strange", "happy"]  # fmt: skip
ADVERBS = ["really", "very", "always", "often", "never", "quickly", "finally", "almost", "still", "just"]
PREPOSITIONS = ["in", "on", "at", "near", "with", "from", "for", "behind", "after", "without"]
PLACES = [("London", "NNP"), ("Paris", "NNP"), ("Berlin", "NNP"), ("Texas", "NNP"), ("Tokyo", "NNP")]
GENRES = ["news", "blog", "forum", "shop", "reviews", "recipes"]
TLDS = ["com", "org", "net", "co.uk", "de", "info"]
SITES = ["daily", "my", "the", "best", "open", "home", "city", "green", "smart", "happy"]
SITE_WORDS = ["news", "garden", "kitchen", "travel", "tech", "family", "cars", "books", "games", "life"]


@cache
def _cumulative(count: int) -> list[float]:
    return list(itertools.accumulate(1 / (rank + 1) for rank in range(count)))


def zipf(items: Sequence[T], rng: random.Random) -> T:
    """An item drawn with weight 1/rank: the first ones are common, the last ones rare."""
    return rng.choices(items, cum_weights=_cumulative(len(items)))[0]


@dataclass(frozen=True)
class Token:
    word: str
    pos: str
    lemma: str


class Grammar:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def noun_phrase(self, plural: bool) -> list[Token]:
        rng = self.rng
        if not plural and rng.random() < 0.12:
            word, tag = zipf(PLACES, rng)
            return [Token(word, tag, word)]
        singular, plural_form = zipf(NOUNS, rng)
        tokens: list[Token] = []
        adjective = zipf(ADJECTIVES, rng) if rng.random() < 0.45 else None
        if plural:
            if rng.random() < 0.5:
                tokens.append(Token("the", "DT", "the"))
        else:
            first = adjective or singular
            determiner = rng.choice(["the", "the", "a", "this", "my", "our"])
            if determiner == "a" and first[0] in "aeiou":
                determiner = "an"
            tokens.append(Token(determiner, "PRP$" if determiner in ("my", "our") else "DT",
                                determiner if determiner != "an" else "a"))
        if adjective:
            tokens.append(Token(adjective, "JJ", adjective))
        tokens.append(Token(plural_form if plural else singular, "NNS" if plural else "NN", singular))
        return tokens

    def verb(self, plural: bool, transitive: bool) -> list[Token]:
        rng = self.rng
        base, third, past = zipf(VERBS if transitive else INTRANSITIVE, rng)
        tokens: list[Token] = []
        if rng.random() < 0.2:
            adverb = zipf(ADVERBS, rng)
            tokens.append(Token(adverb, "RB", adverb))
        tense = rng.random()
        if tense < 0.35:
            tokens.append(Token(past, "VBD", base))
        elif tense < 0.5:
            tokens += [Token("will", "MD", "will"), Token(base, "VB", base)]
        elif plural:
            tokens.append(Token(base, "VBP", base))
        else:
            tokens.append(Token(third, "VBZ", base))
        return tokens

    def clause(self) -> list[Token]:
        rng = self.rng
        plural = rng.random() < 0.4
        subject = self.noun_phrase(plural)
        if rng.random() < 0.65:
            tokens = subject + self.verb(plural, True) + self.noun_phrase(rng.random() < 0.4)
        else:
            tokens = subject + self.verb(plural, False)
        if rng.random() < 0.4:
            preposition = zipf(PREPOSITIONS, rng)
            tokens += [Token(preposition, "IN", preposition)] + self.noun_phrase(rng.random() < 0.3)
        return tokens

    def sentence(self) -> list[Token]:
        rng = self.rng
        tokens = self.clause()
        if rng.random() < 0.25:
            conjunction = rng.choice(["and", "but", "because"])
            tokens += [Token(",", ",", ",") if conjunction != "because" else Token(conjunction, "IN", conjunction)]
            if conjunction != "because":
                tokens.append(Token(conjunction, "CC", conjunction))
            tokens += self.clause()
        first = tokens[0]
        tokens[0] = Token(first.word[0].upper() + first.word[1:], first.pos, first.lemma)
        end = rng.choice([".", ".", ".", ".", "!", "?"])
        return tokens + [Token(end, ".", end)]


def texts(tokens: int, seed: int) -> Iterator[tuple[dict[str, str], list[list[Token]]]]:
    """Texts with their metadata, each of 5-40 sentences, until about ``tokens`` tokens."""
    rng = random.Random(seed)
    grammar = Grammar(rng)
    made, number = 0, 0
    while made < tokens:
        number += 1
        host = f"www.{rng.choice(SITES)}{rng.choice(SITE_WORDS)}.{rng.choice(TLDS)}"
        year = rng.randint(2005, 2024)
        meta = {"id": f"t{number:06d}", "url": f"https://{host}/{rng.choice(GENRES)}/{number}", "host": host,
                "tld": host.rsplit(".", 1)[-1], "genre": rng.choice(GENRES), "year": str(year),
                "lastmod": f"{min(2025, year + rng.randint(0, 3))}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"}
        sentences = [grammar.sentence() for _ in range(rng.randint(5, 40))]
        made += sum(len(s) for s in sentences)
        yield meta, sentences


def write_vrt(path: Path, tokens: int = 2_000_000, seed: int = 2024) -> int:
    """The demo corpus as VRT: ``<text ...>`` elements of ``<s>`` sentences, shuffled across the
    corpus like COW (each sentence keeps the metadata of its text). Returns the number of tokens."""
    rng = random.Random(seed + 1)
    sentences: list[tuple[dict[str, str], list[Token]]] = []
    for meta, text in texts(tokens, seed):
        sentences += [(meta, sentence) for sentence in text]
    rng.shuffle(sentences)
    written = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        for index, (meta, sentence) in enumerate(sentences):
            attributes = " ".join(f'{k}="{v}"' for k, v in meta.items())
            out.write(f"<text {attributes}>\n<s id=\"s{index:07d}\">\n")
            out.write("".join(f"{t.word}\t{t.pos}\t{t.lemma}\n" for t in sentence))
            out.write("</s>\n</text>\n")
            written += len(sentence)
    temporary.replace(path)
    return written
