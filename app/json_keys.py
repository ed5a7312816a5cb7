"""Names given twice in one object of a JSON body.

Python's parser, like most, keeps the last of two equal names and drops the first without a
word: ``{"filters": {"matter_ids": ["M-1"]}, "filters": null}`` searched the whole firm and
was audited as a search without filters; ``"screened"`` given twice issued a wall that
screened only the second list. Another parser on the way (a gateway, the caller's own log)
keeps the first, so the caller, its logs and ewall's audit row could each read a different
request. RFC 8259 leaves such a body's meaning to the receiver (I-JSON, RFC 7493, forbids
it): the request guard (app/guard.py) refuses it with a 422 naming the place, as it does a
NUL. Names are compared as decoded, so ``"k"`` and ``"\\u006b"`` are one name.
"""

from __future__ import annotations

import json
from typing import Any

DUPLICATE_MESSAGE = "is given more than once in one JSON object"


class _Object(dict[str, Any]):
    """A parsed object that remembers the first name its text gave twice."""

    duplicate: str | None = None


def duplicate_key_path(body: bytes) -> tuple[str, ...] | None:
    """The place (``("filters", "matter_ids")``) of a name given twice in one object of
    ``body`` (an object's own before those of the objects it holds), or None: none repeated,
    or no JSON the route's own parser would accept (it answers those itself)."""
    seen_any = False

    def pairs(items: list[tuple[str, Any]]) -> _Object:
        nonlocal seen_any
        obj = _Object()
        for name, value in items:
            if name in obj and obj.duplicate is None:
                obj.duplicate = name
                seen_any = True
            obj[name] = value
        return obj

    try:
        parsed = json.loads(body, object_pairs_hook=pairs)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not seen_any:  # the common case: no walk at all
        return None
    return _first_duplicate(parsed)


def _first_duplicate(value: Any) -> tuple[str, ...] | None:
    # a stack of its own, as app.guard.nul_path: a body nested a thousand deep is valid JSON
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, place = stack.pop()
        if isinstance(item, _Object):
            if item.duplicate is not None:
                return (*place, item.duplicate)
            stack.extend((v, (*place, k)) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((v, (*place, str(i))) for i, v in reversed(list(enumerate(item))))
    return None
