"""The query parameters of the front end's routes as models (FastAPI's query-parameter models).

Each route takes one model (``Annotated[PreviewParameters, Query()]``); the models share their parts by
inheritance, so ``corpus``, ``q``, ``syntax``, ``ignore_case`` and ``filter`` are declared once for the
preview, the export, the three analyses and the translation. Every model refuses what it does not
know (``extra="forbid"``): a misspelt parameter (``ignorecase=1``) is a ``400 bad_parameter`` naming
it, the closest accepted name and every name the route takes — never ignored without a word.
A number too big for its type is a ``400 bad_parameter`` naming it too: a whole number beyond a
64-bit integer (``min=`` followed by 309 digits), a decimal that overflows to infinity (``p=1e309``),
``inf`` or ``nan`` — never an overflow deep inside the code (``OverflowError``, numpy's int64).
``token`` (an API token for HTTP GET scripts) is accepted everywhere.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from cowbird.core.analysis_merge import MEASURES
from cowbird.core.errors import BadParameter
from cowbird.core.search import HitView
from cowbird.frontend.downloads import Format
from cowbird.query.limits import nfc
from cowbird.serving.problems import UnknownParameters

MAX_JSON_ROWS = 100_000
"""Rows of an analysis in one JSON answer; a page of the browser's tables is far smaller."""

MAX_TREND_QUERIES = 8
"""Queries on one trend chart."""

FILTER_FORMS = "ATTR~REGEX (a regex), ATTR=VALUE (exactly), ATTR:FROM..TO (a number; open: 2010..), !~ and != negate"
"""How filter= is written (``cowbird.frontend.querying.parse_filter``)."""
SAVED_SUBCORPUS = "A saved subcorpus (its ID, from /api/v1/subcorpora): its filters, before any filter= given."

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The whole numbers a parameter may be: a 64-bit integer's, as numpy and the nodes hold them."""


Position = Annotated[int, Path(ge=INT64_MIN, le=INT64_MAX, description="A token's global position in the corpus.")]
"""A corpus position in a route's path (``/ref/{corpus}/{position}``): a 64-bit integer, else 400."""


def in_int64(value: int) -> int:
    """``value`` if a 64-bit integer holds it; else the client's error, saying what fits."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise PydanticCustomError("int64", "a whole number of {digits} digits is beyond a 64-bit integer "
                                  "(-9223372036854775808 to 9223372036854775807)", {"digits": len(str(abs(value)))})
    return value


class Parameters(BaseModel):
    """What every route takes: nothing but an API token."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # p=1e309 is inf: refused, as nan

    token: str | None = Field(None, description="An API token, for scripts that cannot send "
                                                "Authorization: Bearer (see /help/api).")

    @field_validator("*")
    @classmethod
    def _int64(cls, value: Any) -> Any:
        """Every whole number within a 64-bit integer (``offset``, ``min``, ``seed`` ... of every route)."""
        if isinstance(value, int) and not isinstance(value, bool):
            return in_int64(value)
        return value

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        if isinstance(data, dict):
            accepted = cls.accepted()
            unknown = [name for name in data if name not in accepted]
            if unknown:
                # the answer names the route too (``cowbird.serving.problems.validation_error``)
                raise UnknownParameters(unknown_parameters(unknown, accepted), ", ".join(sorted(accepted)))
        return data

    @classmethod
    def accepted(cls) -> frozenset[str]:
        """The names users write (the aliases: ``filter``, not ``filters``)."""
        return frozenset(field.alias or name for name, field in cls.model_fields.items())


def unknown_parameters(unknown: list[str], accepted: frozenset[str]) -> str:
    """``unknown parameter ignorecase (did you mean ignore_case?)``."""
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(accepted), n=1, cutoff=0.6)
        hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(hints)}"


class Searching(Parameters):
    """A query over a corpus, as the preview, the export and the analyses take it."""

    corpus: str = Field(description="Corpus name.")
    q: str = Field(description="The query.")
    syntax: Literal["simple", "cqp"] = Field("simple", description="simple (Colibri² language) or cqp.")
    ignore_case: bool = Field(False, description="Case-insensitive matching: %c on every term (with syntax=cqp: "
                                                 "on every attribute test).")
    filters: list[str] = Field([], alias="filter", description=FILTER_FORMS + ", repeatable.")
    subcorpus: str | None = Field(None, description=SAVED_SUBCORPUS)


class Viewing(Parameters):
    """What each hit shows."""

    context: str = Field("10", description="Tokens of context each side, or an s-attribute (s) for the "
                                           "whole region.")
    show: str | None = Field(None, description="p-attributes of the match to return, comma-separated.")
    meta: str | None = Field(None, description="s-attributes (metadata) to return, comma-separated.")
    inline: str | None = Field(None, description=(
        "p-attributes written after each token's word in left, match and right (inline=pos,lemma: "
        "house/NN/house), comma-separated."))

    def view(self, max_context: int) -> HitView:
        """The hit view asked for, at most ``max_context`` tokens each side."""
        names = split(self.meta)
        if any(name.lower() in ("1", "true", "yes") for name in names):
            raise BadParameter(
                f"meta={self.meta}: meta names the s-attributes to show with each hit (meta=text_genre,text_url); "
                "for the provenance block of a download use provenance=1"
            )
        context = self.context.strip()
        if re.fullmatch(r"[0-9]{1,9}", context):  # ASCII digits: "²" is a digit to str.isdigit
            if int(context) > max_context:
                raise BadParameter(f"context={self.context}: at most {max_context} tokens each side")
            return HitView(int(context), split(self.show), names, inline=split(self.inline))
        if not context.isidentifier():
            raise BadParameter(f"context={self.context!r}: give a number of tokens (0-{max_context}) or an "
                               "s-attribute such as s")
        return HitView(0, split(self.show), names, region=context, inline=split(self.inline))


class Ordering(Parameters):
    """A sample or an order of the hits."""

    sample: int | None = Field(None, ge=1, description="A random sample of this many hits.")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="Seed of the sample or of sort=random.")
    sort: str | None = Field(None, description=(
        "Sort the hits: match.lemma, match..matchend.word, left1.word, right2.pos%c, target.lemma, keyword.word "
        "— up to three keys, comma-separated (right1.word,left1.lemma: the second sorts the first's ties) — or "
        "random (with seed), or gdex: good examples first (whole sentences of moderate length, few rare words, "
        "numbers or URLs; the corpus's rules, see /help/api)."))
    direction: str = Field("asc", description=(
        "Sort direction, asc or desc: one for every key, or one per key (asc,desc); ties stay in corpus order."))


class PreviewParameters(Searching, Viewing, Ordering):
    """``GET /api/v1/query``."""

    offset: int = Field(0, ge=0, description="The first hit shown (0-based, in the order asked for).")
    limit: int = Field(100, ge=0, description="Hits shown (at most the preview size).")
    stream: bool = Field(False, description=(
        "Answer as NDJSON events, one JSON object a line: started, then page (the hits, as soon as they are "
        "known), count (each partition's total as it comes: total_at_least), then result (the same object as "
        "without stream), or error. See /help/api."))
    boundaries: str | None = Field(None, description=(
        "s-attributes (text,s) whose boundaries inside each line each hit gives in its breaks, comma-separated."))


class ExportParameters(Searching, Viewing, Ordering):
    """``GET /api/v1/export``."""

    offset: int = Field(0, ge=0, description="First hit to export (0-based, global order).")
    limit: int | None = Field(None, ge=1, description="Rows (default: the browser limit).")
    format: Format = Field("tsv", description="tsv, csv, xlsx or ndjson.")
    provenance: bool = Field(False, description="Start the file with what it holds and how it was made.")
    categories: str | None = Field(None, description=(
        "One of your saved searches (the ID of its /s/ID link): the categories you gave its lines, as the "
        "columns category and category_label."))
    only_categorised: bool = Field(False, description=(
        "With categories=: only the lines you gave a category, all of them, in the order asked (sort=; "
        "found among all the hits, however many; offset and limit do not apply, and only these rows count "
        "against the day's export budget)."))


class TableParameters(Searching):
    """An analysis: a table, paged in JSON or whole as a file."""

    offset: int = Field(0, ge=0, description="The first row returned (0-based), to page through the table.")
    limit: int | None = Field(None, ge=1, description=(
        f"Rows returned (JSON: at most {MAX_JSON_ROWS:,}; default 1,000, collocations 100); a file has "
        "every row from offset unless limited."))
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or the rows as a tsv/csv file (with provenance=1 a metadata block first: pandas skiprows=N) or an "
        "xlsx spreadsheet (numbers as numbers, the metadata on a sheet of its own)"))
    provenance: bool = Field(False, description="With a file: start it with what it counts and how.")
    stream: bool = Field(False, description=(
        "Answer as NDJSON events: started, partition (each partition's answer as it comes: done of partitions), "
        "then result (the same object as without stream) or error. JSON only."))


class FrequencyParameters(TableParameters):
    """``GET /api/v1/frequency``."""

    by: str = Field("word", description="The p-attribute counted (word, lemma, pos ...).")
    on: str | None = Field(None, description="match, matchend, target, keyword, an offset (match[-1], matchend[1]) "
                                             "or a span (match..matchend, the default: the whole match). An offset "
                                             "past a partition's edge is clamped to it, as CQP clamps at the "
                                             "corpus's (partitions are cut between texts).")
    fold: str = Field("", description="c: fold case, d: ignore diacritics, cd: both.")
    min: int = Field(1, ge=1, description="Only values with at least this frequency.")


class DistributionParameters(TableParameters):
    """``GET /api/v1/distribution``."""

    by: str = Field(description="An s-attribute with values (text_genre, text_year ...).")
    order: Literal["value", "hits", "per_million"] = Field(
        "value", description="Rows by value (numbers as numbers), by hits or by hits per million.")


class DispersionParameters(Searching):
    """``GET /api/v1/dispersion``."""

    parts: str = Field("text", description="The s-attribute whose regions are the parts DP is computed over (text).")
    bins: int = Field(100, ge=1, le=1000, description="Equal stretches of the corpus the hits are counted in.")
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or the stretches as a tsv/csv/xlsx file (with provenance=1 the measures in its metadata)"))
    provenance: bool = Field(False, description="With a file: start it with what it counts and how.")
    stream: bool = Field(False, description=(
        "Answer as NDJSON events: started, partition (as each answers), then result or error. JSON only."))


class TrendParameters(Parameters):
    """``GET /api/v1/trend``."""

    corpus: str = Field(description="Corpus name.")
    q: list[str] = Field(min_length=1, max_length=MAX_TREND_QUERIES, description=(
        f"The query; repeat q for several on one chart (at most {MAX_TREND_QUERIES})."))
    syntax: Literal["simple", "cqp"] = Field("simple", description="simple (Colibri² language) or cqp.")
    ignore_case: bool = Field(False, description="Case-insensitive matching, as for a search.")
    filters: list[str] = Field([], alias="filter", description=(
        "The subcorpus: " + FILTER_FORMS + ", repeatable (rates are per million of its tokens per period)."))
    subcorpus: str | None = Field(None, description=SAVED_SUBCORPUS)
    by: str | None = Field(None, description=(
        "The s-attribute holding a year or a date (text_year, text_date, text_lastmod); default: the corpus's "
        "first whose name ends in _year, then _date, then one with lastmod in it."))
    period: Literal["year", "month", "decade"] = Field("year", description="The periods counted in.")
    sparse_below: int = Field(10_000, ge=0, description=(
        "A period with fewer tokens than this is marked sparse: its rate says little."))
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or one row per query and period as a tsv/csv/xlsx file."))
    provenance: bool = Field(False, description="With a file: start it with what it counts and how.")


class CompareParameters(Searching):
    """``GET /api/v1/compare``: the first search is ``corpus``, ``q`` … as for a search; the second is
    ``other_*``, each defaulting to the first's (but its filters: none unless given)."""

    other_corpus: str | None = Field(None, description="The second search's corpus (default: corpus).")
    other_q: str | None = Field(None, description="The second search's query (default: q).")
    other_syntax: Literal["simple", "cqp"] | None = Field(None, description="Its syntax (default: syntax).")
    other_ignore_case: bool | None = Field(None, description="Its case switch (default: ignore_case).")
    other_filters: list[str] = Field([], alias="other_filter", description=(
        "Its subcorpus: " + FILTER_FORMS + ", repeatable (default: none, the whole corpus)."))
    other_subcorpus: str | None = Field(None, description="Its saved subcorpus (an ID), before any other_filter.")
    by: str = Field("word", description="The p-attribute of the match compared (word, lemma, pos ...).")
    on: str | None = Field(None, description="Which tokens: as for /api/v1/frequency (default: the whole match).")
    fold: str = Field("", description="c: fold case, d: ignore diacritics, cd: both.")
    min: int = Field(3, ge=1, description="Values with at least this many hits on one side are compared.")
    order: Literal["log_likelihood", "log_ratio", "diff"] = Field("log_likelihood", description=(
        "Rank each side's preferred values by |signed log-likelihood|, |Log Ratio| or |%DIFF|."))
    p: float = Field(0.05, gt=0, le=1, description=(
        "Significance: only values whose log-likelihood is significant at this p are listed; p=1 lists all."))
    correction: Literal["bonferroni", "none"] = Field("bonferroni", description=(
        "bonferroni: p is divided by the number of values compared; none: p as given."))
    min_log_ratio: float = Field(0.0, ge=0, description="Only values whose |Log Ratio| is at least this.")
    limit: int = Field(100, ge=1, le=MAX_JSON_ROWS, description="Rows listed for each side at most.")
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or the rows as a tsv/csv/xlsx file."))
    provenance: bool = Field(False, description="With a file: start it with what it compares and how.")


class WordListParameters(Parameters):
    """``GET /api/v1/wordlist``."""

    corpus: str = Field(description="Corpus name.")
    attribute: str = Field("word", description="The p-attribute listed (word, lemma, pos ...).")
    n: int = Field(1, ge=1, le=5, description="1: a word list; 2 to 5: n-grams (n tokens in a row).")
    min: int = Field(1, ge=1, description="Only n-grams with at least this frequency.")
    match: str | None = Field(None, description=(
        "Only n-grams with a token matching this regex (the whole token, as in CQP); for n=1 the words matching it."))
    ignore_case: bool = Field(False, description="match ignores case.")
    filters: list[str] = Field([], alias="filter", description=(
        "The subcorpus: " + FILTER_FORMS + ", repeatable (the tokens in the texts whose metadata match)."))
    subcorpus: str | None = Field(None, description=SAVED_SUBCORPUS)
    within: str | None = Field(None, description=(
        "N-grams stay within one region of this s-attribute (default: text, when the corpus has it; none: they "
        "cross texts, sentences and the cuts between partitions, each counted where it starts and completed with "
        "the next partition's first tokens)."))
    limit: int = Field(100, ge=1, description=(
        f"The most frequent this many rows (JSON: at most {MAX_JSON_ROWS:,}; a file too)."))
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or the rows as a tsv/csv/xlsx file."))
    provenance: bool = Field(False, description="With a file: start it with what it counts and how.")


class KeywordParameters(Parameters):
    """``GET /api/v1/keywords``."""

    corpus: str = Field(description="The target corpus.")
    filters: list[str] = Field([], alias="filter", description="The target subcorpus: " + FILTER_FORMS + ".")
    subcorpus: str | None = Field(None, description=(
        "The target: a saved subcorpus (its ID, from /api/v1/subcorpora): its filters, before any filter= given."))
    reference: str | None = Field(None, description="The reference corpus (default: the target's corpus).")
    reference_filters: list[str] = Field([], alias="reference_filter", description=(
        "The reference subcorpus: " + FILTER_FORMS + ", repeatable (text_genre!~news: the texts that are "
        "not news)."))
    reference_subcorpus: str | None = Field(None, description=(
        "The reference: a saved subcorpus (its ID), before any reference_filter= given."))
    attribute: str = Field("word", description="The p-attribute compared (word, lemma ...).")
    min: int = Field(5, ge=1, description="Items occurring at least this often in the target are compared.")
    reference_min: int | None = Field(None, ge=1, description=(
        "And those occurring at least this often in the reference (default: min): negative keywords."))
    order: Literal["log_likelihood", "log_ratio", "diff", "simple_maths", "frequency"] = Field(
        "log_likelihood", description=("Rank by signed log-likelihood, Log Ratio, %DIFF, the simple-maths score "
                                       "(Kilgarriff 2009) or the target frequency (highest first)."))
    p: float = Field(0.05, gt=0, le=1, description=(
        "Significance: only items whose log-likelihood is significant at this p are listed (chi-squared, one "
        "degree of freedom); the others are counted in not_significant. p=1 lists every item compared."))
    correction: Literal["bonferroni", "none"] = Field("bonferroni", description=(
        "bonferroni: p is divided by the number of items compared (many tests at once); none: p as given."))
    min_log_ratio: float = Field(0.0, ge=0, description=(
        "Effect size: only items whose Log Ratio is at least this far from 0 (1: twice or half as frequent)."))
    smoothing: float = Field(1.0, gt=0, description="The simple-maths score's constant k (1: common words; "
                                                    "100: rarer ones count less).")
    limit: int = Field(100, ge=1, description=f"The first this many rows (at most {MAX_JSON_ROWS:,}).")
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or the rows as a tsv/csv/xlsx file."))
    provenance: bool = Field(False, description="With a file: start it with what it compares and how.")


class SubcorpusParameters(Parameters):
    """``GET /api/v1/subcorpus``."""

    corpus: str = Field(description="Corpus name.")
    filters: list[str] = Field([], alias="filter", description=(
        "The subcorpus: " + FILTER_FORMS + ", repeatable (none: the whole corpus)."))
    subcorpus: str | None = Field(None, description=SAVED_SUBCORPUS)
    values: str | None = Field(None, description=(
        "An s-attribute with values (text_genre, text_year ...): its values in the subcorpus, each with its "
        "tokens and texts there (the subcorpus picker's list)."))
    match: str | None = Field(None, description="Only the values matching this regex (the whole value, as in CQP).")
    ignore_case: bool = Field(False, description="match ignores case.")
    order: Literal["value", "tokens", "texts"] = Field("value", description=(
        "Values by value (numbers as numbers), or by tokens or texts (largest first)."))
    offset: int = Field(0, ge=0, description="The first value returned (0-based).")
    limit: int = Field(1000, ge=1, description=f"Values returned (at most {MAX_JSON_ROWS:,}).")
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or the values as a tsv/csv/xlsx file."))
    provenance: bool = Field(False, description="With a file: start it with the subcorpus and how it was counted.")


class CollocationParameters(TableParameters):
    """``GET /api/v1/collocations``."""

    attribute: str = Field("lemma", description="The p-attribute of the collocates.")
    window: int = Field(5, ge=1, le=100, description="Tokens each side (left= and right= override).")
    left: int | None = Field(None, ge=0, le=100, description="Tokens before the match.")
    right: int | None = Field(None, ge=0, le=100, description="Tokens after the match.")
    within: str | None = Field(None, description="Windows stay in this region (s, text); 'none' lets them run to "
                                                 "across texts and the cuts between partitions. Default: text.")
    measures: str | None = Field(None, description=f"Comma-separated, of: {', '.join(MEASURES)} (default all).")
    order: str = Field("log_likelihood", description="The measure the rows are sorted by, or f.")
    min_freq: int = Field(2, ge=1, description="Only collocates with at least this many co-occurrences.")


class SketchParameters(Parameters):
    """``GET /api/v1/sketch``."""

    corpus: str = Field(description="Corpus name (one with a sketch grammar: /api/v1/corpora lists its sketches).")
    headword: str = Field(min_length=1, max_length=1000, description=(
        "The headword: a value of the grammar's attribute (a lemma: make, house), exactly as in the corpus "
        "(read in Unicode NFC, as the corpus and queries are: a decomposed u + U+0308 is \u00fc)."))
    relation: list[str] = Field([], description="Only these relations (repeatable; default: every one).")
    filters: list[str] = Field([], alias="filter", description=(
        "The subcorpus: " + FILTER_FORMS + ", repeatable (each relation's instances in the texts chosen)."))
    subcorpus: str | None = Field(None, description=SAVED_SUBCORPUS)
    min_freq: int = Field(1, ge=1, description="Only collocates with at least this many instances.")
    limit: int | None = Field(None, ge=1, description=(
        "Collocates per relation (JSON: default 25, at most 100,000); a file has every one unless limited."))
    format: Literal["json", "tsv", "csv", "xlsx"] = Field("json", description=(
        "json, or one row per relation and collocate as a tsv/csv/xlsx file."))
    provenance: bool = Field(False, description="With a file: start it with what it counts and how.")

    @field_validator("headword")
    @classmethod
    def _composed(cls, word: str) -> str:
        return nfc(word)


class SketchDifferenceParameters(SketchParameters):
    """``GET /api/v1/sketchdiff``."""

    other: str = Field(min_length=1, max_length=1000, description="The word compared with headword (a lemma).")

    @field_validator("other")
    @classmethod
    def _other_composed(cls, word: str) -> str:
        return nfc(word)


class ThesaurusParameters(SketchParameters):
    """``GET /api/v1/thesaurus``: ``relation`` limits the contexts compared; ``limit`` is the words listed
    (default 25, at most 1,000)."""


class TranslateParameters(Parameters):
    """``GET /api/v1/translate``: ``Searching`` with the corpus optional."""

    q: str = Field(description="A query in the simplified language (or CQP with syntax=cqp).")
    syntax: Literal["simple", "cqp"] = Field("simple", description="simple (the default) or cqp.")
    ignore_case: bool = Field(False, description="Case-insensitive: %c on every term (with syntax=cqp: on every "
                                                 "attribute test).")
    corpus: str | None = Field(None, description="The corpus the filters are checked against.")
    filters: list[str] = Field([], alias="filter", description=FILTER_FORMS + ", repeatable "
                                                               "(needs corpus).")
    subcorpus: str | None = Field(None, description=SAVED_SUBCORPUS)


class BuilderParameters(Parameters):
    """``GET /api/v1/builder``: a query read into boxes (``q``), or boxes written as CQP (``boxes``)."""

    q: str | None = Field(None, description="A query to read into boxes (CQP, or simple with syntax=simple).")
    syntax: Literal["simple", "cqp"] = Field("cqp", description="The syntax of q.")
    boxes: str | None = Field(None, max_length=20_000, description=(
        'Boxes to write as CQP, as JSON: {"tokens": [{"tests": [{"attribute": "lemma", "operator": "is", '
        '"value": "house", "ignore_case": false}], "min": 1, "max": 1}], "within": "s"}.'))
    corpus: str | None = Field(None, description="A corpus whose attributes the boxes must name.")


class CheckParameters(Parameters):
    """``GET /api/v1/check``."""

    cqp: str = Field(description="A CQP query expression.")


class RefParameters(Parameters):
    """``GET /ref/{corpus}/{position}`` and its JSON twins."""

    end: int | None = Field(None, ge=0, description="Global position of the match's last token.")


class LineContextParameters(Parameters):
    """``GET /api/v1/context/{corpus}/{position}``: one concordance line, widened in place."""

    end: int | None = Field(None, ge=0, description="Global position of the match's last token.")
    tokens: int = Field(20, ge=0, description="Tokens of context each side (at most [limits] max_line_context).")
    region: str | None = Field(None, description=(
        "The context is this region around the match (s: the sentence, p: the paragraph, text: as far as "
        "tokens go in the text; none: tokens each side across texts and partition cuts), at most tokens "
        "each side. Default: text, when the corpus has texts. breaks says where texts and sentences change."))
    show: str | None = Field(None, description="p-attributes each token carries after the word, comma-separated.")


def split(values: str | None) -> list[str]:
    return [v.strip() for v in (values or "").split(",") if v.strip()]
