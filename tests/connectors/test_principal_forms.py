"""A source's decomposed ids meet aliases typed composed (app.types.principal_key).

The fake iManage names users as a source may store them, decomposed ("JOSE" + U+0301) or
composed, in a document's ACL, in a workspace's deny and in a group's member list; the
people's aliases are typed through the API in the other form. After a sync into the real
ingest pipeline the search API shows who finds what: a deny reaches its person, a grant
through a group its member.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import Tokens
from tests.connectors.conftest import DbFixture, ImanageFactory
from tests.connectors.imanage_world import World
from tests.fakes.imanage import FakeIManage

WS = "ACTIVE!311"
JOSE, RENE = "jose@firm.nl", "rene@firm.nl"


def _who(w: World, word: str, external_id: str) -> set[str]:
    return {
        person
        for person in (JOSE, RENE, "alice@firm.nl")
        if external_id in w.firm.documents_found(person, word, k=10, mode="sparse")
    }


def test_source_ids_in_the_other_normal_form_deny_and_grant_the_aliased_people(
    client: TestClient, auth: Tokens, db: DbFixture, imanage_fake: FakeIManage,
    imanage: ImanageFactory,
) -> None:
    w = World(client, auth, db, imanage_fake, imanage)
    w.firm.person(JOSE, aliases=["imanage:user:jos\u00e9"])  # composed
    w.firm.person(RENE, aliases=["imanage:user:rene\u0301"])  # decomposed
    f = imanage_fake
    f.add_workspace("ACTIVE", WS, custom1="C-1", custom2="M-1", name="Acme - M-1")
    denied = {"default_security": "public",
              "acl": [{"id": "JOSE\u0301", "type": "user", "access_level": "no_access"}]}
    f.add_document("ACTIVE", 1, custom1="C-1", custom2="M-1", security=denied,
                   content=b"Memo over de octrooiaanvraag.")
    f.add_document("ACTIVE", 2, custom1="C-1", custom2="M-1", workspace_id=WS,
                   content=b"Memo over de levering.")
    f.deny_container("ACTIVE", WS, "REN\u00c9")
    f.add_group("\u00c9QUIPE", ["JOSE\u0301", "REN\u00c9"])
    team = {"default_security": "private",
            "acl": [{"id": "E\u0301QUIPE", "type": "group", "access_level": "read"}]}
    f.add_document("ACTIVE", 3, custom1="C-1", custom2="M-1", default_security="private",
                   security=team, content=b"Memo over de fusie.")
    w.sync("full")
    assert _who(w, "octrooiaanvraag", "ACTIVE!1") == {RENE, "alice@firm.nl"}
    assert _who(w, "levering", "ACTIVE!2") == {JOSE, "alice@firm.nl"}
    assert _who(w, "fusie", "ACTIVE!3") == {JOSE, RENE}
