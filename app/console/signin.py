"""Console sign-in: the password form, OIDC (start and callback), sign-out, the start page
and the stylesheet."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.auth.service import Principal
from app.console.oidc import OidcClient
from app.console.pages import (
    CONSOLE_ROLES,
    HERE,
    PageRefused,
    check_csrf,
    current_session,
    is_https,
    nav_links,
    render,
    require,
    safe_next,
    session_store,
)
from app.console.sessions import (
    COOKIE,
    COOKIE_PATH,
    OIDC_COOKIE,
    SIGNIN_COOKIE,
    ConsoleSession,
    same_token,
)
from app.deps import get_resources
from app.errors import AppError
from app.resources import Resources

router = APIRouter(prefix="/console", include_in_schema=False)

# --- static ------------------------------------------------------------------------------------


@router.get("/static/console.css")
def stylesheet() -> Response:
    return Response(
        (HERE / "static" / "console.css").read_text(encoding="utf-8"),
        media_type="text/css; charset=utf-8",
        headers={"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"},
    )


# --- sign-in -----------------------------------------------------------------------------------


def _signin_page(
    request: Request, *, status: int = 200, error: str | None = None, next_url: str = "/console"
) -> HTMLResponse:
    nonce = request.cookies.get(SIGNIN_COOKIE) or ""
    if len(nonce) < 32:
        nonce = secrets.token_urlsafe(32)
    settings = get_resources(request).settings
    response = render(
        request,
        "signin.html",
        None,
        status,
        csrf=nonce,
        error=error,
        next_url=safe_next(next_url),
        auth_mode=settings.auth_mode,
    )
    response.set_cookie(
        SIGNIN_COOKIE,
        nonce,
        max_age=1800,
        path=COOKIE_PATH,
        httponly=True,
        secure=is_https(request),
        samesite="strict",
    )
    return response


@router.get("/signin")
def signin_form(request: Request, next: str | None = None) -> Response:
    if current_session(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    return _signin_page(request, next_url=safe_next(next))


@router.post("/signin")
def signin(
    request: Request,
    token: Annotated[str, Form()] = "",
    csrf: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/console",
) -> Response:
    expected = request.cookies.get(SIGNIN_COOKIE) or ""
    # The double-submit cookie cannot tell apart pages that share the host name: a page on
    # another port, or a sibling subdomain, can set it and sign a browser into the
    # attacker's session (a console check). A browser says where a form came from.
    elsewhere = request.headers.get("sec-fetch-site", "same-origin") != "same-origin"
    if elsewhere or len(expected) < 32 or not same_token(csrf, expected):
        return _signin_page(
            request,
            status=403,
            error="The form was refused: its security token is missing or stale. Try again.",
            next_url=next,
        )
    resources = get_resources(request)
    try:
        principal = resources.verifier.verify(token.strip())
    except AppError as exc:
        return _signin_page(request, status=401, error=exc.message, next_url=next)
    session = _start_session(request, principal)
    if session is None:
        return _signin_page(request, status=403, error=_no_console_pages(principal), next_url=next)
    response = RedirectResponse(safe_next(next), status_code=303)
    _set_session_cookie(request, response, session)
    response.delete_cookie(SIGNIN_COOKIE, path=COOKIE_PATH)
    return response


def _oidc(resources: Resources) -> OidcClient:
    if resources.console_oidc is None:
        # raises SignInFailed: not configured
        return OidcClient(resources.settings, resources.database)
    return resources.console_oidc


def _start_session(request: Request, principal: Principal) -> ConsoleSession | None:
    """A session for a principal with a console role; None for anyone else."""
    if not principal.has_any(*CONSOLE_ROLES):
        return None
    store = session_store(get_resources(request))
    session = store.create(principal)
    if not session.has_any(*CONSOLE_ROLES):  # inactive in the matrix: its roles lapsed
        store.drop(session.sid)
        return None
    return session


def _no_console_pages(principal: Principal) -> str:
    if principal.has_any(*CONSOLE_ROLES):  # refused all the same: its roles lapsed
        return (
            f"{principal.person_id} is marked inactive in the firm's matrix: the "
            "conflicts and compliance roles of the sign-in do not apply."
        )
    return (
        f"{principal.person_id} has no console pages: the console is for the "
        "conflicts and compliance roles."
    )


def _set_session_cookie(request: Request, response: Response, session: ConsoleSession) -> None:
    response.set_cookie(
        COOKIE,
        session.sid,
        path=COOKIE_PATH,
        httponly=True,
        secure=is_https(request),
        samesite="strict",
    )


@router.get("/oidc/start")
def oidc_start(request: Request, next: str | None = None) -> Response:
    resources = get_resources(request)
    if resources.settings.auth_mode != "oidc":
        raise PageRefused(404, "Not available", "The console signs in with tokens here.", None)
    redirect_uri = resources.settings.console_oidc_redirect_url or str(
        request.url_for("oidc_callback")
    )
    try:
        url, state = _oidc(resources).begin(redirect_uri, safe_next(next))
    except AppError as exc:
        return _signin_page(request, status=exc.status, error=exc.message, next_url=next or "")
    response = RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})
    # Lax, not Strict: the issuer's redirect back is a cross-site navigation, and this cookie
    # must come with it to bind the answer to the browser that started the sign-in
    response.set_cookie(
        OIDC_COOKIE,
        state,
        max_age=600,
        path=f"{COOKIE_PATH}/oidc",
        httponly=True,
        secure=is_https(request),
        samesite="lax",
    )
    return response


# the error codes of an authorization response (RFC 6749 4.1.2.1, OpenID Connect Core 3.1.2.6)
OAUTH_ERRORS = frozenset(
    {
        "invalid_request",
        "unauthorized_client",
        "access_denied",
        "unsupported_response_type",
        "invalid_scope",
        "server_error",
        "temporarily_unavailable",
        "interaction_required",
        "login_required",
        "account_selection_required",
        "consent_required",
        "invalid_request_uri",
        "invalid_request_object",
        "request_not_supported",
        "request_uri_not_supported",
        "registration_not_supported",
    }
)


@router.get("/oidc/callback", name="oidc_callback")
def oidc_callback(request: Request, code: str = "", state: str = "", error: str = "") -> Response:
    resources = get_resources(request)
    if resources.settings.auth_mode != "oidc":
        raise PageRefused(404, "Not available", "The console signs in with tokens here.", None)
    if error:
        # only a code the protocols define is shown: the parameter is anyone's text, and
        # the firm's own sign-in page must not repeat it (a phishing aid on a trusted page)
        code_named = error if error in OAUTH_ERRORS else "an error it did not name"
        return _signin_page(
            request, status=401, error=f"The identity provider refused: {code_named}"
        )
    if not state or not same_token(request.cookies.get(OIDC_COOKIE), state):
        return _signin_page(
            request, status=403, error="This sign-in was not started in this browser; start again."
        )
    client = _oidc(resources)
    try:
        login = client.take(state)
        access_token = client.finish(login, code[:4096])
        principal = resources.verifier.verify(access_token)
    except AppError as exc:
        return _signin_page(request, status=exc.status, error=exc.message)
    session = _start_session(request, principal)
    if session is None:
        return _signin_page(request, status=403, error=_no_console_pages(principal))
    # A page, not a redirect: the SameSite=Strict session cookie is not sent on the rest of a
    # navigation that began at the issuer; the refresh starts a new one from this site.
    response = render(request, "signed_in.html", session, next_url=safe_next(login.next_url))
    _set_session_cookie(request, response, session)
    response.delete_cookie(OIDC_COOKIE, path=f"{COOKIE_PATH}/oidc")
    return response


@router.post("/signout")
def signout(request: Request, csrf: Annotated[str, Form()] = "") -> Response:
    session = require(request, *CONSOLE_ROLES)
    check_csrf(session, csrf)
    session_store(get_resources(request)).drop(session.sid)
    response = RedirectResponse("/console/signin", status_code=303)
    response.delete_cookie(COOKIE, path=COOKIE_PATH)
    return response


@router.get("")
@router.get("/")
def home(request: Request) -> Response:
    session = require(request, *CONSOLE_ROLES)
    return RedirectResponse(nav_links(session)[0][0], status_code=303)
