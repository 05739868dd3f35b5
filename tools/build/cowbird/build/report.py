"""The report of a build: ``OUT/report.tsv`` and ``OUT/report.html``, from the phases' markers.

``report.tsv`` has the columns ``stage``, ``reason``, ``documents``, ``tokens``. For each stage of the
clean phase (read, decode, blocks, boilerplate, language, badness) a row ``in``, a row per reason a page
was left out there, and a row ``out``; then the duplicates (``exact duplicate``, ``near duplicate``),
the annotation (documents and tokens written), the languages of the cleaned documents (stage
``languages``) and the tokens per partition (stage ``partition``, reason the partition's id). The
numbers add up: each stage's ``out`` is its ``in`` less its reasons. ``report.html`` shows the same as a
page (no JavaScript, every value escaped).
"""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path
from typing import Any

from cowbird.build.work import is_done, read_marker, read_shards, shard_count, work_dir, write_text

STAGES = ("read", "decode", "blocks", "boilerplate", "language", "badness")


def report_rows(out: Path, encoded: dict[str, Any] | None = None) -> list[tuple[str, str, int, int | None]]:
    """(stage, reason, documents, tokens) rows of the report from the markers written so far."""
    shards = shard_count(read_shards(out))
    read = 0
    skipped: Counter[tuple[str, str]] = Counter()
    languages: Counter[str] = Counter()
    for k in range(shards):
        if not is_done(out, "clean", k):
            continue
        summary = read_marker(out, "clean", k)
        read += int(summary.get("read", 0))
        for key, count in summary.get("skipped", {}).items():
            stage, _, reason = key.partition("\t")
            skipped[(stage, reason)] += int(count)
        languages.update({str(k2): int(v) for k2, v in summary.get("languages", {}).items()})
    rows: list[tuple[str, str, int, int | None]] = []
    current = read
    stages = list(STAGES) + sorted({stage for stage, _ in skipped} - set(STAGES))
    for stage in stages:
        rows.append((stage, "in", current, None))
        for (where, reason), count in sorted(skipped.items()):
            if where == stage:
                rows.append((stage, reason, count, None))
                current -= count
        rows.append((stage, "out", current, None))
    if is_done(out, "dedup"):
        removed = read_marker(out, "dedup").get("removed", {})
        rows.append(("duplicates", "in", current, None))
        for reason in ("exact duplicate", "near duplicate"):
            count = int(removed.get(reason, 0))
            rows.append(("duplicates", reason, count, None))
            current -= count
        rows.append(("duplicates", "out", current, None))
    annotated = [read_marker(out, "annotate", k) for k in range(shards) if is_done(out, "annotate", k)]
    if annotated:
        documents = sum(int(a.get("documents", 0)) for a in annotated)
        tokens = sum(int(a.get("tokens", 0)) for a in annotated)
        failed = sum(int(a.get("failed", 0)) for a in annotated)
        rows.append(("annotate", "in", current, None))
        if failed:
            rows.append(("annotate", "error", failed, None))
        if len(annotated) == shards and current > documents + failed:
            rows.append(("annotate", "no tokens", current - documents - failed, None))
        rows.append(("annotate", "out", documents, tokens))
    for code, count in sorted(languages.items(), key=lambda item: (-item[1], item[0])):
        rows.append(("languages", code, count, None))
    if encoded is None and is_done(out, "encode"):
        encoded = read_marker(out, "encode")
    for part in (encoded or {}).get("partitions", []):
        rows.append(("partition", str(part["name"]), 0, int(part["tokens"])))
    return rows


def _tsv(value: object) -> str:
    return " ".join(str(value).split())


def write_report(out: Path, encoded: dict[str, Any] | None = None) -> None:
    """Write ``OUT/report.tsv`` and ``OUT/report.html``."""
    rows = report_rows(out, encoded)
    lines = ["stage\treason\tdocuments\ttokens"] + [
        f"{_tsv(stage)}\t{_tsv(reason)}\t{'' if stage == 'partition' else documents}\t"
        f"{'' if tokens is None else tokens}" for stage, reason, documents, tokens in rows]
    write_text(out / "report.tsv", "\n".join(lines) + "\n")
    write_text(out / "report.html", report_html(out, rows))


def report_html(out: Path, rows: list[tuple[str, str, int, int | None]]) -> str:
    settings_path = out / "build.json"
    settings = settings_path.read_text(encoding="utf-8") if settings_path.exists() else ""
    body: list[str] = []
    previous = ""
    for stage, reason, documents, tokens in rows:
        if stage != previous:
            if previous:
                body.append("</tbody>")
            body.append(f'<tbody><tr><th colspan="3" scope="rowgroup">{html.escape(stage)}</th></tr>')
            previous = stage
        shown_documents = "" if stage == "partition" else f"{documents:,}"
        emphasis = ' class="total"' if reason in ("in", "out") else ""
        body.append(f"<tr{emphasis}><td>{html.escape(reason)}</td><td>{shown_documents}</td>"
                    f"<td>{'' if tokens is None else f'{tokens:,}'}</td></tr>")
    if previous:
        body.append("</tbody>")
    skipped_files = sorted((work_dir(out) / "clean").glob("*.skips.tsv")) if (work_dir(out) / "clean").exists() \
        else []
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>cowbird build report: {html.escape(out.name)}</title>",
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;width:100%}td,th{padding:.2em .6em;text-align:left}"
        "td+td{text-align:right}tr.total td{font-weight:bold}tbody th{background:#eee}"
        "pre{background:#f6f6f6;padding:.5em;overflow:auto}</style>",
        "</head><body>",
        f"<h1>Build report: {html.escape(out.name)}</h1>",
        "<p>Documents into and out of each stage of <code>cowbird build</code>, with the reasons pages were "
        "left out; the same as <code>report.tsv</code>. Every skipped page is listed with its source and "
        f"record number in <code>work/clean/SHARD.skips.tsv</code> ({len(skipped_files)} files).</p>",
        '<table><thead><tr><th scope="col">reason</th><th scope="col">documents</th>'
        '<th scope="col">tokens</th></tr></thead>',
        *body,
        "</table>",
        "<h2>Settings</h2>",
        f"<pre>{html.escape(settings)}</pre>",
        "</body></html>",
        "",
    ])
