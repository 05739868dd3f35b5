"""Small helpers for store tests: encode a VRT string and read it back."""

from __future__ import annotations

from pathlib import Path

from cowbird.store import CwbCorpus, EncodeOptions, Encoder, EncodeResult, parse_s_declaration
from tests.support import sample_options


def encode_text(
    tmp_path: Path,
    vrt: str | bytes,
    p_attributes: list[str] | None = None,
    s_attributes: list[str] | None = None,
    warnings: list[str] | None = None,
    **extra: object,
) -> tuple[EncodeResult, Path]:
    """Encode ``vrt`` as corpus ``test`` with -c utf8 -xsB; returns the result and the registry dir.

    An s-attribute declaration starting with ``-V `` keeps the whole attribute string.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "input.vrt"
    source.write_bytes(vrt.encode("utf-8") if isinstance(vrt, str) else vrt)
    options = EncodeOptions(
        input=source,
        data_dir=tmp_path / "data",
        registry_file=tmp_path / "registry" / "test",
        p_attributes=p_attributes or ["word", "pos"],
        s_attributes=[
            parse_s_declaration(d.removeprefix("-V "), keep_all=d.startswith("-V "))
            for d in (s_attributes if s_attributes is not None else ["s:0+id"])
        ],
        charset="utf8",
        xml=True,
        skip_blank=True,
        strip_blanks=True,
    )
    for key, value in extra.items():
        setattr(options, key, value)
    sink = warnings if warnings is not None else []
    result = Encoder(options, warn=sink.append).run()
    return result, tmp_path / "registry"


def sample_whole_and_in_parts(base: Path) -> tuple[CwbCorpus, list[CwbCorpus], Path]:
    """The sample corpus encoded whole (``sample``) and in partitions of at most 40 tokens, in one registry
    under ``base``: the whole corpus, the partitions (as the encoder lists them) and the manifest."""
    Encoder(sample_options(base / "whole", base / "registry" / "sample")).run()
    result = Encoder(sample_options(base / "parts", base / "registry" / "sample", partition_tokens=40)).run()
    assert result.manifest is not None
    whole = CwbCorpus.open(base / "registry", "sample")
    return whole, [CwbCorpus.open(base / "registry", p.id) for p in result.partitions], result.manifest


def tokens(corpus: CwbCorpus, attribute: str = "word") -> list[str]:
    att = corpus.p_attribute(attribute)
    return [att.cpos2str(i) for i in range(corpus.size)]


def regions(corpus: CwbCorpus, name: str) -> list[tuple[int, int, str | None]]:
    att = corpus.s_attribute(name)
    return [(r.start, r.end, r.value) for r in (att.region(i) for i in range(len(att)))]
