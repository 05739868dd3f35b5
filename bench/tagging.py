"""Tagging for `cowbird build`: SoMaJo + HanTa (with the C5 -> Penn mapping) against gold and silver tags.

English: the English Web Treebank's gold Penn tags and lemmas (``../shared/reference/ewt.vrt``, 254,818
tokens, web genres). Each gold sentence's own tokens are given to the tagger, so tokenisation does not
count; figures: accuracy over all tokens, the 15 most frequent confusions (gold -> ours), lemma
agreement (exact, and ignoring case: EWT capitalises the lemma of a proper noun even where the text
does not, ``tampa`` -> ``Tampa``).
German: GermaParl1386 (``../shared/reference/germaparl``, 149,800 tokens of Bundestag speeches). Its
STTS tags and lemmas are TreeTagger's, not hand-corrected gold, so the figure is agreement with
TreeTagger, not accuracy.
Speed: tokens per second on one core for the whole Annotator (SoMaJo tokens and sentences + HanTa +
mapping) on running text (EWT's paragraphs joined back into text), and for tagging alone; the first
pass (cold: every word form analysed) and a second pass over the same text (warm memo, as a worker is
after its first thousands of pages). Times are the process's CPU time (``time.process_time``), so the
figures are per core even when other work shares the machine.

Run: ``.venv/bin/python -m bench.tagging [--limit SENTENCES]``; reads the reference data read-only and
skips with a message when it is absent. Figures go into bench/RESULTS.md and docs/building-corpora.md.
"""

from __future__ import annotations

import argparse
import html
import os
import resource
import sys
import time
from collections import Counter
from pathlib import Path

from cowbird.build.annotate import Annotator

REFERENCE = Path(os.environ.get("COWBIRD_REFERENCE") or Path(__file__).resolve().parent.parent.parent / "shared"
                 / "reference")


def read_ewt(path: Path) -> tuple[list[list[tuple[str, str, str]]], list[str]]:
    """EWT's sentences as (word, gold Penn tag, gold lemma) and its paragraphs as running text."""
    sentences: list[list[tuple[str, str, str]]] = []
    paragraphs: list[str] = []
    sentence: list[tuple[str, str, str]] = []
    paragraph: list[str] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith("<"):
                if line.startswith("</s"):
                    sentences.append(sentence)
                    paragraph.extend(w for w, _, _ in sentence)
                    sentence = []
                elif line.startswith("</p"):
                    paragraphs.append(" ".join(paragraph))
                    paragraph = []
                continue
            word, pos, _upos, lemma = line.split("\t")
            sentence.append((html.unescape(word), pos, html.unescape(lemma)))
    return sentences, paragraphs


def english(limit: int | None) -> None:
    path = REFERENCE / "ewt.vrt"
    if not path.exists():
        print(f"skipped English: {path} is absent (the reference data is not laid out beside the project)")
        return
    sentences, paragraphs = read_ewt(path)
    if limit:
        sentences = sentences[:limit]
    annotator = Annotator("en")
    tagger = annotator._tagger
    start = time.process_time()
    tagged = tagger.tag([[w for w, _, _ in s] for s in sentences])
    elapsed = time.process_time() - start
    total = right = lemma_exact = lemma_fold = 0
    confusions: Counter[tuple[str, str]] = Counter()
    per_gold: Counter[str] = Counter()
    per_gold_right: Counter[str] = Counter()
    for gold, ours in zip(sentences, tagged, strict=True):
        for (_word, pos, lemma), (our_pos, our_lemma) in zip(gold, ours, strict=True):
            total += 1
            per_gold[pos] += 1
            if pos == our_pos:
                right += 1
                per_gold_right[pos] += 1
            else:
                confusions[(pos, our_pos)] += 1
            lemma_exact += lemma == our_lemma
            lemma_fold += lemma.lower() == our_lemma.lower()
    print(f"English (EWT gold tokens, {len(sentences):,} sentences, {total:,} tokens)")
    print(f"  POS accuracy   {right / total:.2%}")
    print(f"  lemma agreement {lemma_exact / total:.2%} exact, {lemma_fold / total:.2%} ignoring case")
    print(f"  tagging alone (gold tokens, cold memo): {total / elapsed:,.0f} tokens/s on one core")
    print("  top 15 confusions (gold -> ours, count):")
    for (gold_tag, our_tag), count in confusions.most_common(15):
        print(f"    {gold_tag:6} -> {our_tag:6} {count:6,}")
    print("  accuracy of the 12 most frequent gold tags:")
    for tag, count in per_gold.most_common(12):
        print(f"    {tag:6} {per_gold_right[tag] / count:.1%} of {count:,}")
    speed(paragraphs if not limit else paragraphs[: max(1, limit // 4)])


def speed(paragraphs: list[str]) -> None:
    """SoMaJo + HanTa + mapping on running text, cold and warm, and SoMaJo alone."""
    annotator = Annotator("en")
    for label in ("cold", "warm"):
        start = time.process_time()
        tokens = sum(len(t) for block in annotator.annotate(paragraphs) for t in block)
        elapsed = time.process_time() - start
        print(f"  running text, SoMaJo+HanTa ({label}): {tokens:,} tokens in {elapsed:.1f} s = "
              f"{tokens / elapsed:,.0f} tokens/s on one core")
    start = time.process_time()
    tokens = sum(len(s) for text in paragraphs for s in annotator.sentences(text))
    elapsed = time.process_time() - start
    print(f"  SoMaJo alone: {tokens / elapsed:,.0f} tokens/s")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS of this process: {rss:,.0f} MiB")


def german(limit: int | None) -> None:
    registry = REFERENCE / "germaparl" / "registry"
    if not registry.exists():
        print(f"skipped German: {registry} is absent")
        return
    from cowbird.store.reader import CwbCorpus

    corpus = CwbCorpus.open(registry, "germaparl1386")
    words, tags, lemmas = (corpus.p_attribute(name) for name in ("word", "pos", "lemma"))
    regions = corpus.s_attribute("s")
    count = len(regions) if not limit else min(limit, len(regions))
    sentences: list[list[tuple[str, str, str]]] = []
    for number in range(count):
        region = regions.region(number)
        ids = [(words.id_range(region.start, region.end + 1), tags.id_range(region.start, region.end + 1),
                lemmas.id_range(region.start, region.end + 1))]
        w, p, lem = ids[0]
        sentences.append([(words.id2str(int(a)), tags.id2str(int(b)), lemmas.id2str(int(c)))
                          for a, b, c in zip(w, p, lem, strict=True)])
    tagger = Annotator("de")._tagger
    token_lists = [[w for w, _, _ in s] for s in sentences]
    start = time.process_time()
    tagged = tagger.tag(token_lists)
    elapsed = time.process_time() - start
    start = time.process_time()
    tagger.tag(token_lists)
    warm = time.process_time() - start
    total = right = lemma_same = 0
    confusions: Counter[tuple[str, str]] = Counter()
    lemma_differences: Counter[tuple[str, str]] = Counter()
    for gold, ours in zip(sentences, tagged, strict=True):
        for (_word, pos, lemma), (our_pos, our_lemma) in zip(gold, ours, strict=True):
            total += 1
            right += pos == our_pos
            lemma_same += lemma == our_lemma
            if pos != our_pos:
                confusions[(pos, our_pos)] += 1
            if lemma != our_lemma:
                lemma_differences[(lemma, our_lemma)] += 1
    print(f"German (GermaParl1386, TreeTagger's STTS as reference, {count:,} sentences, {total:,} tokens)")
    print(f"  STTS agreement {right / total:.2%}; lemma agreement {lemma_same / total:.2%}")
    print(f"  tagging alone: {total / elapsed:,.0f} tokens/s on one core cold, {total / warm:,.0f} warm")
    print("  top 10 lemma differences (TreeTagger -> HanTa, count): " + ", ".join(
        f"{a} -> {b} {n:,}" for (a, b), n in lemma_differences.most_common(10)))
    print("  top 15 disagreements (TreeTagger -> HanTa, count):")
    for (gold_tag, our_tag), n in confusions.most_common(15):
        print(f"    {gold_tag:7} -> {our_tag:7} {n:6,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=None, help="sentences per language (default: all)")
    parser.add_argument("--language", choices=("en", "de", "both"), default="both")
    args = parser.parse_args()
    if args.language in ("en", "both"):
        english(args.limit)
    if args.language in ("de", "both"):
        german(args.limit)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
