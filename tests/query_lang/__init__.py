"""Tests of the query languages (``query_lang``)."""
