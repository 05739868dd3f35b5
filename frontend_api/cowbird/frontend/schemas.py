"""The public contract of the front end: one pydantic model per response of the HTTP API.

Every route declares its ``response_model`` from here, so ``/openapi.json`` describes every field;
the node's wire models stay in ``cowbird.core.wire``. Names follow one rule: the values of
regions (``text_url`` of the text a hit is in) are ``meta`` everywhere — the ``meta=`` parameter,
a hit's ``meta``, the corpus listing's ``meta`` (which s-attributes carry values), ``/ref``'s ``meta``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cowbird.core.periods import Period
from cowbird.core.wire import Problem

__all__ = [
    "CheckResult",
    "CorpusList",
    "CorpusSummary",
    "Hit",
    "PartitionResult",
    "PartitionSummary",
    "Problem",
    "QueryResult",
    "RefResult",
    "RefText",
    "Translation",
]


class PartitionSummary(BaseModel):
    """One partition of a corpus: its tokens are the global positions ``offset`` .. ``offset + size - 1``."""

    id: str
    size: int = Field(description="Tokens in the partition.")
    offset: int = Field(description="Global position of its first token.")


class CorpusSummary(BaseModel):
    """A corpus as the listing shows it."""

    name: str = Field(description="Short name used in URLs and in the corpus= parameter.")
    title: str
    description: str
    language: str = Field(description="ISO code of the language.")
    access: str = Field(description="public, login, or group:NAME.")
    size: int = Field(description="Tokens in the whole corpus.")
    p_attributes: list[str] = Field(description="Positional attributes: what show= and queries can name.")
    s_attributes: list[str] = Field(description="Structural attributes (regions such as s and text).")
    meta: list[str] = Field(description="The s-attributes whose regions carry values: what meta= and filter= name.")
    attributes: dict[str, str] = Field(description="What an attribute holds (its tagset, say), where the "
                                                   "configuration says so: {\"pos\": \"Penn Treebank tags\"}.")
    sketches: list[str] = Field([], description="The relations of its word sketches (empty: the corpus has no "
                                                "sketch grammar).")
    sketch_labels: dict[str, str] = Field({}, description="Each relation's label as its grammar's *LABEL gives it, "
                                                          "%w where the headword goes (object_of: verbs with \"%w\" "
                                                          "as object); a relation without a label is not listed.")
    partitions: list[PartitionSummary]


class CorpusList(BaseModel):
    data: list[CorpusSummary]
    total: int


class Translation(BaseModel):
    q: str = Field(description="The query as given.")
    cqp: str = Field(description="The canonical CQP that runs: translated, with the case switch and the filters.")
    anchors: list[Literal["target", "keyword"]] = Field(
        default_factory=list, description="The anchors the query marks (@ target, @1 keyword).")


class BoxTest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attribute: str = Field(min_length=1, max_length=100, description="A p-attribute (word, lemma, pos ...).")
    operator: Literal["is", "is_not", "starts", "contains", "ends", "regex", "not_regex"]
    value: str = Field(max_length=1000)
    ignore_case: bool = False


class QueryBox(BaseModel):
    """A token: all its tests hold (none: any token), repeated from min to max times (max null: no bound)."""

    model_config = ConfigDict(extra="forbid")

    tests: list[BoxTest] = Field([], max_length=10)
    min: int = Field(1, ge=0, le=100)
    max: int | None = Field(1, ge=1, le=100)


class QueryBoxes(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: list[QueryBox] = Field(min_length=1, max_length=30)
    within: str | None = Field(None, max_length=100, description="The region the match stays within (s, text).")


class BuilderResult(BaseModel):
    """A query and its boxes: ``fits`` false (with the ``reason``) when the boxes cannot show the query."""

    cqp: str = Field(description="The canonical CQP of the query.")
    fits: bool
    reason: str | None = None
    boxes: QueryBoxes | None = None


class CheckResult(BaseModel):
    cqp: str = Field(description="The canonical form of the query: what the nodes run.")


class PartitionResult(BaseModel):
    """How one partition answered."""

    id: str
    status: Literal["ok", "failed"]
    total: int | None = Field(description="Hits in this partition (None when it failed).")
    error: str | None = Field(None, description="Why it failed.")


class Boundary(BaseModel):
    """A boundary of a region inside a concordance line: before the character ``at`` (in code points)
    of its ``part``."""

    region: str = Field(description="The s-attribute (text, s).")
    part: Literal["left", "match", "right"]
    at: int = Field(description="The character of the part the boundary comes before (code points).")


class Hit(BaseModel):
    """One hit: global positions, the KWIC strings, the match's attributes and metadata, its static link."""

    corpus: str = Field(description="The corpus the hit is in (one of several searched at once: corpus=a,b).")
    position: int = Field(description="Global position of the first token of the match (in the corpora searched: "
                                      "with corpus=a,b, b's positions follow a's).")
    matchend: int = Field(description="Global position of the last token of the match.")
    partition: str
    left: str = Field(description="Left context, tokens separated by spaces (with inline=: word/attribute/...).")
    match: str
    right: str = Field(description="Right context, tokens separated by spaces.")
    attributes: dict[str, str] = Field(description="Each show= attribute of the match (tokens separated by spaces).")
    meta: dict[str, str | None] = Field(description="Each meta= attribute at the match (None outside any region).")
    ref: str = Field(description="Path of the static link: /ref/<corpus>/<position>, with ?end=<matchend> "
                     "when the match is longer than one token (the hit's own corpus and its position there).")
    breaks: list[Boundary] = Field(default_factory=list, description=(
        "With boundaries=text,s: where a region of those s-attributes begins or ends inside the line."))
    gdex: GdexScore | None = Field(None, description=(
        "With sort=gdex: the hit's score and each rule's value, recomputed from its sentence by the written "
        "rules (cowbird.core.gdex) and checked against the key the nodes sorted on; null otherwise."))


class GdexScore(BaseModel):
    """A hit's GDEX score and what made it (``cowbird.core.gdex``): enough to recompute it by hand."""

    score: float = Field(description=(
        "The weighted mean of the rules' values, 0 to 1 (the order compares 1,000,000 - round(score x 1,000,000)); "
        "0 for a hit outside any region."))
    key: int = Field(description="The integer the hits were sorted on (ascending): 1,000,000 - round(score x 1e6).")
    region: str = Field(description="The s-attribute whose region around the match's first token was scored (s).")
    tokens: int = Field(description="Tokens of that region (0: the hit is outside any).")
    match_start: int = Field(description="The match's first token, counted from the region's first (0).")
    match_end: int = Field(description="The match's last token, counted the same way (it may lie past the region).")
    values: dict[str, float] = Field(description=(
        "Each rule's value, 0 to 1: length, whole, rare, numbers, urls, brackets, edge (empty outside any region)."))
    weights: dict[str, float] = Field(description="Each rule's weight ([corpora.gdex.weights]).")
    rare: list[str] = Field(description="The region's tokens counted as rare words, in order.")
    numbers: list[str] = Field(description="Its tokens counted as numbers or symbols.")
    urls: list[str] = Field(description="Its tokens taken for a URL, a domain or an e-mail address.")


class CorpusTotal(BaseModel):
    """One corpus's share of a search over several (corpus=a,b): its exact total and rate."""

    corpus: str
    total: int = Field(description="Its hits, in its partitions that answered.")
    tokens: int | None = Field(description="Tokens of its texts searched (the filters' subcorpus), as for the whole.")
    per_million: float | None = Field(description="Hits per million of those tokens.")
    complete: bool
    failed: list[str]
    first: int | None = Field(None, description=(
        "Where its hits begin among all the hits in corpus order (0-based: ask offset=first, or the page holding it, "
        "to see them); None when it has none, or when the hits are sorted (sort=): then search it alone."))


class QueryResult(BaseModel):
    """A preview: the exact total over all partitions and up to ``limit`` hits in global corpus order."""

    corpus: str
    cqp: str = Field(description="The CQP that ran on every partition.")
    total: int = Field(description="Hits in the partitions that answered.")
    tokens: int | None = Field(None, description=(
        "Tokens of the texts searched, in the partitions that answered: the subcorpus the filters choose, or "
        "the corpus (None: a node could not say)."))
    per_million: float | None = Field(0.0, description=(
        "Hits per million tokens of the texts searched (tokens): with filters, the rate within them."))
    corpus_per_million: float = Field(0.0, description=(
        "Hits per million tokens of the whole corpus (the partitions that answered), filters or not."))
    complete: bool = Field(description="False when a partition failed (its hits are missing).")
    failed: list[str] = Field(description="Partitions that failed.")
    partitions: list[PartitionResult]
    elapsed_ms: float
    offset: int
    sample: int | None = Field(description="The sample size asked for, or None for a page of hits.")
    hits: list[Hit]
    hint: str | None = Field(None, description="Advice when the query probably did not mean what it found.")
    anchors: list[Literal["target", "keyword"]] = Field(
        default_factory=list, description="The anchors the query marks (@ target, @1 keyword): what the hits can "
        "also be sorted and counted on (sort=target.lemma, on=keyword).")
    sort: str | None = Field(None, description="The sort applied, as asked, with its direction (right1.word desc); "
                                               "None: corpus order.")
    sort_cqp: str | None = Field(None, description="The same in CQP's terms (matchend[1].word desc).")
    seed: int | None = Field(None, description="The seed of a random sample or a random order (the same seed, the "
                                               "same hits).")
    corpora: list[CorpusTotal] = Field(default_factory=list, description=(
        "Each corpus searched, in order (one; several with corpus=a,b): its total and rate per million."))


class EstimateResult(BaseModel):
    """What a query would find and cost, known before it runs."""

    corpus: str
    cqp: str = Field(description="The CQP that would run on every partition.")
    hits: int | None = Field(description="Estimated hits over all partitions (None: the query cannot be "
                             "estimated — MU or TAB — or its sample took longer than an estimate may: then "
                             "seconds is a lower bound).")
    exact: bool = Field(description="The estimate is the exact count (the query is cheap, or its result cached).")
    seconds: float | None = Field(description="Estimated seconds until the exact total.")
    time_class: Literal["fast", "seconds", "minutes"] | None = Field(
        description="fast (under a second), seconds (under a minute) or minutes.")
    confirm: bool = Field(description="The query is estimated to take longer than this server's confirm_seconds: "
                          "the search page asks before it runs it.")
    failed: list[str] = Field(description="Partitions that gave no estimate.")
    elapsed_ms: float


class RefText(BaseModel):
    left: str
    match: str
    right: str


class RefResult(BaseModel):
    """A static link resolved: the sentence at a global position, wider context, metadata, citation."""

    corpus: str
    title: str
    position: int
    matchend: int = Field(description="Last position of the match shown (the position itself for one token).")
    positions: str = Field(description="The match's positions in words, as the page and the citation say them: "
                                       "'position 479', 'positions 479–481'.")
    crawl_date: str | None = Field(None, description="When the text was crawled, where the corpus records it "
                                                     "(text_crawl_date, or [calf] date_attribute).")
    retrieved: str = Field(description="The day this was retrieved from cowbird (ISO 8601), as the citation says.")
    partition: str
    sentence: RefText
    context: RefText = Field(description="Up to 40 tokens each side, inside the text.")
    more_before: bool = Field(description="The text goes on before the context shown.")
    more_after: bool = Field(description="The text goes on after the context shown.")
    meta: dict[str, str | None]
    citation: str
    link: str = Field(description="The permanent URL of this position.")
    note: str | None = Field(None, description="Said when the position lies outside any text.")


class LineContext(BaseModel):
    """One concordance line widened in place: its tokens, each the word and the attributes shown."""

    corpus: str
    position: int
    matchend: int = Field(description="Last position of the match (the position itself for one token).")
    region: str | None = Field(description="The region the context stays in (s, p, text), or None.")
    tokens: int = Field(description="At most this many tokens each side.")
    attributes: list[str] = Field(description="What each token holds: the word, then the attributes shown.")
    left: list[list[str]]
    match: list[list[str]]
    right: list[list[str]]
    text: RefText = Field(description="The words alone, as text.")
    more_before: bool = Field(description="The region (or text) goes on before the context shown.")
    more_after: bool = Field(description="The region (or text) goes on after the context shown.")
    breaks: dict[str, list[int]] = Field(default_factory=dict, description=(
        "Where texts and sentences begin or end inside the line: per s-attribute (text, s), the tokens — "
        "counted from the first of left over left, match and right — that a boundary comes before."))


class PastSearch(BaseModel):
    """One search of the user's history, with the URL that runs it again."""

    at: str = Field(description="When (ISO 8601, UTC).")
    corpus: str
    q: str
    syntax: str
    ignore_case: bool
    filters: list[str]
    total: int
    url: str = Field(description="The search page URL of this search.")


class History(BaseModel):
    """The logged-in user's last searches in the browser, newest first (at most 100)."""

    data: list[PastSearch]


class SaveSearch(BaseModel):
    """A search to keep: its name and the search page's URL (``/?corpus=…&q=…``, with the view, sort
    and tab the page keeps in it)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120, description="Its name (a search of the same name is replaced).")
    url: str = Field(min_length=3, max_length=8000, description="The search page's URL: /?corpus=…&q=….")


class SavedSearchOut(BaseModel):
    """A saved search: its name, the search page URL that runs it, and its share link, which works for
    whoever may read its corpus."""

    id: str = Field(description="What names it in /api/v1/saved/<id>/categories, /labels, DELETE and categories=.")
    name: str
    corpus: str
    url: str
    link: str = Field(description="The share link: /s/<id>, answered with the search page.")
    at: str = Field(description="When it was saved (ISO 8601, UTC).")


class SavedSearches(BaseModel):
    """The user's saved searches, by name."""

    data: list[SavedSearchOut]


class CategoryLine(BaseModel):
    """One concordance line's category: the hit's global positions and 1-9 (0 takes it away)."""

    model_config = ConfigDict(extra="forbid")

    position: int = Field(ge=0, le=2**53)  # (a database integer: beyond it, no corpus position)
    matchend: int = Field(ge=0, le=2**53)
    category: int = Field(ge=0, le=9)


class CategoryNames(BaseModel):
    model_config = ConfigDict(extra="forbid")

    labels: list[str] = Field(max_length=9, description="The names of categories 1, 2 … (empty: unnamed).")


class LineCategories(BaseModel):
    """A saved search's categorised lines (corpus order), the names of its categories and how many lines
    each has."""

    name: str
    corpus: str
    url: str
    labels: list[str] = Field(description="The names of categories 1-9 ('' where unnamed).")
    counts: list[int] = Field(description="Lines in categories 1-9.")
    lines: list[CategoryLine]


class WebContext(BaseModel):
    """Calf's answer for one static link: the sentence re-found on the web, with its context."""

    status: Literal["found_url", "found_archive", "found_search", "changed_url", "changed_archive", "changed_search",
                    "not_found", "fetch_error", "bad_row", "error"] = Field(
        description="found_*: the sentence with the hit on the page (url), in a web archive's capture or a search "
                    "result; changed_*: the sentence there with other words where the hit was (detail names them).")
    score: float | None = Field(description="Fuzzy-match score 0-100 of the best place found.")
    source_url: str = Field(description="The page the context comes from (after redirects or a search).")
    source: str = Field("", description="Where the context comes from: live (the page), search, or the name of the "
                                        "web archive ([calf] archives) whose capture holds it.")
    capture_date: str = Field("", description="An archive's capture: when it was made (ISO 8601, UTC).")
    capture_url: str = Field("", description="An archive's capture: the URL that returns it as it was archived.")
    sentence: str
    left: str
    right: str
    detail: str = Field("", description="How it was found (exact, or how many words differ), or why not (the "
                                        "fetch error, the nearest place's difference).")
    page_text: str = Field("", description="The sentence as the page has it.")


class _AnalysisResult(BaseModel):
    corpus: str
    cqp: str = Field(description="The CQP that ran on every partition.")
    total: int = Field(description="Hits in the partitions that answered.")
    complete: bool = Field(description="False when a partition failed (its hits are missing from every count).")
    failed: list[str]
    partitions: list[PartitionResult]
    elapsed_ms: float


class DeclaredResult(_AnalysisResult):
    """What a declared analysis answers besides its own fields (``cowbird.core.declared``): a page of its rows."""

    offset: int = Field(description="The first row of this page in the whole table (0-based).")
    rows_total: int = Field(description="Rows of the whole table.")


class DispersionBin(BaseModel):
    start: int = Field(description="Global position of the stretch's first token.")
    end: int = Field(description="Global position of its last token.")
    hits: int = Field(description="Hits that start in it.")


class DispersionPartition(BaseModel):
    id: str
    tokens: int = Field(description="The partition's tokens in the texts searched (the filters' subcorpus).")
    hits: int


class DispersionResult(_AnalysisResult):
    """Where the hits fall: Gries' DP over the parts (regions of an s-attribute, such as texts) and over
    the partitions, and the hits in equal stretches of the corpus. Under filters, the parts are those
    of the filters' subcorpus (each region's tokens in it), and the size shares are of its tokens."""

    parts_attribute: str
    tokens: int = Field(description="Tokens of the texts searched (the filters' subcorpus), in the partitions that "
                                    "answered: the parts' size shares are of these.")
    parts: int = Field(description="Parts of the (sub)corpus: the regions with tokens in it, and each partition's "
                                   "tokens outside any.")
    parts_with_hits: int
    dp: float | None = Field(description="Gries' DP over the parts (0: the hits spread as the parts' sizes do; "
                             "near 1: all in one small part); None when a partition failed.")
    dp_norm: float | None = Field(description="DP / (1 - the smallest part's share), Lijffijt and Gries (2012).")
    dp_partitions: float | None = Field(description="DP over the partitions.")
    bins: list[DispersionBin]
    partitions_hits: list[DispersionPartition]


class WordListRow(BaseModel):
    tokens: list[str] = Field(description="The n-gram's tokens (one for a word list).")
    value: str = Field(description="The tokens joined by spaces.")
    frequency: int
    per_million: float = Field(description="Occurrences per million tokens of the texts searched (tokens).")
    hits: str | None = Field(description="The search page with this n-gram's hits (a CQP query, the filters).")


class _CountedOver(BaseModel):
    """Which partitions a word or keyword list counted over."""

    complete: bool = Field(description="Every partition answered.")
    failed: list[str]
    partitions: list[PartitionResult]
    elapsed_ms: float


class WordListResult(_CountedOver):
    """The most frequent n-grams of a corpus or subcorpus, exact over every partition that answered."""

    corpus: str
    attribute: str
    n: int
    within: str | None
    filters: list[str]
    match: str | None
    min: int
    tokens: int = Field(description="Tokens of the (sub)corpus in the partitions that answered.")
    ngrams: int = Field(description="N-grams counted there (occurrences; for n=1 the tokens).")
    rows: list[WordListRow]
    more: bool = Field(description="More n-grams than the rows shown occur at least min times.")
    uncounted: int = Field(0, description=(
        "within=none: n-grams across the cuts between partitions not counted: n-1 at each cut after a partition "
        "encoded without the tokens of its neighbours (neighbours.json); 0 otherwise, each such n-gram completed "
        "with the next partition's first tokens."))


class KeywordRow(BaseModel):
    value: str
    frequency: int = Field(description="In the target.")
    reference_frequency: int
    per_million: float = Field(description="Per million tokens of the target.")
    reference_per_million: float
    log_likelihood: float = Field(description="Signed: negative where the item is rarer in the target.")
    log_ratio: float = Field(description="log2 of the ratio of relative frequencies (a zero counts as 0.5).")
    log_ratio_low: float = Field(description="Its 95 % confidence interval: lower bound.")
    log_ratio_high: float
    simple_maths: float = Field(description="(per million in the target + k) / (per million in the reference + k).")
    diff: float = Field(description="%DIFF: the difference of the relative frequencies in % of the reference's.")
    hits: str | None = Field(description="The search page with the item's hits in the target.")


class KeywordResult(_CountedOver):
    """Keywords of a corpus or subcorpus against a reference, exact over every partition that answered."""

    corpus: str
    filters: list[str]
    reference: str
    reference_filters: list[str]
    attribute: str
    min: int
    reference_min: int
    order: str
    tokens: int = Field(description="Tokens of the target (sub)corpus.")
    reference_tokens: int
    compared: int = Field(description="Items reaching their minimum in the target or the reference.")
    p: float = Field(description="The significance level asked for.")
    correction: str = Field(description="bonferroni (p divided by the items compared) or none.")
    critical_log_likelihood: float = Field(description="The least |log-likelihood| listed (0: every item).")
    min_log_ratio: float = Field(description="The least |Log Ratio| listed.")
    smoothing: float = Field(description="The simple-maths score's constant k.")
    not_significant: int = Field(description="Items compared and not listed: not significant, or below min_log_ratio.")
    listed: int = Field(description="Items that pass the filter (the rows are the first limit of them).")
    target_partitions: list[str] = Field(description="The partitions counted for the target (in partitions).")
    reference_partitions: list[str] = Field(description="The partitions counted for the reference (the same "
                                                        "ones when the reference is other texts of the corpus).")
    rows: list[KeywordRow]


class FrequencyRow(BaseModel):
    value: str = Field(description="The value (several tokens' values joined by spaces), folded if asked; by "
                       "several keys, their values joined by ' / '.")
    values: list[str] = Field(description="The value of each key (one for a breakdown by one attribute).")
    frequency: int
    share: float = Field(description="Share of the hits counted.")
    per_million: float = Field(description="Frequency per million tokens of the corpus.")
    concordance: str | None = Field(description="The search page showing these hits (single-token spans; None "
                                                "for a value no CQP string can hold, one with a control character).")
    corpora: dict[str, int] = Field(default_factory=dict, description=(
        "Several corpora searched (corpus=a,b): the frequency in each."))
    corpora_per_million: dict[str, float] = Field(default_factory=dict, description=(
        "Several corpora searched: the frequency per million tokens of each one's texts searched (corpora_tokens; "
        "0 when a node could not say its size)."))


class FrequencyResult(_AnalysisResult):
    """Hits counted by the value of a p-attribute over a span: CQP's ``count A by ATT on SPAN``."""

    by: str
    on: str
    keys: list[str] = Field(description="The keys counted, each SPAN.ATTRIBUTE (matchend[1].pos): several at once for "
                            "by=word,pos&on=match[-1],matchend[1].")
    fold: str
    tokens: int | None = Field(None, description=(
        "Tokens of the texts searched (the subcorpus the filters choose, or the corpus) in the partitions that "
        "answered: the base of each row's per_million (None: a node could not say, and per_million is 0)."))
    counted: int = Field(description="Hits counted (those where the span is set).")
    unset: int = Field(description="Hits without the anchor (no target or keyword), not counted.")
    distinct: int = Field(description="Distinct values (a lower bound when truncated).")
    truncated: bool = Field(description="A node had more distinct values than it lists; rare values are missing.")
    offset: int = Field(description="The first row of this page in the whole table (0-based).")
    rows_total: int = Field(description="Rows of the whole table (values with at least min hits): page with "
                                        "offset and limit.")
    rows: list[FrequencyRow]
    corpora_tokens: dict[str, int | None] = Field(default_factory=dict, description=(
        "Several corpora searched: the tokens of each one's texts searched (its subcorpus under the filters), the "
        "base of the rows' corpora_per_million (None: a node could not say)."))


class CorpusShare(BaseModel):
    """A value's hits and size in one of several corpora searched."""

    hits: int
    tokens: int
    per_million: float


class DistributionRow(BaseModel):
    value: str
    hits: int
    tokens: int = Field(description="Size of the subcorpus with this value, in tokens.")
    per_million: float = Field(description="Hits per million tokens of that subcorpus.")
    regions: int = Field(description="Regions with this value.")
    regions_with_hits: int = Field(description="Of those, regions with at least one hit.")
    size_exact: bool = Field(description="The subcorpus size is summed over every partition.")
    concordance: str = Field(description="The search page showing these hits (the query with a filter).")
    corpora: dict[str, CorpusShare] = Field(default_factory=dict, description=(
        "Several corpora searched (corpus=a,b): the hits and size of this value in each."))


class DistributionResult(_AnalysisResult):
    """Hits per value of an s-attribute at the match: CQP's ``group A match ATT``, with subcorpus sizes."""

    by: str
    outside: int = Field(description="Hits outside every region of the attribute.")
    numeric: bool = Field(description="The values look like numbers and are sorted as numbers.")
    all_values: bool = Field(description=("Every value is listed, also those without hits (an attribute with more "
                                          "than 10,000 values, such as an id, lists those with hits)."))
    truncated: bool
    offset: int = Field(description="The first row of this page in the whole table (0-based).")
    rows_total: int = Field(description="Rows of the whole table (one per value): page with offset and limit.")
    rows: list[DistributionRow]


class TrendPoint(BaseModel):
    period: str = Field(description="2012 (a year or a decade: its first year) or 2012-05 (a month).")
    hits: int
    tokens: int = Field(description="Tokens of the (sub)corpus dated in this period.")
    texts: int = Field(description="Regions of the date attribute (texts) with tokens in this period.")
    per_million: float | None = Field(description="Hits per million of those tokens (None: no text at all).")
    low: float | None = Field(description="The 95 % Wilson score interval of the rate: lower bound.")
    high: float | None = Field(description="Its upper bound.")
    sparse: bool = Field(description="Fewer tokens than sparse_below (or none): a rate that says little.")
    concordance: str | None = Field(description="The search page with this period's hits (None without text).")


class TrendSeries(BaseModel):
    """One query's trend."""

    q: str
    cqp: str = Field(description="The CQP that ran on every partition.")
    total: int = Field(description="Hits in the partitions that answered.")
    undated: int = Field(description="Hits in regions whose value holds no date, or outside every region.")
    complete: bool
    failed: list[str]
    partitions: list[PartitionResult]
    points: list[TrendPoint]


class TrendResult(BaseModel):
    """Relative frequency per period of one or more queries, exact over every partition."""

    corpus: str
    by: str = Field(description="The s-attribute whose values are the dates.")
    period: Period = Field(description="The periods counted in, as period= asked.")
    filters: list[str]
    sparse_below: int
    tokens: int = Field(description="Tokens of the (sub)corpus searched.")
    undated_tokens: int = Field(description="Of those, tokens in regions whose value holds no date.")
    total: int = Field(description="The hits of every query, in the partitions that answered.")
    complete: bool = Field(description="Every partition answered every query and the sizes.")
    failed: list[str] = Field(description="The partitions that did not answer (a query or the sizes).")
    series: list[TrendSeries]
    elapsed_ms: float


class ComparedSearch(BaseModel):
    """One side of a comparison."""

    corpus: str
    q: str
    syntax: str
    ignore_case: bool
    filters: list[str]
    cqp: str = Field(description="The CQP that ran on every partition.")
    total: int = Field(description="Its hits, in the partitions that answered.")
    counted: int = Field(description="Hits with a value counted (the size the shares and the measures use).")
    distinct: int = Field(description="Distinct values.")
    truncated: bool = Field(description="A partition had more distinct values than it lists: counts may be low.")


class CompareRow(BaseModel):
    value: str
    preferred: Literal["first", "second"] = Field(description="The search this value is relatively more frequent in.")
    frequency: int = Field(description="Hits with this value in the first search.")
    other_frequency: int = Field(description="… in the second.")
    share: float = Field(description="frequency / counted of the first search.")
    other_share: float
    log_likelihood: float = Field(description="Signed: negative where the value is rarer in the first search.")
    log_ratio: float = Field(description="log2 of the ratio of the shares (a zero counts as 0.5).")
    log_ratio_low: float = Field(description="Its 95 % confidence interval: lower bound.")
    log_ratio_high: float
    diff: float = Field(description="%DIFF: the difference of the shares in % of the second's.")
    hits: str | None = Field(description="The search page with these hits of the first search (None where no "
                                         "query can pick them out: a value of several tokens).")
    other_hits: str | None = Field(description="… of the second search.")


class CompareNext(BaseModel):
    """The setting a comparison that listed nothing should be asked with next."""

    parameter: Literal["p", "min"] = Field(description="The parameter to change.")
    value: float = Field(description="Its value (p=1: no significance test, every value ranked).")
    rows: int = Field(description="The rows the comparison would list with it (at most limit a side).")
    detail: str = Field(description="Why nothing was listed and what the setting lists instead.")


class CompareResult(BaseModel):
    """Two searches compared on an attribute of the match: which values each prefers, exact over every
    partition, ranked by keyness as keyword lists are."""

    first: ComparedSearch
    second: ComparedSearch
    by: str
    on: str
    fold: str
    min: int
    order: str
    compared: int = Field(description="Values reaching min on one side.")
    p: float
    correction: str
    critical_log_likelihood: float = Field(description="The least |log-likelihood| listed (0: every value).")
    min_log_ratio: float
    not_significant: int = Field(description="Values compared and not listed.")
    preferred_first: int = Field(description="Values listed as preferred by the first search (rows: at most limit).")
    preferred_second: int
    complete: bool
    failed: list[str]
    partitions: list[PartitionResult]
    rows: list[CompareRow] = Field(description="The first search's preferred values, most distinctive first, then "
                                               "the second's.")
    next_setting: CompareNext | None = Field(None, description=(
        "When no row is listed: the nearest setting that lists some (a less strict p, then p=1: every value ranked "
        "by log-likelihood; with nothing compared, a smaller min) and how many rows it would list; None otherwise."))
    elapsed_ms: float


class CollocateRow(BaseModel):
    value: str
    f: int = Field(description="Co-occurrences (O11): window positions with this value.")
    f2: int = Field(description="Frequency outside the hits (C1).")
    marginal: int = Field(description="Frequency in the texts searched (the filters' subcorpus, or the corpus).")
    in_nodes: int = Field(description="Frequency inside the hits.")
    expected: float = Field(description="Expected co-occurrences (E11 = f1 · f2 / N, CQPweb's expected collocate "
                                        "frequency): full precision.")
    texts: int | None = Field(None, description=(
        "Texts it co-occurs with the hits in (CQPweb's \"in no. of texts\"): texts holding a window position with it, "
        "each once over every partition (a text cut between partitions too), in the filters' subcorpus; None: the "
        "corpus has no text."))
    scores: dict[str, float] = Field(description="Each measure, at full precision (the page shows 3 significant "
                                                 "digits).")
    concordance: str | None = Field(description="The search page showing the hits with this collocate in their "
                                                "window (each match runs from the hit to the collocate); None for a "
                                                "value no CQP string can hold (one with a control character).")


class CollocationResult(_AnalysisResult):
    """Collocates in windows around the hits, scored on the counts of the texts searched: the whole
    corpus, or under filters their subcorpus (windows, marginals and N all inside it)."""

    attribute: str
    left: int
    right: int
    within: str | None
    measures: list[str]
    order: str
    min_freq: int
    f1: int = Field(description="Tokens in the windows (R1), each once, hits excluded.")
    tokens: int = Field(description="Tokens of the texts searched (the filters' subcorpus) in the partitions that "
                                    "answered.")
    n: int = Field(description="Tokens of the texts searched outside the hits (N).")
    candidates: int = Field(description="Distinct collocates before min_freq.")
    truncated: bool
    offset: int = Field(description="The first row of this page in the whole table (0-based).")
    rows_total: int = Field(description="Rows of the whole table (collocates with at least min_freq "
                                        "co-occurrences): page with offset and limit.")
    rows: list[CollocateRow]


class SubcorpusValue(BaseModel):
    value: str
    tokens: int = Field(description="Tokens of the subcorpus in regions with this value.")
    texts: int = Field(description="Regions with this value that hold tokens of the subcorpus (texts, for text_*).")
    per_cent: float = Field(description="Its tokens, per cent of the subcorpus's.")
    filter: str = Field(description="The filter choosing exactly this value: ATTR~REGEX.")


class SubcorpusResult(_CountedOver):
    """A subcorpus's size (the texts its filters choose; none: the whole corpus), exact over every partition
    that answered, and with ``values`` an s-attribute's values in it with their sizes."""

    corpus: str
    filters: list[str] = Field(description="The filters choosing it (a saved subcorpus's first).")
    tokens: int = Field(description="Tokens in the subcorpus.")
    texts: int | None = Field(description="Texts (regions of text) with tokens in it; null: the corpus has no text.")
    corpus_tokens: int = Field(description="Tokens of the whole corpus.")
    corpus_texts: int | None = Field(description="Texts of the whole corpus.")
    per_cent: float = Field(description="The subcorpus's tokens, per cent of the corpus's.")
    attribute: str | None = Field(description="The s-attribute whose values are listed.")
    values: list[SubcorpusValue]
    values_total: int = Field(description="Values in the subcorpus (that pass match): page with offset and limit.")


class SaveSubcorpus(BaseModel):
    """A subcorpus to keep: a name, its corpus and the filters that choose its texts."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120)
    corpus: str = Field(min_length=1, max_length=64)
    filters: list[str] = Field(min_length=1, max_length=50, description=(
        "Filters as filter= takes them: ATTR~REGEX, ATTR=VALUE, ATTR:FROM..TO (!~ and != negate)."))
    group: str | None = Field(None, max_length=64, description="Share it with this group of yours (none: only you).")


class SubcorpusOut(BaseModel):
    """A saved subcorpus: whose, shared with which group, and its size when it was saved."""

    id: str = Field(description="What subcorpus= takes.")
    name: str
    corpus: str
    filters: list[str]
    tokens: int = Field(description="Its tokens when saved.")
    texts: int | None
    owner: str
    group: str | None = Field(description="The group it is shared with (null: only its owner sees it).")
    mine: bool = Field(description="You own it (only the owner changes or deletes it).")
    at: str = Field(description="When it was saved (ISO 8601, UTC).")
    search: str = Field(description="The search page with its filters: /?corpus=…&filter=….")


class SubcorpusList(BaseModel):
    """Your subcorpora and those shared with a group of yours, by name."""

    data: list[SubcorpusOut]


class SketchCollocateRow(BaseModel):
    value: str = Field(description="The collocate (a value of the grammar's attribute, lemma by default).")
    f: int = Field(description="Instances of the relation pairing headword and collocate: f(x, R, y).")
    total: int = Field(description="The collocate's instances in the relation with any headword: f(R, y).")
    log_dice: float = Field(description="14 + log2(2 f(x, R, y) / (f(x, R) + f(R, y))) (Rychlý 2008).")
    concordance: str | None = Field(description=(
        "The search page with these instances: the relation's CQP with headword and collocate constrained, under "
        "the sketch's strategy ((?traditional) ...): one hit per instance, f in all."))


class SketchRelationResult(BaseModel):
    name: str = Field(description="The relation's id in the grammar (what relation= names).")
    label: str = Field(description="What users read: the grammar's *LABEL with the headword written in (objects of "
                                   "\"buy\"); the name when the grammar gives no label.")
    queries: list[str] = Field(description="The CQP the nodes ran: headword at @ (target), collocate at @1 (keyword).")
    head_total: int = Field(description="The headword's instances in the relation: f(x, R).")
    share: float | None = Field(description="head_total / the headword's frequency (a headword may stand in a "
                                            "relation with several collocates: it can exceed 1).")
    instances: int = Field(description="The relation's instances in the corpus (or subcorpus), every headword.")
    distinct: int = Field(description="Collocates the headword has in the relation (before min_freq and limit).")
    rows: list[SketchCollocateRow] = Field(description="Collocates, the most salient (highest logDice) first.")


class SketchAnswer(BaseModel):
    """What every word sketch answer says (a sketch, a sketch difference, a thesaurus entry)."""

    corpus: str
    headword: str
    attribute: str = Field(description="The attribute of headwords and collocates (the grammar's *WSATTR).")
    grammar: str
    filters: list[str]
    frequency: int = Field(description="The headword's frequency in the texts searched: the corpus, or the filters' "
                                       "subcorpus (every partition that answered).")
    min_freq: int
    complete: bool
    failed: list[str]
    partitions: list[PartitionResult]
    elapsed_ms: float


class WordSketchResult(SketchAnswer):
    tokens: int = Field(description="Tokens of the texts searched (the filters' subcorpus) in the partitions that "
                                    "answered.")
    saved: bool = Field(description="Every count came from tables built by cowbird sketches build.")
    relations: list[SketchRelationResult]


class SketchDifferenceRow(BaseModel):
    value: str
    f: int = Field(description="Instances with the headword (0: none).")
    other_f: int = Field(description="Instances with the other word (0: none).")
    log_dice: float | None = Field(description="logDice with the headword (None: not a collocate of it).")
    other_log_dice: float | None = Field(description="logDice with the other word.")
    difference: float = Field(description="log_dice - other_log_dice, a missing score counted as 0: positive "
                                          "where the headword prefers the collocate.")
    concordance: str | None = Field(description="The search page with the headword's instances.")
    other_concordance: str | None = Field(description="The search page with the other word's instances.")


class SketchDifferenceRelation(BaseModel):
    name: str = Field(description="The relation's id in the grammar (what relation= names).")
    label: str = Field(description="The grammar's *LABEL with both words written in, headword/other (objects of "
                                   "\"buy/sell\"); the name when the grammar gives no label.")
    head_total: int = Field(description="The headword's instances in the relation.")
    other_head_total: int = Field(description="The other word's instances in the relation.")
    shared_total: int
    only_first_total: int
    only_second_total: int
    shared: list[SketchDifferenceRow] = Field(description="Collocates of both, from those preferring the headword "
                                                          "to those preferring the other word.")
    only_first: list[SketchDifferenceRow] = Field(description="Collocates of the headword only, most salient first.")
    only_second: list[SketchDifferenceRow] = Field(description="Collocates of the other word only.")


class SketchDifferenceResult(SketchAnswer):
    other: str
    other_frequency: int
    tokens: int
    relations: list[SketchDifferenceRelation]


class ThesaurusRow(BaseModel):
    word: str
    score: float = Field(description="Similarity to the headword, 0 to 1 (Rychlý and Kilgarriff 2007).")
    shared: int = Field(description="Contexts (relation and collocate) both words have.")
    sketch: str = Field(description="The word's sketch (the API's; the same filters and relations).")


class ThesaurusResult(SketchAnswer):
    contexts: int = Field(description="The headword's contexts: relation and collocate with a positive logDice.")
    candidates: int = Field(description="Words sharing at least one of them (the rows are the most similar).")
    rows: list[ThesaurusRow]
