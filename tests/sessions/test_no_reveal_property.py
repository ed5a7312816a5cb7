"""No session-gate answer and no exposure report names a matter the caller may not see
(invariant 11), on random firms, checked against the reference written from the definitions
in tests/walls/test_resolution_property.py (not against app/walls).

Pure: the firm is built as the conflict graph's snapshot in memory, so hypothesis can try
many firms quickly; the API tests cover the SQL around these functions.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.auth.service import Principal
from app.gates.repository import SessionDocument
from app.gates.session import answer_for, findings
from app.walls.exposure import aggregate
from app.walls.graph import Client, MatrixSnapshot, Matter, Party, Person, Wall
from app.walls.names import normalize_name
from app.walls.visibility import matter_view
from tests.walls.test_resolution_property import RefFirm, RefWall, firms

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
STRANGER = "stranger@firm.nl"


def _build(spec: dict[str, Any], adverse: list[tuple[int, int]]) -> tuple[MatrixSnapshot, RefFirm]:
    people = [f"p{i}@firm.nl" for i in range(spec["people"])]
    clients = [f"C{i}" for i in range(len(spec["parents"]))]
    matters = [f"M{i}" for i in range(len(spec["matters"]))]
    parent = {
        c: (clients[spec["parents"][i]] if spec["parents"][i] is not None else None)
        for i, c in enumerate(clients)
    }
    matter_client = {m: clients[spec["matters"][i]["client"]] for i, m in enumerate(matters)}
    team = {m: {people[t] for t in spec["matters"][i]["team"]} for i, m in enumerate(matters)}
    inactive = {people[i] for i in spec["inactive"]}
    snap = MatrixSnapshot(version=1)
    snap.people = {p: Person(p, p, p not in inactive) for p in people}
    snap.clients = {c: Client(c, f"Client {c} B.V.", parent[c]) for c in clients}
    snap.matters = {m: Matter(m, matter_client[m], m, "open") for m in matters}
    snap.team = {m: frozenset(t) for m, t in team.items()}
    parties: dict[str, list[Party]] = {}
    for matter_index, client_index in adverse:
        if matter_index < len(matters) and client_index < len(clients):
            name = f"CLIENT {clients[client_index]} bv"
            parties.setdefault(matters[matter_index], []).append(
                Party(name, normalize_name(name), "adverse")
            )
    snap.parties = {m: tuple(p) for m, p in parties.items()}
    ref = RefFirm(people, parent, matter_client, team, inactive=inactive)
    for n, w in enumerate(spec["walls"]):
        start = NOW + w["start"] if w["start"] is not None else None
        end = NOW + w["end"] if w["end"] is not None else None
        listed = {people[i] for i in w["people"]}
        exclusionary = w["kind"] == "exclusionary"
        snap.walls[f"W{n}"] = Wall(
            wall_id=f"W{n}",
            kind=w["kind"],
            title=f"W{n}",
            include_team=w["include_team"] if not exclusionary else True,
            effective_from=start,
            effective_until=end,
            lifted=w["lifted"],
            protected_matters=frozenset(matters[i] for i in w["matters"]),
            protected_clients=frozenset(clients[i] for i in w["clients"]),
            screened=frozenset(listed if exclusionary else ()),
            allowed=frozenset(() if exclusionary else listed),
        )
        ref.walls.append(
            RefWall(
                w["kind"],
                {matters[i] for i in w["matters"]},
                {clients[i] for i in w["clients"]},
                listed if exclusionary else set(),
                set() if exclusionary else listed,
                w["include_team"] if not exclusionary else True,
                start,
                end,
                w["lifted"],
            )
        )
    return snap, ref


def _ref_sees(ref: RefFirm, person: str, matter: str) -> bool:
    if person in ref.people:
        return ref.access(person, matter, NOW)
    # a person unknown to the matrix sees only unwalled matters
    return not any(not w.lifted and ref.covers(w, matter) for w in ref.walls)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    spec = draw(firms())
    n_matters = len(spec["matters"])
    n_people = spec["people"]
    adverse = draw(
        st.lists(st.tuples(st.integers(0, n_matters - 1), st.integers(0, 3)), max_size=3)
    )
    reads = {
        i: sorted(draw(st.sets(st.integers(0, n_matters - 1), max_size=n_matters)))
        for i in sorted(draw(st.sets(st.integers(0, n_people - 1), min_size=1, max_size=3)))
    }
    caller = draw(st.one_of(st.integers(0, n_people - 1), st.just(-1)))
    # since the reads: documents moved to another matter, ACLs that no longer admit
    moves = draw(st.dictionaries(st.integers(0, n_matters - 1), st.integers(0, n_matters - 1)))
    denied = draw(st.sets(st.integers(0, n_matters - 1)))
    # refiled under a matter the matrix does not know: visible to no one
    quarantined = draw(st.sets(st.integers(0, n_matters - 1)))
    return {
        "spec": spec,
        "adverse": adverse,
        "reads": reads,
        "caller": caller,
        "moves": moves,
        "denied": denied,
        "quarantined": quarantined,
    }


@settings(max_examples=300, deadline=None)
@given(case=scenarios())
def test_gate_answers_and_exposure_name_only_matters_the_caller_may_see(
    case: dict[str, Any],
) -> None:
    snap, ref = _build(case["spec"], case["adverse"])
    caller = STRANGER if case["caller"] < 0 else ref.people[case["caller"]]
    by_person = {ref.people[p]: [f"M{m}" for m in matters] for p, matters in case["reads"].items()}

    # one document read per (person, matter), now in the matter it moved to, under an ACL
    # of its first matter's (one the readers may no longer read, for "denied" matters)
    now_in = {f"M{m}": f"M{case['moves'].get(m, m)}" for m in range(len(case["spec"]["matters"]))}
    documents = [
        SessionDocument(
            owner,
            f"api:{m}-doc",
            now_in[m],
            f"acl-{m}",
            quarantined=int(m[1:]) in case["quarantined"],
            read_in=(m,),
        )
        for owner, ms in by_person.items()
        for m in ms
    ]
    readable = {
        owner: frozenset(f"acl-M{m}" for m in range(len(now_in)) if m not in case["denied"])
        for owner in by_person
    }
    finding = findings(snap, "s", by_person, NOW, documents=documents, readable=readable)
    # the full finding (what the audit keeps) agrees with the definitions ...
    lost = {
        (owner, m)
        for owner, ms in by_person.items()
        for m in {*ms, *(now_in[x] for x in ms)}
        if not ref.access(owner, m, NOW)
    }
    walled = [r for r in finding.reasons if r["kind"] == "wall" and "cause" not in r]
    assert {(r["person_id"], r["matters"][0]) for r in walled} == lost
    refused = {
        (d.person_id, d.document)
        for d in documents
        if d.source_acl_id not in readable[d.person_id] or d.quarantined
    }
    named = {
        (r["person_id"], d) for r in finding.reasons if "cause" in r for d in r["documents"]
    }
    assert named == refused
    # ... and the caller's answer names no matter they may not see, whoever asks
    lawyer = Principal(caller, frozenset({"lawyer"}))
    answer = answer_for(finding, snap, matter_view(lawyer, lambda: (snap, NOW)), NOW)
    assert answer["status"] == finding.status
    assert len(answer["reasons"]) <= len(finding.reasons)
    for reason in answer["reasons"]:
        for matter in reason["matters"]:
            assert _ref_sees(ref, caller, matter), (caller, reason)
        if "party" in reason:
            assert len(reason["matters"]) == 2
        # named only beside a matter shown, the one it was read in: never the one a
        # document refiled since lives in now (a probe of 2026-12-07)
        for document in reason.get("documents") or []:
            where = next(d.read_in for d in documents if d.document == document)
            assert reason["matters"] == list(where), (caller, reason)

    # exposure: one row per (person, session, matter) read; documents are per matter
    rows = [
        {
            "person_id": owner,
            "session_id": f"s-{owner}",
            "matter_id": m,
            "first_at": NOW,
            "last_at": NOW,
            "chunks": 1,
            "documents": [f"api:{m}-doc"],
        }
        for owner, ms in by_person.items()
        for m in ms
    ]
    for wall in snap.walls.values():
        covered = snap.covered_matters[wall.wall_id]
        report = aggregate(
            [r for r in rows if r["matter_id"] in covered],
            lambda person, wall=wall: snap.wall_denies(wall, person),  # type: ignore[misc]
            lambda matter: snap.may_access(caller, matter, NOW),
        )
        for item in report["items"]:
            for matter in item["matters"]:
                assert _ref_sees(ref, caller, matter), (caller, item)
            for document in item["documents"]:
                assert _ref_sees(ref, caller, document.removeprefix("api:").removesuffix("-doc"))
        hidden = any(
            not _ref_sees(ref, caller, r["matter_id"])
            for r in rows
            if r["matter_id"] in covered and snap.wall_denies(wall, r["person_id"])
        )
        assert report["partial"] == hidden
