"""Tests of the query languages (``cowbird.query``)."""
