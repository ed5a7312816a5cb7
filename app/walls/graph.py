"""The conflict matrix as a graph, and everything derived from it.

A `MatrixSnapshot` is the whole matrix at one policy_version, read in one database snapshot.
Its networkx graph has nodes ("client", id), ("matter", id), ("person", id), ("party", name)
and ("wall", id), and edges labelled with ``rel``:

    client  -parent-of->    client        wall -protects->     client | matter
    client  -owns-matter->  matter        person -screened-by-> wall
    matter  -represents->   client        person -insider-of->  wall   (listed as allowed)
    party   -adverse-to->   matter        person -team-member-> matter
    party   -related-to->   matter

Wall expansion (which matters a wall covers), conflict checks and access explanations are
walks over this graph. The access rule they all implement:
Access(person, matter, t) iff for EVERY wall covering the matter that is active at t, the
person is not screened (exclusionary) and is an insider (inclusionary).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import networkx as nx

from app.walls.names import GLUED, name_matches, normalize_name, query_forms

OPEN_GROUP = "open"
QUARANTINE_GROUP = "quarantine"

Node = tuple[str, str]


@dataclass(frozen=True)
class Person:
    person_id: str
    name: str
    active: bool


@dataclass(frozen=True)
class Client:
    client_id: str
    name: str
    parent_id: str | None


@dataclass(frozen=True)
class Matter:
    matter_id: str
    client_id: str
    title: str
    status: str


@dataclass(frozen=True)
class Party:
    name: str
    name_norm: str
    role: str


@dataclass(frozen=True)
class Wall:
    wall_id: str
    kind: str
    title: str
    include_team: bool
    effective_from: datetime | None
    effective_until: datetime | None
    lifted: bool
    protected_matters: frozenset[str]
    protected_clients: frozenset[str]
    screened: frozenset[str]
    allowed: frozenset[str]

    def active_at(self, at: datetime) -> bool:
        if self.lifted:
            return False
        if self.effective_from is not None and at < self.effective_from:
            return False
        return not (self.effective_until is not None and at >= self.effective_until)

    def takes_force(self, now: datetime) -> datetime:
        """When the wall acts, seen from ``now``: now, or its start when that is later."""
        return max(now, self.effective_from) if self.effective_from is not None else now


class NameIndex:
    """Normalised names by token and by token prefix of five characters or more: the names
    that ``name_matches`` can accept for a query are those holding each query token (or, for
    a token of five or more, a token it begins), so only they are tested."""

    def __init__(self, norms: Iterable[str]) -> None:
        self._exact: dict[str, set[str]] = defaultdict(set)
        self._prefix: dict[str, set[str]] = defaultdict(set)
        for norm in norms:
            for token in norm.split():
                self._exact[token].add(norm)
                if token.startswith(GLUED):
                    continue  # matched whole only
                for end in range(5, len(token) + 1):
                    self._prefix[token[:end]].add(norm)

    def _holding(self, token: str) -> set[str]:
        """The names that may hold ``token`` as ``name_matches`` reads it."""
        if token.startswith(GLUED):
            return self._exact.get(token, set()) | self._exact.get(token[1:], set())
        index = self._prefix if len(token) >= 5 else self._exact
        return index.get(token, set()) | self._exact.get(GLUED + token, set())

    def matching(self, query: str) -> set[str]:
        candidates: set[str] = set()
        for tokens in query_forms(query):
            found: set[str] | None = None
            for token in tokens:
                have = self._holding(token)
                found = set(have) if found is None else found & have
                if not found:
                    break
            candidates |= found or set()
        return {norm for norm in candidates if name_matches(query, norm)}


@dataclass
class MatrixSnapshot:
    version: int
    people: dict[str, Person] = field(default_factory=dict)
    aliases: dict[str, frozenset[str]] = field(default_factory=dict)
    group_members: dict[str, frozenset[str]] = field(default_factory=dict)
    clients: dict[str, Client] = field(default_factory=dict)
    matters: dict[str, Matter] = field(default_factory=dict)
    parties: dict[str, tuple[Party, ...]] = field(default_factory=dict)
    team: dict[str, frozenset[str]] = field(default_factory=dict)
    walls: dict[str, Wall] = field(default_factory=dict)
    groups: dict[str, frozenset[str]] = field(default_factory=dict)
    matter_groups: dict[str, str] = field(default_factory=dict)
    # a partial snapshot (resolution only) has no matters, parties or teams; its insiders
    # were expanded in SQL
    partial: bool = False

    def preset_insiders(self, insiders: dict[str, frozenset[str]]) -> None:
        self.__dict__["insiders"] = insiders

    def _require_full(self) -> None:
        if self.partial:
            raise RuntimeError("this snapshot was read for resolution only")

    # --- structure ------------------------------------------------------------------------

    @cached_property
    def children(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = defaultdict(list)
        for client in self.clients.values():
            if client.parent_id is not None:
                out[client.parent_id].append(client.client_id)
        return {k: tuple(sorted(v)) for k, v in out.items()}

    @cached_property
    def matters_by_client(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = defaultdict(list)
        for matter in self.matters.values():
            out[matter.client_id].append(matter.matter_id)
        return {k: tuple(sorted(v)) for k, v in out.items()}

    def client_subtree(self, client_id: str) -> list[str]:
        """The client and all its descendants (subsidiaries), cycle-safe."""
        seen: list[str] = []
        stack = [client_id]
        visited: set[str] = set()
        while stack:
            current = stack.pop()
            if current in visited:
                continue
            visited.add(current)
            seen.append(current)
            stack.extend(self.children.get(current, ()))
        return seen

    def client_ancestors(self, client_id: str) -> list[str]:
        """The client, its parent, grandparent, ... (cycle-safe)."""
        out: list[str] = []
        current: str | None = client_id
        while current is not None and current not in out:
            out.append(current)
            client = self.clients.get(current)
            current = client.parent_id if client is not None else None
        return out

    def family_root(self, client_id: str) -> str:
        return self.client_ancestors(client_id)[-1]

    # --- walls ----------------------------------------------------------------------------

    @cached_property
    def covered_matters(self) -> dict[str, frozenset[str]]:
        """wall_id -> every matter it protects (directly, or through a protected client or
        any of its descendants, including matters opened after the wall)."""
        self._require_full()
        out: dict[str, frozenset[str]] = {}
        for wall in self.walls.values():
            covered = set(wall.protected_matters)
            for client_id in wall.protected_clients:
                for sub in self.client_subtree(client_id):
                    covered.update(self.matters_by_client.get(sub, ()))
            out[wall.wall_id] = frozenset(covered)
        return out

    @cached_property
    def walls_by_matter(self) -> dict[str, frozenset[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for wall_id, covered in self.covered_matters.items():
            if self.walls[wall_id].lifted:
                continue
            for matter_id in covered:
                out[matter_id].add(wall_id)
        return {k: frozenset(v) for k, v in out.items()}

    @cached_property
    def insiders(self) -> dict[str, frozenset[str]]:
        """Inclusionary wall -> the listed allowed people plus (unless include_team is false)
        the current team of every protected matter."""
        out: dict[str, frozenset[str]] = {}
        for wall in self.walls.values():
            if wall.kind != "inclusionary":
                continue
            members = set(wall.allowed)
            if wall.include_team:
                for matter_id in self.covered_matters[wall.wall_id]:
                    members.update(self.team.get(matter_id, ()))
            out[wall.wall_id] = frozenset(members)
        return out

    @cached_property
    def groups_by_wall(self) -> dict[str, frozenset[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for group_id, wall_ids in self.groups.items():
            for wall_id in wall_ids:
                out[wall_id].add(group_id)
        return {k: frozenset(v) for k, v in out.items()}

    @cached_property
    def time_boundaries(self) -> tuple[datetime, ...]:
        points: set[datetime] = set()
        for wall in self.walls.values():
            if wall.lifted:
                continue
            for point in (wall.effective_from, wall.effective_until):
                if point is not None:
                    points.add(point)
        return tuple(sorted(points))

    def next_boundary(self, at: datetime) -> datetime | None:
        for point in self.time_boundaries:
            if point > at:
                return point
        return None

    def wall_denies(self, wall: Wall, person_id: str) -> bool:
        if person_id not in self.people:  # a stranger to the matrix sees no walled matter
            return True
        if wall.kind == "exclusionary":
            return person_id in wall.screened
        return person_id not in self.insiders.get(wall.wall_id, frozenset())

    def denying_walls(self, person_id: str, at: datetime) -> set[str]:
        return {
            w.wall_id
            for w in self.walls.values()
            if w.active_at(at) and self.wall_denies(w, person_id)
        }

    def allowed_groups(self, person_id: str, at: datetime) -> frozenset[str]:
        """The wall groups the person may see at ``at``. Unknown people see only the open
        group; inactive people see nothing; quarantine is never allowed."""
        person = self.people.get(person_id)
        if person is None:
            return frozenset({OPEN_GROUP})
        if not person.active:
            return frozenset()
        denied_groups: set[str] = set()
        for wall_id in self.denying_walls(person_id, at):
            denied_groups.update(self.groups_by_wall.get(wall_id, ()))
        allowed = {g for g in self.groups if g not in denied_groups and g != QUARANTINE_GROUP}
        allowed.add(OPEN_GROUP)
        return frozenset(allowed)

    def may_access(self, person_id: str, matter_id: str, at: datetime) -> bool:
        person = self.people.get(person_id)
        if person is None:
            return not self.walls_by_matter.get(matter_id)
        if not person.active:
            return False
        for wall_id in self.walls_by_matter.get(matter_id, ()):
            wall = self.walls[wall_id]
            if wall.active_at(at) and self.wall_denies(wall, person_id):
                return False
        return True

    # --- source principals -----------------------------------------------------------------

    def principals(self, person_id: str) -> frozenset[str]:
        """The person's source identities (aliases) plus every source group that contains
        one of them, transitively (groups may nest)."""
        person = self.people.get(person_id)
        if person is None or not person.active:
            return frozenset()
        found = set(self.aliases.get(person_id, ()))
        changed = True
        while changed:
            changed = False
            for group, members in self.group_members.items():
                if group not in found and members & found:
                    found.add(group)
                    changed = True
        return frozenset(found)

    @cached_property
    def incomplete_groups(self) -> frozenset[str]:
        """Groups that hold, at any depth, a group whose members ewall does not hold: their
        members are not all known, so a deny of them must admit nobody (sql/walls.sql)."""
        holders: dict[str, set[str]] = defaultdict(set)  # group member -> groups holding it
        for group, members in self.group_members.items():
            for member in members:
                if member.split(":", 2)[1:2] == ["group"]:
                    holders[member].add(group)
        # from each unknown group outwards, once: linear in the nested memberships
        todo = [m for m in holders if m not in self.group_members]
        out: set[str] = set()
        while todo:
            for group in holders.get(todo.pop(), ()):
                if group not in out:
                    out.add(group)
                    todo.append(group)
        return frozenset(out)

    # --- graph ------------------------------------------------------------------------------

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        g = nx.MultiDiGraph()
        for client in self.clients.values():
            g.add_node(("client", client.client_id), label=client.name)
            if client.parent_id is not None:
                g.add_edge(
                    ("client", client.parent_id), ("client", client.client_id), rel="parent-of"
                )
        for matter in self.matters.values():
            node = ("matter", matter.matter_id)
            g.add_node(node, label=matter.title)
            g.add_edge(("client", matter.client_id), node, rel="owns-matter")
            g.add_edge(node, ("client", matter.client_id), rel="represents")
            for party in self.parties.get(matter.matter_id, ()):
                rel = "adverse-to" if party.role == "adverse" else "related-to"
                g.add_edge(("party", party.name_norm), node, rel=rel, name=party.name)
            for person_id in self.team.get(matter.matter_id, ()):
                g.add_edge(("person", person_id), node, rel="team-member")
        for wall in self.walls.values():
            if wall.lifted:
                continue
            wnode = ("wall", wall.wall_id)
            g.add_node(wnode, label=wall.title, kind=wall.kind)
            for matter_id in wall.protected_matters:
                g.add_edge(wnode, ("matter", matter_id), rel="protects")
            for client_id in wall.protected_clients:
                g.add_edge(wnode, ("client", client_id), rel="protects")
            for person_id in wall.screened:
                g.add_edge(("person", person_id), wnode, rel="screened-by")
            for person_id in wall.allowed:
                g.add_edge(("person", person_id), wnode, rel="insider-of")
        return g

    def coverage_path(self, wall_id: str, matter_id: str) -> list[Node]:
        """The path wall -> (client -> subsidiary ...) -> matter that makes the wall cover
        the matter, following only protects / parent-of / owns-matter edges."""
        allowed_rels = {"protects", "parent-of", "owns-matter"}
        view = nx.subgraph_view(
            self.graph,
            filter_edge=lambda u, v, k: self.graph.edges[u, v, k]["rel"] in allowed_rels,
        )
        try:
            path: list[Node] = nx.shortest_path(view, ("wall", wall_id), ("matter", matter_id))
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return []
        return path

    def describe(self, node: Node) -> str:
        kind, ident = node
        if kind == "client":
            client = self.clients.get(ident)
            return f"client {ident} ({client.name})" if client else f"client {ident}"
        if kind == "matter":
            matter = self.matters.get(ident)
            return f"matter {ident} ({matter.title})" if matter else f"matter {ident}"
        if kind == "wall":
            wall = self.walls.get(ident)
            return f"wall {ident} ({wall.title})" if wall else f"wall {ident}"
        return f"{kind} {ident}"

    def explain(self, person_id: str, matter_id: str, at: datetime) -> dict[str, Any]:
        """Access of a person to a matter with the path through the graph for each wall."""
        person = self.people.get(person_id)
        allowed = self.may_access(person_id, matter_id, at)
        walls_out: list[dict[str, Any]] = []
        for wall_id in sorted(self.walls_by_matter.get(matter_id, ())):
            wall = self.walls[wall_id]
            path = self.coverage_path(wall_id, matter_id)
            via = (
                " -> ".join(self.describe(n) for n in path)
                if path
                else self.describe(("wall", wall_id))
            )
            active = wall.active_at(at)
            denies = (
                person is None
                or not person.active
                or (active and self.wall_denies(wall, person_id))
            )
            if person is None:
                reason = f"{person_id} is not in the conflict matrix, so sees only unwalled matters"
            elif not person.active:
                reason = f"{person_id} is inactive"
            elif wall.kind == "exclusionary":
                reason = (
                    f"{person_id} is screened by this wall"
                    if person_id in wall.screened
                    else f"{person_id} is not screened by this wall"
                )
            else:
                insiders = self.insiders.get(wall_id, frozenset())
                if person_id in wall.allowed:
                    reason = f"{person_id} is listed as allowed"
                elif person_id in insiders:
                    teams = sorted(
                        m
                        for m in self.covered_matters[wall_id]
                        if person_id in self.team.get(m, ())
                    )
                    reason = f"{person_id} is on the team of protected matter {', '.join(teams)}"
                else:
                    reason = (
                        f"{person_id} is not an insider (not listed as allowed"
                        + (
                            ""
                            if not wall.include_team
                            else ", not on the team of any protected matter"
                        )
                        + ")"
                    )
            if not active:
                reason += "; the wall is not active at this instant"
            walls_out.append(
                {
                    "wall_id": wall_id,
                    "kind": wall.kind,
                    "title": wall.title,
                    "active": active,
                    "denies": denies,
                    "path": [f"{k}:{i}" for k, i in path],
                    "why": f"{via}: {reason}",
                }
            )
        if person is not None and not person.active and not walls_out:
            walls_out.append(
                {
                    "wall_id": None,
                    "kind": None,
                    "active": True,
                    "denies": True,
                    "path": [],
                    "why": f"{person_id} is inactive and may see nothing",
                }
            )
        return {
            "person_id": person_id,
            "matter_id": matter_id,
            "allowed": allowed,
            "at": at.isoformat(),
            "policy_version": self.version,
            "walls": walls_out,
        }

    # --- conflicts --------------------------------------------------------------------------

    def conflicts(self, name: str) -> list[dict[str, Any]]:
        """Matters where a client or party matching ``name``, or anyone in the matching
        client's corporate family, appears, with the role it plays there.

        Names are found through token indexes built once per snapshot, so a check reads the
        names that share its tokens and the families they pull in, never every party of the
        firm (the session gate checks every matter a session read)."""
        hits: dict[tuple[str, str, str], dict[str, Any]] = {}
        clients_by_norm = self._clients_by_norm
        matched_clients = sorted(
            (c for norm in self._client_names.matching(name) for c in clients_by_norm[norm]),
            key=self._client_position.__getitem__,
        )
        direct_norms = self._party_names.matching(name)
        direct_parties = sorted(e for norm in direct_norms for e in self._parties_by_norm[norm])
        # a party whose name is a known client pulls in that client's family too
        for *_, party in direct_parties:
            matched_clients.extend(clients_by_norm.get(party.name_norm, ()))
        families: dict[str, str] = {}
        for client_id in matched_clients:
            root = self.family_root(client_id)
            for member in self.client_subtree(root):
                families.setdefault(member, client_id)
        for member, via in families.items():
            for matter_id in self.matters_by_client.get(member, ()):
                relation = (
                    "matched client"
                    if member == via
                    else (f"corporate family of {via} ({self.clients[via].name})")
                )
                key = (matter_id, member, "client")
                hits[key] = {
                    "matter_id": matter_id,
                    "matter_title": self.matters[matter_id].title,
                    "client_id": self.matters[matter_id].client_id,
                    "role": "client",
                    "name": self.clients[member].name,
                    "match": relation,
                }
        # a party named as a family member is named (matched as the question's name is: "Zeeburg
        # Holding N.V. c.s." is Zeeburg Holding), not only one spelled exactly alike
        family_norms = {
            norm for c in families for norm in self._party_names.matching(self.clients[c].name)
        }
        # in matrix order, so that of two parties with one key the later one is reported
        for _, _, matter_id, party in sorted(
            {
                *direct_parties,
                *(e for norm in family_norms for e in self._parties_by_norm.get(norm, ())),
            }
        ):
            key = (matter_id, party.name_norm, party.role)
            hits[key] = {
                "matter_id": matter_id,
                "matter_title": self.matters[matter_id].title,
                "client_id": self.matters[matter_id].client_id,
                "role": party.role,
                "name": party.name,
                "match": "matched party"
                if party.name_norm in direct_norms
                else "party in a matched corporate family",
            }
        return sorted(hits.values(), key=lambda h: (h["matter_id"], h["role"], h["name"]))

    # --- name indexes (built once per snapshot) --------------------------------------------

    @cached_property
    def _client_position(self) -> dict[str, int]:
        return {client_id: i for i, client_id in enumerate(self.clients)}

    @cached_property
    def _clients_by_norm(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for client in self.clients.values():
            out[normalize_name(client.name)].append(client.client_id)
        return dict(out)

    @cached_property
    def _client_names(self) -> NameIndex:
        return NameIndex(self._clients_by_norm)

    @cached_property
    def _parties_by_norm(self) -> dict[str, list[tuple[int, int, str, Party]]]:
        """name_norm -> (matter position, party position, matter id, party), matrix order."""
        out: dict[str, list[tuple[int, int, str, Party]]] = defaultdict(list)
        for m, (matter_id, parties) in enumerate(self.parties.items()):
            for i, party in enumerate(parties):
                out[party.name_norm].append((m, i, matter_id, party))
        return dict(out)

    @cached_property
    def _party_names(self) -> NameIndex:
        return NameIndex(self._parties_by_norm)

    @cached_property
    def _conflicts_by_name(self) -> dict[str, list[dict[str, Any]]]:
        return {}

    def _conflicts_cached(self, name: str) -> list[dict[str, Any]]:
        cache = self._conflicts_by_name
        if name not in cache:
            cache[name] = self.conflicts(name)
        return cache[name]

    def adverse_matters(self, matter_id: str) -> list[dict[str, str]]:
        """Matters directly adverse to ``matter_id``: its client (or anyone in the client's
        corporate family) is an adverse party there, or one of its adverse parties (or that
        party's family) is the client there. Names are matched as `conflicts` matches them
        (normalised, legal forms dropped, corporate family expanded)."""
        self._require_full()
        matter = self.matters.get(matter_id)
        if matter is None:
            return []
        found: dict[tuple[str, str, str], dict[str, str]] = {}
        client = self.clients.get(matter.client_id)
        if client is not None:
            for hit in self._conflicts_cached(client.name):
                if hit["role"] == "adverse" and hit["matter_id"] != matter_id:
                    key = (matter_id, hit["matter_id"], hit["name"])
                    found[key] = {
                        "client_in": matter_id,
                        "adverse_in": hit["matter_id"],
                        "party": hit["name"],
                    }
        for party in self.parties.get(matter_id, ()):
            if party.role != "adverse":
                continue
            for hit in self._conflicts_cached(party.name):
                if hit["role"] == "client" and hit["matter_id"] != matter_id:
                    key = (hit["matter_id"], matter_id, party.name)
                    found[key] = {
                        "client_in": hit["matter_id"],
                        "adverse_in": matter_id,
                        "party": party.name,
                    }
        return [found[k] for k in sorted(found)]
