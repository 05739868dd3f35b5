"""The web archives Calf may ask for a page as it was (``calf --archives FILE``, the front end's
``[calf] archives``): what each one is and how politely it is asked. Only the configuration lives
here (Calf and the front end share it); ``cowbird.calf.archives`` speaks the protocols.

Three kinds of archive:

- ``cdx``: a Wayback-style CDX server (the Internet Archive, pywb, OpenWayback): ``cdx`` lists a
  URL's captures, ``replay`` + ``<timestamp>id_/<url>`` returns a capture's original bytes;
- ``memento``: a Memento TimeMap (``timemap`` + ``<url>``, link format) and/or TimeGate
  (``timegate`` + ``<url>`` with ``Accept-Datetime``), an archive's own or an aggregator's; the
  mementos' original bytes are asked with ``raw`` (``id_``) after their timestamp;
- ``commoncrawl``: a Common Crawl index server (``index``: ``collinfo.json`` and one CDX API per
  crawl) and the host of its WARC files (``data``): one range request per capture.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ArchiveKind = Literal["cdx", "memento", "commoncrawl"]
ARCHIVE_KINDS: tuple[ArchiveKind, ...] = ("cdx", "memento", "commoncrawl")
DATE_COLUMNS = ("text_crawl_date", "text_crawldate", "text_crawled", "text_lastmod", "text_date", "text_year",
                "crawl_date", "crawldate", "lastmod", "date", "year")
"""Columns taken as the text's crawl date, in this order, unless one is named (``--date-column``)."""


PREFIXES = ("replay", "timemap", "timegate", "index", "data")
"""The addresses something is written after (``replay`` + ``<timestamp>id_/<url>``): a missing final
slash is added."""


class ArchiveSettings(BaseModel):
    """One archive: where it answers and how fast it may be asked."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,40}$", description="Its name in the output (calf_source).")
    kind: ArchiveKind = Field(description="cdx, memento or commoncrawl.")
    cdx: str = Field("", description="cdx: the CDX API (https://web.archive.org/cdx/search/cdx).")
    replay: str = Field("", description=(
        "cdx: where captures are replayed (https://web.archive.org/web/); memento: where its own mementos are "
        "(default: under the TimeGate, else before the TimeMap's timemap/ segment)."))
    timemap: str = Field("", description="memento: the TimeMap prefix (https://web.archive.org/web/timemap/link/).")
    timegate: str = Field("", description="memento: the TimeGate prefix (https://web.archive.org/web/).")
    raw: str = Field("id_", pattern=r"^([a-z]{2}_)?$", description=(
        "memento: the flag after a memento's timestamp that gives its original bytes ('' if it serves them so)."))
    index: str = Field("", description="commoncrawl: the index server (https://index.commoncrawl.org/).")
    data: str = Field("", description="commoncrawl: the WARC files' host (https://data.commoncrawl.org/).")
    collections: list[str] = Field(default_factory=list, description=(
        "commoncrawl: the crawls asked (default: collinfo.json's, those nearest the text's date first)."))
    max_collections: int = Field(3, ge=1, le=100, description="commoncrawl: crawls asked per URL at most.")
    hosts: list[str] = Field(default_factory=list, description=(
        "Further places its captures may come from (a Memento aggregator's archives): a host name (its default "
        "port, any path) or a URL prefix (https://webarchive.loc.gov/all/); nothing else is asked."))
    rate: float = Field(1.0, gt=0, le=100, description="Requests per second at most.")
    concurrency: int = Field(2, ge=1, le=32, description="Requests at once at most.")
    retries: int = Field(3, ge=0, le=10, description="Retries of a request that fails or is told to wait.")
    max_wait: float = Field(120.0, ge=0, description="Longest Retry-After waited for (longer: the archive is skipped).")
    timeout: float = Field(30.0, gt=0, description="Seconds per request.")
    captures: int = Field(4, ge=1, le=50, description="Captures of a URL tried first (after the date first, nearest "
                                                      "first; then before it); 8 more when these do not hold the line.")

    @model_validator(mode="after")
    def _complete(self) -> ArchiveSettings:
        for name in PREFIXES:  # each is a prefix a timestamp, a URL or a file name is written after
            value = getattr(self, name)
            if value and not value.endswith("/"):
                object.__setattr__(self, name, value + "/")
        needed = {"cdx": ("cdx", "replay"), "memento": (), "commoncrawl": ("index", "data")}[self.kind]
        missing = [name for name in needed if not getattr(self, name)]
        if self.kind == "memento" and not (self.timemap or self.timegate):
            missing.append("timemap or timegate")
        if missing:
            raise ValueError(f"archive {self.name!r} ({self.kind}) needs {', '.join(missing)}")
        for host in self.hosts:
            if "://" in host and (urlsplit(host).scheme not in ("http", "https") or not urlsplit(host).hostname):
                raise ValueError(f"archive {self.name!r}: hosts entry {host!r} is not an http(s) address")
        for name in ("cdx", "replay", "timemap", "timegate", "index", "data"):
            value = getattr(self, name)
            if value and (urlsplit(value).scheme not in ("http", "https") or not urlsplit(value).hostname):
                raise ValueError(f"archive {self.name!r}: {name} = {value!r} is not an http(s) address")
        return self

    def endpoints(self) -> list[str]:
        return [v for v in (self.cdx, self.replay, self.timemap, self.timegate, self.index, self.data) if v]

    def allowed_hosts(self) -> frozenset[str]:
        """The hosts this archive's requests may go to: its endpoints' and ``hosts``."""
        return frozenset({(urlsplit(url).hostname or "").lower() for url in self.endpoints()}
                         | {host.lower() for host in self.hosts})

    def described(self) -> dict[str, object]:
        """What the provenance block says of it."""
        return {"name": self.name, "kind": self.kind, "endpoints": self.endpoints(), "rate": self.rate,
                "concurrency": self.concurrency}


class ArchivesConfig(BaseModel):
    """``calf --archives FILE``: the archives in the order they are asked, and the date window."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    archives: list[ArchiveSettings] = Field(alias="archive", min_length=1)
    window_days: int = Field(1095, ge=1, le=36_500, description="Captures this many days either side of the date.")
    date_column: str | None = Field(None, description="The column with the text's crawl date (default: DATE_COLUMNS).")

    @model_validator(mode="after")
    def _distinct(self) -> ArchivesConfig:
        names = [a.name for a in self.archives]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"archive names must differ: {', '.join(twice)} used twice")
        return self


class ArchiveConfigError(ValueError):
    """An archives file that cannot be read or says something wrong (the message names the file)."""


def load_archives(path: Path) -> ArchivesConfig:
    """The archives file, or an error that names the file and what is wrong in it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ArchiveConfigError(f"{path}: cannot read it ({error})") from error
    except tomllib.TOMLDecodeError as error:
        raise ArchiveConfigError(f"{path}: not TOML ({error})") from error
    try:
        return ArchivesConfig.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in error.errors())
        raise ArchiveConfigError(f"{path}: {problems}") from error


_DIGITS = re.compile(r"^(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?$")


def parse_date(text: str) -> dt.datetime | None:
    """A crawl date as corpora write it: ``2013``, ``2013-05``, ``2013-05-17``, ``20130517``,
    ``20130517104233``, ISO 8601 with a time, or an HTTP date; a year alone stands for its middle (1
    July), a month for its 15th. UTC; None when the text is none of these."""
    value = text.strip()
    if not value:
        return None
    digits = _DIGITS.match(value.replace("-", "").replace(":", "").replace("T", "").replace(" ", "").rstrip("Z"))
    if digits and (len(value) in (4, 7, 8, 10, 14) or "T" in value or " " in value):
        year, month, day, hour, minute, second = (int(g) if g else None for g in digits.groups())
        assert year is not None
        try:
            return dt.datetime(year, month or 7, day or (15 if month else 1), hour or 0, minute or 0, second or 0,
                               tzinfo=dt.UTC)
        except ValueError:
            return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        from email.utils import parsedate_to_datetime  # noqa: PLC0415 - only for the rare HTTP date

        try:
            parsed = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
    return parsed.replace(tzinfo=dt.UTC) if parsed.tzinfo is None else parsed.astimezone(dt.UTC)
