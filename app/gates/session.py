"""The session gate: may an agent that remembers this session still emit what it knows?

A session is tainted (docs/sessions.md) when anything it retrieved is no longer
visible to its person (a wall issued since, a team change, a deactivation, a document moved
into a matter they may not see, a source ACL that no longer admits them, a document
quarantined, deleted or withdrawn since), or when it read
two directly adverse matters: a party, after name normalisation and corporate-family
expansion, is the client in one and an adverse party in the other. The session's matters come
from the retrieval audit and its documents' matters and ACLs as they are now; every access
and adversity decision is the conflict graph's own
(`MatrixSnapshot.may_access`, `denying_walls`, `adverse_matters`). Matter ids in the answer are
only those the caller may see now; the audit row keeps the whole finding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from app.errors import NotFound
from app.gates import repository
from app.walls.graph import MatrixSnapshot
from app.walls.visibility import MatterView


@dataclass
class SessionFinding:
    session_id: str
    people: list[str]
    retrievals_matters: dict[str, list[str]]
    reasons: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "tainted" if self.reasons else "ok"


def session_matters(
    conn: Connection, session_id: str, person_id: str | None
) -> dict[str, list[str]]:
    """person -> the matters the session's retrievals returned chunks of (public sources have
    no matter and are left out). A person with a retrieval but no matter maps to []."""
    out: dict[str, list[str]] = defaultdict(list)
    for row in repository.session_matters(conn, session_id, person_id):
        matters = out[row.person_id]
        if row.matter_id is not None:
            matters.append(row.matter_id)
    return dict(out)


def assess(
    conn: Connection,
    snap: MatrixSnapshot,
    session_id: str,
    *,
    person_id: str | None,
    at: datetime,
    readable_acls: Callable[[str], Collection[str]],
) -> SessionFinding:
    """The full finding (for the audit). ``person_id`` None reads every person's part of the
    session (compliance); otherwise only that person's. ``readable_acls`` gives the source
    ACL ids a person's principals may read now (the search's own rule)."""
    by_person = session_matters(conn, session_id, person_id)
    if not by_person:
        raise NotFound("Session", session_id)
    documents = repository.session_documents(conn, session_id, person_id)
    readable = {person: frozenset(readable_acls(person)) for person in by_person}
    return findings(snap, session_id, by_person, at, documents=documents, readable=readable)


def findings(
    snap: MatrixSnapshot,
    session_id: str,
    by_person: dict[str, list[str]],
    at: datetime,
    *,
    documents: Sequence[repository.SessionDocument] = (),
    readable: Mapping[str, frozenset[str]] | None = None,
) -> SessionFinding:
    """What the conflict graph says of these reads (person -> matters) at ``at``.

    ``documents`` are the documents read, as the firm holds them now: one moved into a
    matter its reader may no longer access is a ``wall`` reason for that matter (the session
    holds its text), and with ``readable`` (person -> the source ACL ids they may read now)
    one whose ACL no longer admits its reader is a reason too (cause ``source_acl``), and so
    is one no one may be returned now (``_hidden_reasons``: quarantined, deleted, withdrawn or
    held since).
    Adversity stays with the matters the retrievals recorded: a matter a document moved to
    was never read as that matter."""
    finding = SessionFinding(session_id, sorted(by_person), by_person)
    docs_of: dict[str, list[repository.SessionDocument]] = defaultdict(list)
    for doc in documents:
        docs_of[doc.person_id].append(doc)
    for owner, matters in sorted(by_person.items()):
        read = set(matters)
        moved_to = {d.matter_id for d in docs_of[owner] if d.matter_id is not None}
        denying = snap.denying_walls(owner, at)
        for matter_id in sorted(read | moved_to):
            if snap.may_access(owner, matter_id, at):
                continue
            walls = sorted(denying & snap.walls_by_matter.get(matter_id, frozenset()))
            finding.reasons.append(
                {"kind": "wall", "person_id": owner, "matters": [matter_id], "walls": walls}
            )
        kept = [d for d in docs_of[owner] if d.hidden is None]
        if readable is not None:
            finding.reasons.extend(_acl_reasons(owner, kept, readable[owner]))
        finding.reasons.extend(_hidden_reasons(owner, docs_of[owner]))
        for matter_id in sorted(read):
            # a pair is found from either side: from the client's name (client_in is this
            # matter) or from an adverse party's (adverse_in is): both must have been read
            for hit in snap.adverse_matters(matter_id):
                if hit["client_in"] in read and hit["adverse_in"] in read:
                    finding.reasons.append(
                        {
                            "kind": "adverse",
                            "person_id": owner,
                            "matters": [hit["client_in"], hit["adverse_in"]],
                            "walls": [],
                            "party": hit["party"],
                        }
                    )
    finding.reasons = _unique(finding.reasons)
    return finding


def _hidden_reasons(
    owner: str, docs: Sequence[repository.SessionDocument]
) -> list[dict[str, Any]]:
    """The documents read that no one may be returned now, whatever their matter, the session
    holding their text all the same: ``quarantined`` (refiled under a matter the matrix does
    not know yet, which a wall may cover once entered: that matter is never named),
    ``deleted`` (the firm no longer holds it: deleted at the source, or moved out of the
    connector's reach), ``withdrawn`` or ``held`` (a decision hidden from search): one reason
    per matter the retrievals recorded them under (none for public sources), so that a
    lawyer is told the documents only beside a matter they may see now (``answer_for``).
    Quarantined documents were named beside no matter, so a lawyer screened since from the
    matter they read one in was told its id (which often names the matter: a probe of
    2026-12-07)."""
    by_cause: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for doc in docs:
        cause = doc.hidden if doc.hidden is not None else "quarantined" if doc.quarantined else None
        if cause is not None:
            for matter_id in doc.read_in or (None,):
                by_cause[cause, matter_id].add(doc.document)
    return [
        {"kind": "wall", "person_id": owner, "matters": [] if matter_id is None else [matter_id],
         "walls": [], "cause": cause, "documents": sorted(documents)}
        for (cause, matter_id), documents in sorted(
            by_cause.items(), key=lambda item: (item[0][0], item[0][1] or "")
        )
    ]


def _acl_reasons(
    owner: str, docs: Sequence[repository.SessionDocument], readable: frozenset[str]
) -> list[dict[str, Any]]:
    """One reason per matter the retrievals recorded them under (None: public sources) whose
    documents read in the session include one whose source ACL no longer admits ``owner``:
    kind ``wall`` (the ACL is part of what a wall means: docs/architecture.md), no wall
    named, ``cause`` ``source_acl``. The matter read in, not the one the document is filed
    under now: a document refiled since under another matter the reader may see, with an
    ACL that leaves them out, was named beside its new matter, so a lawyer learnt where a
    document hidden from them now lives (a probe of 2026-12-07; the deleted, withdrawn and
    held reasons already named the matters read in)."""
    denied: dict[str | None, set[str]] = defaultdict(set)
    for doc in docs:
        if doc.source_acl_id not in readable:
            for matter_id in doc.read_in or (None,):
                denied[matter_id].add(doc.document)
    return [
        {
            "kind": "wall",
            "person_id": owner,
            "matters": [] if matter_id is None else [matter_id],
            "walls": [],
            "cause": "source_acl",
            "documents": sorted(denied[matter_id]),
        }
        for matter_id in sorted(denied, key=lambda m: m or "")
    ]


def _unique(reasons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for reason in reasons:
        key = repr(sorted(reason.items()))
        if key not in seen:
            seen.add(key)
            out.append(reason)
    return out


def answer_for(
    finding: SessionFinding, snap: MatrixSnapshot, view: MatterView, at: datetime
) -> dict[str, Any]:
    """The finding as the caller may read it (``view``, the audit API's rule): matters they
    may not see now are left out of every reason (and so is the party that would point at
    them), and an adverse pair with a hidden matter is left out whole; the status never
    depends on who asks."""
    reasons: list[dict[str, Any]] = []
    withheld: list[dict[str, Any]] = []
    for reason in finding.reasons:
        visible = [m for m in reason["matters"] if view.may_see(m)]
        if reason["kind"] == "adverse" and visible != reason["matters"]:
            # even with neither half named, its arrival after a party was added to a hidden
            # matter would tell what that matter became adverse to: left out (a hidden matter
            # read is a reason of its own; below, a status never stands without a reason)
            withheld.append({"kind": "adverse", "person_id": reason["person_id"],
                             "matters": [], "walls": []})
            continue
        shown = {
            "kind": reason["kind"],
            "person_id": reason["person_id"],
            "matters": visible,
            "walls": reason["walls"],
        }
        if "party" in reason and len(visible) == len(reason["matters"]):
            shown["party"] = reason["party"]
        if "cause" in reason:
            shown["cause"] = reason["cause"]
            # the caller's own reads, named only beside a matter they may see now: the
            # documents of a hidden one would name it (the caller read them there)
            shown["documents"] = reason["documents"] if visible == reason["matters"] else []
        reasons.append(shown)
    return {
        "session_id": finding.session_id,
        "status": finding.status,
        "reasons": _unique(reasons or withheld),
        "people": finding.people,
        "checked_at": at.isoformat(),
        "policy_version": snap.version,
    }
