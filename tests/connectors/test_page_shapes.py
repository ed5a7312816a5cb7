"""A listing page of a shape the documentation does not give is an error, not an empty page.
A fuzz of the connectors (2026-12-05) answered page 2 of a listing without a total with
HTTP 200 and ``{"data": "oops"}``, ``{}``, ``[]``, ``{"Results": null}`` and the like: each
was read as an empty page, the listing ended, the crawl was called complete, and the sweep
kept the documents it never saw with the access they had (one narrowed to one lawyer stayed
open to all). Raised, the sync reports the run failed and sweeps nothing."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.http.errors import ConnectorError
from connectors.imanage.client import _results
from connectors.netdocuments.client import parse_search

IMANAGE_BAD: list[Any] = [
    {"data": "oops"},
    {"data": {"results": "oops"}},
    [],
    {},
    {"data": {"results": None}},
    {"data": None},
    {"data": [1, 2]},
    {"data": {"results": [{"id": "LIB!1"}, "LIB!2"]}},
]
NETDOCUMENTS_BAD: list[Any] = [
    {"Results": "oops"},
    {"Results": None},
    {},
    [],
    {"standardList": {"a": 1}},
    "oops",
]


@pytest.mark.parametrize("body", IMANAGE_BAD)
def test_an_imanage_page_of_another_shape_is_an_error(body: Any) -> None:
    with pytest.raises(ConnectorError, match="unexpected shape"):
        _results(body)


@pytest.mark.parametrize("body", NETDOCUMENTS_BAD)
def test_a_netdocuments_page_of_another_shape_is_an_error(body: Any) -> None:
    with pytest.raises(ConnectorError, match="unexpected shape"):
        parse_search(body)


def test_the_documented_shapes_and_their_empty_pages_still_read() -> None:
    row = {"id": "LIB!1", "version": 1}
    assert _results({"data": {"results": [row]}}) == [row]
    assert _results({"data": [row]}) == [row]
    assert _results({"data": {"results": []}}) == []
    assert _results({"data": []}) == []
    assert parse_search({"Results": []}).hits == []
    assert parse_search({"standardList": []}).hits == []
    # no rows, but a stated total of 0: empty in another spelling (a review)
    assert _results({"data": {"results": None}, "total_count": 0}) == []
    assert parse_search({"TotalFound": 0}).hits == []
    assert parse_search({"Results": None, "TotalFound": 0}).hits == []
