"""The front end's public operations, declared once: what each searches on the nodes, where.

Each entry of ``PUBLIC_OPERATIONS`` names an operation's path (under ``/api/v1``), its parameter
model (``params.py``), its JSON answer (``schemas.py``; None for a route that answers files only),
its cost class — how it is estimated and where it runs — how the partitions' answers are merged,
its download formats and whether it answers ``stream=1`` as events. The rest follows from the table:

- the routes: ``routes/prologue.py:declared`` registers each operation's route with the table's
  models, formats and description, and gives every one the same prologue (a saved subcorpus
  expanded into filters, ``stream=1`` as events where declared);
- the background decision: ``background.py:ToBackground`` forwards a request to the background
  process when its operation's ``background`` says so (``runs_in_background``) — the same rule the
  preview route asks of ``QUERY`` for a sorted page deep in the hits;
- the OpenAPI entries: each route's description says its cost class and merge, and carries them
  as ``x-cowbird-cost``, ``x-cowbird-merge`` and ``x-cowbird-formats``, from which the page's
  generated types and any client can tell them.

``tests/frontend/test_public_operations.py`` holds the app to the table: every ``/api/v1`` route
that reaches the nodes is declared here (or named there with the reason it is not), and each
declared one is served with the table's models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, create_model

from cowbird.core.declared import HitAnalysis, analyses
from cowbird.frontend import params, schemas
from cowbird.frontend.downloads import FORMATS, MEDIA_TYPES, TABLE_FORMATS, Format
from cowbird.frontend.events import ANALYSIS_EVENTS, QUERY_EVENTS

Cost = Literal["interactive", "estimated", "background"]
"""How an operation is classed — interactive or background work (``classing.py``) — and where it runs:

- ``interactive``: always interactive, in the interactive process, in the viewer's interactive lane
  (an estimate, a subcorpus's size);
- ``estimated``: classed by its estimated cost, whatever its kind: its query is estimated on the
  nodes (``deps.tiered`` refuses what would pass the deadline), and the estimate's seconds plus the
  hits it handles times its ``per_hit`` cost are its cost; within the interactive budget (``[limits]
  interactive_seconds``) it is interactive work where it was asked, beyond it background work — in
  the background process (``background.py`` hands it over) after the viewer's turn by cost
  (``priority.Lanes``);
- ``background``: always background work, in the background process, after the viewer's turn (no
  estimate of it yet: word and keyword lists, word sketches, trends, comparisons)."""

@dataclass(frozen=True, eq=False)
class PublicOperation:
    """One operation of the public API (``GET /api/v1/<path>``)."""

    name: str
    parameters: type[params.Parameters]
    response: type[BaseModel] | None
    cost: Cost
    merge: str
    """How the partitions' answers become the one answer (said in the OpenAPI description)."""
    summary: str
    formats: tuple[Format, ...] = ()
    """The files it answers with ``format=`` besides JSON (an export: only files)."""
    stream: Literal["no", "own", "partitions"] = "no"
    """``stream=1``: not taken; answered as the route's own NDJSON events (the preview's); or as
    ``routes/prologue.py`` streams every analysis — an event per partition, then the result."""
    per_hit: float = 0.0
    """For ``estimated``: the seconds it takes alone per hit it handles beyond finding the hits (an
    export: per line) ..."""
    fixed: float = 0.0
    """... and the seconds it takes whatever the hits (its calls, merging, the answer). Both measured
    alone on the demo by ``bench/per_hit.py`` — the slope and intercept of its time over queries of
    3,000 to 125,000 hits (``bench/RESULTS.md``, "Cost per hit") — rounded up; a sorted page's
    per-hit cost from its sort keys (0.7 µs a hit near offset 100,000 of 127,101 hits)."""
    declared: HitAnalysis[Any, Any, Any] | None = None
    """A declared analysis's declaration (``cowbird.core.declared``), which its route serves."""

    @property
    def path(self) -> str:
        return f"/api/v1/{self.name}"

    @property
    def background(self) -> bool:
        """Whether it is background work before any estimate (in the background process)."""
        return self.cost == "background"

    def responses(self) -> dict[int | str, dict[str, Any]]:
        """The OpenAPI description of its 200 answer: JSON and the files it writes, or events."""
        files: dict[str, Any] = {MEDIA_TYPES[f].split(";")[0]: {} for f in self.formats}
        content: dict[str, Any] = ({"application/json": {}} if self.response is not None else {}) | files
        if self.stream != "no":  # its events (``events.py``), then the result or an error
            models = QUERY_EVENTS if self.stream == "own" else ANALYSIS_EVENTS
            content["application/x-ndjson"] = {"schema": {"oneOf": [
                {"$ref": f"#/components/schemas/{model.__name__}"} for model in models]}}
        told = ["the answer as JSON"] if self.response is not None else []
        if self.formats:
            told.append(f"with format={'|'.join(self.formats)} a file")
        if self.stream != "no":
            told.append("with stream=1 NDJSON events")
        return {200: {"content": content, "description": "; ".join(told).capitalize() + "."}}

    def about(self) -> str:
        """Its cost class and merge, as the OpenAPI description says them (after the route's own words)."""
        return f"Cost: {COSTS[self.cost]}\n\nAcross partitions: {self.merge}."

    def openapi_extra(self) -> dict[str, Any]:
        return {"x-cowbird-cost": self.cost, "x-cowbird-merge": self.merge, "x-cowbird-formats": list(self.formats)}

    def __repr__(self) -> str:
        return f"PublicOperation({self.name})"


COSTS: dict[Cost, str] = {
    "interactive": "runs at once, among the viewer's interactive queries.",
    "estimated": "classed by its estimated cost: its query is estimated first, refused past the time limit, run at "
                 "once as interactive work within the interactive budget and as background work beyond it.",
    "background": "background work: it waits for the viewer's turn and runs at a lower priority.",
}


SUMMED = "each partition's counts per value are summed, then ranked and cut"
QUERY = PublicOperation(
    "query", params.PreviewParameters, schemas.QueryResult, "estimated",
    "the partitions' totals are summed; the page is taken from the partitions that hold it, in corpus order, "
    "or merged on the sort keys (a sorted page), or drawn by one seed over all hits (a sample)",
    "A preview: the query's hits, a page at a time (KWIC lines), with each partition's total.",
    stream="own", per_hit=0.7e-6)
ESTIMATE = PublicOperation(
    "estimate", params.Searching, schemas.EstimateResult, "interactive",
    "the partitions' estimated hits are summed; the time is the slowest partition's",
    "What a query would cost before it runs: its hits (counted, or estimated from samples) and seconds.")
EXPORT = PublicOperation(
    "export", params.ExportParameters, None, "estimated",
    "the partitions' lines are streamed in corpus order, merged on the sort keys, or sampled by one seed",
    "The hits as a file: every line with its context and attributes, with a provenance block.",
    formats=FORMATS, per_hit=20e-6, fixed=0.06)
FREQUENCY = PublicOperation(
    "frequency", params.FrequencyParameters, schemas.FrequencyResult, "estimated", SUMMED,
    "How often each value occurs on the hits (CQP's count by), per million tokens searched.",
    formats=TABLE_FORMATS, stream="partitions", per_hit=2.5e-6, fixed=0.02)
DISTRIBUTION = PublicOperation(
    "distribution", params.DistributionParameters, schemas.DistributionResult, "estimated",
    "each partition's hits and tokens per value are summed, then the rates computed",
    "Hits per value of a structural attribute at the match, with each value's size and rate.",
    formats=TABLE_FORMATS, stream="partitions", per_hit=3.5e-6, fixed=0.02)
DISPERSION = PublicOperation(
    "dispersion", params.DispersionParameters, schemas.DispersionResult, "estimated",
    "each partition's hits per part and per stretch are joined, then DP is computed over the whole corpus",
    "Where the hits fall: Gries' DP over texts (or other regions) and the partitions, and hits per stretch.",
    formats=TABLE_FORMATS, stream="partitions", per_hit=0.2e-6, fixed=0.02)
COLLOCATIONS = PublicOperation(
    "collocations", params.CollocationParameters, schemas.CollocationResult, "estimated",
    "co-occurrence and marginal counts are summed over the partitions before any association measure",
    "Collocates of the hits in a window, with their association measures.",
    formats=TABLE_FORMATS, stream="partitions", per_hit=0.5e-6, fixed=0.03)
TREND = PublicOperation(
    "trend", params.TrendParameters, schemas.TrendResult, "background",
    "each partition's hits and tokens per period are summed, then rates and Wilson bands computed",
    "Rates of one or more queries over time, per period of a date attribute.",
    formats=TABLE_FORMATS)
COMPARE = PublicOperation(
    "compare", params.CompareParameters, schemas.CompareResult, "background",
    "each search's counts per value are summed over its partitions, then the two compared",
    "Two searches (two queries, or two subcorpora) side by side, value by value.",
    formats=TABLE_FORMATS)
SKETCH = PublicOperation(
    "sketch", params.SketchParameters, schemas.WordSketchResult, "background",
    "each partition's counts per relation and collocate are summed, then logDice computed",
    "A word sketch: a headword's collocates by grammatical relation.",
    formats=TABLE_FORMATS)
SKETCH_DIFFERENCE = PublicOperation(
    "sketchdiff", params.SketchDifferenceParameters, schemas.SketchDifferenceResult, "background",
    "two sketches' summed counts, compared relation by relation",
    "The difference of two headwords' word sketches.",
    formats=TABLE_FORMATS)
THESAURUS = PublicOperation(
    "thesaurus", params.ThesaurusParameters, schemas.ThesaurusResult, "background",
    "the sketches' counts are summed over the partitions before words are compared",
    "Words that share a headword's collocates, from word sketches.",
    formats=TABLE_FORMATS)
WORDLIST = PublicOperation(
    "wordlist", params.WordListParameters, schemas.WordListResult, "background", SUMMED,
    "A word list: every value of an attribute (in a subcorpus) by frequency.",
    formats=TABLE_FORMATS)
KEYWORDS = PublicOperation(
    "keywords", params.KeywordParameters, schemas.KeywordResult, "background",
    "both word lists are summed over their partitions, then each word's keyness computed",
    "Keywords: words more frequent in one (sub)corpus than in a reference.",
    formats=TABLE_FORMATS)
SUBCORPUS = PublicOperation(
    "subcorpus", params.SubcorpusParameters, schemas.SubcorpusResult, "interactive",
    "the partitions' texts and tokens under the filters are summed",
    "The size of a subcorpus: the texts and tokens its filters choose, per value.",
    formats=TABLE_FORMATS)



def _declared(analysis: HitAnalysis[Any, Any, Any]) -> PublicOperation:
    """A declared analysis's public operation (``cowbird.core.declared``): its parameters after those of
    every table, its result after what every analysis answers; background work, streamed, as files."""
    for own, common, what in ((analysis.parameters, params.TableParameters, "parameters"),
                              (analysis.result, schemas.DeclaredResult, "result's fields")):
        taken = (set(own.model_fields) - {"rows"}) & set(common.model_fields)
        if taken:
            raise TypeError(f"{analysis!r}: its {what} {sorted(taken)} are every analysis's own: name them otherwise")
    title = "".join(part.capitalize() for part in analysis.name.split("_"))
    parameters = cast(type[params.TableParameters], create_model(
        f"{title}Parameters", __base__=(analysis.parameters, params.TableParameters),
        __doc__=f"``GET /api/v1/{analysis.name}``."))
    result = create_model(f"{title}Result", __base__=(analysis.result, schemas.DeclaredResult),
                          __doc__=analysis.summary)
    return PublicOperation(analysis.name, parameters, result, "estimated", analysis.merged, analysis.summary,
                           formats=TABLE_FORMATS, stream="partitions", per_hit=10e-6, declared=analysis)


DECLARED: tuple[PublicOperation, ...] = tuple(_declared(analysis) for analysis in analyses())
"""The declared analyses' operations (``cowbird.core.analyses``), each served by ``routes/declared.py``."""

PUBLIC_OPERATIONS: tuple[PublicOperation, ...] = (
    QUERY, ESTIMATE, EXPORT, FREQUENCY, DISTRIBUTION, DISPERSION, COLLOCATIONS, TREND, COMPARE, SKETCH,
    SKETCH_DIFFERENCE, THESAURUS, WORDLIST, KEYWORDS, SUBCORPUS, *DECLARED,
)
BY_PATH: dict[str, PublicOperation] = {operation.path: operation for operation in PUBLIC_OPERATIONS}


def runs_in_background(path: str) -> bool:
    """Whether a GET request is background work from its path alone (before any estimate): its
    operation's ``background``."""
    operation = BY_PATH.get(path)
    return operation is not None and operation.background


def may_hand_over(path: str) -> bool:
    """Whether a request is classed by its estimated cost: run where it was asked, it may be handed
    over to the background process once estimated heavy."""
    operation = BY_PATH.get(path)
    return operation is not None and operation.cost == "estimated"
