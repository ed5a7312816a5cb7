"""The audit's ``chunk_id`` filter reads a chunk's id trimmed, as every id filter of the
audit does (app/types.py ``id_key`` for person and matter) and as the console's audit form
reads the same field. A chunk's id never begins or ends with white space (its source and
document id are trimmed when pushed), yet ``chunk_id= imanage:…`` was looked up as typed:
"who saw chunk X" answered nobody, where the console listed the retrieval."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.helpers import Firm, ok


def test_the_chunk_filter_reads_the_id_trimmed(client: TestClient, auth: Tokens) -> None:
    firm = Firm(client, auth)
    firm.person("alice@firm.nl")
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=["alice@firm.nl"])
    firm.document("D-1", "De huurder vordert ontbinding.", client_id="C-1", matter_id="M-1")
    found = firm.search("alice@firm.nl", "ontbinding")
    chunk_id = found["results"][0]["chunk_id"]
    compliance = auth("c@firm.nl", "compliance")
    for spelled in (chunk_id, f" {chunk_id}", f"{chunk_id}\u00a0", f"\t{chunk_id}\u3000"):
        listing = ok(
            client.get("/v1/audit/retrievals", params={"chunk_id": spelled}, headers=compliance)
        )
        assert [i["retrieval_id"] for i in listing["items"]] == [found["retrieval_id"]], spelled
