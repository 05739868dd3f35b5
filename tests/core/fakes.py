"""What the core's tests share: a partition that is down."""

from __future__ import annotations

from cowbird.core.search import PartitionFailure


class Down(PartitionFailure):
    """A partition no node served (``public``: ``<partition>: down``)."""

    def __init__(self, partition: str) -> None:
        super().__init__(partition)
        self.partition, self.final, self.timed_out = partition, False, False

    def public(self) -> str:
        return f"{self.partition}: down"
