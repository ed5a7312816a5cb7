"""A collapsed search audits every chunk its response names (invariant 4).

``"collapse": "document"`` lists, under each hit, the other matching sections of its document
(chunk id, heading, pages: not their text). The audit row records them under the hit's rank
with a sub-rank, so "who saw chunk X", the exposure report and the session's reads include
them; the grounding gate does not count them as support, since their text was never sent."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import ADMIN, Firm, ok

ALICE = "alice@firm.nl"
COMPLIANCE = "compliance@firm.nl"
FILLER = (
    "De rechtbank overweegt dat partijen uitvoerig hebben gecorrespondeerd over de levering "
    "van de goederen, de facturen en de betalingstermijnen die in de overeenkomst staan. "
)
DWANGSOM = "De rechter legt een dwangsom op wegens niet nakomen van het vonnis. " * 3


def _named(response: dict[str, Any]) -> list[tuple[int, int, str, str | None]]:
    """(rank, sub_rank, chunk id, content hash) of every chunk the response names."""
    out = []
    for hit in response["results"]:
        out.append((hit["rank"], 0, hit["chunk_id"], hit["content_sha256"]))
        for sub_rank, other in enumerate(hit.get("other_sections") or [], start=1):
            out.append((hit["rank"], sub_rank, other["chunk_id"], other.get("content_sha256")))
    return out


def test_collapsed_sections_are_audited_seen_and_never_grounding(
    client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    for person in (ALICE, COMPLIANCE, ADMIN[0]):
        firm.person(person)
    firm.client_("C", "Client")
    firm.matter("M", "C", team=[ALICE])
    # long enough for several chunks, three of which speak of a dwangsom
    text = "\n\n".join(
        ["Eerste deel. " + FILLER * 9, DWANGSOM, "Derde deel. " + FILLER * 9, DWANGSOM * 2]
    )
    firm.document("a", text, client_id="C", matter_id="M")
    firm.document("b", "Een dwangsom kan worden gematigd.", client_id="C", matter_id="M")

    found = firm.search(ALICE, "dwangsom", mode="sparse", collapse="document", session_id="s")
    named = _named(found)
    others = [n for n in named if n[1] > 0]
    assert others, found  # document "a" has sections beyond its best chunk
    compliance = auth(COMPLIANCE, "compliance")

    # the audit row names exactly what the response named, hits first under their rank
    item = ok(client.get(f"/v1/audit/retrievals/{found['retrieval_id']}", headers=compliance))
    audited = [
        (r["rank"], r.get("sub_rank", 0), r["chunk_id"], r["content_sha256"])
        for r in item["results"]
    ]
    assert audited == named
    assert item["result_count"] == len(found["results"])
    assert ok(client.get("/v1/audit/verify", headers=compliance))["ok"]

    # "who saw chunk X" finds the retrieval by a section it only named
    _, _, section_id, _ = others[0]
    listing = ok(
        client.get("/v1/audit/retrievals", params={"chunk_id": section_id}, headers=compliance)
    )
    assert [i["retrieval_id"] for i in listing["items"]] == [found["retrieval_id"]]

    # the grounding gate counts the hits only: a sentence taken from a named section's text
    # is matched against the hits, never against the section it came from
    plain = firm.search(ALICE, "dwangsom", mode="sparse", k=20)
    section_text = next(h["text"] for h in plain["results"] if h["chunk_id"] == section_id)
    grounding = ok(
        client.post(
            "/v1/gates/grounding",
            json={"retrieval_id": found["retrieval_id"], "answer": section_text},
            headers=auth(ALICE, "lawyer"),
        )
    )
    hits = {h["chunk_id"] for h in found["results"]}
    sections = {n[2] for n in others}
    best = {s["best_chunk_id"] for s in grounding["sentences"]}
    assert best and best <= hits and not best & sections

    # a wall over M: the exposure report counts every chunk alice was shown of M
    wall_id = firm.wall(
        kind="exclusionary",
        title="screen alice",
        reason="lateral move",
        protects={"matters": ["M"]},
        screened=[ALICE],
    )
    report = ok(client.get(f"/v1/walls/{wall_id}/exposure", headers=firm.h))
    (exposed,) = [i for i in report["items"] if i["session_id"] == "s"]
    assert exposed["chunks"] == len({n[2] for n in named})
    # and the session she read them in is tainted
    gate = client.post("/v1/gates/session", json={"session_id": "s"}, headers=auth(ALICE, "lawyer"))
    assert ok(gate)["status"] == "tainted"
