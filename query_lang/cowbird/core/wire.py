"""The wire contract between front end and nodes: request and response models of the node API.

The front end imports these models; a query always travels as CQP text that the front end has
parsed and re-serialised, and the node parses it again before running it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cowbird.core.errors import ErrorCode
from cowbird.core.gdex import GdexSpec
from cowbird.query import MAX_QUERY_LENGTH

Strategy = Literal["standard", "shortest", "longest", "traditional"]
"""CQP's MatchingStrategy."""

STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)

DEFAULT_HARD_BOUNDARY = 500
"""CQP's HardBoundary default: the longest match, in tokens, of a query without ``within``."""

EngineName = Literal["native", "cwb"]
"""The engines a node can run: ``native`` (numpy) and ``cwb`` (real CQP through cwb-ccc)."""

ENGINES: tuple[EngineName, ...] = get_args(EngineName)

class Problem(BaseModel):
    """An error: RFC 9457 members plus a stable ``code``; query errors add where the problem is."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str = Field(description="A short summary of the kind of problem.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong in this request, in words.")
    code: ErrorCode = Field(description="Stable machine-readable identifier of the kind of problem.")
    message: str | None = Field(None, description="Query errors: the message without the caret picture.")
    offset: int | None = Field(None, description="Query errors: 0-based offset of the problem in the query.")
    line: int | None = Field(None, description="Query errors: 1-based line of the problem.")
    column: int | None = Field(None, description="Query errors: 1-based column of the problem.")


EXPORT_BATCH_LINES = 500
"""Lines built and sent together in an export stream (node) and written together (front end)."""

__all__ = [
    "EXPORT_BATCH_LINES",
    "ContextResponse",
    "CooccurrenceRequest",
    "CooccurrenceResponse",
    "DispersionRequest",
    "DispersionResponse",
    "DistributionRequest",
    "DistributionResponse",
    "FrequencyRequest",
    "FrequencyResponse",
    "MarginalsRequest",
    "NgramRequest",
    "NgramResponse",
    "InSubcorpus",
    "RegionFilter",
    "MarginalsResponse",
    "SortBound",
    "SortKeysRequest",
    "SortKeysResponse",
    "SortSpec",
    "SubcorpusRequest",
    "SubcorpusResponse",
    "ContextSpec",
    "CountRequest",
    "CountResponse",
    "ExportRequest",
    "Health",
    "HitsRequest",
    "HitsResponse",
    "Line",
    "PartitionInfo",
    "PartitionList",
    "Problem",
]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    engine: EngineName
    partitions: int
    call_seconds: float | None = Field(None, description="With ?call=<id>: how long the node has worked on that "
                                       "call, until now or until it ended (null: it never got it)")


class PartitionInfo(BaseModel):
    """One served partition (a CWB corpus)."""

    id: str
    size: int = Field(description="Tokens in the partition.")
    p_attributes: list[str]
    s_attributes: list[str]
    meta: list[str] = Field(description="The s-attributes whose regions carry values.")
    engine: EngineName


class PartitionList(BaseModel):
    data: list[PartitionInfo]
    total: int


class RegionFilter(BaseModel):
    """Part of a subcorpus: the tokens in regions whose value of ``attribute`` matches ``pattern`` (a
    CQP regex, the whole value), or with ``negated`` does not."""

    model_config = ConfigDict(extra="forbid")

    attribute: str = Field(min_length=1)
    negated: bool = False
    pattern: str


MAX_REGION_FILTERS = 50
"""Filters one request names at most (the front end takes fewer: ``MAX_FILTERS``)."""


class InSubcorpus(BaseModel):
    """A request counted in the subcorpus its ``filters`` choose (the front end sends the filters the
    query was built with): sizes, marginals and frequencies are of the partition's tokens in it."""

    filters: list[RegionFilter] = Field([], max_length=MAX_REGION_FILTERS, description=(
        "The subcorpus (the tokens in regions every filter chooses) whose sizes and frequencies are counted; "
        "none: the whole partition."))


class QueryRequest(BaseModel):
    """What every request about a query's hits on a partition names first."""

    model_config = ConfigDict(extra="forbid")

    partition: str = Field(description="Partition (corpus id in the node's registry).")
    query: str = Field(min_length=1, max_length=MAX_QUERY_LENGTH, description="Checked CQP query text.")
    strategy: Strategy = "standard"
    hard_boundary: int = Field(DEFAULT_HARD_BOUNDARY, ge=1, le=10_000, description="CQP's HardBoundary (tokens).")


class _Answer(BaseModel):
    """What every answer about a query's hits on a partition says first."""

    partition: str
    query: str = Field(description="The canonical CQP the node ran.")
    total: int = Field(description="Hits of the query on the partition.")


class CountRequest(QueryRequest):
    pass


class CountResponse(_Answer):
    elapsed_ms: float


class EstimateResponse(BaseModel):
    """What a query would find and cost on one partition, before it runs (``POST /v1/estimate``)."""

    partition: str
    query: str = Field(description="The canonical CQP the node would run.")
    hits: int | None = Field(description="Estimated hits (None: the query cannot be estimated — MU, TAB — or "
                             "nothing of it could be read in the estimate's own time: seconds is then what the "
                             "estimate took, and the front end refuses the query).")
    exact: bool = Field(description="The query was cheap enough to count outright (or its result is cached).")
    seconds: float | None = Field(description="Estimated seconds of the whole evaluation on this partition.")
    candidates: int | None = Field(None, description="At most this many start positions are read.")
    sampled: float = Field(description="Share of the partition evaluated for the estimate (1.0: all).")
    elapsed_ms: float


class ContextSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: int = Field(default=10, ge=0, description="Tokens of context on each side.")
    region: str | None = Field(default=None, description="Extend the context to the enclosing region (e.g. s).")
    marks: list[str] = Field(default_factory=list, max_length=8, description=(
        "s-attributes whose region boundaries inside each line are reported (Line.breaks)."))


class SortSpec(BaseModel):
    """A sort order of the hits (``cowbird.core.analysis_spec.parse_sort``): ``key`` such as
    ``match.lemma``, ``left1.word%c`` or ``random``; ``base`` is the partition's global offset, on
    which random keys depend so that they merge across partitions."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1, max_length=600)
    direction: str = Field("asc", pattern=r"^(asc|desc)(,(asc|desc)){0,2}$",
                           description="One per key of a sort on several keys (asc,desc).")
    seed: int = Field(0, ge=0, le=2**63 - 1)
    base: int = Field(0, ge=0)
    gdex: GdexSpec | None = Field(None, description=(
        "With key gdex: the corpus's GDEX rules and common words (cowbird.core.gdex)."))


SortValue = list[list[list[str]]] | int
"""A hit's sort key: for each key of the sort, the folded (with %c/%d) then the plain values over its
span (an empty list where the span has no value), or a random number."""


class FirstRequest(QueryRequest):
    """The hits ``offset`` .. ``offset + limit`` in corpus order, found without counting the rest
    (``POST /v1/first``): the answer's total is exact only when it says so."""

    offset: int = Field(0, ge=0)
    limit: int = Field(100, ge=0)
    context: ContextSpec = Field(default_factory=ContextSpec)
    show: list[str] = Field(default_factory=list, description="p-attributes shown with each token (word is first).")
    meta: list[str] = Field(default_factory=list, description="s-attributes whose values are reported at each match.")


class HitsRequest(FirstRequest):
    """The hits ``offset`` .. ``offset + limit`` (or ``indices``) of all the partition's hits, in corpus
    order or sorted."""

    sort: SortSpec | None = Field(None, description="Sort the hits; offset, limit and indices are then sorted ranks.")
    indices: list[int] | None = Field(
        None, description="Instead of offset/limit: these hit numbers (0-based, ascending), e.g. for a sample."
    )


class ExportRequest(HitsRequest):
    limit: int = Field(10_000, ge=0)


class Line(BaseModel):
    """A KWIC line: positions are local to the partition; tokens are lists of attribute values."""

    match: int
    matchend: int
    target: int | None = None
    keyword_position: int | None = Field(None, description="The keyword anchor (@1[...] in the query), if set.")
    left: list[list[str]]
    keyword: list[list[str]]
    right: list[list[str]]
    meta: dict[str, str | None] = Field(
        default_factory=dict, description="Value of each requested s-attribute at the match (None outside regions)."
    )
    sort_key: SortValue | None = Field(None, description="The hit's sort key, when the hits were sorted.")
    breaks: dict[str, list[int]] = Field(default_factory=dict, description=(
        "Per s-attribute asked for (marks): the tokens of the line, counted from the first of left over "
        "left, keyword and right, that a boundary of its regions comes before."))


class HitsResponse(_Answer):
    offset: int
    data: list[Line]
    elapsed_ms: float
    exact: bool = Field(True, description="Whether total is the partition's count; False (from /v1/first): "
                                          "at least this many, the rest not counted yet.")


class ContextResponse(BaseModel):
    partition: str
    cpos: int
    line: Line


MAX_SORT_RANKS = 4096
"""Sorted ranks one ``/v1/sortkeys`` request may name (``ranks``)."""


class SortBound(BaseModel):
    """A place in the order of all partitions' sorted hits: just before the hit with sort key ``key``
    at sorted rank ``rank`` of the partition whose ``base`` (global offset) is given. Hits order by
    (sort key, partition base, rank): equal keys in corpus order, as one corpus would sort them."""

    model_config = ConfigDict(extra="forbid")

    key: SortValue
    base: int = Field(ge=0)
    rank: int = Field(ge=0)


class SortKeysRequest(QueryRequest):
    """The sort keys of a partition's hits at sorted ranks ``offset`` .. ``offset + limit``, or at
    ``ranks``, or from the first hit at or after ``start`` up to the last before ``stop`` (at most
    ``limit``): what the front end needs to find a sorted page's hits across partitions."""

    sort: SortSpec
    offset: int = Field(0, ge=0)
    limit: int = Field(1000, ge=0)
    ranks: list[int] | None = Field(None, max_length=MAX_SORT_RANKS,
                                    description="Instead of offset/limit: the keys at these ranks (ascending).")
    start: SortBound | None = Field(None, description="Instead of offset: from the partition's first hit that is "
                                                      "not before this place (the answer's offset says which).")
    stop: SortBound | None = Field(None, description="Up to the partition's last hit before this place (at most "
                                                     "limit keys); the answer's end says where it falls.")


class SortKeysResponse(_Answer):
    offset: int
    keys: list[SortValue]
    elapsed_ms: float
    end: int | None = Field(None, description="With stop: the partition's first rank at or after it.")


class FrequencyRequest(QueryRequest):
    attribute: str = Field(min_length=1, max_length=300, description=(
        "The p-attribute counted (word, lemma, pos ...), or several, comma-separated: each combination of their "
        "values is counted (values tab-joined)."))
    on: str | None = Field(None, max_length=300, description=(
        "Anchor or span: match, matchend[1], match..matchend (default); one per attribute, comma-separated."))
    fold: Literal["", "c", "d", "cd"] = Field("", description="Fold case (c) and/or diacritics (d) of the values.")


class FrequencyResponse(_Answer):
    counted: int = Field(description="Hits counted (those where the span is set).")
    unset: int = Field(description="Hits without the anchor (no target or keyword).")
    distinct: int
    truncated: bool = Field(description="More distinct values than the node lists; the rarest are left out.")
    values: list[str]
    counts: list[int]
    elapsed_ms: float


class DistributionRequest(QueryRequest, InSubcorpus):
    attribute: str = Field(min_length=1, description="An s-attribute with values (text_genre, text_year ...).")
    period: Literal["year", "month", "decade"] | None = Field(None, description=(
        "The values are dates: count per period (cowbird.core.periods), every period with text listed, the "
        "values holding no date as one row with the empty value."))


class DistributionResponse(_Answer):
    outside: int = Field(description="Hits outside every region of the attribute.")
    all_values: bool = Field(description=("Every value is listed (else only those with hits: the attribute has "
                                          "more than 10,000 values, or more than max_analysis_rows)."))
    truncated: bool
    values: list[str]
    hits: list[int]
    regions_with_hits: list[int]
    tokens: list[int] = Field(description=(
        "Tokens in the regions with the value (its subcorpus size), of the filters' subcorpus only; with filters, "
        "only the values with tokens in it are listed."))
    regions: list[int] = Field(description="Regions with the value (with tokens in the filters' subcorpus).")
    elapsed_ms: float


class CooccurrenceRequest(QueryRequest, InSubcorpus):
    attribute: str = Field(min_length=1, description="The p-attribute of the collocates.")
    left: int = Field(5, ge=0, le=100)
    right: int = Field(5, ge=0, le=100)
    within: str | None = Field(None, description="Windows stay inside this s-attribute's region (s, text).")


class CooccurrenceResponse(_Answer):
    context_tokens: int = Field(description="Positions in the windows, each once, hits excluded.")
    node_tokens: int = Field(description="Positions inside hits, each once.")
    size: int = Field(description=(
        "Tokens in the partition, of the filters' subcorpus only: every position counted (windows, hits, "
        "marginals) is one of them."))
    truncated: bool
    values: list[str]
    f: list[int] = Field(description="Co-occurrence frequency of each value (values in windows or in hits).")
    marginal: list[int] = Field(description="Frequency of each value in the partition (in the filters' subcorpus).")
    in_nodes: list[int] = Field(description="Frequency of each value inside hits.")
    spilled: list[int] = Field([], description=(
        "Global positions in the windows past the partition's first or last token (read from the tokens it "
        "carries of its neighbours), not counted above: the front end counts each once, unless the partition "
        "holding it counted it (its occupied)."))
    spilled_values: list[str] = Field([], description="The value at each spilled position.")
    spilled_texts: list[int] = Field([], description=(
        "The text of each spilled position, counted from the edge: after the partition, the texts starting between "
        "its last token and the position; before it, those ending between the position and its first; -1: none."))
    texts: list[int] = Field([], description=(
        "Texts (regions of text) each value co-occurs in; empty when the corpus has no text."))
    edge_texts: list[list[int]] = Field([], description=(
        "Of those, by region number, the texts windows of other partitions reach or a cut runs through (the first "
        "and last, those near the edges): the front end counts each once over partitions."))
    text_regions: int | None = Field(None, description="Regions of text in the partition (None: no text).")
    first_text_continued: bool = Field(False, description="Its first text began in the partition before.")
    last_text_continues: bool = Field(False, description="Its last text goes on in the partition after.")
    occupied: list[int] = Field([], description=(
        "Global positions near the partition's edges (as far as windows of other partitions reach in) that its "
        "own windows or hits hold."))
    elapsed_ms: float


class DispersionRequest(QueryRequest, InSubcorpus):
    """Where the hits fall (``POST /v1/dispersion``): over the regions of ``attribute`` (the parts,
    e.g. texts) and in ``bins`` equal stretches of the whole corpus. ``hits`` and ``corpus_size`` are
    the corpus's (all partitions'), which the part of Gries' DP a partition adds up depends on."""

    attribute: str = Field(min_length=1, description="The s-attribute whose regions are the parts (text).")
    hits: int = Field(ge=1, description="The query's hits in the whole corpus.")
    corpus_size: int = Field(ge=1, description="Tokens of the whole corpus (the stretches are of its positions).")
    tokens: int | None = Field(None, ge=1, description=(
        "Tokens of the filters' subcorpus in the whole corpus: the parts are its regions' tokens in it, and their "
        "shares are of it (None: corpus_size)."))
    base: int = Field(ge=0, description="Global position of the partition's first token.")
    bins: int = Field(100, ge=1, le=1000, description="Stretches of the corpus the hits are counted in.")


class DispersionResponse(_Answer):
    parts: int = Field(description="Regions of the attribute in the partition.")
    parts_with_hits: int
    smallest_part: int = Field(description="Tokens of the partition's smallest region (or of its tokens outside "
                               "any region, when there are some).")
    dp_sum: float = Field(description="Sum over the partition's parts (its regions, and its tokens outside any, "
                          "as one part) of |hits share - size share|: Gries' DP is half the corpus's sum.")
    bins: list[int] = Field(description="Hits in each stretch of the corpus (global positions).")
    elapsed_ms: float


T = TypeVar("T")
MAX_KEYWORD_TOKENS = 1_000
"""The longest keyword (match) a context line (``/v1/context``, ``/api/v1/context``) is asked for."""


def json_pieces(items: Sequence[T], budget: int) -> list[list[T]]:
    """The items in consecutive pieces of at most ``budget`` bytes of JSON each (one item at least): what
    one request may name of them, a node taking request bodies of 64 KB by default."""
    pieces: list[list[T]] = []
    piece: list[T] = []
    size = 0
    for item in items:
        cost = len(json.dumps(item)) + 2  # (escaped: the longer of the two ways JSON may be sent)
        if piece and size + cost > budget:
            pieces.append(piece)
            piece, size = [], 0
        piece.append(item)
        size += cost
    if piece:
        pieces.append(piece)
    return pieces


class MarginalsRequest(InSubcorpus):
    """Frequencies of given values of a p-attribute in a partition (the marginals of collocates found
    on other partitions)."""

    model_config = ConfigDict(extra="forbid")

    partition: str
    attribute: str = Field(min_length=1)
    values: list[str] = Field(max_length=2_000_000)


class MarginalsResponse(BaseModel):
    partition: str
    frequencies: list[int]


MAX_SKETCH_RELATIONS = 1024
"""Relations one sketch request asks a partition at most (a thesaurus asks many words' at once)."""
MAX_SKETCH_TABLES = 128
"""Relation tables (a relation's queries) one sketch request names at most."""


class SketchTable(BaseModel):
    """A relation's table on a partition: its CQP queries (headword at ``@``, collocate at ``@1``) and
    whether its instances count both ways (``symmetric``)."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(min_length=1, max_length=16)
    symmetric: bool = False


class SketchRelation(BaseModel):
    """One relation of a word sketch asked: the table it reads (an index into the request's
    ``tables``), whether the headword is the table's collocate (``swapped``: the inverse of a dual
    relation), and the collocates whose totals in it are asked for."""

    model_config = ConfigDict(extra="forbid")

    table: int = Field(ge=0, lt=MAX_SKETCH_TABLES, description="The index of the table read in the request's tables.")
    swapped: bool = False
    headword: str | None = Field(None, max_length=4000, description=(
        "This relation's headword, instead of the request's (a thesaurus asks many words at once)."))
    totals_of: list[str] = Field(default_factory=list, max_length=200_000, description=(
        "Collocates whose totals in the relation (f(R, y)) are asked for: those other partitions found."))


class SketchRequest(InSubcorpus):
    """A headword's rows of relation tables on a partition (``POST /v1/sketch``)."""

    model_config = ConfigDict(extra="forbid")

    partition: str
    attribute: str = Field(min_length=1, max_length=300, description="The p-attribute of headwords and collocates.")
    headword: str | None = Field(None, max_length=4000, description=(
        "The headword of every relation that names none of its own; None: only the totals asked for."))
    tables: list[SketchTable] = Field(min_length=1, max_length=MAX_SKETCH_TABLES, description=(
        "The relation tables the relations read, each once however many relations read it."))
    relations: list[SketchRelation] = Field(min_length=1, max_length=MAX_SKETCH_RELATIONS)
    strategy: Strategy = "standard"
    hard_boundary: int = Field(DEFAULT_HARD_BOUNDARY, ge=1, le=10_000)

    @model_validator(mode="after")
    def _relations_name_tables(self) -> SketchRequest:
        for relation in self.relations:
            if relation.table >= len(self.tables):
                raise ValueError(f"a relation reads table {relation.table}: the request names {len(self.tables)}")
        return self


class SketchRows(BaseModel):
    """One relation's answer: the headword's collocates with their counts and totals."""

    saved: bool = Field(description="Read from a table built by cowbird sketches build (else counted now).")
    instances: int = Field(description="The relation's instances on the partition (every headword).")
    head_total: int = Field(description="The headword's instances in the relation, f(x, R).")
    values: list[str]
    f: list[int] = Field(description="Instances of each collocate with the headword, f(x, R, y).")
    totals: list[int] = Field(description="Each collocate's instances in the relation with any headword, f(R, y).")
    asked: list[int] = Field(description="The totals of totals_of, in its order.")


class SketchResponse(BaseModel):
    partition: str
    size: int = Field(description="The partition's tokens (in the filters' subcorpus).")
    frequency: int = Field(description=(
        "The headword's frequency in the partition, in the filters' subcorpus (0 without a headword)."))
    tables: list[list[str]] = Field(description="The queries of the request's tables, canonical as the node ran them.")
    relations: list[SketchRows]
    elapsed_ms: float


MAX_NGRAM = 5
"""Longest n-grams a word list counts."""


class NgramRequest(BaseModel):
    """A word list or n-gram list of a partition or of its part in a subcorpus (``POST /v1/ngrams``):
    the n-grams of ``attribute`` that stay within one region of ``within`` and within the subcorpus.
    The partition counts them once and keeps the counts for the requests that follow: the rows with
    at least ``threshold`` occurrences, the ``top`` most frequent ones, and the counts of ``values``."""

    model_config = ConfigDict(extra="forbid")

    partition: str
    attribute: str = Field(min_length=1)
    n: int = Field(1, ge=1, le=MAX_NGRAM)
    within: str | None = Field(None, description="S-attribute whose regions an n-gram may not cross (text).")
    filters: list[RegionFilter] = Field([], max_length=50)
    match: str | None = Field(None, description="Keep the n-grams with a token matching this CQP regex.")
    ignore_case: bool = False
    threshold: int | None = Field(None, ge=1, description="Every n-gram occurring at least this often.")
    top: int = Field(0, ge=0, description="And the this many most frequent ones.")
    values: list[list[str]] = Field([], max_length=1_000_000, description="The counts of these n-grams.")


class NgramResponse(BaseModel):
    partition: str
    tokens: int = Field(description="Tokens of the partition in the subcorpus.")
    ngrams: int = Field(description="N-grams counted (occurrences).")
    types: int = Field(description="Distinct n-grams in the partition (those passing match).")
    row_tokens: list[list[str]] = Field(description=(
        "The n-grams sent (each its tokens), the most frequent first: columns, not objects, so that tens of "
        "thousands of rows cost little to build and to read."))
    row_counts: list[int] = Field(description="Their counts, in the same order.")
    counts: list[int] = Field(description="The counts of the values asked for, in their order.")
    across: bool = Field(False, description=(
        "within none: whether the n-grams starting in the partition's last n-1 tokens were completed with the "
        "next partition's first tokens (False: the partition carries no neighbours.json, or the node predates "
        "them, and they are not counted)."))
    elapsed_ms: float


class SubcorpusRequest(BaseModel):
    """The size of a partition's part in a subcorpus (``POST /v1/subcorpus``): its tokens, the regions of
    ``texts`` it touches, and with ``attribute`` that s-attribute's values in it with their sizes (the
    subcorpus picker's list). No filters: the whole partition."""

    model_config = ConfigDict(extra="forbid")

    partition: str
    filters: list[RegionFilter] = Field([], max_length=50)
    texts: str | None = Field(None, description="The s-attribute whose regions are counted as texts (text).")
    attribute: str | None = Field(None, description="An s-attribute with values, listed with their sizes.")
    match: str | None = Field(None, description="Only the values matching this CQP regex (the whole value).")
    ignore_case: bool = False
    period: Literal["year", "month", "decade"] | None = Field(None, description=(
        "The attribute's values are dates: list its periods instead (cowbird.core.periods), the undated values "
        "as the empty one."))


class SubcorpusResponse(BaseModel):
    partition: str
    tokens: int = Field(description="Tokens of the partition in the subcorpus.")
    texts: int | None = Field(description="Regions of ``texts`` with tokens in the subcorpus (None: no texts asked).")
    all_texts: int | None = Field(description="Regions of ``texts`` in the partition.")
    values: list[str] = Field(description="The attribute's values with tokens in the subcorpus (passing match).")
    value_tokens: list[int] = Field(description="Tokens in the subcorpus in each value's regions.")
    value_regions: list[int] = Field(description="Regions of each value with tokens in the subcorpus.")
    elapsed_ms: float
