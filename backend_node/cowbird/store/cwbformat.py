"""Facts about the CWB on-disk format shared by the encoder and the reader.

Every integer in a CWB data file is a 32-bit big-endian signed int. File names follow
cwb-encode/cwb-makeall: ``ATT.lexicon``, ``ATT.lexicon.idx``, ``ATT.lexicon.srt``, ``ATT.corpus``,
``ATT.corpus.cnt``, ``ATT.corpus.rdx``, ``ATT.corpus.rev`` for a p-attribute, ``S.rng`` and, for an
annotated s-attribute, ``S.avx`` and ``S.avs``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

BE_INT32 = np.dtype(">i4")
"""The one integer type of the format."""

CHARSETS = {"utf8": "utf-8", "ascii": "ascii", "latin1": "latin-1", "iso-8859-1": "latin-1"}
"""Character sets of CWB corpora (cwb-encode's names, as in the registry) and their Python codecs."""

MAX_CORPUS_SIZE = 2**31 - 1
"""Positions are signed 32-bit ints: a partition must stay below this many tokens."""

# strcmp() on x86-64 compares *signed* chars, so bytes >= 0x80 sort before ASCII and the NUL
# terminator sorts after them. Flipping the top bit turns that order into plain unsigned byte order;
# the terminator (0x00) becomes 0x80 and is appended so that "a" sorts after "a\xe2..." but
# before "ab", exactly as in cwb-makeall's lexicon.srt.
_SIGNED_CHAR_ORDER = bytes((b ^ 0x80) for b in range(256))


def strcmp_key(value: bytes) -> bytes:
    """Sort key that orders byte strings the way C's strcmp does with signed chars."""
    return value.translate(_SIGNED_CHAR_ORDER) + b"\x80"


def sorted_lexicon_ids(strings: list[bytes]) -> npt.NDArray[np.int32]:
    """Lexicon ids ordered by their strings as cwb-makeall orders ``lexicon.srt``."""
    order = sorted(range(len(strings)), key=lambda i: strcmp_key(strings[i]))
    return np.asarray(order, dtype=np.int32)


def write_ints(path: Path, values: npt.ArrayLike) -> None:
    """Write ints as big-endian int32, the only integer layout CWB knows."""
    np.asarray(values).astype(BE_INT32, copy=False).tofile(path)
