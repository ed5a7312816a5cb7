-- Background jobs (docs/isolation.md): a table queue. A worker claims a row with
-- FOR UPDATE SKIP LOCKED (two workers never take the same row) and, while it runs the job,
-- holds a session advisory lock keyed by the job id on its own connection. A worker that
-- dies loses its session and so its lock: a 'running' row whose lock can be taken has no
-- living owner and is claimed again. No clock decides that a worker is dead.
-- The lock alone cannot tell a dead worker from one whose lease connection dropped: every
-- claim raises claim_token, and the claiming worker's writes (its outcome here, the ingestion
-- handler's commits in app/ingest/job_fence.py) go through only while the row still holds the
-- token it raised it to; a worker whose job was claimed again writes nothing.

-- name: enqueue
INSERT INTO jobs (kind, person_id, run_id, payload, max_attempts)
VALUES (:kind, :person_id, :run_id, CAST(:payload AS jsonb), :max_attempts)
RETURNING job_id

-- name: lock_person_queue
-- Serialises one person's enqueues until the transaction ends, so that two concurrent
-- requests cannot both pass the per-person bound.
SELECT pg_advisory_xact_lock(:namespace, hashtext(:person_id))

-- name: pending_for_person
SELECT count(*) FROM jobs WHERE person_id = :person_id AND status IN ('queued', 'running')

-- name: claim_candidates
-- Orphans first (they started earliest), then due queued jobs in order.
SELECT job_id, status, attempts, max_attempts, claim_token
FROM jobs
WHERE status = 'running' OR (status = 'queued' AND run_after <= now())
ORDER BY status = 'running' DESC, job_id
LIMIT :limit
FOR UPDATE SKIP LOCKED

-- name: try_lock
SELECT pg_try_advisory_lock(:namespace, CAST(:job_id % 2147483647 AS integer))

-- name: unlock
SELECT pg_advisory_unlock(:namespace, CAST(:job_id % 2147483647 AS integer))

-- name: claim
UPDATE jobs
SET status = 'running', attempts = attempts + 1, claim_token = claim_token + 1,
    locked_by = :worker, started_at = now(),
    last_error = CASE WHEN status = 'running' THEN 'the previous worker stopped during the job'
                      ELSE last_error END
WHERE job_id = :job_id
RETURNING job_id, kind, person_id, run_id, payload, attempts, max_attempts, claim_token

-- name: succeed
-- The outcome writes (succeed, retry_later, put_back, fail) change the row only while it is
-- still the writer's claim (its token, still running): none when another worker claimed the
-- job again meanwhile, or when this outcome was written already (a commit lost with its
-- connection and written again on a new one).
-- The document body is dropped once done: the chunks hold it now.
UPDATE jobs
SET status = 'succeeded', finished_at = now(), locked_by = NULL, payload = payload - 'document'
WHERE job_id = :job_id AND claim_token = :claim_token AND status = 'running'

-- name: retry_later
UPDATE jobs
SET status = 'queued', locked_by = NULL, last_error = :error,
    run_after = now() + make_interval(secs => :delay_s)
WHERE job_id = :job_id AND claim_token = :claim_token AND status = 'running'

-- name: put_back
-- A job the claiming process cannot run (its encoder is not the live model): queued again as
-- it was, the attempt not counted, due at once for a process that can.
UPDATE jobs
SET status = 'queued', attempts = greatest(attempts - 1, 0), locked_by = NULL,
    run_after = now()
WHERE job_id = :job_id AND claim_token = :claim_token AND status = 'running'

-- name: fail
UPDATE jobs
SET status = 'failed', finished_at = now(), locked_by = NULL, last_error = :error,
    payload = payload - 'document'
WHERE job_id = :job_id AND claim_token = :claim_token AND status = 'running'

-- name: fail_orphan
-- A claimer's word on an orphan whose worker stopped during the last allowed attempt: failed,
-- and the token raised as a claim would, so that this worker, if it lives on (its lease
-- connection dropped), writes nothing more of the job.
-- Returns the job as a claim does, for the queue's on_failed (its ingest run ends failed).
UPDATE jobs
SET status = 'failed', finished_at = now(), locked_by = NULL, last_error = :error,
    payload = payload - 'document', claim_token = claim_token + 1
WHERE job_id = :job_id AND claim_token = :claim_token AND status = 'running'
RETURNING job_id, kind, person_id, run_id, payload, attempts, max_attempts, claim_token

-- name: job_of_run
SELECT job_id, kind, status, attempts, max_attempts, last_error, created_at, started_at,
       finished_at, run_after
FROM jobs WHERE run_id = :run_id ORDER BY job_id DESC LIMIT 1

-- name: get_job
SELECT job_id, kind, person_id, run_id, status, attempts, max_attempts, last_error, locked_by,
       started_at, finished_at, claim_token
FROM jobs WHERE job_id = :job_id

-- name: check_claim
-- A write of a job's handler, first thing in its transaction (app/ingest/job_fence.py): the
-- row's claim now. FOR SHARE keeps a claim's UPDATE from passing until this transaction
-- ends (the claim's FOR UPDATE SKIP LOCKED skips the row meanwhile), so the answer holds to
-- the commit.
SELECT claim_token, status, locked_by FROM jobs WHERE job_id = :job_id FOR SHARE

-- name: unlock_all
-- Every advisory lock this session holds, before its connection goes back to the pool.
SELECT pg_advisory_unlock_all()

-- name: retrieval_head
-- The retrieval chain's last sequence number: it moves with every audited search (on the
-- primary or a replica), which is how the job worker sees that people are searching.
SELECT seq FROM audit_heads WHERE chain = 'retrievals'

-- name: backend_pid
SELECT pg_backend_pid()

-- name: session_holds_locks
-- Whether the server process ``pid`` still holds a lock: a killed worker's session keeps
-- its advisory locks until its backend has exited, not when its socket closes.
SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = :pid)
