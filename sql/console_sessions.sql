-- The console's signed-in browsers and its OIDC sign-ins in progress, shared by every API
-- process (app/console/session_repository.py). Cookies and OIDC states are stored only as
-- their SHA-256: the table gives a reader nothing to sign in with. Times are the database's
-- clock, one for every process.

-- name: create_session
-- A session ends at its maximum age or at the expiry of the token it was made from,
-- whichever comes first.
INSERT INTO console_sessions (sid_sha256, person_id, roles, csrf, expires_at)
VALUES (:sid_sha256, :person_id, CAST(:roles AS text[]), :csrf,
        least(now() + make_interval(secs => :max_s),
              coalesce(to_timestamp(CAST(:token_exp AS double precision)), 'infinity')))
RETURNING date_part('epoch', created_at) AS created, date_part('epoch', last_seen) AS last_seen,
          date_part('epoch', expires_at) AS expires

-- name: touch_session
-- The live session of a cookie, marked as seen now; no row when the cookie is unknown, the
-- session was idle too long or is past its end.
UPDATE console_sessions
SET last_seen = now()
WHERE sid_sha256 = :sid_sha256
  AND last_seen > now() - make_interval(secs => :idle_s)
  AND expires_at > now()
RETURNING person_id, roles, csrf, date_part('epoch', created_at) AS created,
          date_part('epoch', last_seen) AS last_seen, date_part('epoch', expires_at) AS expires

-- name: drop_session
DELETE FROM console_sessions WHERE sid_sha256 = :sid_sha256

-- name: sweep_sessions
-- Ended sessions, a bounded batch; rows another process holds are left for the next sweep.
DELETE FROM console_sessions
WHERE sid_sha256 IN (
    SELECT sid_sha256 FROM console_sessions
    WHERE expires_at <= now() OR last_seen <= now() - make_interval(secs => :idle_s)
    LIMIT :batch
    FOR UPDATE SKIP LOCKED)

-- name: add_pending_sign_in
INSERT INTO console_oidc_pending (state_sha256, nonce, verifier, redirect_uri, next_url,
                                  expires_at)
VALUES (:state_sha256, :nonce, :verifier, :redirect_uri, :next_url,
        now() + make_interval(secs => :ttl_s))

-- name: take_pending_sign_in
-- A sign-in is taken once, by whichever process the issuer's redirect reaches.
DELETE FROM console_oidc_pending
WHERE state_sha256 = :state_sha256
RETURNING nonce, verifier, redirect_uri, next_url, expires_at > now() AS live

-- name: sweep_pending_sign_ins
DELETE FROM console_oidc_pending
WHERE state_sha256 IN (
    SELECT state_sha256 FROM console_oidc_pending
    WHERE expires_at <= now()
    LIMIT :batch
    FOR UPDATE SKIP LOCKED)
