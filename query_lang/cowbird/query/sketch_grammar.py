"""Sketch grammars: the grammatical relations of word sketches, written as CQP (Sketch Engine's notation).

A grammar is a text file; each relation is a name line and one or more CQP queries under it, the
headword labelled ``1:`` and the collocate ``2:``::

    # Penn Treebank: adjectives before a noun
    *STRUCTLIMIT s
    *DUAL
    =modifier/modifies
        2:[pos="JJ.*"] [pos="JJ.*|CC|,"]{0,3} 1:[pos="NN.*"]
    *SYMMETRIC
    =and/or
        1:[pos="NN.*"] [word="and|or"] 2:[pos="NN.*"]

Directives (a line starting with ``*``): ``*STRUCTLIMIT s`` (every query of the grammar is ``within
s``), ``*DEFAULTATTR pos`` (what a bare string such as ``"JJ.*"`` tests; CQP's own default is
``word``), ``*WSATTR lemma`` (the attribute of headwords and collocates; default ``lemma``),
``*DUAL`` (the next relation is ``name/inverse``: the inverse swaps headword and collocate) and
``*SYMMETRIC`` (each instance counts in both directions: *and/or*). ``#`` starts a comment outside
quotes. ``*LABEL text`` under a relation's name line, before its queries, is the relation's **label**,
what users read (Sketch Engine writes it as the relation's name): ``%w`` in it is the headword
(``*LABEL objects of "%w"``); a ``*DUAL`` relation takes a second ``*LABEL`` line for its inverse
(``*LABEL verbs with "%w" as object``). The name stays the relation's id (``relation=object_of``);
a label is not required (:attr:`SketchGrammar.unlabelled` lists the relations without one, which
``cowbird sketches check`` warns about), but no two relations may share one. In the queries
``1:`` and ``2:`` become CQP's anchors ``@`` (target) and ``@1`` (keyword), and ``1.lemma`` /
``2.lemma`` in a global constraint ``target.lemma`` / ``keyword.lemma``; every query is parsed as
CQP when the grammar is read, and an error names the file, line and column.

A query can **look past its ``*STRUCTLIMIT``** (:func:`reads_past`): a lookahead ``[: … :]`` that no
token follows on some path through the query reads the token after the match, which is the next
region's first token when the match ends its region (CQP evaluates it there: ``within s`` bounds
the tokens of a match, not what a lookahead reads); and a query with a ``within`` of its own other
than the limit's region has tokens outside it. The reader does not refuse such a query, it warns
(:attr:`SketchGrammar.warnings`, shown by ``cowbird sketches build`` and ``cowbird sketches check``):
its instances then depend on the neighbouring regions. A final lookahead written with the region's
end as its alternative, ``( [:pos!="NN.*":] | </s> )``, is not warned about: at the region's last
token ``</s>`` holds whatever comes next, and elsewhere the lookahead reads a token of the region.

The shipped grammars (:data:`SHIPPED`) are in ``cowbird/query/sketches/``: ``penn`` (Penn Treebank
tags in ``pos``, as EWT and the demo corpus), ``ud`` (Universal Dependencies' ``upos``) and ``stts``
(the Stuttgart-Tübingen tagset of German corpora, in ``pos``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib.resources import files
from pathlib import Path

from cowbird.query import cqp_ast as ast
from cowbird.query.cqp import parse_cqp
from cowbird.query.cqp_serialize import serialize
from cowbird.query.errors import QueryError

MATCHING_STRATEGY = "traditional"
"""CQP's MatchingStrategy for relation queries: every match from every start, also one inside another
(``standard`` keeps only the earliest start per end: in *tired good house* only *tired* would modify
*house*). Each distinct (headword, collocate) pair of positions is one instance."""

SHIPPED = ("penn", "ud", "stts")
"""The grammars cowbird ships, by name (``sketch_grammar = "penn"`` in a corpus's configuration)."""

MAX_RELATIONS = 64
MAX_QUERIES = 16
"""Relations in a grammar, queries under one relation: more is a mistake, not a grammar."""

_NAME = re.compile(r"^\w[\w ./'-]{0,62}$")
_DIRECTIVES = {"STRUCTLIMIT", "DEFAULTATTR", "WSATTR", "DUAL", "SYMMETRIC", "LABEL"}
HEADWORD = "%w"
"""Where a relation's label names the headword (Sketch Engine's ``%w``: ``objects of "%w"``)."""
MAX_LABEL = 80
"""Characters of a relation's label at most: a heading users read, not a description."""
_UNSUPPORTED = {"UNARY": "unary relations (no collocate)", "TRINARY": "trinary relations (a third label)",
                "CONSTRUCTION": "constructions", "COLLOC": "collocation relations",
                "SEPARATEPAGE": "separate pages", "CLEARGR": "clearing relations"}


class SketchGrammarError(ValueError):
    """A grammar that cannot be read: ``where`` is ``file:line:column``; ``pretty()`` adds the line
    and a caret."""

    def __init__(self, source: str, line_number: int, column: int, message: str, line: str = "") -> None:
        self.source, self.line_number, self.column, self.message, self.line = source, line_number, column, message, line
        super().__init__(f"{self.where}: {message}")

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line_number}:{self.column}"

    def pretty(self) -> str:
        if not self.line:
            return str(self)
        return f"{self}\n  {self.line}\n  {' ' * (self.column - 1)}^"


Fail = Callable[[int, int, str, str], SketchGrammarError]
"""Makes the error of a grammar line: its number, the 1-based column, the message, the line."""


@dataclass(frozen=True)
class Relation:
    """One relation of the grammar: its ``name``, the ``inverse`` name of a ``*DUAL`` relation, whether
    it is ``symmetric``, its queries as CQP (headword at the target ``@``, collocate at the keyword
    ``@1``), each with the grammar line it came from, the labels users read of the relation and of
    its inverse (``*LABEL``; ``None``: none given) and the line of its name."""

    name: str
    queries: tuple[str, ...]
    lines: tuple[int, ...]
    inverse: str | None = None
    symmetric: bool = False
    label: str | None = None
    inverse_label: str | None = None
    line: int = 0


@dataclass(frozen=True)
class View:
    """A relation as a word sketch shows it: ``name``, and whether the headword is the relation's
    collocate (``swapped``: the inverse of a ``*DUAL`` relation)."""

    name: str
    relation: Relation
    swapped: bool = False

    @property
    def label(self) -> str | None:
        """The label users read, ``%w`` where the headword goes (``None``: the grammar gives none)."""
        return self.relation.inverse_label if self.swapped else self.relation.label

    def shown(self, headword: str) -> str:
        """The label with the headword written in (``objects of "buy"``); the name without a label."""
        return self.name if self.label is None else self.label.replace(HEADWORD, headword)


@dataclass(frozen=True)
class GrammarWarning:
    """A query of the grammar that can look past its ``*STRUCTLIMIT`` (:func:`reads_past`): where
    (``file:line``), its relation, and what it reads."""

    source: str
    line_number: int
    relation: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line_number}: relation {self.relation}: {self.message}"


@dataclass(frozen=True)
class SketchGrammar:
    """A grammar read: its ``name`` (the file's stem), where it was read from, the attribute of its
    headwords and collocates, its relations in order, and its queries that can look past the
    ``*STRUCTLIMIT`` (``warnings``)."""

    name: str
    source: str
    attribute: str
    relations: tuple[Relation, ...]
    warnings: tuple[GrammarWarning, ...] = ()

    @property
    def views(self) -> tuple[View, ...]:
        """Every relation as a sketch shows it, inverses after their relation, in grammar order."""
        shown: list[View] = []
        for relation in self.relations:
            shown.append(View(relation.name, relation))
            if relation.inverse is not None:
                shown.append(View(relation.inverse, relation, swapped=True))
        return tuple(shown)

    @property
    def unlabelled(self) -> tuple[GrammarWarning, ...]:
        """A warning for each relation (or inverse) that has no ``*LABEL``: users read its id."""
        return tuple(GrammarWarning(self.source, view.relation.line, view.name, "has no *LABEL: the page and the "
                                    f"API show its id {view.name!r} as its name (write *LABEL text under =name, "
                                    "%w for the headword)")
                     for view in self.views if view.label is None)

    def view(self, name: str) -> View:
        for view in self.views:
            if view.name == name:
                return view
        raise KeyError(name)

    def check(self, p_attributes: list[str], s_attributes: list[str], corpus: str) -> None:
        """Refuse the grammar for a corpus that lacks an attribute it reads, naming relation and line."""
        if self.attribute not in p_attributes:
            raise SketchGrammarError(self.source, 1, 1, f"*WSATTR {self.attribute}: corpus {corpus} has no "
                                     f"p-attribute {self.attribute!r} (it has: {', '.join(p_attributes)})")
        for relation in self.relations:
            for text, line in zip(relation.queries, relation.lines, strict=True):
                tokens, regions = attributes_read(parse_cqp(text))
                for name in tokens:
                    if name not in p_attributes and name not in s_attributes:
                        raise SketchGrammarError(self.source, line, 1, f"relation {relation.name}: corpus {corpus} "
                                                 f"has no attribute {name!r} (p-attributes: {', '.join(p_attributes)})")
                for name in regions:
                    if name not in s_attributes:
                        raise SketchGrammarError(self.source, line, 1, f"relation {relation.name}: corpus {corpus} "
                                                 f"has no s-attribute {name!r} (it has: {', '.join(s_attributes)})")


def shipped_path(name: str) -> Path:
    return Path(str(files("cowbird.query") / "sketches" / f"{name}.wsdef"))


def load_grammar(where: str | Path) -> SketchGrammar:
    """A shipped grammar by name (``penn``, ``ud``, ``stts``) or a grammar file by path."""
    if isinstance(where, str) and where in SHIPPED:
        path = shipped_path(where)
    else:
        path = Path(where)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SketchGrammarError(str(path), 1, 1, "no such sketch grammar (give a file, or one of the shipped "
                                 f"grammars: {', '.join(SHIPPED)})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SketchGrammarError(str(path), 1, 1, f"cannot be read as UTF-8 text: {error}") from None
    return parse_grammar(text, path.stem, str(path))


def parse_grammar(text: str, name: str, source: str = "<grammar>") -> SketchGrammar:
    """Read a grammar's text; raise :class:`SketchGrammarError` at the first line that is wrong."""
    relations: list[Relation] = []
    structlimit: str | None = None
    defaultattr = "word"
    attribute = "lemma"
    pending: set[str] = set()  # *DUAL / *SYMMETRIC for the next relation
    current: dict[str, object] | None = None
    names: set[str] = set()
    labels: dict[str, int] = {}  # label -> the line that gave it
    warnings: list[GrammarWarning] = []

    def fail(number: int, column: int, message: str, line: str) -> SketchGrammarError:
        return SketchGrammarError(source, number, column, message, line)

    def close() -> None:
        if current is None:
            return
        queries = current["queries"]
        assert isinstance(queries, list)
        if not queries:
            raise fail(int(str(current["line"])), 1, f"relation {current['name']} has no query under it",
                       str(current["text"]))
        lines, given = current["lines"], current["labels"]
        assert isinstance(lines, list) and isinstance(given, list)
        inverse = current["inverse"]
        relations.append(Relation(str(current["name"]), tuple(queries), tuple(lines),
                                  inverse if isinstance(inverse, str) else None, bool(current["symmetric"]),
                                  given[0] if given else None, given[1] if len(given) > 1 else None,
                                  int(str(current["line"]))))

    for number, raw in enumerate(text.splitlines(), start=1):
        line = _without_comment(raw).rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if stripped.startswith("*"):
            word, _, value = stripped[1:].partition(" ")
            word, value = word.strip().upper(), value.strip()
            if word in _UNSUPPORTED:
                raise fail(number, indent + 1, f"*{word}: {_UNSUPPORTED[word]} are not supported; cowbird's word "
                           "sketches relate a headword (1:) to a collocate (2:)", raw)
            if word not in _DIRECTIVES:
                raise fail(number, indent + 1, f"unknown directive *{word} (known: "
                           f"{', '.join('*' + d for d in sorted(_DIRECTIVES))})", raw)
            if word == "LABEL":
                _label(current, value, labels, number, indent, raw, fail)
                continue
            if word in ("DUAL", "SYMMETRIC"):
                if value:
                    raise fail(number, indent + 1, f"*{word} takes no value; the relation follows on the next line",
                               raw)
                if current is not None and not current["queries"]:
                    raise fail(number, indent + 1, f"*{word} inside relation {current['name']} before its queries",
                               raw)
                pending.add(word)
                continue
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", value):
                raise fail(number, indent + 1, f"*{word} takes an attribute name (*{word} pos)", raw)
            if relations or current is not None:
                raise fail(number, indent + 1, f"*{word} belongs before the first relation: it applies to all", raw)
            if word == "STRUCTLIMIT":
                structlimit = value
            elif word == "DEFAULTATTR":
                defaultattr = value
            else:
                attribute = value
            continue
        if stripped.startswith("="):
            close()
            current = None
            declared = stripped[1:].strip()
            dual, symmetric = "DUAL" in pending, "SYMMETRIC" in pending
            pending.clear()
            if dual and symmetric:
                raise fail(number, indent + 1, "a relation is *DUAL or *SYMMETRIC, not both", raw)
            first, slash, second = declared.partition("/") if dual else (declared, "", "")
            first, second = first.strip(), second.strip()
            if dual and not (slash and second and first):
                raise fail(number, indent + 1, f"*DUAL relation {declared!r} needs two names: =name/inverse", raw)
            for given in (first, second) if dual else (first,):
                if not _NAME.match(given):
                    raise fail(number, indent + 2, f"relation name {given!r}: letters, digits, spaces and _ . / ' - "
                               "(up to 63)", raw)
                if given in names:
                    raise fail(number, indent + 2, f"relation {given!r} is named twice", raw)
                names.add(given)
            current = {"name": first, "inverse": second if dual else None, "symmetric": symmetric,
                       "queries": [], "lines": [], "line": number, "text": raw, "labels": []}
            if len(relations) >= MAX_RELATIONS:
                raise fail(number, 1, f"more than {MAX_RELATIONS} relations", raw)
            continue
        if current is None:
            raise fail(number, indent + 1, "a query before any relation: name the relation first (=modifier)", raw)
        queries = current["queries"]
        lines = current["lines"]
        assert isinstance(queries, list) and isinstance(lines, list)
        if len(queries) >= MAX_QUERIES:
            raise fail(number, 1, f"more than {MAX_QUERIES} queries under relation {current['name']}", raw)
        queries.append(_query(line, indent, defaultattr, structlimit, number, raw, fail))
        lines.append(number)
        if structlimit is not None:
            warnings += [GrammarWarning(source, number, str(current["name"]), message)
                         for message in reads_past(parse_cqp(queries[-1]), structlimit)]
    if pending:
        raise fail(len(text.splitlines()) or 1, 1, f"*{sorted(pending)[0]} at the end, with no relation after it", "")
    close()
    if not relations:
        raise SketchGrammarError(source, 1, 1, "the grammar has no relation (=name followed by CQP queries)")
    return SketchGrammar(name, source, attribute, tuple(relations), tuple(warnings))


def _label(current: dict[str, object] | None, value: str, labels: dict[str, int], number: int, indent: int,
           raw: str, fail: Fail) -> None:
    """Add a ``*LABEL`` line's label to the relation being read, or refuse it where it is wrong."""
    if current is None:
        raise fail(number, indent + 1, "*LABEL before any relation: it belongs under the relation's =name line", raw)
    given, queries = current["labels"], current["queries"]
    assert isinstance(given, list) and isinstance(queries, list)
    if queries:
        raise fail(number, indent + 1, f"*LABEL after the queries of relation {current['name']}: it belongs right "
                   "under the =name line, before the queries", raw)
    most = 1 if current["inverse"] is None else 2
    if len(given) >= most:
        raise fail(number, indent + 1, f"relation {current['name']} has {'its label' if most == 1 else 'both labels'} "
                   "already (a *DUAL relation takes two *LABEL lines: its own, then its inverse's)", raw)
    if not value:
        raise fail(number, indent + 1, '*LABEL takes the text users read (*LABEL objects of "%w")', raw)
    if len(value) > MAX_LABEL or not value.isprintable():
        raise fail(number, indent + 1, f"*LABEL: up to {MAX_LABEL} printable characters", raw)
    if value in labels:
        raise fail(number, indent + 1, f"*LABEL {value!r} is not unique: line {labels[value]} gives it already",
                   raw)
    labels[value] = number
    given.append(value)


def _without_comment(line: str) -> str:
    """The line up to a ``#`` outside quotes."""
    quote = ""
    escaped = False
    for i, char in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:i]
    return line


_LABEL = re.compile(r"(?<![\w.@])([0-9]+):(?=\s*[\[\"'(])")
_REF = re.compile(r"(?<![\w.])([0-9]+)\.(?=[A-Za-z_])")


def _query(line: str, indent: int, defaultattr: str, structlimit: str | None, number: int, raw: str,
           fail: Fail) -> str:
    """One query line as CQP: bare strings test ``defaultattr``, ``1:``/``2:`` are ``@``/``@1``,
    ``1.att``/``2.att`` are ``target.att``/``keyword.att``; parsed, with errors at the grammar's line."""
    out: list[str] = []
    where: list[int] = []  # for each character of out, its column in line (0-based)

    def put(text: str, at: int) -> None:
        out.append(text)
        where.extend([at] * len(text))

    text = line
    i = indent
    bracket = angle = 0
    constraint = False
    labels: dict[str, int] = {}
    while i < len(text):
        char = text[i]
        if char in "\"'":
            end = _string_end(text, i)
            flags = re.match(r"%[cdl]+", text[end:])
            stop = end + (flags.end() if flags else 0)
            literal = text[i:stop]
            if bracket == 0 and angle == 0 and not constraint and defaultattr != "word":
                put("[", i)
                put(f"{defaultattr}=", i)
                for k, c in enumerate(literal):
                    put(c, i + k)
                put("]", stop - 1)
            else:
                for k, c in enumerate(literal):
                    put(c, i + k)
            i = stop
            continue
        if char == "[":
            bracket += 1
        elif char == "]":
            bracket = max(0, bracket - 1)
        elif char == "<" and bracket == 0 and not constraint:
            angle += 1
        elif char == ">" and angle:
            angle -= 1
        elif text.startswith("::", i) and bracket == 0:
            constraint = True
        label = _LABEL.match(text, i) if bracket == 0 and angle == 0 and not constraint else None
        if label is not None and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.@")):
            which = label.group(1)
            if which not in ("1", "2"):
                raise fail(number, i + 1, f"label {which}: a relation has the headword 1: and the collocate 2: "
                           "(trinary relations are not supported)", raw)
            if which in labels:
                raise fail(number, i + 1, f"label {which}: is set twice in this query", raw)
            labels[which] = i
            put("@" if which == "1" else "@1", i)
            i = label.end()
            continue
        ref = _REF.match(text, i) if constraint or bracket else None
        if ref is not None and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")):
            which = ref.group(1)
            if which not in ("1", "2"):
                raise fail(number, i + 1, f"{which}.: only 1. (the headword) and 2. (the collocate) can be "
                           "referred to", raw)
            put("target." if which == "1" else "keyword.", i)
            i = ref.end()
            continue
        put(char, i)
        i += 1
    for which, name in (("1", "headword"), ("2", "collocate")):
        if which not in labels:
            raise fail(number, indent + 1, f"the query has no {which}: (the {name}); label its token {which}:[...]",
                       raw)
    cqp = "".join(out)
    try:
        query = parse_cqp(cqp)
    except QueryError as error:
        offset = error.offset if error.offset is not None else len(cqp)
        column = where[offset] if offset < len(where) else len(text)
        raise fail(number, column + 1, f"not a CQP query: {error.message}", raw) from None
    if (isinstance(query.pattern, ast.Meet | ast.MuUnion | ast.Tabular)
            or ast.marked_anchors(query.pattern) != {"target", "keyword"}):
        raise fail(number, indent + 1, "1: and 2: must label tokens of the query's pattern", raw)
    if structlimit is not None and query.within is None and query.within_tokens is None:
        query = replace(query, within=structlimit)
    return serialize(query)


def _string_end(text: str, start: int) -> int:
    """The index after the closing quote of the string starting at ``start`` (the line's end if none)."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def attributes_read(query: ast.Query) -> tuple[list[str], list[str]]:
    """The attributes a query reads: of tokens (tests, ``label.attribute``) and of regions (tags,
    ``lbound``/``rbound``, ``within``)."""
    tokens: list[str] = []
    regions: list[str] = [query.within] if query.within else []

    def walk(node: object) -> None:
        if isinstance(node, ast.AttributeTest | ast.LabelRef):
            tokens.append(node.attribute)
        elif isinstance(node, ast.StructuralTag | ast.RegionBound):
            regions.append(node.attribute)
        if isinstance(node, tuple):
            for item in node:
                walk(item)
        elif hasattr(node, "__dataclass_fields__"):
            for field in node.__dataclass_fields__:
                walk(getattr(node, field))

    walk(query.pattern)
    walk(query.constraint)
    return tokens, regions


def reads_past(query: ast.Query, limit: str) -> list[str]:
    """What in the query can read a token outside the ``limit`` region its match lies in, each said in
    a sentence (none: the query's instances depend on the tokens of the match's region only).

    The rule: (1) a ``within`` other than one ``limit`` region (``within text``, ``within 2 s``,
    ``within 5``) lets the match's tokens lie outside one; (2) a lookahead ``[: … :]`` that no token
    follows on some path through the pattern (the last thing before the match's end, or followed
    only by tags and other lookaheads: ``[:pos!="NN.*":]``, ``[:pos="IN":] </s>``, ``([] [:x:])+``)
    reads the token after the match, the next region's first when the match ends its region — unless
    it stands in an alternative of tags and lookaheads only, beside the alternative ``</limit>``
    (``( [:pos!="NN.*":] | </s> )``): there the region's end answers whenever the match ends it."""
    found: list[str] = []
    if query.within != limit or query.within_count != 1 or query.within_tokens is not None:
        said = (f"within {query.within_tokens}" if query.within_tokens is not None else
                f"within {query.within_count} {query.within}" if query.within_count != 1 else f"within {query.within}")
        found.append(f"it says {said}, so its tokens can lie outside the {limit} its match starts in (the grammar's "
                     f"*STRUCTLIMIT is {limit})")
    if isinstance(query.pattern,
                  ast.TokenPattern | ast.StructuralTag | ast.Sequence | ast.Alternation | ast.Repetition):
        for lookahead in _open_lookaheads(query.pattern, True, limit):
            shown = serialize(ast.Query(lookahead)).removesuffix(";")
            found.append(f"the lookahead {shown} can end the match, so it reads the token after the match: the first "
                         f"token of the next {limit} when the match ends its {limit}; write ( {shown} | </{limit}> ) "
                         f"for the {limit}'s end to answer there")
    return found


def _tokenless(pattern: ast.Pattern) -> bool:
    """Whether the pattern can match without a token (only tags and lookaheads on some path)."""
    return _without_tokens(pattern, some_path=True)


def _zero_width(pattern: ast.Pattern) -> bool:
    """Whether the pattern has no token at all, only tags and lookaheads."""
    return _without_tokens(pattern, some_path=False)


def _without_tokens(pattern: ast.Pattern, some_path: bool) -> bool:
    """Whether the pattern matches without a token on some path (an alternation's option, a
    repetition that may be empty) or on every path."""
    if isinstance(pattern, ast.TokenPattern):
        return pattern.lookahead
    if isinstance(pattern, ast.StructuralTag):
        return True
    if isinstance(pattern, ast.Sequence):
        return all(_without_tokens(item, some_path) for item in pattern.items)
    if isinstance(pattern, ast.Alternation):
        options = (_without_tokens(option, some_path) for option in pattern.options)
        return any(options) if some_path else all(options)
    return (some_path and pattern.min == 0) or _without_tokens(pattern.item, some_path)


def _open_lookaheads(pattern: ast.Pattern, open_after: bool, limit: str) -> list[ast.TokenPattern]:
    """The lookaheads of ``pattern`` that no token may follow (``open_after``: what comes after the
    pattern can be without a token), less those guarded by a ``</limit>`` alternative."""
    if isinstance(pattern, ast.TokenPattern):
        return [pattern] if pattern.lookahead and open_after else []
    if isinstance(pattern, ast.StructuralTag):
        return []
    if isinstance(pattern, ast.Sequence):
        found: list[ast.TokenPattern] = []
        for i, item in enumerate(pattern.items):
            after = open_after and all(_tokenless(rest) for rest in pattern.items[i + 1:])
            found += _open_lookaheads(item, after, limit)
        return found
    if isinstance(pattern, ast.Alternation):
        end = ast.StructuralTag(limit, closing=True)
        guarded = end in pattern.options
        return [lookahead for option in pattern.options if not (guarded and _zero_width(option))
                for lookahead in _open_lookaheads(option, open_after, limit)]
    return _open_lookaheads(pattern.item, open_after, limit)
