"""The instant that decides access: the database's clock, the one clock every process shares.

Walls take effect by the clock (``effective_from`` / ``effective_until``, with no write), so
the instant a search, an access check or an explanation is judged at decides who is
admitted. Read on the API host, it is that host's clock: with several hosts, or one whose
clock runs behind the database's, a screened person was admitted for the length of the skew
after a wall's ``effective_from``, and a wall issued "now" by one host was judged by
another's clock. So the instant is ``statement_timestamp()`` of a statement the request
sends anyway (a column of it: no round trip of its own), or of ``db.now`` where none can
carry it. On a streaming replica it is that replica's host's clock: the search's fence holds
it to the primary's (sql/replica.sql); the grounding gate takes the primary's instead.

The host's clock (app.audit.chain.now_utc) stays for what no other process compares: labels,
file names, the time a report was made.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection

from app.db import sqlfiles


def db_now(conn: Connection) -> datetime:
    """The database's clock (statement_timestamp()), in one round trip of its own."""
    at: datetime = conn.execute(sqlfiles.query("db.now")).scalar_one()
    return at
