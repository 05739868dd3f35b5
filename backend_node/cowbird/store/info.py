"""A corpus description in the layout of ``cwb-describe-corpus -s``."""

from __future__ import annotations

from cowbird.store.reader import CwbCorpus


def describe(corpus: CwbCorpus) -> str:
    """Basic facts and per-attribute statistics: tokens and types, regions and annotations."""
    entry = corpus.entry
    registry = entry.path if entry.path is not None else "(none)"
    info = entry.info if entry.info is not None else "(none)"
    lines = [
        "",
        "=" * 60,
        f"Corpus: {corpus.corpus_id}",
        "=" * 60,
        "",
        f"description:    {entry.name}",
        f"registry file:  {registry}",
        f"home directory: {entry.home}/",
        f"info file:      {info}",
        f"encoding:       {entry.charset}",
        f"size (tokens):  {corpus.size}",
        "",
        f"{len(entry.p_attributes):3d} positional attributes",
        f"{len(entry.s_attributes):3d} structural attributes",
        f"{0:3d} alignment  attributes",
        "",
    ]
    for name in entry.p_attributes:
        attribute = corpus.p_attribute(name)
        tokens, types = len(attribute), attribute.lexicon_size
        stats = f"{tokens:10d} tokens, {types:8d} types" if tokens > 0 and types > 0 else "           NO DATA"
        lines.append(f"p-ATT {name:<16} {stats}")
    for name in entry.s_attributes:
        s_attribute = corpus.s_attribute(name)
        annotated = " (with annotations)" if s_attribute.has_values else ""
        lines.append(f"s-ATT {name:<16} {len(s_attribute):10d} regions{annotated}")
    lines.append("")
    return "\n".join(lines) + "\n"
