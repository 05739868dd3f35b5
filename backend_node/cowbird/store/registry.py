"""CWB registry files: parse what cwb-encode (or a person) wrote, and write them as cwb-encode does.

A registry file names a corpus (``ID``), where its data lives (``HOME``) and its attributes
(``ATTRIBUTE`` for p-attributes, ``STRUCTURE`` for s-attributes, ``ALIGNED`` for alignments).
``##:: key = "value"`` lines are corpus properties such as the charset.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from cowbird.core.errors import RegistryError


@dataclass(frozen=True)
class SAttributeDecl:
    """One element as declared to the encoder: ``-S name[:depth][+key...]`` or ``-V ...``.

    ``depth`` None is a flat element (a new start tag closes the open region); ``n`` allows n levels
    of embedding, stored in ``name1`` .. ``nameN``.
    """

    name: str
    depth: int | None = None
    keys: tuple[str, ...] = ()
    keep_all: bool = False  # -V: the element itself stores its whole attribute string

    @property
    def attribute_names(self) -> list[str]:
        """The CWB s-attributes this declaration produces, in registry order."""
        suffixes = [""] + [str(i) for i in range(1, (self.depth or 0) + 1)]
        names = [f"{self.name}{s}" for s in suffixes]
        for key in self.keys:
            names += [f"{self.name}_{key}{s}" for s in suffixes]
        return names

    @property
    def annotated_names(self) -> list[str]:
        """Those of :attr:`attribute_names` that store annotation strings."""
        suffixes = [""] + [str(i) for i in range(1, (self.depth or 0) + 1)]
        names = [f"{self.name}{s}" for s in suffixes] if self.keep_all else []
        for key in self.keys:
            names += [f"{self.name}_{key}{s}" for s in suffixes]
        return names


@dataclass
class RegistryEntry:
    """The content of one registry file."""

    corpus_id: str
    home: Path
    name: str = ""
    info: Path | None = None
    properties: dict[str, str] = field(default_factory=dict)
    p_attributes: list[str] = field(default_factory=list)
    s_attributes: list[str] = field(default_factory=list)
    # s-attributes that carry annotation strings (avs/avx files)
    annotated: set[str] = field(default_factory=set)
    path: Path | None = None

    @property
    def charset(self) -> str:
        """The declared character set (CWB's default is latin1)."""
        return self.properties.get("charset", "latin1")


_LINE = re.compile(r"^\s*(NAME|ID|HOME|INFO|ATTRIBUTE|STRUCTURE|ALIGNED)\s+(.*?)\s*$")
_PROPERTY = re.compile(r'^##::\s*([A-Za-z_][\w-]*)\s*=\s*"([^"]*)"')


def _value(raw: str) -> str:
    """A registry value: a double-quoted string or one bare word (a comment may follow)."""
    if raw.startswith('"'):
        end = raw.find('"', 1)
        if end < 0:
            raise ValueError(f"unbalanced quotes in {raw!r}")
        return raw[1:end]
    return raw.split()[0] if raw.split() else ""


def resolve_home(home: str, registry_file: Path) -> Path:
    """Resolve HOME as CWB does (relative to the working directory), else next to the registry."""
    path = Path(home)
    if path.is_absolute() or path.exists():
        return path
    beside = registry_file.parent / path
    return beside if beside.exists() else path


def parse_registry(path: Path) -> RegistryEntry:
    """Read one registry file; errors name the file and line."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise RegistryError(f"cannot read registry file {path}: {exc.strerror}") from exc
    fields: dict[str, str] = {}
    properties: dict[str, str] = {}
    p_attrs: list[str] = []
    s_attrs: list[str] = []
    annotated: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        prop = _PROPERTY.match(line)
        if prop:
            properties[prop.group(1)] = prop.group(2)
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            raise RegistryError(f"{path}:{number}: cannot read registry line {line.strip()!r}")
        keyword, rest = match.groups()
        try:
            value = _value(rest)
        except ValueError as exc:
            raise RegistryError(f"{path}:{number}: {exc}") from exc
        if keyword == "ATTRIBUTE":
            p_attrs.append(value)
        elif keyword == "STRUCTURE":
            s_attrs.append(value)
            if "[annotations]" in rest:
                annotated.add(value)
        elif keyword == "ALIGNED":
            continue
        else:
            fields[keyword] = value
    if "ID" not in fields or "HOME" not in fields:
        raise RegistryError(f"{path}: registry file lacks an ID or HOME line")
    home = resolve_home(fields["HOME"], path)
    info = resolve_home(fields["INFO"], path) if fields.get("INFO") else None
    return RegistryEntry(
        corpus_id=fields["ID"],
        home=home,
        name=fields.get("NAME", ""),
        info=info,
        properties=properties,
        p_attributes=p_attrs,
        s_attributes=s_attrs,
        annotated=annotated,
        path=path,
    )


def find_registry_file(registry_dir: Path, corpus_id: str) -> Path:
    """The registry file of a corpus: CWB keeps ids lowercase in file names."""
    candidates = [registry_dir / corpus_id.lower(), registry_dir / corpus_id]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    known = sorted(p.name for p in registry_dir.iterdir() if p.is_file()) if registry_dir.is_dir() else []
    hint = f"; the registry has: {', '.join(known)}" if known else ""
    raise RegistryError(f"no corpus {corpus_id!r} in registry {registry_dir}{hint}")


def list_registry(registry_dir: Path) -> list[str]:
    """Corpus ids of every readable registry file in a directory (sorted)."""
    if not registry_dir.is_dir():
        raise RegistryError(f"registry directory {registry_dir} does not exist")
    ids = []
    for entry in sorted(os.listdir(registry_dir)):
        path = registry_dir / entry
        if path.is_file() and not entry.startswith("."):
            try:
                ids.append(parse_registry(path).corpus_id)
            except RegistryError:
                continue
    return ids


def registry_quote(path: str) -> str:
    """Quote a HOME/INFO path as cwb-encode's ``cl_path_registry_quote`` does."""
    plain = all(
        c.isascii() and (c.isalnum() or c in "_/-" or (i > 0 and c in ".\\")) for i, c in enumerate(path)
    )
    if plain and path:
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _structure_block(decl: SAttributeDecl) -> list[str]:
    keys = "".join(f' {key}=".."' for key in decl.keys)
    lines = [f"# <{decl.name}{keys}> ... </{decl.name}>"]
    if decl.depth == 0:
        lines.append("# (no recursive embedding allowed)")
    elif decl.depth is not None:
        levels = ", ".join(f"<{decl.name}{i}>" for i in range(1, decl.depth + 1))
        lines.append(f"# ({decl.depth} levels of embedding: <{decl.name}>, {levels}).")
    suffixes = [""] + [str(i) for i in range(1, (decl.depth or 0) + 1)]

    def structure(name: str, values: bool) -> str:
        return f"STRUCTURE {name:<20} # [annotations]" if values else f"STRUCTURE {name}"

    lines += [structure(f"{decl.name}{s}", decl.keep_all) for s in suffixes]
    for key in decl.keys:
        lines += [structure(f"{decl.name}_{key}{s}", True) for s in suffixes]
    return lines + [""]


def format_registry(
    registry_id: str, home: str, charset: str, p_attributes: list[str], s_attributes: list[SAttributeDecl]
) -> str:
    """The registry file cwb-encode writes for these declarations, line for line."""
    home_dir = home.rstrip("/") or "/"
    lines = [
        "##",
        f"## registry entry for corpus {registry_id.upper()}",
        "##",
        "",
        "# long descriptive name for the corpus",
        'NAME ""',
        "# corpus ID (must be lowercase in registry!)",
        f"ID   {registry_id}",
        "# path to binary data files",
        f"HOME {registry_quote(home_dir)}",
        '# optional info file (displayed by "info;" command in CQP)',
        f"INFO {registry_quote(home_dir + '/.info')}",
        "",
        "# corpus properties provide additional information about the corpus:",
        f'##:: charset  = "{charset}" # character encoding of corpus data',
        '##:: language = "??"     # insert ISO code for language (de, en, fr, ...)',
        "",
        "",
        "##",
        "## p-attributes (token annotations)",
        "##",
        "",
    ]
    lines += [f"ATTRIBUTE {name}" for name in p_attributes]
    lines += ["", "", "##", "## s-attributes (structural markup)", "##", ""]
    for decl in s_attributes:
        lines += _structure_block(decl)
    lines += ["", "# Yours sincerely, the Encode tool.", ""]
    return "\n".join(lines)


_DECL = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(?::(\d+))?((?:\+[A-Za-z_][A-Za-z0-9_-]*)*)$")


def parse_s_declaration(text: str, keep_all: bool = False) -> SAttributeDecl:
    """Read a cwb-encode declaration ``name[:n][+key...]`` (``-S`` or, with keep_all, ``-V``)."""
    match = _DECL.match(text)
    if not match:
        if "+" in text and ":" in text.split("+", 1)[1]:
            raise RegistryError(f"recursion depth must be declared before element attributes in {text!r}")
        raise RegistryError(f"cannot read s-attribute declaration {text!r} (expected name[:depth][+key...])")
    name, depth, keys = match.groups()
    key_list = tuple(k for k in keys.split("+") if k)
    if len(set(key_list)) != len(key_list):
        raise RegistryError(f"an element attribute is declared twice in {text!r}")
    return SAttributeDecl(name, int(depth) if depth is not None else None, key_list, keep_all)
