"""Data shipped with cowbird: ``sample.vrt``, the small annotated sample corpus that ``cowbird demo``
encodes (and the tests use)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

SAMPLE_VRT = Path(str(files(__name__) / "sample.vrt"))
"""The sample corpus (93 tokens in VRT: word, pos, lemma; ``<text>`` and ``<s>`` regions)."""
