"""Exact and near-duplicate documents for `cowbird build`: recall and precision of planted duplicates, speed.

20,000 generated documents of 200-800 words, half English-like and half German-like: each language's
30 most frequent function words (with their relative frequencies from cowbird.build.language's
profiles and below) followed by 20,000 pseudo-words built from syllables, drawn from a Zipf
distribution (exponent 1.05), in sentences of 5-25 words. 10 % of the documents are planted near
duplicates of an earlier document, a quarter each with 1, 3, 5 and 10 % of its words changed (each
change a substitution, an insertion or a deletion, chosen at random); 2 % are exact copies of an
earlier document (half with changed case and whitespace); and 2 % are not duplicates but related
documents, whose first 30 % of words are quoted from an earlier one (the rest new): removing one of
them counts against precision. Duplicates are placed after their
original, anywhere later in the input; the documents are cut into 8 shards (the clean phase's files).

Printed: recall of near duplicates per change level, recall of exact copies, precision (removed
documents that were planted, over all removed), ms per document for exact key + signature, seconds
for find_duplicates with its default memory and with a 1-MiB memory bound (many buckets: the same
answer), and the peak RSS. ``--grid`` prints recall and precision for other shingle sizes and bands
on 5,000 documents (how SHINGLE, BANDS x ROWS and THRESHOLD were chosen). ``--scale N`` times
find_duplicates alone on N synthetic signatures with a 64-MiB bound (time and peak RSS as N grows).

Run: ``.venv/bin/python -m bench.near_duplicates [--grid | --scale N]``; the figures go into bench/RESULTS.md.
"""

from __future__ import annotations

import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.ewt import EWT, ewt_documents
from cowbird.build.dedup import BANDS, ROWS, SHINGLE, THRESHOLD, exact_key, find_duplicates, save_signatures
from cowbird.build.dedup import signature as minhash_signature

FUNCTION_WORDS = {
    "en": "the to and of a in i is for that it you was on with as be at this have by are not but from or "
          "they we his an",
    "de": "die der und in das ich ist nicht zu den von mit sie es ein sich des auf dem für im eine auch als "
          "an wir er so",
}
SYLLABLES = ["ka", "te", "ro", "min", "sel", "dan", "pur", "lo", "ven", "tra", "shi", "gor", "bel", "nu",
             "fen", "wal", "ster", "mo", "ri", "quen", "zu", "hal", "pe", "dor"]
LEVELS = (0.01, 0.03, 0.05, 0.10)


class Generator:
    """Zipfian pseudo-text in one language: function words at the top ranks, pseudo-words below."""

    def __init__(self, language: str, seed: int, vocabulary: int = 20_000) -> None:
        self.random = random.Random(seed)
        words = FUNCTION_WORDS[language].split()
        seen = set(words)
        while len(words) < vocabulary:
            word = "".join(self.random.choice(SYLLABLES) for _ in range(self.random.randint(2, 4)))
            if language == "de":
                word = word.capitalize() if self.random.random() < 0.3 else word + "en"
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.weights = [1 / rank**1.05 for rank in range(1, len(words) + 1)]

    def document(self, length: int) -> list[str]:
        return self.random.choices(self.words, self.weights, k=length)

    def text(self, words: list[str]) -> str:
        """The words as sentences of 5-25 words, each capitalised and ended by a full stop."""
        out: list[str] = []
        position = 0
        while position < len(words):
            size = self.random.randint(5, 25)
            sentence = words[position : position + size]
            out.append(" ".join([sentence[0].capitalize(), *sentence[1:]]) + ".")
            position += size
        return " ".join(out)

    def change(self, words: list[str], share: float) -> list[str]:
        """``words`` with round(share * len) changes: substitutions, insertions and deletions at random."""
        return edited(words, share, self.random, lambda: self.document(1)[0])


def edited(words: list[str], share: float, rng: random.Random, new_word: Callable[[], str]) -> list[str]:
    """``words`` with round(share * len) changes, at least one: each a substitution, an insertion or a
    deletion (never of the last word left), chosen at random by ``rng`` at a random position; the words
    put in from ``new_word()``."""
    changed = list(words)
    for _ in range(max(1, round(share * len(words)))):
        operation = rng.choice(("substitute", "insert", "delete"))
        position = rng.randrange(len(changed))
        if operation == "substitute":
            changed[position] = new_word()
        elif operation == "insert":
            changed.insert(position, new_word())
        elif len(changed) > 1:
            del changed[position]
    return changed


def corpus(count: int, seed: int = 66) -> tuple[list[str], dict[int, tuple[str, int]]]:
    """``count`` documents and the planted truth: document number -> (kind, number of its original),
    kind "exact" or the change level as "1 %" ... "10 %"."""
    rng = random.Random(seed)
    generators = {"en": Generator("en", seed), "de": Generator("de", seed + 1)}
    near = count // 10
    exact = count // 50
    originals = count - near - exact - count // 50
    words: list[list[str]] = []
    languages: list[str] = []
    for number in range(originals):
        language = "en" if number % 2 else "de"
        languages.append(language)
        words.append(generators[language].document(rng.randint(200, 800)))
    texts = [generators[language].text(document) for language, document in zip(languages, words, strict=True)]
    planted: list[tuple[str, int, str]] = []
    for number in range(near):
        level = LEVELS[number % len(LEVELS)]
        original = rng.randrange(originals)
        generator = generators[languages[original]]
        planted.append((f"{round(level * 100)} %", original, generator.text(generator.change(words[original], level))))
    for _ in range(count // 50):
        original = rng.randrange(originals)
        generator = generators[languages[original]]
        quoted = words[original][: len(words[original]) * 3 // 10]
        planted.append(("related", original, generator.text(quoted + generator.document(len(quoted) * 7 // 3))))
    for number in range(exact):
        original = rng.randrange(originals)
        text = texts[original]
        if number % 2:
            text = "  " + text.upper().replace(". ", ".\n\n")
        planted.append(("exact", original, text))
    # every planted document somewhere after its original
    order: list[tuple[float, int, str, str, int]] = [(float(n), n, "original", texts[n], -1) for n in range(originals)]
    for kind, original, text in planted:
        order.append((rng.uniform(original + 0.5, originals), len(order), kind, text, original))
    order.sort()
    position = {number: index for index, (_, number, kind, _, _) in enumerate(order) if kind == "original"}
    documents = [text for _, _, _, text, _ in order]
    truth = {index: (kind, position[original]) for index, (_, _, kind, _, original) in enumerate(order)
             if kind not in ("original", "related")}
    return documents, truth


def ewt_corpus(seed: int = 66) -> tuple[list[str], dict[int, tuple[str, int]]] | None:
    """Real web text: the English Web Treebank's documents of at least 100 words (read, not copied,
    from ../shared/reference/ewt.vrt), with near duplicates (a quarter each at 1, 3, 5, 10 % of words
    changed, replacement words drawn from the treebank) for 20 % of them and exact copies of 5 %,
    each after its original. None when the reference data is not there."""
    if not EWT.exists():
        return None
    rng = random.Random(seed)
    documents = ewt_documents(100)
    pool = [word for document in documents for word in document]
    entries: list[tuple[float, str, list[str], int]] = [(float(n), "original", d, n) for n, d in enumerate(documents)]
    for number in range(len(documents) // 5):
        original = rng.randrange(len(documents))
        level = LEVELS[number % len(LEVELS)]
        changed = edited(documents[original], level, rng, lambda: rng.choice(pool))
        entries.append((rng.uniform(original + 0.5, len(documents)), f"{round(level * 100)} %", changed, original))
    for _ in range(len(documents) // 20):
        original = rng.randrange(len(documents))
        entries.append((rng.uniform(original + 0.5, len(documents)), "exact", documents[original], original))
    entries.sort(key=lambda entry: entry[0])
    where = {original: index for index, (_, kind, _, original) in enumerate(entries) if kind == "original"}
    truth = {index: (kind, where[original]) for index, (_, kind, _, original) in enumerate(entries)
             if kind != "original"}
    return [" ".join(words) for _, _, words, _ in entries], truth


def evaluate(documents: list[str], truth: dict[int, tuple[str, int]], folder: Path, shingle: int = SHINGLE,
             threshold: float = THRESHOLD, bands: int = BANDS, rows: int = ROWS,
             memory: int = 256 << 20) -> dict[str, float]:
    """Signatures into 8 shards, find_duplicates, and the figures."""
    ids = [f"{number // 2500:05d}-{number:07d}" for number in range(len(documents))]
    started = time.perf_counter()
    keys = [exact_key(text) for text in documents]
    key_time = time.perf_counter() - started
    started = time.perf_counter()
    signatures = [minhash_signature(text, shingle) for text in documents]
    signature_time = time.perf_counter() - started
    shards: list[Path] = []
    size = (len(documents) + 7) // 8
    for shard in range(8):
        path = folder / f"{shard:05d}.sig.npz"
        part = slice(shard * size, (shard + 1) * size)
        save_signatures(path, ids[part], keys[part], signatures[part])
        shards.append(path)
    started = time.perf_counter()
    removed = find_duplicates(shards, threshold=threshold, bands=bands, rows=rows, work=folder, memory=memory)
    find_time = time.perf_counter() - started
    number = {identifier: index for index, identifier in enumerate(ids)}
    found = {number[identifier]: (reason, number[kept]) for identifier, reason, kept in removed}
    figures: dict[str, float] = {}
    for kind in [f"{round(level * 100)} %" for level in LEVELS] + ["exact"]:
        planted = [index for index, (planted_kind, _) in truth.items() if planted_kind == kind]
        figures[f"recall {kind}"] = sum(index in found for index in planted) / max(1, len(planted))
    figures["exact as exact"] = sum(found.get(index, ("",))[0] == "exact duplicate" for index, (kind, _) in
                                    truth.items() if kind == "exact") / max(1, sum(kind == "exact" for kind, _ in
                                                                                  truth.values()))
    figures["precision"] = sum(index in truth for index in found) / max(1, len(found))
    figures["removed"] = len(found)
    figures["key ms/doc"] = key_time / len(documents) * 1000
    figures["signature ms/doc"] = signature_time / len(documents) * 1000
    figures["find_duplicates s"] = find_time
    figures["find_duplicates ms/doc"] = find_time / len(documents) * 1000
    figures["answer"] = hash(tuple(removed))
    return figures


def scale(count: int, memory: int) -> None:
    """find_duplicates alone on ``count`` synthetic signatures (random values; 5 % near duplicates with
    30 % of their values changed, 1 % exact copies) in shards of 100,000: seconds and peak RSS with
    ``memory`` as the bound, to show that the memory does not grow with the corpus as a hash table's would."""
    rng = np.random.default_rng(66)
    with tempfile.TemporaryDirectory() as folder:
        shards: list[Path] = []
        planted = 0
        for shard, start in enumerate(range(0, count, 100_000)):
            size = min(100_000, count - start)
            signatures = rng.integers(0, 2**32, size=(size, 128), dtype=np.uint32)
            keys = rng.integers(0, 256, size=(size, 16), dtype=np.uint8)
            near = rng.choice(np.arange(size // 2, size), size=size // 20, replace=False)
            source = rng.integers(0, size // 2, size=len(near))
            signatures[near] = signatures[source]
            changed = rng.random((len(near), 128)) < 0.3
            signatures[near] = np.where(changed, rng.integers(0, 2**32, size=(len(near), 128), dtype=np.uint32),
                                        signatures[near])
            rest = np.setdiff1d(np.arange(size // 2, size), near)
            exact = rng.choice(rest, size=size // 100, replace=False)
            keys[exact] = keys[rng.integers(0, size // 2, size=len(exact))]
            planted += len(near) + len(exact)
            path = Path(folder) / f"{shard:05d}.sig.npz"
            save_signatures(path, [f"{shard:05d}-{number:07d}" for number in range(size)],
                            [bytes(key) for key in keys], signatures)
            shards.append(path)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        removed = find_duplicates(shards, work=Path(folder), memory=memory)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{count:,} documents, memory bound {memory >> 20} MiB: find_duplicates {seconds:.1f} s "
          f"({seconds / count * 1e6:.1f} µs a document), {len(removed):,} removed of {planted:,} planted; "
          f"peak RSS {before:.0f} MiB before, {after:.0f} MiB after")


def main() -> None:
    if "--scale" in sys.argv:
        count = int(sys.argv[sys.argv.index("--scale") + 1])
        scale(count, 64 << 20)
        return
    if "--grid" in sys.argv:
        documents, truth = corpus(5_000, seed=7)
        print("| w | bands x rows | threshold | recall 1 % | 3 % | 5 % | 10 % | exact | precision |")
        print("|---|---|---|---|---|---|---|---|---|")
        for shingle in (2, 3, 4, 5):
            for bands, rows in ((32, 4), (42, 3), (64, 2), (16, 8)):
                for threshold in (0.3, 0.4, 0.5):
                    with tempfile.TemporaryDirectory() as folder:
                        f = evaluate(documents, truth, Path(folder), shingle, threshold, bands, rows)
                    print(f"| {shingle} | {bands} x {rows} | {threshold} | {f['recall 1 %']:.3f} | "
                          f"{f['recall 3 %']:.3f} | {f['recall 5 %']:.3f} | {f['recall 10 %']:.3f} | "
                          f"{f['recall exact']:.3f} | {f['precision']:.4f} |", flush=True)
        return
    started = time.perf_counter()
    documents, truth = corpus(20_000)
    words = sum(len(text.split()) for text in documents)
    print(f"{len(documents)} documents, {words / len(documents):.0f} words each on average, generated in "
          f"{time.perf_counter() - started:.1f} s; w = {SHINGLE}, {BANDS} x {ROWS}, threshold {THRESHOLD}; "
          "machine: 2 cores")
    with tempfile.TemporaryDirectory() as folder:
        figures = evaluate(documents, truth, Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        bounded = evaluate(documents, truth, Path(folder), memory=1 << 20)
    for name, value in figures.items():
        if name != "answer":
            print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}")
    print(f"find_duplicates with memory=1 MiB: {bounded['find_duplicates s']:.2f} s, same answer: "
          f"{bounded['answer'] == figures['answer']}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    real = ewt_corpus()
    if real is None:
        print(f"real text: {EWT} is not there; skipped")
        return
    documents, truth = real
    with tempfile.TemporaryDirectory() as folder:
        figures = evaluate(documents, truth, Path(folder))
    print(f"real text (EWT, {len(documents)} documents of >= 100 words with the planted ones): " + ", ".join(
        f"{name} {value:.3f}" for name, value in figures.items() if name.startswith(("recall", "precision"))))


if __name__ == "__main__":
    main()
