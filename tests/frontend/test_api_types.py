"""The page's API types (``web/cowbird/web/static/api-types.d.ts``) are generated from the front end's
OpenAPI schema (``cowbird.frontend.api_types``): the checked-in file is a fresh generation, the
generator's rules hold, and a field renamed on the server makes ``tsc`` refuse the page module
that reads it."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cowbird.frontend.api_types import OUTPUT, main, openapi_schema, render
from tests.support import ROOT, unavailable

WEB = ROOT / "web"
STATIC = WEB / "cowbird" / "web" / "static"


@pytest.fixture(scope="module")
def schema() -> tuple[dict[str, Any], frozenset[tuple[str, str]]]:
    return openapi_schema()


def test_the_checked_in_types_are_a_fresh_generation(schema: tuple[dict[str, Any], frozenset[tuple[str, str]]]) -> None:
    document, partial = schema
    assert OUTPUT == STATIC / "api-types.d.ts"
    fresh = render(document, partial)
    assert OUTPUT.read_text(encoding="utf-8") == fresh, (
        "web/cowbird/web/static/api-types.d.ts is out of date with the server's schema: run `make api-types`")
    assert render(copy.deepcopy(document), partial) == fresh  # deterministic
    names = set(re.findall(r"^export (?:interface|type) (\w+)", fresh, re.MULTILINE))
    models = set(document["components"]["schemas"])
    assert models <= names and all(name.endswith("Input") for name in names - models)  # one type per schema
    assert not partial  # no route leaves fields out of its answer (every model's fields are present)


def test_check_fails_on_a_stale_file_with_the_command_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "api-types.d.ts"
    stale.write_text(OUTPUT.read_text(encoding="utf-8").replace("  cqp: string;", "  query: string;", 1))
    assert main(["--check", "--output", str(stale)]) == 1
    said = capsys.readouterr().err
    assert "is out of date with the server's schema: run `make api-types`" in said
    assert "-  query: string;" in said and "+  cqp: string;" in said
    assert main(["--output", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == OUTPUT.read_text(encoding="utf-8")


def _interface(text: str, name: str) -> str:
    found = re.search(rf"^export interface {name} \{{\n(.*?)^\}}", text, re.MULTILINE | re.DOTALL)
    assert found, name
    return found.group(1)


def test_the_server_models_come_out_as_the_page_reads_them(
    schema: tuple[dict[str, Any], frozenset[tuple[str, str]]],
) -> None:
    text = render(*schema)
    hit = _interface(text, "Hit")
    assert "  breaks: Boundary[];" in hit  # a default_factory=list field: always sent
    assert "  gdex: GdexScore | null;" in hit and "  meta: Record<string, string | null>;" in hit
    assert "  /** Global position of the last token of the match. */\n  matchend: number;" in hit
    query = _interface(text, "QueryResult")
    assert "  hits: Hit[];" in query and "  tokens: number | null;" in query
    assert "  anchors: (\"target\" | \"keyword\")[];" in _interface(text, "Translation")
    assert "  period: \"year\" | \"month\" | \"decade\";" in _interface(text, "TrendResult")
    problem = _interface(text, "Problem")  # an error's body leaves its None members out: optional
    assert "  code: ErrorCode;" in problem and "  offset?: number | null;" in problem
    assert "  [key: string]: unknown;" in problem  # extra="allow"
    job = _interface(text, "NewJob")  # a request's body: the fields with defaults may be left out
    assert "  kind: \"crawl\" | \"build\";" in job and "  pages?: number;" in job and "@default 1000" in job
    assert re.search(r'^export type ErrorCode =\n  \| "internal"\n', text, re.MULTILINE)
    assert text.index("export interface Boundary") < text.index("export interface Hit ") < text.index(
        "export interface WordSketchResult")


def _document(schemas: dict[str, Any], paths: dict[str, Any]) -> dict[str, Any]:
    return {"openapi": "3.1.0", "paths": paths, "components": {"schemas": schemas}}


def _answer(name: str) -> dict[str, Any]:
    body = {"schema": {"$ref": f"#/components/schemas/{name}"}}
    return {"responses": {"200": {"content": {"application/json": body}}}}


def test_the_rules_on_a_small_schema() -> None:
    row = {"type": "object", "description": "A row. Its end: */ here.", "properties": {
        "value": {"type": "string"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "kind": {"enum": ["a", "b"], "type": "string"},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "maxItems": 2},
        "not-a-name": {"type": "boolean", "default": False},
    }, "required": ["value", "kind", "counts", "pair"]}
    sent = {"type": "object", "properties": {"rows": {"type": "array", "items": {"$ref": "#/components/schemas/Row"}},
                                             "lean": {"$ref": "#/components/schemas/Lean"}}, "required": ["rows"]}
    paths = {"/rows": {"get": _answer("Sent"),
                       "post": {"requestBody": {"content": {"application/json": {"schema": {
                           "$ref": "#/components/schemas/Row"}}}}, **_answer("Sent")}},
             "/partial": {"get": _answer("Lean")}}
    lean = {"type": "object", "properties": {"maybe": {"type": "integer", "default": 0}}}
    text = render(_document({"Row": row, "Sent": sent, "Lean": lean}, paths), partial={("/partial", "get")})
    answered = _interface(text, "Row")  # sent whole (in Sent's answer): every property present
    assert "  note: string | null;" in answered and '  "not-a-name": boolean;' in answered
    assert '  kind: "a" | "b";' in answered and "  counts: Record<string, number>;" in answered
    assert "  pair: [string, number];" in answered
    asked = _interface(text, "RowInput")  # the request body's form: what has a default may be left out
    assert "  note?: string | null;" in asked and '  "not-a-name"?: boolean;' in asked and "  value: string;" in asked
    assert "/** Row as a request sends it. A row. Its end: *\\/ here. */\nexport interface RowInput" in text
    assert "  rows: Row[];" in _interface(text, "Sent") and "  lean: Lean;" in _interface(text, "Sent")
    # a route that leaves fields out (response_model_exclude_*) sends Lean too: as declared, wherever it is
    assert "  maybe?: number;" in _interface(text, "Lean")
    assert re.findall(r"^export interface (\w+)", text, re.MULTILINE) == ["Lean", "Row", "RowInput", "Sent"]


def _renamed(document: dict[str, Any], model: str, old: str, new: str) -> dict[str, Any]:
    renamed = copy.deepcopy(document)
    schema = renamed["components"]["schemas"][model]
    schema["properties"] = {new if k == old else k: v for k, v in schema["properties"].items()}
    schema["required"] = [new if k == old else k for k in schema.get("required", [])]
    return renamed


def test_a_field_renamed_on_the_server_changes_its_type(
    schema: tuple[dict[str, Any], frozenset[tuple[str, str]]],
) -> None:
    document, partial = schema
    before = render(document, partial)
    after = render(_renamed(document, "LineContext", "more_before", "earlier"), partial)
    assert after != before
    assert "  earlier: boolean;" in _interface(after, "LineContext")
    assert "more_before" not in _interface(after, "LineContext") and "more_before" in _interface(before, "LineContext")


@pytest.mark.slow  # tsc over the page's modules: about 8 s
def test_a_field_renamed_on_the_server_fails_tsc_on_the_module_that_reads_it(
    schema: tuple[dict[str, Any], frozenset[tuple[str, str]]], tmp_path: Path,
) -> None:
    tsc = shutil.which("tsc")
    if tsc is None:
        unavailable("tsc is not on PATH (apt-get install node-typescript): the page's modules cannot be type-checked")
    document, partial = schema
    web = tmp_path / "web"
    shutil.copytree(WEB, web, ignore=shutil.ignore_patterns("templates", "*.css", "__pycache__", "*.py"))
    (web / "cowbird" / "web" / "static" / "api-types.d.ts").write_text(
        render(_renamed(document, "LineContext", "more_before", "earlier"), partial), encoding="utf-8")
    checked = subprocess.run([tsc, "-p", str(web / "tsconfig.json")], capture_output=True, text=True, timeout=120,
                             check=False)
    said = checked.stdout + checked.stderr
    assert checked.returncode != 0, said
    errors = [line for line in said.splitlines() if ": error TS" in line]
    assert errors and all("search-context.js" in line and "more_before" in line for line in errors), said


def test_no_page_module_describes_a_server_model_by_hand(
    schema: tuple[dict[str, Any], frozenset[tuple[str, str]]],
) -> None:
    models = set(schema[0]["components"]["schemas"])
    for module in sorted(STATIC.glob("*.js")):
        written = set(re.findall(r"@typedef \{object\} (\w+)", module.read_text(encoding="utf-8")))
        by_hand = sorted(written & models)
        assert not by_hand, f"{module.name} describes {by_hand} by hand: import them from ./api-types"
