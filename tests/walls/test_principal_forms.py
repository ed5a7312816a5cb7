"""A source principal is one principal however its text was written: a name typed in NFC
("josé", U+00E9) and a source's decomposed id ("jose" + U+0301) match, in either direction,
so a deny reaches its person (else a wall or ACL fails open) and a grant its reader (else
it fails closed). Compatibility variants (full-width letters) stay other principals: folding
them could make two accounts of a source one (app.types.principal_key).

Through the API only: aliases, document access lists, group members and group ids, then
search as each person."""

from __future__ import annotations

import unicodedata

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from app.types import principal_key
from tests.conftest import Tokens
from tests.helpers import ADMIN, Firm, ok, retag

TEXT = "octrooi inbreuk retard-tablet medivastine"
NFC_E = "\u00e9"  # é, one code point
NFD_E = "e\u0301"  # e and a combining acute accent


def _firm(client: TestClient, auth: Tokens, **aliases: str) -> Firm:
    firm = Firm(client, auth)
    for person, alias in aliases.items():
        firm.person(f"{person}@firm.nl", aliases=[alias])
    firm.client_("C-1")
    firm.matter("M-1", "C-1", team=[f"{p}@firm.nl" for p in aliases])
    return firm


def _seen(firm: Firm, person: str) -> list[str]:
    return sorted(firm.documents_found(f"{person}@firm.nl", TEXT, k=10))


def test_a_deny_of_a_decomposed_id_denies_the_person_whose_alias_is_composed(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(
        client, auth,
        jose=f"api:user:jos{NFC_E}",  # typed: composed
        rene=f"api:user:REN{NFD_E}",  # from a source's export: decomposed
        bob="api:user:bob",
    )  # fmt: skip
    # the source's ids in the other form each time
    firm.document("jose-denied", TEXT, client_id="C-1", matter_id="M-1",
                  acl={"default": "public", "deny": [f"api:user:JOS{NFD_E}"]})  # fmt: skip
    firm.document("rene-denied", TEXT, client_id="C-1", matter_id="M-1",
                  acl={"default": "public", "deny": [f"api:user:ren{NFC_E}"]})  # fmt: skip
    retag(client)
    assert _seen(firm, "jose") == ["rene-denied"]
    assert _seen(firm, "rene") == ["jose-denied"]
    assert _seen(firm, "bob") == ["jose-denied", "rene-denied"]


def test_a_grant_through_a_group_reaches_its_member_in_either_form(
    client: TestClient, auth: Tokens
) -> None:
    """The group's id, the member and the grant each in another form than the alias."""
    firm = _firm(client, auth, jose=f"api:user:jos{NFC_E}", bob="api:user:bob")
    firm.document("team-only", TEXT, client_id="C-1", matter_id="M-1",
                  acl={"default": "private", "allow": [f"api:group:{NFC_E}quipe"]})  # fmt: skip
    # a full-width id is another account, never folded into "jose"
    firm.document("wide-jose", TEXT, client_id="C-1", matter_id="M-1",
                  acl={"default": "private", "allow": ["api:user:\uff4a\uff4f\uff53\uff45"]})  # fmt: skip
    group = {"members": [f"api:user:JOS{NFD_E}"]}
    ok(client.put(f"/v1/groups/api/{NFD_E.upper()}QUIPE", json=group, headers=auth(*ADMIN)))
    retag(client)
    assert _seen(firm, "jose") == ["team-only"]
    assert _seen(firm, "bob") == []


def test_a_capital_sigma_lowers_alike_alone_and_in_a_principal(
    client: TestClient, auth: Tokens
) -> None:
    """Python lowers a capital sigma at a word's end to "ς": lowered as a whole principal
    (the API) "api:user:ΟΔΟΣ" became "οδος", while a connector lowering the id alone, or a
    source writing "οδοσ", gave another principal, and the deny missed."""
    firm = _firm(client, auth, odos="api:user:\u039f\u0394\u039f\u03a3", bob="api:user:bob")
    firm.document("odos-denied", TEXT, client_id="C-1", matter_id="M-1",
                  acl={"default": "public", "deny": ["api:user:\u03bf\u03b4\u03bf\u03c3"]})  # fmt: skip
    retag(client)
    assert _seen(firm, "odos") == []
    assert _seen(firm, "bob") == ["odos-denied"]


def test_one_alias_in_two_forms_is_refused_for_a_second_person(
    client: TestClient, auth: Tokens
) -> None:
    firm = _firm(client, auth, jose=f"api:user:jos{NFC_E}")
    body = {"name": "Other", "aliases": [f"api:user:jos{NFD_E}"]}
    answer = client.put("/v1/people/other@firm.nl", json=body, headers=auth(*ADMIN))
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["code"] == "alias_taken"
    person = ok(client.get("/v1/people/jose@firm.nl", headers=firm.h))
    assert person["aliases"] == [f"api:user:jos{NFC_E}"]



@given(st.text(max_size=16))
@settings(max_examples=500, deadline=None)
def test_principal_key_is_one_form_of_every_spelling(text: str) -> None:
    """Idempotent, the same for NFC and NFD input, and the same whether a principal is keyed
    whole (the API) or by its id alone (the connectors)."""
    key = principal_key(text)
    assert principal_key(key) == key
    assert principal_key(unicodedata.normalize("NFD", text)) == key
    ident = text.strip()
    assert principal_key(f"API:user:{ident}") == f"api:user:{principal_key(ident)}"


def test_principal_key_folds_case_and_canonical_forms_only() -> None:
    assert principal_key(f" imanage:user:JOS{NFD_E} ") == f"imanage:user:jos{NFC_E}"
    sigmas = {"\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c3", "\u03bf\u03b4\u03bf\u03c2"}
    assert len({principal_key(s) for s in sigmas}) == 1
    # compatibility forms and "ß"/"ss" stay apart: folding them could merge two accounts
    assert principal_key("\uff4a\uff4f\uff53\uff45") != principal_key("jose")
    assert principal_key("\ufb01le") != principal_key("file")
    assert principal_key("stra\u00dfe") != principal_key("strasse")
    assert principal_key("\u1e9e") == "\u00df"


def test_a_principal_with_an_invisible_character_is_refused(
    client: TestClient, auth: Tokens
) -> None:
    """"api:user:jsmith" + U+200B shows as jsmith's alias in every review and is nobody's:
    refused (422) wherever the API takes a principal, as person ids with one are."""
    admin = auth(*ADMIN)
    for hidden in ("\u200b", "\u202e", "\ufeff", "\ufffd"):
        alias = f"api:user:jsmith{hidden}"
        r = client.put("/v1/people/hidden@firm.nl", headers=admin,
                       json={"name": "H", "aliases": [alias]})  # fmt: skip
        assert r.status_code == 422, (repr(hidden), r.text)
        r = client.put("/v1/groups/api/lit", headers=admin, json={"members": [alias]})
        assert r.status_code == 422, (repr(hidden), r.text)
    assert client.get("/v1/people/hidden@firm.nl", headers=admin).status_code == 404
