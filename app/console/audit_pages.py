"""Console audit pages: the filtered audit log with the chain banner, its CSV/JSON export,
one retrieval, and a matter's timeline."""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse

from app.audit import service as audit_service
from app.audit.chain import export_json, now_utc
from app.console import repository
from app.console.chain_watch import watch_for
from app.console.pages import (
    PageRefused,
    form_instant,
    format_time,
    render,
    require,
    session_store,
    shorten,
)
from app.console.sessions import COOKIE
from app.db.engine import Database
from app.deps import get_resources
from app.errors import AppError
from app.resources import Resources
from app.types import DISPLAY_CONTROLS, code_point, lookup_id

router = APIRouter(prefix="/console", include_in_schema=False)

PAGE_SIZE = 50
MATTER_SCAN_LIMIT = 5000
EXPORT_PAGE = 500


# --- audit -------------------------------------------------------------------------------------


@dataclass
class AuditFilter:
    person_id: str = ""
    matter_id: str = ""
    chunk_id: str = ""
    since: str = ""
    until: str = ""

    def query(self, **extra: str) -> str:
        values = {k: v for k, v in vars(self).items() if v}
        values.update({k: v for k, v in extra.items() if v})
        return urlencode(values)

    def parsed(self) -> tuple[dict[str, Any], list[str]]:
        errors: list[str] = []
        args: dict[str, Any] = {
            "person_id": self.person_id or None,
            "matter_id": self.matter_id or None,
            "chunk_id": self.chunk_id or None,
            # rounded up, as the API reads them (app/audit/router.py Bound)
            "since": form_instant(self.since, "Since", errors, rounded_up=True),
            "until": form_instant(self.until, "Until", errors, rounded_up=True),
        }
        if args["since"] and args["until"] and args["since"] > args["until"]:
            # an empty page would read as "nobody read anything then"
            errors.append("Until must not be before Since.")
        return args, errors


def _audit_filter(
    person_id: str, matter_id: str, chunk_id: str, since: str, until: str
) -> AuditFilter:
    return AuditFilter(
        lookup_id(person_id.strip()[:200]),
        lookup_id(matter_id.strip()[:200]),
        chunk_id.strip()[:1000],
        since.strip()[:40],
        until.strip()[:40],
    )


def chain_banner(database: Database) -> dict[str, Any]:
    """The chains verified from the position this process's last full verification reached
    to their heads, and no further back (app.console.chain_watch says why, and what the
    banner claims before a full verification has completed). Done in ONE repeatable-read
    snapshot, on its own short connection (the page's transaction is not held meanwhile).
    Read committed, a chain's head and its rows are separate statements: an append that any
    process commits between them leaves a row past the head that was read, and the banner
    called an intact log broken."""
    return watch_for(database).banner(database)


@router.get("/audit")
def audit_page(
    request: Request,
    person_id: str = "",
    matter_id: str = "",
    chunk_id: str = "",
    since: str = "",
    until: str = "",
    cursor: str = "",
) -> HTMLResponse:
    session = require(request, "compliance")
    filt = _audit_filter(person_id, matter_id, chunk_id, since, until)
    args, errors = filt.parsed()
    resources = get_resources(request)
    page: dict[str, Any] = {"items": [], "next_cursor": None}
    status = 200
    banner = chain_banner(resources.database)
    with resources.database.transaction() as conn:
        if not errors:
            try:
                page = audit_service.list_retrievals(
                    conn,
                    limit=PAGE_SIZE,
                    cursor=cursor[:200] or None,
                    cursor_secret=audit_service.cursor_key(resources.settings),
                    **args,
                )
            except AppError as exc:
                errors.append(exc.message)
        if errors:
            status = 422
    return render(
        request,
        "audit.html",
        session,
        status,
        banner=banner,
        filt=filt,
        items=page["items"],
        next_cursor=page["next_cursor"],
        first_page=not cursor,
        errors=errors,
    )


class _Stopped(Exception):
    """The reader of an export lost the right to it part way (``_standing``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _standing(request: Request) -> Callable[[], str | None]:
    """Asked before each page of an export: None while the console session that began it
    still holds the compliance role, else why not. The role was checked once, when the
    download began; a person deactivated since (or signed out, or whose session ended)
    would have received every later page."""
    store = session_store(get_resources(request))
    sid = request.cookies.get(COOKIE)

    def check() -> str | None:
        now = store.get(sid)
        if now is None:
            return "The console session ended during the export: sign in again."
        if not now.has_any("compliance"):
            return (
                f"{now.person_id} no longer holds the compliance role (inactive in the "
                "conflict matrix): the rest of the export is withheld."
            )
        return None

    return check


def _filtered(
    resources: Resources,
    args: dict[str, Any],
    standing: Callable[[], str | None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Every retrieval matching the filter, newest first, page by page, each page in its own
    transaction and handed on after it ended: a download that stalls holds no connection.
    The cursor pages down by sequence number, so a retrieval committed meanwhile (a higher
    one) is not in it, and none is skipped. ``standing``, asked before each page: a reason
    there raises ``_Stopped`` instead of reading the page."""
    cursor: str | None = None
    while True:
        refused = None if standing is None else standing()
        if refused is not None:
            raise _Stopped(refused)
        with resources.database.transaction() as conn:
            page = audit_service.list_retrievals(
                conn,
                limit=EXPORT_PAGE,
                cursor=cursor,
                cursor_secret=audit_service.cursor_key(resources.settings),
                **args,
            )
        yield from page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return


CSV_COLUMNS = (
    "seq",
    "at",
    "retrieval_id",
    "person_id",
    "purpose",
    "query",
    "mode",
    "k",
    "policy_version",
    "model",
    "prompt_version",
    "result_count",
    "matter_ids",
    "chunk_ids",
    "content_sha256",
    "hash",
)


# Where a spreadsheet may start a cell: the cell's start, and in the middle of one, after a
# line break (quoting holds a cell's line breaks only for a program that reads the file as
# comma-separated), a semicolon (Excel in a Dutch or other European locale opens a .csv split
# on ";", the list separator, where this file's quotes do not hold) or a tab (LibreOffice's
# import splits on it when asked). What a spreadsheet may pass over before reading a formula
# there: white space (Google Sheets and LibreOffice trim it, " =1+1"), quotes ('"=1+1' read
# from a cell split mid-quote) and invisible characters. Then =, +, - or @, in ASCII or
# full width, starts a formula (OWASP's list; tab and CR are the white space above).
_FORMULA = re.compile(
    r"(^|[;\t\r\n])"
    # white space but the separators themselves (" =1+1"), double and typographic quotes,
    # invisible characters ("'" is the spreadsheets' own mark of text: "'=1+1" shows as such)
    r"((?:[^\S\t\r\n]|[\"\u2018\u2019\u201c\u201d\u00ad\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u2069\ufeff])*)"
    r"(?=[=+\-@\uff1d\uff0b\uff0d\uff20])"
)


def _cell(value: Any) -> str:
    """A value as a CSV cell that a spreadsheet shows and never runs. Where a formula could
    start (``_FORMULA``), a ``'`` is put first, so the spreadsheet reads text: before, only a
    cell's first character was looked at, and " =HYPERLINK(...)", '"=...' and "x;=..." (a
    new cell to Excel in a Dutch locale) ran as formulas. Display controls (a bidi override
    in a question) are shown as their code points, ``[U+202E]``, as the console shows them;
    the JSON lines export keeps the record exact."""
    text = "" if value is None else str(value)
    text = _FORMULA.sub(r"\1'\2", text)
    if text[:1] in ("\t", "\r"):  # OWASP's first characters, whatever follows them
        text = "'" + text
    return DISPLAY_CONTROLS.sub(lambda found: code_point(found[0]), text)


def _csv_row(item: dict[str, Any]) -> list[str]:
    results = item["results"]
    values = {
        **item,
        "matter_ids": " ".join(sorted({r["matter_id"] for r in results if r["matter_id"]})),
        "chunk_ids": " ".join(r["chunk_id"] for r in results),
        "content_sha256": " ".join(r["content_sha256"] for r in results),
    }
    return [_cell(values.get(c)) for c in CSV_COLUMNS]


@router.get("/audit/export.{fmt}")
def audit_export(
    request: Request,
    fmt: str,
    person_id: str = "",
    matter_id: str = "",
    chunk_id: str = "",
    since: str = "",
    until: str = "",
) -> Response:
    session = require(request, "compliance")
    if fmt not in ("jsonl", "csv"):
        raise PageRefused(404, "No such export", "Exports are .jsonl or .csv.", session)
    filt = _audit_filter(person_id, matter_id, chunk_id, since, until)
    args, errors = filt.parsed()
    if errors:
        raise PageRefused(422, "Filter refused", " ".join(errors), session)
    resources = get_resources(request)
    stamp = now_utc().strftime("%Y%m%dT%H%M%SZ")
    # the first page read before the download starts: a database that cannot serve it is an
    # error page, not an empty file
    found = _filtered(resources, args, _standing(request))
    try:
        first = list(itertools.islice(found, 1))
    except _Stopped as stopped:
        # deactivated (or signed out) between require() and the first page: refused as any
        # page is, before the download starts (it escaped as a 500)
        raise PageRefused(403, "Export refused", stopped.reason, session) from None
    items = itertools.chain(first, found)

    def jsonl() -> Iterator[str]:
        try:
            for item in items:
                yield export_json(item) + "\n"
        except _Stopped as stopped:  # the last line: the error envelope (as the API's)
            yield audit_service.export_stopped(stopped.reason) + "\n"

    def table() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(CSV_COLUMNS)
        try:
            for item in items:
                writer.writerow(_csv_row(item))
                if buffer.tell() > 64_000:
                    yield buffer.getvalue()
                    buffer.seek(0)
                    buffer.truncate()
        except _Stopped as stopped:  # the last row says so, in the first column (seq)
            writer.writerow([_cell(f"export stopped: {stopped.reason}")])
        yield buffer.getvalue()

    headers = {
        "Content-Disposition": f'attachment; filename="ewall-audit-{stamp}.{fmt}"',
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }
    if fmt == "jsonl":
        return StreamingResponse(jsonl(), media_type="application/x-ndjson", headers=headers)
    return StreamingResponse(table(), media_type="text/csv; charset=utf-8", headers=headers)


@router.get("/audit/retrievals/{retrieval_id}")
def retrieval_page(request: Request, retrieval_id: str) -> HTMLResponse:
    session = require(request, "compliance")
    resources = get_resources(request)
    with resources.database.transaction() as conn:
        try:
            item = audit_service.get_retrieval(conn, retrieval_id[:100])
        except AppError as exc:
            raise PageRefused(exc.status, "No such retrieval", exc.message, session) from None
        gates = repository.gate_events_for_retrieval(conn, item["retrieval_id"])
    banner = chain_banner(resources.database)
    return render(request, "retrieval.html", session, item=item, gates=gates, banner=banner)


TL_LEFT, TL_WIDTH, TL_LANE = 190, 560, 26


def timeline(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One lane per person, one dot per retrieval, time left to right (laid out here, drawn
    as inline SVG by the template)."""
    if not items:
        return None
    times = [datetime.fromisoformat(i["at"]) for i in items]
    t0, t1 = min(times), max(times)
    span = (t1 - t0).total_seconds()
    people = sorted({i["person_id"] for i in items})
    lane = {p: n for n, p in enumerate(people)}
    dots = []
    for item, at in zip(items, times, strict=True):
        frac = (at - t0).total_seconds() / span if span else 0.5
        dots.append(
            {
                "x": round(TL_LEFT + frac * TL_WIDTH, 1),
                "y": 20 + lane[item["person_id"]] * TL_LANE,
                "retrieval_id": item["retrieval_id"],
                "title": f"{format_time(at)} · {item['person_id']} · {shorten(item['query'], 60)}",
            }
        )
    return {
        "lanes": [{"person_id": p, "y": 20 + n * TL_LANE} for n, p in enumerate(people)],
        "dots": dots,
        "start": t0,
        "end": t1,
        "left": TL_LEFT,
        "right": TL_LEFT + TL_WIDTH,
        "width": TL_LEFT + TL_WIDTH + 20,
        "height": 40 + len(people) * TL_LANE,
        "axis_y": 10 + len(people) * TL_LANE,
    }


@router.get("/audit/matter")
def matter_page(request: Request, matter_id: str = "") -> HTMLResponse:
    session = require(request, "compliance")
    matter_id = lookup_id(matter_id.strip()[:200])
    resources = get_resources(request)
    items: list[dict[str, Any]] = []
    truncated = False
    if matter_id:
        for item in _filtered(
            resources,
            {
                "person_id": None,
                "matter_id": matter_id,
                "chunk_id": None,
                "since": None,
                "until": None,
            },
        ):
            if len(items) >= MATTER_SCAN_LIMIT:
                truncated = True
                break
            items.append(item)
    by_person: dict[str, dict[str, Any]] = {}
    for item in items:
        chunks = {r["chunk_id"] for r in item["results"] if r["matter_id"] == matter_id}
        row = by_person.setdefault(
            item["person_id"],
            {
                "person_id": item["person_id"],
                "first_at": item["at"],
                "last_at": item["at"],
                "retrievals": 0,
                "chunks": set(),
            },
        )
        row["retrievals"] += 1
        row["chunks"] |= chunks
        row["first_at"] = min(row["first_at"], item["at"])
        row["last_at"] = max(row["last_at"], item["at"])
    people = sorted(by_person.values(), key=lambda r: r["last_at"], reverse=True)
    banner = chain_banner(resources.database)
    return render(
        request,
        "matter.html",
        session,
        matter_id=matter_id,
        people=people,
        items=items,
        chart=timeline(items),
        truncated=truncated,
        limit=MATTER_SCAN_LIMIT,
        banner=banner,
        filt=AuditFilter(matter_id=matter_id),
    )
