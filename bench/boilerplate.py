"""Boilerplate per block for `cowbird build`: cowbird.build.blocks against trafilatura, jusText and resiliparse.

The gold set: real web pages with a human's decision of what is main text and what is not. The
package registries (the only outside this machine reaches) carry one such set: the 100-odd real
pages (mostly German, some English, a few French and Chinese) that trafilatura 1.0.0's source
distribution ships in ``tests/cache/``, with the gold in ``tests/realworld_tests.py``: per page,
phrases of the main text that an extractor must keep and phrases of the boilerplate (menus, related
links, comments, cookie notes, footers) it must leave out. The gold is Adrien Barbaresi's (the
author of trafilatura), and trafilatura was tuned on these pages: its figure here flatters it.
jusText, resiliparse and cowbird's classifier were not tuned on them. Looked for and not found in
the registries' packages: the Web Content Extraction Benchmark, CleanEval, Mozilla Readability's
test pages, goose3's, newspaper's, dragnet's and Postlight's fixtures (their packages ship without
their tests), html-text's and inscriptis's test pages (gold is the whole page's text, not the main
text).

The measure is trafilatura's own evaluation's: a kept phrase present in the page's main text is a
true positive, a kept phrase missing a false negative, a boilerplate phrase present a false
positive; precision, recall and F1 over all phrases (and per language: German and English, by
py3langid on the page's kept phrases). Each candidate decides per block of cowbird.build.blocks's
segmentation (what the build keeps): cowbird's own classifier directly; a whole-page extractor
(trafilatura, jusText with its own segmentation, resiliparse's main-content extraction) by whether
the block's text is in the extractor's output. The extractor's own output is scored too
("whole page"), for reference. ``ms/page`` is the time per page of the candidate with the blocks
(parse, segmentation, decision), CPU time of one core. The page's language is passed to what counts stop words
(jusText; the build passes the language it builds for).

Run (fetches the gold set into the cache once, with pip; downloads nothing when the cache is filled):
``.venv/bin/python -m bench.boilerplate [--cache ../bench-cache/boilerplate]``. The figures go into
bench/RESULTS.md and the choice into docs/building-corpora.md ("Blocks and boilerplate").
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cowbird.build.blocks import LANGUAGES, extract_blocks, paragraphs, stop_languages, stoplist
from cowbird.build.decode import decode_html

GOLD_PACKAGE = "trafilatura==1.0.0"
"""The source distribution carrying the gold set (the pages in tests/cache/, the gold in tests/realworld_tests.py)."""
DEFAULT_CACHE = Path(__file__).resolve().parent.parent.parent / "bench-cache" / "boilerplate"
_SPACE = re.compile(r"\s+")


@dataclass
class GoldPage:
    url: str
    html: str
    keep: list[str] = field(default_factory=list)  # phrases of the main text
    drop: list[str] = field(default_factory=list)  # phrases of the boilerplate
    language: str = ""


def fetch(cache: Path) -> Path:
    """The unpacked source distribution in ``cache``, downloaded with pip when it is not there."""
    cache.mkdir(parents=True, exist_ok=True)
    name = GOLD_PACKAGE.replace("==", "-")
    unpacked = cache / name
    if unpacked.is_dir():
        return unpacked
    archive = cache / f"{name}.tar.gz"
    if not archive.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "--no-build-isolation", GOLD_PACKAGE, "-d", str(cache)], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return unpacked


def _strings(node: ast.AST) -> list[tuple[str, bool]]:
    """The (phrase, must be present) pairs of an assertion: ``'x' in result and 'y' not in result``."""
    found: list[tuple[str, bool]] = []
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Compare) and len(sub.ops) == 1 and isinstance(sub.left, ast.Constant)
                and isinstance(sub.left.value, str) and isinstance(sub.comparators[0], ast.Name)
                and sub.comparators[0].id == "result"):
            if isinstance(sub.ops[0], ast.In):
                found.append((sub.left.value, True))
            elif isinstance(sub.ops[0], ast.NotIn):
                found.append((sub.left.value, False))
    return found


def gold_pages(unpacked: Path) -> list[GoldPage]:
    """The pages of ``test_extract`` in realworld_tests.py with their kept and dropped phrases."""
    tests = unpacked / "tests"
    tree = ast.parse((tests / "realworld_tests.py").read_text(encoding="utf-8"))
    mock: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MOCK_PAGES" for t in node.targets):
            mock = ast.literal_eval(node.value)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "test_extract")
    pages: dict[str, GoldPage] = {}
    current: GoldPage | None = None

    def visit(statements: list[ast.stmt]) -> None:
        nonlocal current
        for statement in statements:
            if (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
                    and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "load_mock_page"):
                url = ast.literal_eval(statement.value.args[0])
                path = tests / "cache" / mock.get(url, "")
                if url not in mock or not path.is_file():
                    current = None
                    continue
                current = pages.setdefault(url, GoldPage(url, decode_html(path.read_bytes(), None)))
            elif isinstance(statement, ast.Assert) and current is not None:
                for phrase, present in _strings(statement.test):
                    (current.keep if present else current.drop).append(phrase)
            elif isinstance(statement, ast.If | ast.With | ast.For):
                visit(statement.body)
    visit(function.body)
    found = [page for page in pages.values() if page.keep or page.drop]
    try:
        import py3langid
    except ImportError:
        return found
    for page in found:
        page.language = str(py3langid.classify(" ".join(page.keep) or page.html[:2000])[0])
    return found


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _mapped(html: str, extracted: str) -> str:
    """The blocks of cowbird's segmentation whose text is in ``extracted``, joined: a whole-page extractor's
    decision per block."""
    output = _normal(extracted)
    return "\n".join(p.text for p in paragraphs(html) if p.text in output)


def _language(page: GoldPage) -> str | None:
    """The page's language where jusText has stop words for it (the build passes the language it builds for)."""
    return page.language if page.language in LANGUAGES else None


def _trafilatura(page: GoldPage, comments: bool = False, fast: bool = False) -> str:
    import trafilatura

    return str(trafilatura.extract(page.html, url=page.url, fast=fast, include_comments=comments,
                                   include_tables=True) or "")


def _justext(page: GoldPage) -> str:
    import justext

    found = justext.justext(page.html.encode("utf-8"), stoplist(stop_languages(_language(page))), encoding="utf-8")
    return "\n".join(p.text for p in found if not p.is_boilerplate)


def _resiliparse(page: GoldPage) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    return str(extract_plain_text(page.html, main_content=True))


def _cowbird(method: str) -> Callable[[GoldPage], str]:
    def run(page: GoldPage) -> str:
        blocks = extract_blocks(page.html, page.url, language=_language(page), method=method)
        return "\n".join(block.text for block in blocks if block.main)
    return run


WHOLE: dict[str, Callable[[GoldPage], str]] = {
    "trafilatura (no comments)": _trafilatura,
    "trafilatura (fast, no comments)": lambda page: _trafilatura(page, fast=True),
    "trafilatura (with comments)": lambda page: _trafilatura(page, comments=True),
    "jusText": _justext,
    "resiliparse": _resiliparse,
}


def _per_block(extractor: Callable[[GoldPage], str]) -> Callable[[GoldPage], str]:
    return lambda page: _mapped(page.html, extractor(page))


def candidates() -> dict[str, Callable[[GoldPage], str]]:
    """Name -> the page's main text as the build would keep it (per block), or as the extractor gives it."""
    found: dict[str, Callable[[GoldPage], str]] = {
        "cowbird.build.blocks (trafilatura decision, jusText scores): chosen": _cowbird("trafilatura"),
        "cowbird.build.blocks method=trafilatura-fast": _cowbird("trafilatura-fast"),
        "cowbird.build.blocks method=justext (jusText + markup hints)": _cowbird("justext"),
    }
    for name, extractor in WHOLE.items():
        found[f"{name} per block"] = _per_block(extractor)
        found[f"{name} whole page"] = extractor
    return found


@dataclass
class Score:
    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    seconds: float = 0.0
    pages: int = 0

    def add(self, page: GoldPage, output: str) -> None:
        text = _normal(output)
        for phrase in page.keep:
            if _normal(phrase) in text:
                self.tp += 1
            else:
                self.fn += 1
        for phrase in page.drop:
            if _normal(phrase) in text:
                self.fp += 1
            else:
                self.tn += 1

    def figures(self) -> tuple[float, float, float]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1


def evaluate(pages: list[GoldPage]) -> dict[str, dict[str, Score]]:
    """Per candidate, per language ("all", "de", "en", ...), its confusion counts and time."""
    results: dict[str, dict[str, Score]] = {}
    for name, candidate in candidates().items():
        scores = results.setdefault(name, {})
        for page in pages:
            started = time.process_time()  # CPU time: other work on the machine does not count
            output = candidate(page)
            elapsed = time.process_time() - started
            for key in ("all", page.language):
                score = scores.setdefault(key, Score())
                score.add(page, output)
                score.seconds += elapsed
                score.pages += 1
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the gold set is kept (filled by pip)")
    args = parser.parse_args(argv)
    unpacked = fetch(args.cache)
    pages = gold_pages(unpacked)
    languages = sorted({page.language for page in pages})
    counts = {lang: sum(page.language == lang for page in pages) for lang in languages}
    phrases = sum(len(page.keep) + len(page.drop) for page in pages)
    print(f"gold set: {GOLD_PACKAGE} tests/cache + realworld_tests.py: {len(pages)} pages {counts}, {phrases} phrases")
    results = evaluate(pages)
    print("| candidate | language | pages | precision | recall | F1 | ms/page (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for name, scores in results.items():
        for key in ["all", "de", "en"]:
            if key not in scores:
                continue
            score = scores[key]
            precision, recall, f1 = score.figures()
            print(f"| {name} | {key} | {score.pages} | {precision:.3f} | {recall:.3f} | {f1:.3f} | "
                  f"{1000 * score.seconds / score.pages:.1f} |")
    time_large_page()
    time_decode(unpacked)


def large_page(megabytes: float = 5.0) -> str:
    """A page of ``megabytes`` MB: a navigation bar, then the same article paragraph over and over."""
    nav = "<nav>" + " ".join(f'<a href="/{k}">Section {k}</a>' for k in range(20)) + "</nav>\n"
    paragraph = ("<p>The council is expected to look at the plans again in the spring, when the results of a new "
                 "tender for the work are known, and the parents will be told what it means for their children.</p>\n")
    return "<html><body>" + nav + paragraph * int(megabytes * 1_000_000 / len(paragraph)) + "</body></html>"


def time_decode(unpacked: Path) -> None:
    """decode_html's CPU time per page over the gold set's raw pages, and how each page's encoding was found."""
    from collections import Counter

    from cowbird.build.decode import choose_encoding

    bodies = [path.read_bytes() for path in sorted((unpacked / "tests" / "cache").glob("*.html"))]
    started = time.process_time()
    for body in bodies:
        decode_html(body, None)
    elapsed = time.process_time() - started
    how = Counter(" ".join(reversed(choose_encoding(body, None))) for body in bodies)
    print(f"decode_html: {len(bodies)} pages, {1000 * elapsed / len(bodies):.2f} ms/page CPU; {dict(how)}")


def time_large_page() -> None:
    html = large_page()
    for method in ("trafilatura", "trafilatura-fast", "justext"):
        started = time.process_time()
        blocks = extract_blocks(html, language="en", method=method)
        print(f"5 MB page, method={method}: {len(blocks)} blocks in {time.process_time() - started:.2f} s CPU")


if __name__ == "__main__":
    main()
