"""The steps of storing one prepared document, in the order ``IngestPipeline`` runs them
inside one write transaction (a reader sees the old version or the new one, never half):

1. ``place_document``: client, matter and wall group, or quarantine;
2. ``store_source_acl``: the document's source permissions as a shared ACL row;
3. ``document_record`` and ``save_document``: the document row;
4. ``replace_chunks``: insert new chunks, delete vanished ones, let unchanged ones follow the
   document's placement without re-embedding (unless their document's context changed);
5. ``metadata_changes`` and ``outcome_status``: what the run's report says about it;
6. ``settle_wall_group``, last: the matter's group read again under a share lock, and the
   chunks moved to it if a wall change moved the matter meanwhile.

The group row is locked only for step 6, never while the write encodes or inserts: a wall
change on the matter (which holds the policy row, so every other policy change waits with
it) waits for the write's last statements, not for the whole of a large document. Chunks
still never keep a group that is not their matter's: a change that committed before step 6
is read there and followed (its re-tag may have run without seeing these chunks, then
uncommitted); a change after it waits for the commit, and its re-tag then finds them.

Metadata is tri-state (absent None, present-but-empty "", value). A document whose client
or matter is absent, empty or unknown is quarantined (stored in the quarantine group,
visible to no one), a stored one pushed again so too.
"""

from __future__ import annotations

import hashlib
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection

from app.audit.chain import canonical_json
from app.embeddings import passage_context
from app.ingest import repository
from app.ingest.repository import ChunkPlacement, DocumentRecord, StoredDocument
from app.ingest.types import ExtractedDocument, PreparedChunk
from app.types import CONTROL, NOBODY_ACL, principal_key
from app.walls.access import mark_writer
from app.walls.graph import OPEN_GROUP, QUARANTINE_GROUP
from connectors.base import Placed, SourceAcl, SourceDocument

PUBLIC_ACL = "public"
MAX_FIELD = 2000

# A report entry: (kind, reason, details)


@dataclass(frozen=True)
class Placement:
    """Where a document belongs. A quarantined document carries no client or matter."""

    client_id: str | None
    matter_id: str | None
    wall_group_id: str
    quarantine: str | None

    @property
    def status(self) -> str:
        return "quarantined" if self.quarantine else "active"


@dataclass(frozen=True)
class ChunkDelta:
    added: int
    removed: int
    placement_changed: int  # stored chunks whose placement followed the document's
    re_encoded: int = 0  # stored chunks encoded again: their document's context changed


def document_title(
    doc: SourceDocument, extracted: ExtractedDocument, stored_title: str | None
) -> str:
    """The title stored for a document: the source's, else the one stored before, else the
    file's own, else its id (cut to the column's size)."""
    title = clean_field(doc.title) or stored_title or (extracted.title or doc.external_id)
    return title[:MAX_FIELD]


def clean_field(value: str | None) -> str | None:
    """Tri-state: None stays None (absent); whitespace-only becomes "" (present, empty). A
    control character (a NUL from a source's profile: PostgreSQL cannot store it) becomes
    U+FFFD, never nothing: "M-1\x00" must not turn into another matter's id "M-1"."""
    if value is None:
        return None
    return " ".join(CONTROL.sub("\ufffd", value).split())[:MAX_FIELD]


def acl_id_for(acl: SourceAcl) -> str:
    """Documents with the same source rules share one ACL row, named by the rules' hash."""
    rules = {
        "default": acl.default,
        "allow": sorted({principal_key(p) for p in acl.allow}),
        "deny": sorted({principal_key(p) for p in acl.deny}),
    }
    if acl.default == "public" and not rules["allow"] and not rules["deny"]:
        return PUBLIC_ACL
    return "acl_" + hashlib.sha256(canonical_json(rules).encode()).hexdigest()[:24]


def access_until_written(conn: Connection, doc: SourceDocument) -> str | None:
    """Before a push is queued (a large document, written in the background minutes later),
    or when a version's text cannot be read: a stored version whose access the new version
    changes must not be served under the old rules (a fuzz read a version whose new rules
    denied it for 72 s; a connector check found an unreadable version's removed reader, and
    its move behind a wall, ignored). When the new version keeps the client and matter and
    its rules only narrow the stored ones (a deny added, an allow taken away), they stand at
    once, and also if the job fails; otherwise (the version moves the document, gives no
    client or matter, or changes the rules in any other way, which must wait for the text
    they were given with) the stored version is visible to nobody until a version is
    written. The ACL id set, or None when nothing changed."""
    mark_writer(conn)  # row-level security lets the writer's statements reach every chunk
    stored = repository.lock_document(conn, doc.source, doc.external_id)
    if stored is None or stored.source_acl_id == NOBODY_ACL:
        return None
    placed = (
        bool(doc.client_id)
        and bool(doc.matter_id)
        and (doc.client_id, doc.matter_id) == (stored.client_id, stored.matter_id)
    )
    acl_id = NOBODY_ACL
    if placed:
        new_id = store_source_acl(conn, doc.acl)
        if new_id == stored.source_acl_id:
            return None
        acl_id = narrowed_or_nobody(conn, stored.source_acl_id, new_id, doc.acl)
    if not repository.set_document_acl(conn, doc.source, doc.external_id, acl_id):
        return None
    return acl_id


def moved(stored: StoredDocument, client_id: str | None, matter_id: str) -> bool:
    """Whether a listing that files a stored document under ``matter_id`` (and
    ``client_id``, unless None) moved it: another matter or client, or none ("" when the
    profile names none). A quarantined document is filed nowhere: nothing to leave."""
    if stored.matter_id is None:
        return False
    if (clean_field(matter_id) or None) != stored.matter_id:
        return True
    return client_id is not None and (clean_field(client_id) or None) != stored.client_id


def narrow_in_place(conn: Connection, source: str, p: Placed) -> str | None:
    """``p``'s rules on the stored document, without its content, when it is held active at
    the same version, client and matter and the rules only narrow the stored ones (a deny
    added, a grant taken away): what a full read would store as its rules. The ACL id set,
    or None (the document is read in full: other rules, a move, a new version, hidden)."""
    mark_writer(conn)  # row-level security lets the writer's statements reach every chunk
    stored = repository.lock_document(conn, source, p.external_id)
    if stored is None or stored.status != "active" or stored.source_acl_id == NOBODY_ACL:
        return None
    if _listed_place(p) != (stored.version, stored.client_id, stored.matter_id):
        return None
    acl_id = store_source_acl(conn, p.acl)
    if acl_id == stored.source_acl_id or narrowed_or_nobody(
        conn, stored.source_acl_id, acl_id, p.acl
    ) != acl_id:
        return None
    repository.set_document_acl(conn, source, p.external_id, acl_id)
    return acl_id


def narrowed_or_nobody(
    conn: Connection, stored_acl_id: str, new_acl_id: str, new: SourceAcl | None
) -> str:
    """The rules a stored version may carry before the text they came with is written: the
    new ones when they only narrow the stored ones, else nobody."""
    old = repository.source_acl_rules(conn, stored_acl_id)
    return new_acl_id if old is not None and _narrows(new, old) else NOBODY_ACL


def _narrows(new: SourceAcl | None, old: repository.StoredRules) -> bool:
    """Everyone ``new`` admits, ``old`` admits (by the principals written: a deny of more of
    them, an allow of fewer, a default no more open)."""
    if not old.resolvable or old.default_access not in ("public", "view", "private"):
        return False  # the stored rules admit nobody: nothing narrows them but nobody
    default, allow, deny = ("public", set(), set()) if new is None else (
        new.default, {principal_key(p) for p in new.allow}, {principal_key(p) for p in new.deny}
    )  # fmt: skip
    old_open = old.default_access in ("public", "view")
    if not deny >= old.deny:
        return False
    if default in ("public", "view"):
        return old_open
    return old_open or allow <= old.allow


# --- 1. placement --------------------------------------------------------------------------


def place_document(conn: Connection, doc: SourceDocument, public: bool) -> Placement:
    """``public`` documents (case law, statutes) go to the open group without a client or
    matter; every other document to its matter's wall group, or to quarantine."""
    if public:
        return Placement(None, None, OPEN_GROUP, None)
    client_id, matter_id, reasons = _resolve_client_and_matter(doc)
    if not reasons and matter_id is not None and client_id is not None:
        reasons += _conflict_matrix_problems(conn, client_id, matter_id)
    quarantine = "; ".join(reasons) or None
    if quarantine is None and matter_id is not None:
        # read without a lock; settle_wall_group reads it again under one at the end
        wall_group = repository.matter_wall_group(conn, matter_id)
        if wall_group is not None:
            return Placement(client_id, matter_id, wall_group, None)
        quarantine = f"matter {matter_id!r} has no wall group"  # it vanished between checks
    # Quarantined chunks carry no client or matter: nothing (not a later wall change, not a
    # re-tag) can move them into a visible group by accident.
    return Placement(None, None, QUARANTINE_GROUP, quarantine)


def _resolve_client_and_matter(doc: SourceDocument) -> tuple[str | None, str | None, list[str]]:
    """(client_id, matter_id, quarantine reasons) from the incoming values. A
    document that arrives without its client or matter is quarantined, a stored one too
    (architecture.md, invariant 6): it may have been taken out of its matter at the source,
    and the old placement must not outlive that (until 2026-12-05 the stored value was kept,
    and two fuzzes found a document pushed again without its matter still visible there)."""
    incoming = {
        # in NFC, as the matrix reads its ids (app/types.py): "M-É" decomposed is that matter
        name: None if value is None else unicodedata.normalize("NFC", value)
        for name, value in (
            ("client_id", clean_field(doc.client_id)),
            ("matter_id", clean_field(doc.matter_id)),
        )
    }
    reasons = [
        f"{name} absent" if value is None else f"{name} present but empty"
        for name, value in incoming.items()
        if not value
    ]
    return incoming["client_id"] or None, incoming["matter_id"] or None, reasons


def _conflict_matrix_problems(conn: Connection, client_id: str, matter_id: str) -> list[str]:
    matter = repository.find_matter_client(conn, matter_id)
    if matter is None:
        return [f"matter {matter_id!r} unknown to the conflict matrix"]
    if matter.client_id == client_id:
        return []
    if not repository.client_exists(conn, client_id):
        return [f"client {client_id!r} unknown to the conflict matrix"]
    return [f"matter {matter_id!r} belongs to client {matter.client_id!r}, not {client_id!r}"]


# --- 2. source permissions -----------------------------------------------------------------


def _storable(acl: SourceAcl | None) -> SourceAcl | str:
    """The rules as stored, or the id of a fixed ACL. No source rules: public within the
    firm; rules that cannot be resolved: nobody passes (fail closed)."""
    if acl is None:
        return PUBLIC_ACL
    if not acl.resolvable or any(CONTROL.search(p) for p in acl.deny):
        return NOBODY_ACL  # a deny of a principal PostgreSQL cannot hold must not lapse
    if any(CONTROL.search(p) for p in acl.allow):
        # a grant to such a principal admits nobody: no person's alias holds a control
        # character (PostgreSQL stores no NUL)
        acl = replace(acl, allow=frozenset(CONTROL.sub("\ufffd", p) for p in acl.allow))
    return acl


def stale_placements(conn: Connection, source: str, placed: list[Placed]) -> set[str]:
    """The ids of ``placed`` held under another version, client, matter or rules than the
    source lists now (a security pass reads those again, with their content). A quarantined
    document is visible to nobody: only a new version or mended raw client/matter values
    matter (a matter unknown to the matrix stays quarantined until it is read again)."""
    stored = repository.stored_placements(conn, source, [p.external_id for p in placed])
    stale: set[str] = set()
    for p in placed:
        held = stored.get(p.external_id)
        if held is None:
            continue
        if held.status != "active":
            if (clean_field(p.version), *_listed_raw(p)) != (
                held.version, held.client_raw, held.matter_raw
            ):
                stale.add(p.external_id)
            continue
        now = (*_listed_place(p), _acl_id(p.acl))
        if now != (held.version, held.client_id, held.matter_id, held.source_acl_id):
            stale.add(p.external_id)
    return stale


def held_as_listed(
    conn: Connection, source: str, placed: list[Placed], prepared_with: str
) -> tuple[set[str], set[str], set[str]]:
    """Of a full crawl's listing ``placed`` (read without content): the ids held as listed
    (`_same_content`, made with ``prepared_with``: the chunker, encoder and limits of now,
    and the same client, matter and rules; a quarantined one: the same
    raw client and matter, which the matrix still cannot place), and the ids held active at
    the same content and place under other rules (`narrow_in_place` may apply those without
    the content), and the ids not held whose content had no text at the listed version and
    stamps, made with ``prepared_with`` (`record_textless`: nothing of them is stored). The
    crawl reads the rest in full: not held, a new version or stamp, a move, a quarantined
    document the matrix can place now, rules that admit nobody (the read decides whether it
    is gone, refused or unresolvable)."""
    stored = repository.stored_placements(conn, source, [p.external_id for p in placed])
    unheld = [p.external_id for p in placed if p.external_id not in stored]
    textless = repository.textless_placements(conn, source, unheld) if unheld else {}
    same: set[str] = set()
    other_rules: set[str] = set()
    without_text: set[str] = set()
    for p in placed:
        held = stored.get(p.external_id)
        acl_id = _acl_id(p.acl)
        if acl_id == NOBODY_ACL:
            continue
        if held is None:
            found = textless.get(p.external_id)
            if found and found.prepared_with == prepared_with and _same_content(p, found):
                without_text.add(p.external_id)
            continue
        if not _same_content(p, held):
            continue
        if held.metadata.get("prepared_with") != prepared_with:
            continue  # made by another chunker or encoder (or before the stamp was kept)
        if held.status != "active":
            if _listed_raw(p) == (held.client_raw, held.matter_raw) and not _placeable(conn, p):
                same.add(p.external_id)
        elif _listed_place(p)[1:] == (held.client_id, held.matter_id):
            (same if acl_id == held.source_acl_id else other_rules).add(p.external_id)
    return same, other_rules, without_text


def record_textless(conn: Connection, doc: SourceDocument, prepared_with: str) -> None:
    """``doc``'s content has no text: nothing of it is stored, and a full crawl that reads
    what changed leaves it unread while the source lists the same version and stamps."""
    repository.record_textless(conn, doc.source, doc.external_id, clean_field(doc.version),
                               doc.modified_at, canonical_json(_without_nul(doc.metadata)),
                               prepared_with)


def _same_content(p: Placed, held: repository.StoredPlacement | repository.Textless) -> bool:
    """Whether the listing names the content stored: the same version and modification
    stamp (an unknown stamp is not the same), and the stored metadata holds its stamps."""
    return (
        p.modified_at is not None
        and (clean_field(p.version), p.modified_at) == (held.version, held.modified_at)
        and all(held.metadata.get(key) == value for key, value in p.stamps)
    )


def _placeable(conn: Connection, p: Placed) -> bool:
    """Whether a full read would place the listed client and matter (not quarantine them)."""
    _, client, matter = _listed_place(p)
    return bool(client and matter and not _conflict_matrix_problems(conn, client, matter))


def _listed_place(p: Placed) -> tuple[str | None, str | None, str | None]:
    """(version, client, matter) of a listing as a document row stores them: the ids in
    NFC, as ``_resolve_client_and_matter`` places them. Read as listed, a source that
    writes them decomposed was asked about in a spelling the matrix no longer holds after
    `ewall ids normalize`: its quarantined documents were never read again (and each of its
    filed ones read in full by every crawl, never held as listed)."""
    client, matter = _nfc_field(p.client_id), _nfc_field(p.matter_id)
    return clean_field(p.version), client, matter


def _nfc_field(value: str | None) -> str | None:
    cleaned = clean_field(value)
    return unicodedata.normalize("NFC", cleaned) if cleaned else None


def _listed_raw(p: Placed) -> tuple[str | None, str | None]:
    """(client, matter) as the source wrote them, as a quarantined document keeps them."""
    client = p.client_raw if p.client_raw is not None else p.client_id
    matter = p.matter_raw if p.matter_raw is not None else p.matter_id
    return _without_nul(client), _without_nul(matter)


def _acl_id(acl: SourceAcl | None) -> str:
    """The ACL id ``store_source_acl`` would give these rules, nothing written."""
    storable = _storable(acl)
    return storable if isinstance(storable, str) else acl_id_for(storable)


def store_source_acl(conn: Connection, acl: SourceAcl | None) -> str:
    """The ACL id the document's chunks carry (`_storable`)."""
    storable = _storable(acl)
    if isinstance(storable, str):
        return storable
    acl = storable
    acl_id = acl_id_for(acl)
    repository.upsert_source_acl(
        conn,
        acl_id,
        acl.default,
        sorted({principal_key(p) for p in acl.allow}),
        sorted({principal_key(p) for p in acl.deny}),
    )
    return acl_id


# --- 3. the document row -------------------------------------------------------------------


def document_record(
    doc: SourceDocument,
    extracted: ExtractedDocument,
    chunks: list[PreparedChunk],
    doc_type: str,
    before: StoredDocument | None,
    placement: Placement,
    acl_id: str,
    search_state: str | None,
    run_id: uuid.UUID,
) -> DocumentRecord:
    """Incoming values win; a value the source left out keeps the stored one."""
    content_sha = hashlib.sha256("\n".join(c.content_sha256 for c in chunks).encode()).hexdigest()
    title = document_title(doc, extracted, before.title if before is not None else None)
    metadata = dict(doc.metadata)
    metadata.update({k: v for k, v in extracted.metadata.items() if k not in metadata})
    if extracted.warnings:
        metadata["extraction_warnings"] = list(extracted.warnings)
    metadata = _without_nul(metadata)
    return DocumentRecord(
        source=doc.source,
        external_id=doc.external_id,
        version=clean_field(doc.version),
        status=placement.status,
        quarantine_reason=placement.quarantine,
        client_id=placement.client_id,
        matter_id=placement.matter_id,
        client_raw=_without_nul(doc.client_raw if doc.client_raw is not None else doc.client_id),
        matter_raw=_without_nul(doc.matter_raw if doc.matter_raw is not None else doc.matter_id),
        doc_type=doc_type,
        title=title[:MAX_FIELD],
        author=clean_field(doc.author) or (before.author if before is not None else None),
        modified_at=doc.modified_at or (before.modified_at if before is not None else None),
        mime_type=extracted.mime_type,
        content_sha256=content_sha,
        source_acl_id=acl_id,
        source_url=_without_nul(doc.source_url),
        search_state=search_state or (before.search_state if before is not None else "active"),
        metadata_json=canonical_json(metadata),
        last_run_id=run_id,
    )


def chunks_to_encode(
    conn: Connection, chunks: list[PreparedChunk], known_ids: set[str], title: str,
    summary: str | None,
) -> tuple[list[PreparedChunk], dict[str, str]]:
    """The chunks not kept as stored, and stored vectors of identical text whose encoder
    input was exactly this chunk's (another copy of the document, same context). The
    stored chunk has the same text and its document the same title, so the inputs are
    equal exactly when the contexts are (passage_context)."""
    missing = [c for c in chunks if c.chunk_id not in known_ids]
    if not missing:
        return [], {}
    mark_writer(conn)
    wanted = {c.content_sha256: passage_context(c.section_path, title, summary) for c in missing}
    reuse: dict[str, str] = {}
    for stored in repository.embeddings_by_content(conn, sorted(wanted), title):
        if passage_context(stored.section_path, title, stored.summary) == wanted[
            stored.content_sha256
        ]:
            reuse[stored.content_sha256] = stored.embedding
    return missing, reuse


def _without_nul(value: Any) -> Any:
    """``value`` with U+FFFD for every NUL, in strings, keys and nested lists and objects: a
    source's raw values are kept as given, but PostgreSQL stores no NUL (text or jsonb)."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nul(v) for v in value]
    return value


def save_document(conn: Connection, before: StoredDocument | None, record: DocumentRecord) -> int:
    """Insert or update the document row; its id. A document stored with text is no
    longer one without (`record_textless`)."""
    if before is None:
        repository.forget_textless(conn, record.source, [record.external_id])
        document_id = repository.insert_document(conn, record)
        if document_id is None:
            raise RuntimeError("concurrent insert of the same document")
        return document_id
    repository.update_document(conn, before.document_id, record)
    return before.document_id


def chunk_placement(document_id: int, record: DocumentRecord, wall_group_id: str) -> ChunkPlacement:
    return ChunkPlacement(
        document_id=document_id,
        source=record.source,
        external_id=record.external_id,
        client_id=record.client_id,
        matter_id=record.matter_id,
        wall_group_id=wall_group_id,
        source_acl_id=record.source_acl_id,
        doc_type=record.doc_type,
        suppressed=record.search_state != "active",
        modified_at=record.modified_at,
    )


# --- 4. the chunks -------------------------------------------------------------------------


def replace_chunks(
    conn: Connection,
    placement: ChunkPlacement,
    chunks: list[PreparedChunk],
    vectors: dict[str, str],
    embed: Callable[[Connection, list[PreparedChunk]], dict[str, str]],
    stored: set[str],
    changed: set[str],
    *,
    existing_document: bool,
    model_id: str | None = None,
) -> ChunkDelta:
    """Make the stored chunks of the document exactly ``chunks``; ``stored`` is the ids it
    has, read under the document's lock. ``vectors`` holds the embeddings computed before the
    transaction; ``changed`` names the stored chunks that
    stay but whose encoder input changed (their vectors are replaced); ``embed`` computes
    the few vectors that are missing because stored chunks vanished or inputs changed in
    between. ``model_id`` (the encoder's) is recorded with each vector written."""
    vanished = sorted(stored - {c.chunk_id for c in chunks})
    to_add = [c for c in chunks if c.chunk_id not in stored]
    to_refresh = [c for c in chunks if c.chunk_id in stored and c.chunk_id in changed]
    late = [c for c in to_add + to_refresh if c.chunk_id not in vectors]
    if late:
        vectors.update(embed(conn, late))
    if vanished:
        repository.delete_chunks(conn, vanished)
    placement_changed = 0
    if existing_document:
        placement_changed = repository.update_chunk_placement(conn, placement)
        repository.update_chunk_positions(conn, [c for c in chunks if c.chunk_id in stored])
        repository.refresh_embeddings(
            conn,
            placement.document_id,
            {c.chunk_id: vectors[c.chunk_id] for c in to_refresh},
            model_id,
        )
    repository.insert_chunks(conn, placement, to_add, vectors, model_id)
    return ChunkDelta(len(to_add), len(vanished), placement_changed, len(to_refresh))


# --- 5. the report -------------------------------------------------------------------------


def metadata_changes(before: StoredDocument | None, record: DocumentRecord) -> list[dict[str, Any]]:
    """Changes of the fields that decide who sees a document, for the report."""
    if before is None:
        return []
    out = []
    for name, label in (
        ("matter_id", "matter"),
        ("client_id", "client"),
        ("source_acl_id", "acl"),
        ("doc_type", "doc_type"),
        ("status", "status"),
    ):
        old, new = getattr(before, name), getattr(record, name)
        if old != new:
            out.append({"field": label, "from": old, "to": new})
    return out


def outcome_status(
    before: StoredDocument | None,
    quarantine: str | None,
    delta: ChunkDelta,
    changes: list[dict[str, Any]],
) -> str:
    """added | updated | unchanged | quarantined."""
    if before is None:
        return "quarantined" if quarantine else "added"
    if quarantine and before.status != "quarantined":
        return "quarantined"
    if delta.added or delta.removed or changes or delta.placement_changed or delta.re_encoded:
        return "quarantined" if quarantine else "updated"
    return "quarantined" if quarantine else "unchanged"


# --- 6. the wall group, last ---------------------------------------------------------------


def settle_wall_group(
    conn: Connection, document_id: int, record: DocumentRecord, placement: Placement
) -> str:
    """The group the document's chunks carry at commit: its matter's, read under a share
    lock held until the write commits, so no wall change on the matter commits in between.
    A change that committed since ``place_document`` read the group (its re-tag may already
    have found none of these chunks, uncommitted then, and be done) moves them here.
    Documents without a matter (public, quarantined) stay where they are: no wall moves
    them."""
    if placement.matter_id is None:
        return placement.wall_group_id
    current = repository.share_matter_wall_group(conn, placement.matter_id)
    if current is None:  # a matter's group row is never deleted (matters are not)
        raise RuntimeError(f"matter {placement.matter_id!r} lost its wall group")
    if current != placement.wall_group_id:
        repository.update_chunk_placement(conn, chunk_placement(document_id, record, current))
    return current


# Tries of a document's write transaction (``Database.attempts``): a write that moves its
# chunks to the group its matter got meanwhile (``settle_wall_group``) can meet a re-tag
# batch moving the matter's other chunks between the same two groups. The batch takes the
# search statistics' rows of both groups in key order and may hold the new group's while it
# waits for the old group's, which the write holds since its inserts and the write's move
# then waits for; PostgreSQL fails one of them. The next try writes the chunks in the new
# group at once.
WRITE_ATTEMPTS = 3
