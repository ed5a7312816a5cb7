"""Names, titles and ids shown by the console cannot reorder the page around them.

The API accepts titles, reasons and names holding Unicode's bidirectional controls (only ids
refuse them). A title holding U+202E (right-to-left override) turned the rest of its line
around, dates and policy versions included; the console set such a value apart between
U+2068 and U+2069, and a title holding its own U+2069 before the U+202E closed that isolate
early. Now every such text is in a ``<bdi>`` and each invisible control is shown as its code
point, while the forms still send back what was typed.
"""

from __future__ import annotations

import html
import re

import psycopg

from app.console.pages import isolated
from tests.conftest import DbHandle
from tests.console.conftest import LAWYER, PARTNER, csrf_of
from tests.console.test_console_http import signed_in, wall_form
from tests.helpers import Firm, ok

RLO, PDI, RLM = "\u202e", "\u2069", "\u200f"
# a stray end of isolate first: it closed the isolate the old filter opened
TITLE = f"Screen {PDI}{RLO}Lena from M-2"
SHOWN = (
    '<bdi>Screen <span class="control">[U+2069]</span><span class="control">[U+202E]</span>'
    "Lena from M-2</bdi>"
)
CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x00-\x08\x0b\x0c\x0e-\x1f]")


def _shown_raw(page: str) -> list[str]:
    """Invisible controls left in the page outside form values, but for the isolates the
    console sets around text where no element may stand (a <title>, a datalist's option):
    U+2068 ... U+2069 with no control inside."""
    body = re.sub(r'value="[^"]*"', "", page)
    body = re.sub(f"\u2068[^{CONTROLS.pattern[1:-1]}]*\u2069", "", body)
    return CONTROLS.findall(body)


def test_a_title_with_a_right_to_left_override_is_isolated_and_escaped(firm: Firm) -> None:
    wall_id = ok(
        firm.client.post(
            "/v1/walls",
            headers=firm.h,
            json={
                "kind": "exclusionary",
                "title": TITLE,
                "reason": f"advised {RLO}the landlord",
                "protects": {"matters": ["M-2"]},
                "screened": [LAWYER],
            },
        ),
        201,
    )["wall_id"]
    client = signed_in(firm, PARTNER, "conflicts")
    page = client.get(f"/console/walls/{wall_id}").text
    assert f"<h1>{SHOWN} " in page
    assert "<title>\u2068Screen [U+2069][U+202E]Lena from M-2\u2069" in page
    assert '<bdi>advised <span class="control">[U+202E]</span>the landlord</bdi>' in page
    assert _shown_raw(page) == []
    listing = client.get("/console/walls").text
    assert SHOWN in listing and _shown_raw(listing) == []


def test_the_preview_escapes_the_title_and_its_form_sends_it_back_as_typed(firm: Firm) -> None:
    client = signed_in(firm, PARTNER, "conflicts")
    token = csrf_of(client.get("/console/walls/new").text)
    page = client.post("/console/walls/preview", data={**wall_form(title=TITLE), "csrf": token})
    assert page.status_code == 200, page.text
    assert f"<h1>Preview: {SHOWN}</h1>" in page.text
    assert _shown_raw(page.text) == []
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
    assert html.unescape(fields["title"]) == TITLE


def test_names_of_matters_clients_people_and_parties_are_isolated(firm: Firm, db: DbHandle) -> None:
    body = {"name": f"Noor {RLM}{RLO}Haddad", "active": True, "aliases": []}
    ok(firm.client.put("/v1/people/rtl@firm.nl", json=body, headers=firm.h))
    firm.client_("C-9", f"Gamma {RLO}Holding")
    firm.matter(
        "M-9",
        "C-9",
        team=["rtl@firm.nl"],
        title=f"Gamma {RLO}lease",
        parties=[{"name": f"Delta {RLO}B.V.", "role": "adverse"}],
    )
    # C0 controls are refused by the API; a row an older version stored shows them escaped
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute(
            "UPDATE matters SET title = title || %s WHERE matter_id = 'M-9'", (" \x1b[31m",)
        )
    client = signed_in(firm, PARTNER, "conflicts")
    token = csrf_of(client.get("/console/walls/new").text)
    form = wall_form(title="Gamma screen", matters="M-9", screened="rtl@firm.nl")
    preview = client.post("/console/walls/preview", data={**form, "csrf": token}).text
    assert (
        '<bdi>Noor <span class="control">[U+200F]</span><span class="control">[U+202E]</span>'
        "Haddad</bdi>" in preview
    )
    assert '<span class="control">[U+001B]</span>[31m</bdi>' in preview
    conflicts = client.get("/console/conflicts", params={"name": "Delta"}).text
    assert '<bdi>Delta <span class="control">[U+202E]</span>B.V.</bdi>' in conflicts
    for page in (
        preview,
        conflicts,
        client.get("/console/walls/new").text,
        client.get("/console/access").text,
    ):
        assert _shown_raw(page) == []


def test_zero_width_and_separator_characters_show_as_code_points() -> None:
    """A name with a zero-width space looks like another and is not: it shows what it holds."""
    shown = str(isolated("Acme\u200b B.V.\u2028\ufeff\U000e0041"))
    assert shown == (
        '<bdi>Acme<span class="control">[U+200B]</span> B.V.'
        '<span class="control">[U+2028]</span><span class="control">[U+FEFF]</span>'
        '<span class="control">[U+E0041]</span></bdi>'
    ), shown
