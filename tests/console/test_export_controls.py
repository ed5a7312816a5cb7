"""A question holding Unicode's direction controls is kept as asked and shown, never run,
wherever compliance reads it.

The search takes such a question (refusing it would make the audit record something other
than what the lawyer sent, or nothing: the audit must store what was asked), and the console
already showed each control as its code point. The exports did not: the CSV cell and the
JSON lines (console and ``GET /v1/audit/export``, which ``ewall audit export`` writes too)
held an U+202E raw, so a compliance officer opening the file saw the rest of the line turned
around ("Trojan source"). The CSV now shows ``[U+202E]`` as the console does; the JSON lines
write ``\\u202e``, which reads back as the same string: the export stays the exact record."""

from __future__ import annotations

import csv
import io
import json
import re

from tests.console.conftest import COMPLIANCE, LAWYER
from tests.console.test_console_http import signed_in
from tests.helpers import Firm, ok

# a right-to-left override, an isolate holding reversed words, a right-to-left mark
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
QUESTION = "huur \u202eontbinding\u202c \u2067gnirts\u2069 \u200fmagazijn"


def test_the_exports_keep_the_question_exact_and_show_its_controls(firm: Firm) -> None:
    retrieval = firm.search(LAWYER, QUESTION)["retrieval_id"]
    compliance = firm.auth(COMPLIANCE, "compliance")
    record = ok(firm.client.get(f"/v1/audit/retrievals/{retrieval}", headers=compliance))
    assert record["query"] == QUESTION  # the audit holds what was asked

    api = firm.client.get("/v1/audit/export", headers=compliance)
    assert api.status_code == 200, api.text
    console = signed_in(firm, COMPLIANCE, "compliance")
    jsonl = console.get("/console/audit/export.jsonl", params={"person_id": LAWYER})
    assert jsonl.status_code == 200, jsonl.text
    for text in (api.text, jsonl.text):
        assert not BIDI.findall(text)
        assert "\\u202e" in text
        items = [json.loads(line) for line in text.splitlines()]
        assert [i["query"] for i in items if i["retrieval_id"] == retrieval] == [QUESTION]

    table = console.get("/console/audit/export.csv", params={"person_id": LAWYER})
    assert table.status_code == 200, table.text
    assert not BIDI.findall(table.text)
    [row] = list(csv.DictReader(io.StringIO(table.text)))
    assert row["query"] == (
        "huur [U+202E]ontbinding[U+202C] [U+2067]gnirts[U+2069] [U+200F]magazijn"
    )


def test_the_json_reads_escape_the_controls_as_the_export_does(firm: Firm) -> None:
    """``GET /v1/audit/retrievals`` (and one retrieval) gave the question's controls raw,
    while the JSON lines export escapes them: a person reading the body (curl in a terminal,
    a browser's raw view) saw it reordered. JSON escapes are the same string to a program,
    so the read stays the exact record (api.md: JSON strings are data)."""
    retrieval = firm.search(LAWYER, QUESTION)["retrieval_id"]
    compliance = firm.auth(COMPLIANCE, "compliance")
    for path in ("/v1/audit/retrievals", f"/v1/audit/retrievals/{retrieval}"):
        r = firm.client.get(path, headers=compliance)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/json"
        assert not BIDI.findall(r.text), path
        assert "\\u202e" in r.text and "\\u2067" in r.text, path
        body = r.json()
        item = body["items"][0] if "items" in body else body
        assert item["query"] == QUESTION, path
