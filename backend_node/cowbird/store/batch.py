"""What the VRT reader hands to the writers: a batch of tokens, column by column, and its tags.

Millions of tokens and tags pass through per second, so there is no object per token or per tag:
``Batch.columns[k]`` is attribute k of every token, ``Tags`` holds one array per field.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass
class Tags:
    """The structural tags of a batch, column by column (millions of them: no object per tag).

    ``element[i]`` indexes the reader's declared element names; ``cpos[i]`` is the number of tokens
    before the tag; ``annotation[i]`` is the text between an opening tag's name and its ``>``.
    """

    cpos: npt.NDArray[np.int64]
    line: npt.NDArray[np.int64]
    element: npt.NDArray[np.int16]
    closing: npt.NDArray[np.bool_]
    annotation: list[bytes]

    def __len__(self) -> int:
        return len(self.annotation)

    def slice(self, first: int, last: int) -> Tags:
        return Tags(
            self.cpos[first:last],
            self.line[first:last],
            self.element[first:last],
            self.closing[first:last],
            self.annotation[first:last],
        )

    def take(self, indices: npt.NDArray[np.int64]) -> Tags:
        return Tags(
            self.cpos[indices],
            self.line[indices],
            self.element[indices],
            self.closing[indices],
            [self.annotation[i] for i in indices.tolist()],
        )

    @staticmethod
    def join(first: Tags, second: Tags) -> Tags:
        return Tags(
            np.concatenate((first.cpos, second.cpos)),
            np.concatenate((first.line, second.line)),
            np.concatenate((first.element, second.element)),
            np.concatenate((first.closing, second.closing)),
            first.annotation + second.annotation,
        )


@dataclass
class Batch:
    """Consecutive input: ``columns[k][i]`` is attribute k of token ``start + i``; tags in order."""

    start: int
    columns: list[list[bytes]]
    tags: Tags
    size: int = 0

    def slice(self, token_from: int, token_to: int, tag_from: int, tag_to: int) -> Batch:
        """Tokens ``[token_from, token_to)`` (batch-relative) and tags ``[tag_from, tag_to)``."""
        return Batch(
            self.start + token_from,
            [col[token_from:token_to] for col in self.columns],
            self.tags.slice(tag_from, tag_to),
            token_to - token_from,
        )

    @staticmethod
    def join(first: Batch, second: Batch) -> Batch:
        """Two adjacent batches as one."""
        return Batch(
            first.start,
            [a + b for a, b in zip(first.columns, second.columns, strict=True)],
            Tags.join(first.tags, second.tags),
            first.size + second.size,
        )
