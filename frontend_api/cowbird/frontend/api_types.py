"""The search page's API types, generated: ``web/cowbird/web/static/api-types.d.ts`` holds one
TypeScript type per component schema of the front end's ``/openapi.json``, so that the page's
JSDoc (``tsc -p web/tsconfig.json``) reads the server's answers as the server's models describe them.

``make api-types`` writes the file (``python -m cowbird.frontend.api_types``); ``make lint`` runs
``python -m cowbird.frontend.api_types --check``, which fails when the checked-in file differs from
a fresh generation. The app is built in-process over no corpora (its routes and models do not depend
on the configuration) and asked for ``app.openapi()``; nothing listens.

The rules (``docs/development.md``, "The page's API types"):

- a model that a route sends as its 2xx JSON answer, and every model nested in one, is sent whole:
  FastAPI serializes every field (no route sets ``response_model_exclude_*``; one that did would make
  its models' fields optional here), so every property is present, ``| null`` where the field may
  be ``None`` (``anyOf`` with ``null``);
- a model that a request sends (a JSON body) or that only an error answer carries (``Problem``,
  serialized without its ``None`` members) is as its schema declares: a property outside
  ``required`` (one with a default) is optional (``name?:``). A model on both sides whose two forms
  differ has the second as ``<Name>Input``;
- ``enum`` and ``Literal`` are unions of string literals, arrays ``T[]``, ``dict`` ``Record<string, T>``,
  ``$ref`` the other type by name, descriptions ``/** doc comments */``; types sorted by name,
  properties in the order their models declare them, so that the file changes only where the schema does.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import tempfile
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fastapi.routing import APIRoute

from cowbird.frontend.settings import AccountSettings, FrontendSettings, NodeAccess
from cowbird.web import STATIC

__all__ = ["OUTPUT", "Operation", "openapi_schema", "render", "main"]

OUTPUT = STATIC / "api-types.d.ts"
"""Where the page's modules import the types from (``import("./api-types").QueryResult``)."""

Operation = tuple[str, str]
"""A path and a lower-case method, as ``/openapi.json``'s ``paths`` key them."""

HEADER = """\
// Generated from the front end's /openapi.json by `make api-types` (cowbird.frontend.api_types): do
// not edit. `make lint` fails when this file differs from a fresh generation.
// A model the server sends as an answer has every property (null where the field may be None); a
// request's model and Problem have optional (?) the properties with a default.
"""

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_REF = "#/components/schemas/"
_WIDTH = 100


_SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}
"""JSON Schema's scalar types as TypeScript names them."""


class _Unconfigured(FrontendSettings):
    """The front end's settings from the keyword arguments alone: the schema is the same whatever
    the configuration, and the environment (``COWBIRD_*``) is not read."""

    from_keywords_only = True


def openapi_schema() -> tuple[dict[str, Any], frozenset[Operation]]:
    """The front end's OpenAPI document, and the operations whose answers leave fields out
    (``response_model_exclude_unset``, ``_defaults`` or ``_none``): built in-process over no corpora,
    with its account database in a temporary folder."""
    from cowbird.frontend.app import create_app

    with tempfile.TemporaryDirectory(prefix="cowbird-api-types-") as folder:
        settings = _Unconfigured(
            corpora=[], nodes=NodeAccess(token="api-types-" + "0" * 32),
            accounts=AccountSettings(database_file=Path(folder) / "accounts.sqlite3"),
        )
        app = create_app(settings)
        try:
            document = app.openapi()
        finally:  # what the lifespan would close (it never runs: nothing is served)
            app.state.frontend.accounts.database.close()
            app.state.frontend.metrics.close()
    partial = frozenset(
        (route.path_format, method.lower())
        for route in app.routes if isinstance(route, APIRoute)
        if route.response_model_exclude_unset or route.response_model_exclude_defaults
        or route.response_model_exclude_none
        for method in route.methods or ()
    )
    return document, partial


def _refs(node: Any) -> set[str]:
    """The component schemas that ``node`` names by ``$ref`` (not transitively)."""
    found: set[str] = set()
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(_REF):
            found.add(reference[len(_REF):])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _closure(schemas: Mapping[str, Any], names: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        todo.extend(_refs(schemas[name]))
    return seen


def _sides(document: Mapping[str, Any], partial: Collection[Operation]) -> tuple[set[str], set[str]]:
    """The models sent whole (2xx answers of operations that leave nothing out, and what they nest),
    and those as declared (request bodies, parameters, error answers, the models no operation names,
    and the answers of operations that leave fields out, which are never taken as whole)."""
    schemas = document.get("components", {}).get("schemas", {})
    whole: set[str] = set()
    lean: set[str] = set()
    declared: set[str] = set()
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            declared |= _refs(operation.get("requestBody", {})) | _refs(operation.get("parameters", []))
            for status, response in operation.get("responses", {}).items():
                if not str(status).startswith("2"):
                    declared |= _refs(response)
                elif (path, method) in partial:
                    lean |= _refs(response)
                else:
                    whole |= _refs(response)
    lean = _closure(schemas, lean)
    whole = _closure(schemas, whole) - lean
    return whole, _closure(schemas, declared) | (set(schemas) - whole)


def type_name(schema_name: str) -> str:
    """A component's name as a TypeScript identifier (FastAPI's ``Model-Input`` is ``ModelInput``)."""
    name = re.sub(r"[^A-Za-z0-9_$]", "", schema_name)
    if not _IDENTIFIER.match(name):
        name = "_" + name
    return name


class _Writer:
    def __init__(self, schemas: Mapping[str, Any], inputs: Collection[str]) -> None:
        self.schemas = schemas
        self.inputs = inputs  # the models that have a <Name>Input form of their own

    def ref(self, reference: str, whole: bool) -> str:
        if not reference.startswith(_REF):
            raise ValueError(f"a $ref outside the components: {reference}")
        name = reference[len(_REF):]
        if name not in self.schemas:
            raise ValueError(f"$ref to a schema that is not there: {reference}")
        return type_name(name) + ("" if whole or name not in self.inputs else "Input")

    def type(self, node: Any, whole: bool, indent: str) -> str:
        """The TypeScript type of a JSON Schema node."""
        if node is True or node == {}:
            return "unknown"
        if node is False:
            return "never"
        if not isinstance(node, dict):
            raise ValueError(f"not a schema: {node!r}")
        if "$ref" in node:
            return self.ref(node["$ref"], whole)
        if "const" in node:
            return json.dumps(node["const"], ensure_ascii=False)
        if "enum" in node:
            return _union(json.dumps(value, ensure_ascii=False) for value in node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return _union(self.type(member, whole, indent) for member in node[key])
        if "allOf" in node:
            members = [self.type(member, whole, indent) for member in node["allOf"]]
            return members[0] if len(members) == 1 else " & ".join(_parenthesized(m) for m in members)
        kind = node.get("type")
        if isinstance(kind, list):
            return _union(self.type({**node, "type": k}, whole, indent) for k in kind)
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            if "prefixItems" in node:
                items = [self.type(item, whole, indent) for item in node["prefixItems"]]
                rest = node.get("items", False if node.get("maxItems") == len(items) else True)
                if rest is not False:
                    items.append("..." + _parenthesized(self.type(rest, whole, indent)) + "[]")
                return "[" + ", ".join(items) + "]"
            return _parenthesized(self.type(node.get("items", True), whole, indent)) + "[]"
        if kind == "object" or "properties" in node:
            if node.get("properties"):
                return self.members(node, whole, indent)
            extra = node.get("additionalProperties", True)
            return f"Record<string, {self.type(extra, whole, indent)}>"
        if kind is None:
            return "unknown"
        raise ValueError(f"a schema type this generator does not know: {kind!r}")

    def members(self, node: Mapping[str, Any], whole: bool, indent: str) -> str:
        """An object type's body, ``{ ... }``, one property a line."""
        inner = indent + "  "
        required = set(node.get("required", ()))
        lines = ["{"]
        for name in node["properties"]:
            field = node["properties"][name]
            lines += _doc(field, inner)
            key = name if _IDENTIFIER.match(name) else json.dumps(name)
            optional = "" if whole or name in required else "?"
            lines.append(_line(f"{inner}{key}{optional}: ", self.type(field, whole, inner), ";", inner))
        extra = node.get("additionalProperties", False)
        if extra is not False:
            value = "unknown" if extra is True else self.type(extra, whole, inner)
            if value != "unknown":  # an index signature must take every property's type too
                value = _union([value, *(self.type(f, whole, inner) for f in node["properties"].values())])
            lines.append(f"{inner}[key: string]: {value};")
        lines.append(indent + "}")
        return "\n".join(lines)

    def declaration(self, schema_name: str, whole: bool, name: str, note: str = "") -> str:
        schema = self.schemas[schema_name]
        lines = _doc({**schema, "description": note + (schema.get("description") or "")}, "")
        if isinstance(schema, dict) and (schema.get("type") == "object" or "properties" in schema) \
                and schema.get("properties"):
            lines.append(f"export interface {name} {self.members(schema, whole, '')}")
        else:
            lines.append(_line(f"export type {name} = ", self.type(schema, whole, ""), ";", ""))
        return "\n".join(lines)


def _line(before: str, type_: str, after: str, indent: str) -> str:
    """``before``, the type, ``after``: a union too long for a line has a member a line."""
    members = _split_union(type_)
    if len(before) + len(type_) + len(after) <= _WIDTH or len(members) == 1 or "\n" in type_:
        return before + type_ + after
    return before.rstrip() + "".join(f"\n{indent}  | {member}" for member in members) + after


def _parenthesized(type_: str) -> str:
    """A union or an intersection in parentheses (before ``[]``, inside ``&``)."""
    compound = len(_split_union(type_)) > 1 or len(_split_union(type_, " & ")) > 1
    return f"({type_})" if compound else type_


def _union(members: Iterable[str]) -> str:
    kept: list[str] = []
    for member in members:
        for part in _split_union(member):
            if part not in kept:
                kept.append(part)
    if "unknown" in kept:
        return "unknown"
    return " | ".join(kept) if kept else "never"


def _split_union(type_: str, separator: str = " | ") -> list[str]:
    """The top-level members of a union (or, with ``" & "``, an intersection) written by this module:
    not those inside brackets or quotes."""
    parts: list[str] = []
    depth, start, quoted, index = 0, 0, False, 0
    while index < len(type_):
        char = type_[index]
        if quoted:
            if char == "\\":
                index += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif depth == 0 and type_.startswith(separator, index):
            parts.append(type_[start:index])
            start = index + len(separator)
            index += len(separator) - 1
        index += 1
    parts.append(type_[start:])
    return parts


def _doc(node: Any, indent: str) -> list[str]:
    """A ``/** ... */`` comment of a schema's description (and its default, its deprecation)."""
    if not isinstance(node, dict):
        return []
    text: list[str] = []
    for line in (node.get("description") or "").strip().splitlines():
        line = line.rstrip().replace("*/", "*\\/")
        text += textwrap.wrap(line, _WIDTH - len(indent) - 3, break_long_words=False, break_on_hyphens=False) or [""]
    if "default" in node:
        text.append("@default " + json.dumps(node["default"], ensure_ascii=False, sort_keys=True).replace("*/", "*\\/"))
    if node.get("deprecated"):
        text.append("@deprecated")
    if not text:
        return []
    if len(text) == 1 and len(text[0]) + len(indent) + 7 <= _WIDTH:
        return [f"{indent}/** {text[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in text), f"{indent} */"]


def _differs(schema: Any, inputs: Collection[str]) -> bool:
    """Whether a model's declared form differs from its whole one: an optional property, or a
    model nested in it that has an input form of its own."""
    if not isinstance(schema, dict):
        return False
    properties = schema.get("properties") or {}
    if set(properties) - set(schema.get("required", ())):
        return True
    return bool(_refs(schema) & set(inputs))


def render(document: Mapping[str, Any], partial: Collection[Operation] = ()) -> str:
    """The ``.d.ts`` of an OpenAPI document (``partial``: the operations whose answers leave fields out)."""
    schemas: Mapping[str, Any] = document.get("components", {}).get("schemas", {})
    whole, declared = _sides(document, partial)
    both = whole & declared
    inputs: set[str] = set()
    while True:  # a model nesting one with an input form has one too
        grown = {name for name in both if _differs(schemas[name], inputs)}
        if grown == inputs:
            break
        inputs = grown
    writer = _Writer(schemas, inputs)
    names: dict[str, str] = {}
    blocks: list[str] = []
    for schema_name in sorted(schemas):
        forms = [(type_name(schema_name), schema_name in whole, "")]
        if schema_name in inputs:
            forms.append((type_name(schema_name) + "Input", False, f"{schema_name} as a request sends it. "))
        for name, sent_whole, note in forms:
            if name in names:
                raise ValueError(f"two schemas would be the TypeScript type {name}: {names[name]} and {schema_name}")
            names[name] = schema_name
            blocks.append(writer.declaration(schema_name, sent_whole, name, note))
    return HEADER + "".join("\n" + block + "\n" for block in blocks)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cowbird.frontend.api_types",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"the file to write or check (default: {OUTPUT})")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: fail (exit 1, with the difference) unless it is a fresh generation")
    arguments = parser.parse_args(argv)
    document, partial = openapi_schema()
    fresh = render(document, partial)
    output: Path = arguments.output
    shown = _shown(output)
    if arguments.check:
        current = output.read_text(encoding="utf-8") if output.is_file() else ""
        if current == fresh:
            print(f"{shown} is up to date with the server's schema")
            return 0
        difference = difflib.unified_diff(current.splitlines(keepends=True), fresh.splitlines(keepends=True),
                                          f"{shown} (checked in)", f"{shown} (from the schema)", n=1)
        sys.stderr.writelines(list(difference)[:200])
        print(f"{shown} is out of date with the server's schema: run `make api-types`", file=sys.stderr)
        return 1
    output.write_text(fresh, encoding="utf-8")
    print(f"wrote {shown} ({len(re.findall('^export ', fresh, re.MULTILINE))} types)")
    return 0


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    raise SystemExit(main())
