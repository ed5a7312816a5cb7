"""Every advisory lock namespace of the service, in one place so that two can never meet.

PostgreSQL's two-key advisory locks (namespace, key) are shared by everything connected to
the database: each kind of lock below owns one namespace ("ew" and the next ones). Keys are
ids or ``hashtext`` of a text key (two texts that share a hash only wait for each other).
The connectors' sync locks keep the namespace of connectors/state.py (a CRC of its name).
"""

from __future__ import annotations

from enum import IntEnum, unique


@unique
class LockNamespace(IntEnum):
    JOB = 0x6577  # a running background job, held by its worker's session (app/jobs)
    PERSON_QUEUE = 0x6578  # one person's enqueues, until the transaction ends (app/jobs)
    NEW_DOCUMENT = 0x6579  # a document's first write (app/ingest)
    SESSION = 0x657A  # the first binding of a person's session (app/search)
    RETAG = 0x657B  # one matter's re-tag batch, until its transaction ends (app/walls/retag.py)
    CHECKPOINT = 0x657C  # the service's scheduled audit checkpoint (app/audit/schedule.py)
