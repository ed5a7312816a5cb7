"""Training text for ``ewall model adapt`` (sql/model.sql): chunk rows a person may read."""

from __future__ import annotations

from sqlalchemy import Connection

from app.db import sqlfiles
from app.model.pairs import ChunkRow
from app.walls.access import Access, apply


def training_chunks(conn: Connection, access: Access) -> list[ChunkRow]:
    """Every searchable chunk ``access`` allows, by document key and ordinal. The access is
    applied to the transaction too (the RLS backstop), like a search."""
    if access.sees_nothing:
        return []
    apply(conn, access)
    rows = conn.execute(
        sqlfiles.query("model.training_chunks"),
        {"wall_groups": list(access.wall_groups), "source_acls": list(access.source_acl_ids)},
    ).mappings()
    return [
        ChunkRow(
            document_key=str(r["document_key"]),
            source=str(r["source"]),
            doc_type=str(r["doc_type"]),
            title=str(r["title"] or ""),
            section_path=str(r["section_path"] or ""),
            ordinal=int(r["ordinal"]),
            body=str(r["body"]),
        )
        for r in rows
    ]
