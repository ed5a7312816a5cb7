"""The audit's CSV export never hands a spreadsheet a formula (app/console/audit_pages.py
``_cell``).

A question is the lawyer's free text, and compliance opens the export in a spreadsheet.
The guard looked at a cell's first character only (=, +, -, @, tab, CR), so a question
written '"=HYPERLINK(...)' (a spreadsheet passing over the quote), or "huur;=1+1" (Excel in a
Dutch locale opens a .csv split on ";", the list separator, and "=1+1" is a cell of its own
there), or a formula after a line break, reached the spreadsheet as a formula. Every place
where a spreadsheet may start a cell, after white space, quotes and invisible characters,
now gets a "'" before a formula's first character."""

from __future__ import annotations

import csv
import io
import re

import pytest

from app.console.audit_pages import _cell
from tests.console.conftest import COMPLIANCE, LAWYER
from tests.console.test_console_http import signed_in
from tests.helpers import Firm

# how a spreadsheet may read a cell: split at a line break, ";" or a tab, each part with
# white space, quotes and invisible characters passed over; = + - @ (or full width) then
# starts a formula, "'" first keeps the part text
_PART = re.compile(r"[;\t\r\n]")
_PASSED_OVER = (
    '"\u2018\u2019\u201c\u201d\u00ad\u200b\u200c\u200d\u200e\u200f'
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)
_STARTS = "=+-@\uff1d\uff0b\uff0d\uff20"


def runs_as_formula(cell: str) -> bool:
    for part in _PART.split(cell):
        rest = part.lstrip()
        while rest and (rest[0] in _PASSED_OVER or rest[0].isspace()):
            rest = rest[1:]
        if rest[:1] in tuple(_STARTS):
            return True
    return False


PAYLOADS = [
    '=HYPERLINK("http://x")',
    " =1+1",
    '"=1+1',
    "\u201c=1+1",
    "\u200b=1+1",
    "\u202e=1+1",
    "huur;=1+1;",
    "huur; +31 20 555",
    "huur\n=1+1",
    "huur\r\n @SUM(A1)",
    "huur\t-2+3",
    "\uff1d1+1",
    "\t=1",
    "-term huur",
]


@pytest.mark.parametrize("text", PAYLOADS)
def test_no_cell_runs_as_a_formula(text: str) -> None:
    assert runs_as_formula(text)  # the reader model above takes it for one
    assert not runs_as_formula(_cell(text)), repr(_cell(text))


def test_plain_text_is_left_as_it_is() -> None:
    for text in ("huur", "huur -term", "a@b.nl", "artikel 7:2 BW, lid 1", "x,=1", "", "3"):
        assert _cell(text) == text


def test_the_export_of_questions_written_as_formulas_holds_none(firm: Firm) -> None:
    questions = ['"=HYPERLINK("http://x") huur', "huur;=1+1;", "huur\n=1+1"]
    for question in questions:
        firm.search(LAWYER, question)
    client = signed_in(firm, COMPLIANCE, "compliance")
    table = client.get("/console/audit/export.csv", params={"person_id": LAWYER})
    assert table.status_code == 200, table.text
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert len(rows) == len(questions)
    for row in rows:
        for column, cell in row.items():
            assert not runs_as_formula(cell), (column, cell)
