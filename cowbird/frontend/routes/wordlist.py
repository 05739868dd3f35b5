"""``GET /api/v1/wordlist``: the word list or n-gram list of a corpus or of a subcorpus (its texts
chosen by their metadata), by any p-attribute, exact over every partition (``cowbird.core.wordlist``)."""

from __future__ import annotations

import datetime
import hashlib
import time
from typing import Annotated, Any, cast
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from cowbird import __version__
from cowbird.core.errors import BadParameter, UnknownAttribute
from cowbird.core.search import failed_partitions
from cowbird.core.wire import RegionFilter
from cowbird.core.wordlist import WordListSpec, word_list
from cowbird.frontend.downloads import MEDIA_TYPES, writer
from cowbird.frontend.hits import partition_result
from cowbird.frontend.params import MAX_JSON_ROWS, WordListParameters
from cowbird.frontend.querying import MAX_FILTERS, parse_filter
from cowbird.frontend.routes.analyses import exactly
from cowbird.frontend.routes.deps import Corpora, CurrentUser, Nodes, Quota, until_disconnected
from cowbird.frontend.schemas import WordListResult, WordListRow
from cowbird.frontend.state import frontend_state
from cowbird.query import AttributeTest, LabelRef, QuerySyntaxError, RegexValue, TokenPattern, serialize
from cowbird.query import Query as ParsedQuery
from cowbird.query import Sequence as Succession
from cowbird.query.regex_check import check_regex

router = APIRouter(prefix="/api/v1", tags=["analyses"])

DOCUMENT = "text"
"""The s-attribute n-grams stay within by default, when the corpus has it."""


@router.get("/wordlist", response_model=WordListResult, responses={200: {"content": {
    "application/json": {}, **{MEDIA_TYPES[f].split(";")[0]: {} for f in ("tsv", "csv", "xlsx")}},
    "description": "The word list as JSON, or with format=tsv|csv|xlsx as a file."}})
async def wordlist(request: Request, user: CurrentUser, quota: Quota, catalogue: Corpora, nodes: Nodes,
                   asked: Annotated[WordListParameters, Query()]) -> BaseModel | Response:
    """The ``limit`` most frequent n-grams (n=1: words) of ``attribute`` with at least ``min`` occurrences,
    in the corpus or in the subcorpus its ``filter``s choose, staying within one ``within`` region (text);
    only those with a token matching ``match``, if given. Exact over every partition that answers."""
    started = time.perf_counter()
    target = catalogue.get(asked.corpus, user)
    if asked.attribute not in target.p_attributes:
        raise UnknownAttribute(f"attribute={asked.attribute}: corpus {target.name} has no p-attribute "
                               f"{asked.attribute!r} (it has: {', '.join(target.p_attributes)})")
    within = asked.within if asked.within is not None else (DOCUMENT if DOCUMENT in target.s_attributes else "")
    if within in ("", "none"):
        within = ""
    elif within not in target.s_attributes:
        raise UnknownAttribute(f"within={within}: corpus {target.name} has no s-attribute {within!r} "
                               f"(it has: {', '.join(target.s_attributes) or 'none'}; within=none crosses them all)")
    if asked.limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={asked.limit:,}: a word list has at most {MAX_JSON_ROWS:,} rows at once; raise "
                           "min or narrow it with match")
    if len(asked.filters) > MAX_FILTERS:
        raise BadParameter(f"filter: {len(asked.filters):,} filters; at most {MAX_FILTERS}")
    filters = []
    for text in asked.filters:
        comparison = parse_filter(text, target)
        assert isinstance(comparison.left, LabelRef) and isinstance(comparison.right, RegexValue)
        filters.append(RegionFilter(attribute=comparison.left.attribute, negated=comparison.negated,
                                    pattern=comparison.right.pattern))
    if asked.match is not None:
        problem, _ = check_regex(asked.match)
        if problem is not None:
            raise BadParameter(f"match={asked.match!r}: {problem.message}")
    spec = WordListSpec(asked.attribute, asked.n, within or None, tuple(filters), asked.match, asked.ignore_case,
                        asked.min, asked.limit)
    key = quota.key(user, request)
    deadline = frontend_state(request).settings.limits.deadline
    with quota.running(user, key):
        found = await until_disconnected(request, word_list(nodes, target.partitions, spec, nodes.time_limit),
                                         deadline)
    request.state.log_corpus = target.name
    failed = failed_partitions(found.statuses)
    tokens = found.tokens
    rows = [WordListRow(tokens=list(k), value=" ".join(k), frequency=c,
                        per_million=round(c * 1e6 / tokens, 3) if tokens else 0.0,
                        hits=_hits(target.name, asked.attribute, k, within, asked.filters)) for k, c in found.rows]
    if asked.format != "json":
        return _file(asked, target.name, target.config.version or None, target.size, within, found.tokens,
                     found.ngrams, found.more, failed, rows)
    return WordListResult(
        corpus=target.name, attribute=asked.attribute, n=asked.n, within=within or None, filters=asked.filters,
        match=asked.match, min=asked.min, tokens=found.tokens, ngrams=found.ngrams, rows=rows, more=found.more,
        complete=not failed, failed=failed, partitions=[partition_result(s) for s in found.statuses],
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1))


def _file(asked: WordListParameters, corpus: str, version: str | None, size: int, within: str, tokens: int,
          ngrams: int, more: bool, failed: list[str], rows: list[WordListRow]) -> Response:
    """The rows as a TSV, CSV or XLSX file, with a metadata block saying what was counted and how."""
    about: dict[str, Any] = {
        "analysis": "wordlist", "corpus": corpus, "corpus_version": version, "corpus_size": size,
        "attribute": asked.attribute, "n": asked.n, "within": within or None, "filters": asked.filters,
        "match": asked.match, "ignore_case": asked.ignore_case, "min": asked.min, "limit": asked.limit,
        "subcorpus_tokens": tokens, "ngrams": ngrams, "rows": len(rows), "truncated": more, "complete": not failed,
        "failed_partitions": failed, "cowbird": __version__,
        "exported_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }  # fmt: skip
    columns = [*(f"token{k + 1}" for k in range(asked.n)), "value", "frequency", "per_million"] if asked.n > 1 else [
        "value", "frequency", "per_million"]
    out = writer(cast(Any, asked.format), columns, about if asked.provenance else None)
    body = out.start() + out.rows([[*(r.tokens if asked.n > 1 else []), r.value, r.frequency, r.per_million]
                                   for r in rows]) + b"".join(out.end())
    named = repr((corpus, asked.attribute, asked.n, within, asked.filters, asked.match, asked.ignore_case, asked.min,
                  asked.limit))
    name = f"{corpus}_wordlist_{hashlib.sha256(named.encode('utf-8')).hexdigest()[:8]}.{asked.format}"
    return Response(body, media_type=MEDIA_TYPES[cast(Any, asked.format)], headers={
        "Content-Disposition": f'attachment; filename="{name}"', "X-Cowbird-Rows": str(len(rows)),
        "X-Cowbird-Complete": "false" if failed else "true", "X-Cowbird-Failed": ",".join(failed)})


def _hits(corpus: str, attribute: str, tokens: tuple[str, ...], within: str, filters: list[str]) -> str | None:
    """The search page finding an n-gram's occurrences as the list counted them: the tokens exactly, in
    one region of ``within``, in the subcorpus of the filters (None when a token cannot be a CQP string)."""
    try:
        pattern = Succession(tuple(TokenPattern(AttributeTest(attribute, False, exactly(t))) for t in tokens))
        q = serialize(ParsedQuery(pattern, within=within or None))
    except QuerySyntaxError:
        return None
    return "/?" + urlencode({"corpus": corpus, "q": q, "syntax": "cqp", "filter": filters}, doseq=True)
