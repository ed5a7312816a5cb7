"""Shared types and values: request field types (trimmed, bounded, printable strings) and
the sentinel wall groups and source ACLs that the walls, ingestion and the SQL agree on."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, StringConstraints, TypeAdapter

# Values of chunks.wall_group_id and source_acl_id that no wall or access list derives: the
# ingestion pipeline writes them, the walls' resolution admits (or never admits) them.
OPEN_GROUP = "open"  # the wall group of matters that no wall covers, and of public sources
QUARANTINE_GROUP = "quarantine"  # documents without a usable client or matter: nobody sees them
PUBLIC_ACL = "public"  # the source ACL of a document without access list (e.g. case law)
NOBODY_ACL = "nobody"  # the source ACL of a document whose access list cannot be resolved

# A source's name (imanage, netdocuments, folder, ...) and a document's id in it: what every
# way in (the API, the folder export, the connectors) accepts
SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")
EXTERNAL_ID_MAX = 500

# C0 and C1 controls (tab and line breaks allowed): "\x9b" is an escape sequence's start
# (CSI) to many terminals, as "\x1b[" is
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_IDENT = re.compile(r"^[^\s/\\?#%]+(?: [^\s/\\?#%]+)*$")
_PRINCIPAL = re.compile(r"^[a-z0-9][a-z0-9_.-]*:(user|group):\S.*$")


def no_control(value: str) -> str:
    if CONTROL.search(value):
        raise ValueError("must not contain control characters")
    return value


def storable(value: str) -> bool:
    """Text PostgreSQL can store and a log can print: no control characters (NUL above all)
    and nothing that does not encode as UTF-8 (a lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not CONTROL.search(value)


def hidden(value: str) -> bool:
    """Whether ``value`` holds a character that does not show as itself: format characters
    (zero-width spaces, joiners, direction marks), private use, unassigned code points."""
    return any(unicodedata.category(c) in ("Cf", "Co", "Cn") for c in value)


# What reorders or hides the text around it without showing itself: Unicode's bidirectional
# embeddings, overrides and isolates, the direction marks (LRM, RLM, ALM), and C0 and C1
# controls (tab and line breaks excepted: they show as white space). A question, a name, a
# title or a reason may hold them (only ids refuse them): the record keeps them as written,
# and what shows such text to a person (the console, the audit's CSV and JSON lines exports)
# shows each as its code point (``code_point``) or a JSON escape, never in force ("Trojan
# source": an U+202E in a question turned the rest of a compliance officer's line around).
DISPLAY_CONTROLS = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
    # zero-width spaces and joiners, the word joiner and invisible operators, the byte
    # order mark, the line and paragraph separators, tag characters: "Acme\u200b B.V." showed
    # as "Acme B.V." though it is other text (a review of 2026-12-07)
    "\u200b-\u200d\u2060-\u2064\ufeff\u2028\u2029\U000e0000-\U000e007f]"
)


def code_point(char: str) -> str:
    """How a display control (``DISPLAY_CONTROLS``) is shown: ``[U+202E]``."""
    return f"[U+{ord(char):04X}]"


IDENTIFIER_MAX = 200

# What pydantic's ``strip_whitespace`` takes off a string's ends (Unicode White_Space, as
# Rust's str::trim reads it): ``str.strip()`` would also take U+001C-U+001F, which a write
# refuses as control characters rather than trimming them
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)


def id_key(value: str) -> str:
    """The form in which the matrix stores an id, and every read of one takes it: trimmed
    as a write trims (``Identifier``), then NFC. ``PUT /v1/people/abc%20`` stores ``abc``;
    read untrimmed, ``GET /v1/people/abc%20`` answered 404 and the access check explained
    ``abc `` as someone outside the matrix."""
    return unicodedata.normalize("NFC", value.strip(WHITE_SPACE))


def _identifier(value: str) -> str:
    if not _IDENT.match(value):
        raise ValueError("must not contain whitespace runs, '/', '\\', '?', '#' or '%'")
    if hidden(value) or "\ufffd" in value:
        # zero-width spaces, joiners, direction marks: "bdevries\u200b@firm.nl" would look
        # like bdevries and be someone else; the replacement character is what a path id
        # that was no UTF-8 decodes to ("%FF" and "%FE" both), so two ids would be one
        raise ValueError("must not contain invisible, unassigned or replacement characters")
    # NFC: "jose" + U+0301 and "josé" print alike and are one id to every reader; kept apart,
    # a person imported decomposed was a second, unscreened person beside the one a wall
    # screens (the token's subject is read the same way: app/auth/service.py)
    normal = id_key(value)  # the field's trim took the spaces already: NFC is what is left
    if len(normal) > IDENTIFIER_MAX:  # a few characters compose into two (U+2ADC)
        raise ValueError(f"must be at most {IDENTIFIER_MAX} characters in NFC")
    return normal


def principal_key(text: str) -> str:
    """The one form in which source principals are stored and compared, exactly, in Python
    and in SQL: trimmed, NFC, lower case, a final sigma written as sigma. Every way in (the
    API, the matrix import, the connectors' access lists and group members, the export
    folder) passes a principal, or the id or group name in one, through here; SQL never
    changes a principal's case (its ``lower()`` follows the collation, not Python).

    NFC, not NFKC: "jose" + U+0301 and "josé" are one character sequence to every reader
    (canonical equivalence), so a source's NFD id and a name typed in NFC must be one
    principal, or a deny misses its person. NFKC would also fold full-width letters,
    ligatures and superscripts ("ｊｏｓｅ" to "jose"): two accounts a source keeps apart
    would become one principal, and one would hold the other's grants.

    Lower case as Python maps it, with the one context it reads (a capital sigma at a word's
    end becomes "ς", elsewhere "σ") taken out: "imanage:user:Σ" lowered whole and "Σ"
    lowered alone must agree. Not ``casefold()``: that makes "ß" "ss" and would merge ids
    that a case-insensitive source keeps apart. Idempotent; the same whether applied to a
    whole principal or to its parts (":" composes with nothing and takes no case)."""
    lowered = unicodedata.normalize("NFC", text.strip()).lower()
    return unicodedata.normalize("NFC", lowered).replace("\u03c2", "\u03c3")


def is_principal(value: str) -> bool:
    """``<source>:user:<id>`` or ``<source>:group:<id>`` (the shape; `principal_key` makes
    the form)."""
    return bool(_PRINCIPAL.match(value))


def _principal(value: str) -> str:
    value = principal_key(value)
    if not is_principal(value):
        raise ValueError("must look like '<source>:user:<id>' or '<source>:group:<id>'")
    if hidden(value) or "\ufffd" in value:
        # "imanage:user:jsmith\u200b" shows as jsmith's alias and is nobody's (_identifier)
        raise ValueError("must not contain invisible, unassigned or replacement characters")
    return value


def _user_principal(value: str) -> str:
    """A person's alias: a source USER. A group as an alias would hand the person the
    group's rights for good, whatever the group sync says of its members."""
    if value.split(":", 2)[1] != "user":
        raise ValueError("must be a user principal, '<source>:user:<id>' (groups list members)")
    return value


_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$"
)


def _rfc3339(value: object) -> object:
    """Only RFC 3339 strings with a zone (or datetimes built in code) become datetimes.

    Pydantic alone would take a number as seconds since 1970 and a bare date as midnight:
    ``"modified_to": 0`` must be an error, not 1970-01-01.
    """
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and _RFC3339.match(value.strip()):
        return value.strip()
    raise ValueError("must be an RFC 3339 date-time string with a zone, e.g. 2026-01-31T09:00:00Z")


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("must carry a time zone (RFC 3339)")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is in no year a datetime holds
        raise ValueError("is out of range once converted to UTC") from None


_DATETIME: TypeAdapter[datetime] = TypeAdapter(datetime)
# digits past the microsecond (ISO 8601 also writes the fraction after a comma, and
# ``datetime.fromisoformat`` reads any number of digits: the console's forms and the CLI)
_FRACTION = re.compile(r"[.,](\d{7,})")


def _cut_to_microseconds(value: str) -> tuple[str, str]:
    """``value`` with its fraction cut to the microsecond, and the digits cut off ("" when
    it held none past the microsecond)."""
    fine = _FRACTION.search(value)
    if fine is None:
        return value, ""
    return value[: fine.start(1) + 6] + value[fine.end(1) :], fine.group(1)[6:]


def rounded_up_to_microseconds(value: str, parse: Callable[[str], datetime]) -> datetime:
    """``parse(value)``, a fraction finer than a microsecond rounded up where ``parse``
    (pydantic, ``datetime.fromisoformat``) cuts it. For a bound that must not come early: a
    wall's end, and the audit's since (at >= since) and until (at < until) against times
    stored in microseconds. The API, the console's forms and the CLI read such a bound
    through this one function. The last instant a datetime holds stays that instant:
    "9999-12-31T23:59:59.9999999Z" (.NET's largest date, how its clients write "no end")
    has no next microsecond; refused, a wall "until further notice" from such a client was
    a 422, and read as 23:59:59.999999 it ends no earlier than any time that can be stored.

    A time with a zone is rounded in UTC when its local time has no next microsecond:
    "9999-12-31T23:59:59.9999999+01:00" is 22:59:59.9999999Z, whose next microsecond is
    23:00:00Z; added to the local time, it overflowed and was refused (422)."""
    cut_text, past = _cut_to_microseconds(value)
    if not int(past or "0"):
        return parse(value)  # "…00.123456000Z" is a microsecond exactly
    cut = parse(cut_text)
    try:
        return cut + timedelta(microseconds=1)
    except OverflowError:
        if cut.tzinfo is None:
            return cut  # datetime.max itself: the last instant stays
        utc = cut.astimezone(UTC)  # past year 9999 in UTC: raises
        return utc + timedelta(microseconds=1) if utc < datetime.max.replace(tzinfo=UTC) else utc


def _rfc3339_rounded_up(value: object) -> object:
    """``_rfc3339``, a fraction finer than a microsecond rounded up, not cut. For the end of
    a wall's window: a datetime holds microseconds, and cut, "…00.123456789Z" ended the wall
    789 ns before the time asked; rounded up, the wall holds for at least its window (its
    start, cut, is rounded down: fail closed at both ends)."""
    value = _rfc3339(value)
    if not isinstance(value, str) or not _FRACTION.search(value):
        return value
    try:
        return rounded_up_to_microseconds(value, _DATETIME.validate_python)
    except OverflowError:  # 9999-12-31T23:59:59.9999999-01:00: past year 9999 in UTC
        raise ValueError("is out of range once rounded up to a microsecond") from None


def exact_instant(value: object) -> tuple[datetime, int] | None:
    """``value`` (an RFC 3339 string with a zone, or a datetime built in code) as an instant
    to the nanosecond: the UTC datetime cut to the microsecond and the nanoseconds cut off
    (0-999). None when it is neither; the field's own type names what is wrong. For
    comparing two bounds as they were written, after one was rounded up and one cut."""
    if isinstance(value, datetime):
        return (_aware(value), 0) if value.tzinfo is not None else None
    if not isinstance(value, str) or not _RFC3339.match(value.strip()):
        return None
    text, past = _cut_to_microseconds(value.strip())
    nanos = int(past[:3].ljust(3, "0")) if past else 0
    try:
        return _aware(_DATETIME.validate_python(text)), nanos
    except ValueError:  # pydantic's ValidationError is one; out of range once in UTC
        return None


Text = Annotated[str, StringConstraints(max_length=100_000), AfterValidator(no_control)]
ShortText = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=1000), AfterValidator(no_control)
]
Identifier = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=IDENTIFIER_MAX),
    AfterValidator(no_control),
    AfterValidator(_identifier),
]


def lookup_id(value: str) -> str:
    """An id that is only looked up, in the form the matrix stores its ids (``id_key``,
    as ``_identifier`` writes them): every way a person or matter is asked about (the API's
    paths and filters, the console's forms) reads "jose" + U+0301 as josé and " abc " as
    abc, or one of them answers for someone unknown and the other for the person."""
    return id_key(value)


def id_spellings(value: str) -> tuple[str, ...]:
    """``value`` and its NFC and NFD forms, each once: the ways one id may be stored in rows
    never rewritten (the audit chains), written before ids were read in NFC."""
    forms = (value, unicodedata.normalize("NFC", value), unicodedata.normalize("NFD", value))
    return tuple(dict.fromkeys(forms))


# An id that is only looked up (GET /v1/people/{person_id}, a filter): any text, unknown ids
# are 404 or match nothing (lookup_id)
IdLookup = Annotated[str, AfterValidator(lookup_id)]


def not_blank(value: str) -> str:
    """A filter given empty or blank (``?matter_id=``: a form's unset field, a script's unset
    variable) names nothing. Answered, it matched no row, and "who saw anything from matter
    M" read as "nobody" (a probe of 2026-12-07); leaving the parameter out is "no filter"."""
    if not value.strip():
        raise ValueError("must not be empty: leave the parameter out to list everything")
    return value


# A filter of the audit lists: an id looked up (IdLookup) that is not empty
IdFilter = Annotated[str, AfterValidator(not_blank), AfterValidator(lookup_id)]
# ... and a chunk's id, trimmed as its source and document id are when pushed (" imanage:D-1:…"
# found no retrieval, and "who saw chunk X" answered nobody)
ChunkFilter = Annotated[str, StringConstraints(strip_whitespace=True), AfterValidator(not_blank)]
Principal = Annotated[
    str, StringConstraints(max_length=400), AfterValidator(no_control), AfterValidator(_principal)
]
UserPrincipal = Annotated[Principal, AfterValidator(_user_principal)]
# A document's source as a push stores it and GET/DELETE /v1/documents/{source}/... read it:
# trimmed, then lower case as given (the pattern is checked before any folding, so nothing
# stores "IManage", and a DELETE naming it is refused rather than read as imanage: no
# document is removed on a guess). One type for the write and the path: the path once read
# " imanage" untrimmed, a 422 for the source that a push had stored as imanage.
SourceKey = Annotated[str, StringConstraints(strip_whitespace=True, pattern=SOURCE_NAME.pattern)]


def _source_name(value: str) -> str:
    if not SOURCE_NAME.match(value):
        raise ValueError("must be 1-40 of a-z, 0-9, '_', '.', '-' (a letter or digit first)")
    return value


# The source of a source group: folded to lower case as the principals that name the group
# ("<source>:group:<id>") are, then a source name; a source no connector knows yet is fine
# (pushed documents and export folders name their own)
GroupSource = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True), AfterValidator(_source_name)
]
# An RFC 3339 date-time with a zone, in UTC; digits past the microsecond are cut (rounded
# down), or, as a window's end that must not come early, rounded up
AwareDatetime = Annotated[datetime, BeforeValidator(_rfc3339), AfterValidator(_aware)]
AwareDatetimeRoundedUp = Annotated[
    datetime, BeforeValidator(_rfc3339_rounded_up), AfterValidator(_aware)
]


def _printable(value: str) -> str:
    """No line break or tab, and no invisible format or unassigned character: "s-1\u200b"
    would be a session that looks like s-1 in every report."""
    if any(c in "\t\n\r" for c in value) or hidden(value):
        raise ValueError("must not contain tabs, line breaks, invisible or unassigned characters")
    return value


# A caller-chosen session id (a chat thread, an agent run): opaque, printable, bounded.
SessionId = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(no_control),
]
# ... as a search starts a session with it: stricter (ids stored before are still read and
# gated by the looser form above)
NewSessionId = Annotated[SessionId, AfterValidator(_printable)]


# The source ACL of a document whose source permissions cannot be resolved (e.g. a group
# whose members the source will not list): no person passes it, so the document fails closed.
NOBODY_ACL = "nobody"
