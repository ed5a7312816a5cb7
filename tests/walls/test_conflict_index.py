"""Name checks through the snapshot's token indexes (issue 31, point 7): the session gate
asks for the adverse matters of every matter a session read, and each check used to test
every party and client of the firm. The indexed check must find exactly what the
definition finds (every party and client tested with ``name_matches``), and test only the
names that share a token with the question."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from app.gates.session import findings
from app.walls import graph
from app.walls.graph import Client, MatrixSnapshot, Matter, Party
from app.walls.names import name_matches, normalize_name

WORDS = ["acme", "acmeco", "philips", "phili", "bakker", "bakkerij", "de", "flore", "noord",
         "noorderlicht", "van", "dam", "damrak", "ijs", "groothandel"]  # fmt: skip
FORMS = ["", " B.V.", " N.V.", " Holding", " Ltd"]


def reference_conflicts(snap: MatrixSnapshot, name: str) -> list[dict[str, Any]]:
    """The definition, testing every client and every party of the firm."""
    hits: dict[tuple[str, str, str], dict[str, Any]] = {}
    matched = [c for c in snap.clients.values() if name_matches(name, normalize_name(c.name))]
    for parties in snap.parties.values():
        for party in parties:
            if name_matches(name, party.name_norm):
                matched.extend(
                    c for c in snap.clients.values() if normalize_name(c.name) == party.name_norm
                )
    families: dict[str, str] = {}
    for client in matched:
        for member in snap.client_subtree(snap.family_root(client.client_id)):
            families.setdefault(member, client.client_id)
    for member, via in families.items():
        for matter_id in snap.matters_by_client.get(member, ()):
            hits[(matter_id, member, "client")] = {
                "matter_id": matter_id,
                "matter_title": snap.matters[matter_id].title,
                "client_id": snap.matters[matter_id].client_id,
                "role": "client",
                "name": snap.clients[member].name,
                "match": "matched client"
                if member == via
                else f"corporate family of {via} ({snap.clients[via].name})",
            }
    family_names = [snap.clients[c].name for c in families]
    for matter_id, parties in snap.parties.items():
        for party in parties:
            direct = name_matches(name, party.name_norm)
            if not (direct or any(name_matches(n, party.name_norm) for n in family_names)):
                continue
            hits[(matter_id, party.name_norm, party.role)] = {
                "matter_id": matter_id,
                "matter_title": snap.matters[matter_id].title,
                "client_id": snap.matters[matter_id].client_id,
                "role": party.role,
                "name": party.name,
                "match": "matched party" if direct else "party in a matched corporate family",
            }
    return sorted(hits.values(), key=lambda h: (h["matter_id"], h["role"], h["name"]))


def _name(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(1, 3))
    return " ".join(w.capitalize() for w in words) + rng.choice(FORMS)


def random_firm(rng: random.Random, clients: int, matters: int) -> MatrixSnapshot:
    snap = MatrixSnapshot(version=1)
    for i in range(clients):
        parent = f"c{rng.randrange(i)}" if i and rng.random() < 0.3 else None
        snap.clients[f"c{i}"] = Client(f"c{i}", _name(rng), parent)
    names = [c.name for c in snap.clients.values()]
    for j in range(matters):
        snap.matters[f"m{j}"] = Matter(f"m{j}", f"c{rng.randrange(clients)}", f"M {j}", "open")
        parties = []
        for _ in range(rng.randint(0, 3)):
            name = rng.choice(names) if rng.random() < 0.4 else _name(rng)
            parties.append(Party(name, normalize_name(name), rng.choice(["adverse", "related"])))
        if parties:
            snap.parties[f"m{j}"] = tuple(parties)
    return snap


@pytest.mark.parametrize("seed", range(40))
def test_indexed_conflicts_equal_the_definition(seed: int) -> None:
    rng = random.Random(seed)
    snap = random_firm(rng, rng.randint(1, 25), rng.randint(1, 40))
    questions = [_name(rng) for _ in range(10)]
    questions += [c.name for c in snap.clients.values()][:5]
    questions += ["", "B.V.", "phil", "phili", "noorder", "Acme  b.v.", "ijs"]
    for question in questions:
        assert snap.conflicts(question) == reference_conflicts(snap, question), question
    for matter_id in snap.matters:
        found = snap.adverse_matters(matter_id)
        assert found == sorted(found, key=lambda h: (h["client_in"], h["adverse_in"], h["party"]))


def test_the_session_gate_tests_only_the_names_that_share_a_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 20,000 matters with two parties each, all under distinct names; the session read two
    # directly adverse matters among them
    snap = MatrixSnapshot(version=1)
    for i in range(20_000):
        snap.clients[f"c{i}"] = Client(f"c{i}", f"Client{i:05d} B.V.", None)
        snap.matters[f"m{i}"] = Matter(f"m{i}", f"c{i}", f"M {i}", "open")
        parties = (f"Tegenpartij{i:05d} N.V.", f"Derde{i:05d}")
        snap.parties[f"m{i}"] = (
            Party(parties[0], normalize_name(parties[0]), "adverse"),
            Party(parties[1], normalize_name(parties[1]), "related"),
        )
    snap.parties["m2"] = (Party("Client00001 B.V.", "client00001", "adverse"),)
    tested = 0

    def counting(query: str, candidate_norm: str) -> bool:
        nonlocal tested
        tested += 1
        return name_matches(query, candidate_norm)

    monkeypatch.setattr(graph, "name_matches", counting)
    finding = findings(snap, "s-1", {"alice": ["m1", "m2"]}, datetime.now(UTC))
    assert [r["matters"] for r in finding.reasons] == [["m1", "m2"]]
    # the names sharing a token with the two matters' clients and adverse parties, not the
    # 60,000 names of the firm
    assert tested < 50, tested
