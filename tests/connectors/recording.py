"""An in-memory stand-in for the ingest pipeline that implements `connectors.base.Pipeline`.

It keeps an index of what was ingested and deleted, decides added/updated/unchanged the way
an idempotent pipeline would, and can "crash" after N documents to test resume. ``visible``
applies source-permission semantics (deny wins, default public/view/private, unresolvable =
nobody, groups expanded from the synced groups) so tests can ask who may see a document.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from connectors.base import Placed, SourceAcl, SourceDocument, SourceGroup


class ConsumerCrashError(Exception):
    """Stands for a process that dies in the middle of a crawl."""


@dataclass
class Run:
    run_id: int
    connector: str
    params: dict[str, Any]
    counts: Counter[str] = field(default_factory=Counter)
    status: str | None = None
    progress: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    status: str


def _fingerprint(doc: SourceDocument) -> tuple[Any, ...]:
    return (
        doc.checksum,
        doc.version,
        doc.title,
        doc.client_id,
        doc.matter_id,
        doc.acl,
        doc.content,
    )


class RecordingPipeline:
    _ids = itertools.count(1)

    def __init__(self, *, crash_after: int | None = None) -> None:
        self.index: dict[str, SourceDocument] = {}
        self.hidden: list[tuple[str, str]] = []
        self.fingerprints: dict[str, tuple[Any, ...]] = {}
        self.ingested: list[str] = []
        self.deleted: list[tuple[str, str]] = []
        self.errors: list[tuple[str | None, str]] = []
        self.groups: dict[str, frozenset[str]] = {}
        self.progress_calls: list[dict[str, Any]] = []
        self.runs: list[Run] = []
        self.warnings: list[str] = []
        self.held: list[tuple[str, str]] = []
        self.crash_after = crash_after

    def start_run(self, connector: str, params: dict[str, Any], started_by: str) -> Run:
        run = Run(next(self._ids), connector, params)
        self.runs.append(run)
        return run

    def ingest(self, run: Run, doc: SourceDocument) -> Outcome:
        if self.crash_after is not None and len(self.ingested) >= self.crash_after:
            raise ConsumerCrashError(f"crashed after {self.crash_after} documents")
        self.ingested.append(doc.external_id)
        fingerprint = _fingerprint(doc)
        previous = self.fingerprints.get(doc.external_id)
        self.index[doc.external_id] = doc
        self.fingerprints[doc.external_id] = fingerprint
        if not doc.client_id or not doc.matter_id:
            status = "quarantined"
        elif previous is None:
            status = "added"
        elif previous == fingerprint:
            status = "unchanged"
        else:
            status = "updated"
        run.counts[status] += 1
        return Outcome(status)

    def apply_acl(self, run: Run, source: str, external_id: str, acl: SourceAcl) -> None:
        doc = self.index.get(external_id)
        if doc is not None:
            self.index[external_id] = replace(doc, acl=acl)

    def hide(self, run: Run, source: str, external_id: str, reason: str) -> bool:
        doc = self.index.get(external_id)
        nobody = SourceAcl("private", resolvable=False)  # the pipeline's source ACL "nobody"
        if doc is None or doc.acl == nobody:  # as the pipeline: not stored, or hidden already
            return False
        self.index[external_id] = replace(doc, acl=nobody)
        self.hidden.append((external_id, reason))
        return True

    def delete(self, run: Run, source: str, external_id: str, reason: str) -> bool:
        if external_id not in self.index:
            return False
        del self.index[external_id]
        del self.fingerprints[external_id]
        self.deleted.append((external_id, reason))
        run.counts["deleted"] += 1
        return True

    def record_error(
        self,
        run: Run,
        source: str,
        external_id: str | None,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.errors.append((external_id, reason))
        run.counts["errors"] += 1

    def progress(self, run: Run, **fields: Any) -> None:
        run.progress.update(fields)
        self.progress_calls.append(dict(fields))

    def finish_run(
        self, run: Run, status: str | None = None, error: str | None = None
    ) -> dict[str, Any]:
        run.status = status or ("partial" if run.counts.get("errors") else "succeeded")
        return {
            "run_id": run.run_id,
            "status": run.status,
            "error": error,
            "counts": dict(run.counts),
        }

    def known_external_ids(self, source: str) -> set[str]:
        return {k for k, d in self.index.items() if d.source == source}

    def known_versions(self, source: str, *, textless: bool = False) -> dict[str, str | None]:
        return {k: d.version for k, d in self.index.items() if d.source == source}

    def forget_textless(self, source: str, listed: set[str], owns: Callable[[str], bool]) -> int:
        return 0  # nothing textless is recorded here

    def stale_placements(self, source: str, placed: list[Placed]) -> set[str]:
        stale = set()
        for p in placed:
            held = self.index.get(p.external_id)
            if held is None or held.source != source or not held.client_id or not held.matter_id:
                continue  # not held, or quarantined: not asked
            if (held.version, held.client_id, held.matter_id, held.acl) != (
                p.version, p.client_id, p.matter_id, p.acl
            ):
                stale.add(p.external_id)
        return stale

    def narrow_rules(self, run: Run, source: str, placed: list[Placed]) -> set[str]:
        return set()  # every stale document is read in full here

    def held_as_listed(self, run: Run, source: str, placed: list[Placed]) -> dict[str, str]:
        """As the pipeline's, without narrowing: held at the listed version, modification
        stamp, metadata stamps, place and rules; quarantined ones and rules that admit nobody
        are read again."""
        out: dict[str, str] = {}
        for p in placed:
            held = self.index.get(p.external_id)
            if held is None or held.source != source or not held.client_id or not held.matter_id:
                continue
            if p.modified_at is None or (p.acl is not None and not p.acl.resolvable):
                continue
            if (held.version, held.modified_at, held.client_id, held.matter_id, held.acl) == (
                p.version, p.modified_at, p.client_id, p.matter_id, p.acl
            ) and all(held.metadata.get(key) == value for key, value in p.stamps):
                out[p.external_id] = "unchanged"
        return out

    def known_containers(self, source: str) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for k, d in self.index.items():
            if d.source == source:
                container = d.metadata.get("container")
                out[k] = container if isinstance(container, str) else None
        return out

    def record_warning(self, run: Run, source: str | None, reason: str) -> None:
        self.warnings.append(reason)

    def record_held(self, run: Run, source: str, external_id: str, reason: str) -> None:
        self.held.append((external_id, reason))
        run.counts["held"] += 1

    def sync_groups(
        self, run: Run, groups: list[SourceGroup], actor: str, *, source: str
    ) -> None:
        listed = {f"{g.source}:group:{g.group_id}" for g in groups}
        for key in [k for k in self.groups if k.startswith(f"{source}:group:")]:
            if key not in listed:  # the source's whole membership: the rest is forgotten
                self.groups.pop(key)
        for group in groups:
            key = f"{group.source}:group:{group.group_id}"
            if group.members is None:  # unknown now: forgotten, as the pipeline does
                self.groups.pop(key, None)
            else:
                self.groups[key] = group.members

    # --- who may see what --------------------------------------------------------------------

    def visible(self, external_id: str, user: str) -> bool:
        doc = self.index.get(external_id)
        if doc is None:
            return False
        acl = doc.acl
        if acl is None:
            return True
        if not acl.resolvable:
            return False
        principals = {user} | {g for g, members in self.groups.items() if user in members}
        if principals & acl.deny:
            return False
        # a deny of a group whose members are not held admits nobody (sql/walls.sql)
        if any(":group:" in p and p not in self.groups for p in acl.deny):
            return False
        return acl.default in ("public", "view") or bool(principals & acl.allow)


# --- what a crawl yields --------------------------------------------------------------------


def cursor_text(item: object) -> str:
    """A crawl's checkpoint item (the cursor, as text)."""
    assert isinstance(item, str), item
    return item


def documents(items: Sequence[object]) -> list[SourceDocument]:
    return [i for i in items if isinstance(i, SourceDocument)]


def by_id(items: Sequence[object]) -> dict[str, SourceDocument]:
    return {d.external_id: d for d in documents(items)}
