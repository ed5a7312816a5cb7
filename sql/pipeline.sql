-- Ingest runs, their reports, and the document look-ups of the ingest pipeline
-- (app/ingest/repository.py). Writing a document's rows is in sql/ingest.sql.

-- name: insert_run
INSERT INTO ingest_runs (run_id, connector, status, started_by, params, progress)
VALUES (:run_id, :connector, 'running', :started_by, CAST(:params AS jsonb),
        CAST(:progress AS jsonb))

-- name: hold_run
-- A process that runs ingest work itself (the CLI) holds this session lock from before its
-- run's row exists until it ends the run: a run marked {"liveness": "process"} whose lock
-- is free was left by a process that died (reap_orphaned_run). Keyed by the run id's hash:
-- two runs that share one only look alive a little longer.
SELECT pg_advisory_lock(hashtext('ewall.ingest_runs'), hashtext(CAST(:run_id AS text)))

-- name: release_run
SELECT pg_advisory_unlock(hashtext('ewall.ingest_runs'), hashtext(CAST(:run_id AS text)))

-- name: reap_orphaned_run
-- A run still "running" whose process is gone (SIGKILL, a crash, a lost machine) ends as
-- failed when it is read: its holder's lock is free. The try-lock is the last test, on the
-- one row, and is released when this transaction ends.
UPDATE ingest_runs
SET status = 'failed', finished_at = now(),
    error = 'interrupted: the process running it stopped without ending it; run it again'
WHERE run_id = :run_id
  AND status = 'running'
  AND progress ->> 'liveness' = 'process'
  AND pg_try_advisory_xact_lock(hashtext('ewall.ingest_runs'), hashtext(CAST(:run_id AS text)))

-- name: run_state
SELECT connector, started_by, counts, progress FROM ingest_runs WHERE run_id = :run_id

-- name: reopen_run
-- A run that an earlier attempt ended runs again until this attempt ends it.
UPDATE ingest_runs SET status = 'running', finished_at = NULL
WHERE run_id = :run_id AND status <> 'running'

-- name: last_event_seq
SELECT coalesce(max(seq), 0) FROM ingest_run_events WHERE run_id = :run_id

-- name: insert_run_event
INSERT INTO ingest_run_events (run_id, seq, kind, source, external_id, reason, details)
VALUES (:run_id, :seq, :kind, :source, :external_id, :reason, CAST(:details AS jsonb))

-- name: save_run_progress
UPDATE ingest_runs SET progress = CAST(:progress AS jsonb), counts = CAST(:counts AS jsonb)
WHERE run_id = :run_id

-- name: finish_run
UPDATE ingest_runs
SET status = :status, finished_at = now(), error = :error, counts = CAST(:counts AS jsonb),
    progress = CAST(:progress AS jsonb)
WHERE run_id = :run_id

-- name: run_record
SELECT run_id, connector, status, started_by, started_at, finished_at, params, counts,
       progress, error
FROM ingest_runs WHERE run_id = :run_id

-- name: run_events
SELECT seq, kind, source, external_id, reason, details, at
FROM ingest_run_events WHERE run_id = :run_id ORDER BY seq

-- name: document_input
-- A pushed file's status and input fingerprint, read before the file is extracted to weigh
-- it: an unchanged one is neither extracted nor queued (documents has no row security).
SELECT status, metadata->>'input_sha256' AS input_sha
FROM documents WHERE source = :source AND external_id = :external_id

-- name: document_fingerprint
-- What decides whether a document may be skipped: its status, the fingerprint of the input
-- it was built from, what it was prepared with, and how many chunks it has.
SELECT d.document_id, d.status, d.metadata->>'input_sha256' AS input_sha,
       d.metadata->>'prepared_with' AS prepared_with,
       (SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id) AS n
FROM documents d WHERE d.source = :source AND d.external_id = :external_id

-- name: document_id
SELECT document_id, title FROM documents WHERE source = :source AND external_id = :external_id

-- name: delete_document
DELETE FROM documents WHERE source = :source AND external_id = :external_id
RETURNING document_id

-- name: source_documents
-- Every document of one source: its version and the library or cabinet it came from.
SELECT external_id, version, metadata->>'container' AS container
FROM documents WHERE source = :source

-- name: record_textless
-- A document whose content had no text at this version and stamp (nothing of it is stored).
INSERT INTO textless_documents (source, external_id, version, modified_at, metadata,
                                prepared_with)
VALUES (:source, :external_id, :version, :modified_at, CAST(:metadata AS jsonb),
        :prepared_with)
ON CONFLICT (source, external_id) DO UPDATE
SET version = EXCLUDED.version, modified_at = EXCLUDED.modified_at,
    metadata = EXCLUDED.metadata, prepared_with = EXCLUDED.prepared_with,
    recorded_at = now()

-- name: forget_textless
-- Some of one source's textless documents, deleted at the source or no longer listed.
DELETE FROM textless_documents WHERE source = :source AND external_id = ANY(:ids)

-- name: textless_versions
-- Every textless document of one source, with its version (the caller lets a held
-- document's version stand over it).
SELECT external_id, version FROM textless_documents WHERE source = :source

-- name: textless_placements
-- The version, stamp, metadata and preparation of some of one source's textless documents.
SELECT external_id, version, modified_at, metadata, prepared_with
FROM textless_documents WHERE source = :source AND external_id = ANY(:ids)

-- name: stored_placements
-- The version, place, rules, raw client/matter and modification stamps of some of one
-- source's documents (a security pass and a full crawl compare them with what the source
-- lists now).
SELECT external_id, status, version, client_id, matter_id, source_acl_id, client_raw,
       matter_raw, modified_at, metadata
FROM documents WHERE source = :source AND external_id = ANY(:ids)
