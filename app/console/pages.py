"""What every console page shares: the templates, the security headers, the navigation, the
session lookup with its role and CSRF checks, and the two exceptions that become pages."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from app.console.sessions import (
    COOKIE,
    ConsoleSession,
    SessionStore,
    same_token,
)
from app.deps import get_resources
from app.resources import Resources
from app.types import DISPLAY_CONTROLS, code_point, rounded_up_to_microseconds

HERE = Path(__file__).resolve().parent
CONSOLE_ROLES = ("conflicts", "compliance")

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def format_time(value: object) -> str:
    if value is None or value == "":
        return ""
    moment: object = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(moment, datetime):
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(value)


# What reorders or hides the text around it without showing itself (app/types.py
# ``DISPLAY_CONTROLS``): the API accepts names, titles, reasons and questions holding them
# (only ids refuse them), so the console shows them escaped, as the exports do
_FSI, _PDI = "\u2068", "\u2069"  # first-strong isolate and its end


def isolated(value: Any) -> Any:
    """Text from outside (a name, a title, an id, a question) as HTML that cannot reorder
    what surrounds it: in a ``<bdi>`` (an isolate: its content takes its own direction and
    leaves the sentence's alone, right-to-left letters included), each invisible control
    (``DISPLAY_CONTROLS``) shown as its code point. Setting the value apart between U+2068 and
    U+2069 when it held a control was not enough: a value holding its own U+2069 closed the
    isolate early, and an U+202E after it stayed in force for the rest of the line."""
    if not isinstance(value, str):
        return value
    parts: list[Markup] = []
    at = 0
    for found in DISPLAY_CONTROLS.finditer(value):
        parts.append(escape(value[at : found.start()]))
        parts.append(Markup('<span class="control">{}</span>').format(code_point(found[0])))
        at = found.end()
    parts.append(escape(value[at:]))
    return Markup("<bdi>{}</bdi>").format(Markup("").join(parts))


def isolated_text(value: Any) -> Any:
    """``isolated`` where no element may stand (a page's ``<title>``, SVG text, a datalist's
    option): the controls shown as their code points, the whole set apart between U+2068
    and U+2069 (with no control left inside, nothing can end the isolate early)."""
    if not isinstance(value, str):
        return value
    return _FSI + DISPLAY_CONTROLS.sub(lambda found: code_point(found[0]), value) + _PDI


templates = Environment(
    loader=FileSystemLoader(str(HERE / "templates")),
    autoescape=select_autoescape(["html", "svg"], default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["when"] = format_time
# on text only, never on a form's value: the form must send the value back as typed
templates.filters["isolate"] = isolated
templates.filters["isolate_text"] = isolated_text


# --- navigation, sessions, errors --------------------------------------------------------------


NAV = (
    ("/console/walls", "Walls", ("conflicts", "compliance")),
    ("/console/walls/new", "Issue a wall", ("conflicts",)),
    ("/console/access", "Access", ("conflicts", "compliance")),
    ("/console/conflicts", "Conflict search", ("conflicts",)),
    ("/console/audit", "Audit", ("compliance",)),
)


def nav_links(session: ConsoleSession | None) -> list[tuple[str, str]]:
    if session is None:
        return []
    return [(href, label) for href, label, roles in NAV if session.has_any(*roles)]


class SignInNeeded(Exception):
    def __init__(self, next_url: str) -> None:
        super().__init__("sign-in needed")
        self.next_url = next_url


class PageRefused(Exception):
    """A page answered with an HTML error (wrong role, stale form, unknown id)."""

    def __init__(
        self, status: int, title: str, message: str, session: ConsoleSession | None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message
        self.session = session


def session_store(resources: Resources) -> SessionStore:
    return resources.console_sessions


def current_session(request: Request) -> ConsoleSession | None:
    return session_store(get_resources(request)).get(request.cookies.get(COOKIE))


def require(request: Request, *roles: str) -> ConsoleSession:
    session = current_session(request)
    if session is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInNeeded(target if request.method == "GET" else "/console")
    if not session.has_any(*roles):
        raise PageRefused(403, "Not for your role", "Your role does not allow this page.", session)
    request.state.person_id = session.person_id
    return session


def check_csrf(session: ConsoleSession, given: str | None) -> None:
    if not same_token(given, session.csrf):
        raise PageRefused(
            403,
            "Form refused",
            "The form was refused: its security token is missing or stale. "
            "Open the page again and resubmit.",
            session,
        )


def render(
    request: Request,
    template: str,
    session: ConsoleSession | None,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    body = templates.get_template(template).render(
        session=session,
        nav=nav_links(session),
        path=request.url.path,
        **context,
    )
    return HTMLResponse(body, status_code=status, headers=PAGE_HEADERS)


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


def safe_next(value: str | None) -> str:
    """Only a console path of this site; anything else goes to the console's start."""
    if (
        value
        and value.startswith("/console")
        and not value.startswith("//")
        and not any(c in value for c in "\\\r\n")
    ):
        return value
    return "/console"


def _from_form(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def form_instant(
    raw: str, label: str, errors: list[str], rounded_up: bool = False
) -> datetime | None:
    """A datetime-local value (read as UTC) or an RFC 3339 time. ``rounded_up``: a fraction
    finer than a microsecond rounded up, not cut, as the API reads the same bound (a wall's
    end, the audit's since and until: app/types.py ``rounded_up_to_microseconds``)."""
    value = raw.strip()
    if not value:
        return None
    try:
        parsed = (
            rounded_up_to_microseconds(value, _from_form) if rounded_up else _from_form(value)
        )
    except ValueError:
        errors.append(f"{label}: not a date and time ({value[:40]!r}).")
        return None
    except OverflowError:  # "9999-12-31T23:59:59.9999999-01:00": past year 9999 in UTC
        errors.append(f"{label}: out of range once rounded up to a microsecond ({value[:40]!r}).")
        return None
    try:
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except OverflowError:  # "0001-01-01T00:00:00+01:00": before year 1 in UTC (was a 500)
        errors.append(f"{label}: out of range once converted to UTC ({value[:40]!r}).")
        return None


def shorten(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
