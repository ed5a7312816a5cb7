"""Random firms, walls and instants against a reference written from the access rule.

The reference below is deliberately naive and independent of app/walls: it reads the
definitions word for word. Hypothesis builds firms through the API; the service's per-query
resolution (allowed wall groups of every matter) and its /access answers must agree with it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.walls.resolution import AccessResolver, read_snapshot
from tests.conftest import Tokens
from tests.helpers import Firm, ok

_counter = itertools.count()


@dataclass
class RefWall:
    kind: str
    matters: set[str]
    clients: set[str]
    screened: set[str]
    allowed: set[str]
    include_team: bool
    start: datetime | None
    end: datetime | None
    lifted: bool


@dataclass
class RefFirm:
    people: list[str]
    parents: dict[str, str | None]
    matter_client: dict[str, str]
    team: dict[str, set[str]]
    walls: list[RefWall] = field(default_factory=list)
    inactive: set[str] = field(default_factory=set)

    def ancestors(self, client: str) -> set[str]:
        out: set[str] = set()
        current: str | None = client
        while current is not None and current not in out:
            out.add(current)
            current = self.parents.get(current)
        return out

    def covers(self, wall: RefWall, matter: str) -> bool:
        """Protecting a client covers every matter of that client and of all its
        descendant clients."""
        if matter in wall.matters:
            return True
        return bool(self.ancestors(self.matter_client[matter]) & wall.clients)

    def insiders(self, wall: RefWall) -> set[str]:
        out = set(wall.allowed)
        if wall.include_team:
            for matter in self.matter_client:
                if self.covers(wall, matter):
                    out |= self.team[matter]
        return out

    def access(self, person: str, matter: str, t: datetime) -> bool:
        if person in self.inactive:
            return False
        for wall in self.walls:
            if wall.lifted or not self.covers(wall, matter):
                continue
            active = (wall.start is None or wall.start <= t) and (wall.end is None or t < wall.end)
            if not active:
                continue
            if wall.kind == "exclusionary" and person in wall.screened:
                return False
            if wall.kind == "inclusionary" and person not in self.insiders(wall):
                return False
        return True


OFFSETS = [None, timedelta(days=-3), timedelta(hours=-2), timedelta(hours=2), timedelta(days=3)]


@st.composite
def firms(draw: st.DrawFn) -> dict[str, Any]:
    n_people = draw(st.integers(2, 5))
    n_clients = draw(st.integers(1, 4))
    n_matters = draw(st.integers(1, 6))
    parents = [
        draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None for i in range(n_clients)
    ]
    matters = [
        {
            "client": draw(st.integers(0, n_clients - 1)),
            "team": draw(st.sets(st.integers(0, n_people - 1), max_size=n_people)),
        }
        for _ in range(n_matters)
    ]
    walls = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["exclusionary", "inclusionary"]))
        prot_m = draw(st.sets(st.integers(0, n_matters - 1), max_size=2))
        prot_c = draw(st.sets(st.integers(0, n_clients - 1), max_size=2))
        if not prot_m and not prot_c:
            prot_m = {0}
        people = draw(
            st.sets(
                st.integers(0, n_people - 1),
                min_size=1 if kind == "exclusionary" else 0,
                max_size=n_people,
            )
        )
        start = draw(st.sampled_from(OFFSETS))
        end = draw(st.sampled_from(OFFSETS))
        if start is not None and end is not None and end <= start:
            end = None
        walls.append(
            {
                "kind": kind,
                "matters": prot_m,
                "clients": prot_c,
                "people": people,
                "include_team": draw(st.booleans()),
                "start": start,
                "end": end,
                "lifted": draw(st.booleans()) and draw(st.booleans()),
            }
        )
    inactive = draw(st.sets(st.integers(0, n_people - 1), max_size=1))
    return {
        "people": n_people,
        "parents": parents,
        "matters": matters,
        "walls": walls,
        "inactive": inactive,
    }


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=firms())
def test_resolution_and_access_match_the_definition(
    spec: dict[str, Any], client: TestClient, auth: Tokens
) -> None:
    firm = Firm(client, auth)
    tag = f"x{next(_counter)}"
    now = datetime.now(UTC)
    people = [f"p{i}.{tag}@firm.nl" for i in range(spec["people"])]
    clients = [f"C{i}-{tag}" for i in range(len(spec["parents"]))]
    matters = [f"M{i}-{tag}" for i in range(len(spec["matters"]))]
    body: dict[str, Any] = {
        "people": [
            {"person_id": p, "name": p, "active": i not in spec["inactive"]}
            for i, p in enumerate(people)
        ],
        "clients": [
            {
                "client_id": c,
                "name": f"Client {c}",
                "parent_id": clients[spec["parents"][i]]
                if spec["parents"][i] is not None
                else None,
            }
            for i, c in enumerate(clients)
        ],
        "matters": [
            {
                "matter_id": m,
                "client_id": clients[spec["matters"][i]["client"]],
                "team": [people[t] for t in sorted(spec["matters"][i]["team"])],
            }
            for i, m in enumerate(matters)
        ],
    }
    ok(client.post("/v1/matrix/import", json=body, headers=firm.h))
    ref = RefFirm(
        people=people,
        parents={
            c: (clients[spec["parents"][i]] if spec["parents"][i] is not None else None)
            for i, c in enumerate(clients)
        },
        matter_client={m: clients[spec["matters"][i]["client"]] for i, m in enumerate(matters)},
        team={m: {people[t] for t in spec["matters"][i]["team"]} for i, m in enumerate(matters)},
        inactive={people[i] for i in spec["inactive"]},
    )
    for w in spec["walls"]:
        start = now + w["start"] if w["start"] is not None else None
        end = now + w["end"] if w["end"] is not None else None
        listed = [people[i] for i in sorted(w["people"])]
        payload: dict[str, Any] = {
            "kind": w["kind"],
            "protects": {
                "matters": [matters[i] for i in sorted(w["matters"])],
                "clients": [clients[i] for i in sorted(w["clients"])],
            },
            "effective_from": start.isoformat() if start else None,
            "effective_until": end.isoformat() if end else None,
        }
        if w["kind"] == "exclusionary":
            payload["screened"] = listed
        else:
            payload["allowed"] = listed
            payload["include_team"] = w["include_team"]
        wall_id = firm.wall(**payload)
        if w["lifted"]:
            firm.lift(wall_id)
        ref.walls.append(
            RefWall(
                w["kind"],
                {matters[i] for i in w["matters"]},
                {clients[i] for i in w["clients"]},
                set(listed) if w["kind"] == "exclusionary" else set(),
                set(listed) if w["kind"] == "inclusionary" else set(),
                w["include_team"] if w["kind"] == "inclusionary" else True,
                start,
                end,
                w["lifted"],
            )
        )

    resources = client.app.state.resources  # type: ignore[attr-defined]
    snap = read_snapshot(resources.database)
    resolver = AccessResolver()
    t = datetime.now(UTC)
    # the resolution-only snapshot (what searches use) must agree with the full one
    partial = read_snapshot(resources.database, full=False)
    for person in [*people, f"stranger.{tag}@firm.nl"]:
        allowed_groups = set(resolver.resolve_with(snap, person, t).wall_groups)
        assert set(resolver.resolve_with(partial, person, t).wall_groups) == allowed_groups
        assert "quarantine" not in allowed_groups
        for matter in matters:
            if person in people:
                expected = ref.access(person, matter, t)
            else:
                # a person the matrix does not know sees only the open group
                expected = not any(not w.lifted and ref.covers(w, matter) for w in ref.walls)
            via_groups = snap.matter_groups[matter] in allowed_groups
            answer = firm.access(person, matter)
            assert via_groups == expected, (person, matter, allowed_groups)
            assert answer["allowed"] == expected, (person, matter, answer)
            if not expected and person in people and person not in ref.inactive:
                denying = [w for w in answer["walls"] if w["denies"]]
                assert denying and all(w["why"] for w in denying)
