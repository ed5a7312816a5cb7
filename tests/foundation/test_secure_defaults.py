"""Secure by default (issue 31, point 1; invariant 13): no token or cursor signed with a key
from the source verifies, development auth serves only loopback and the embedded database
unless the operator set a strong secret, and the container files hold no secret."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

from app.audit.service import cursor_key, decode_cursor, encode_cursor
from app.auth.keys import (
    DEV_SECRET_FILE,
    DEV_TOKEN_MAX_TTL_S,
    InsecureConfiguration,
    check_serve,
    dev_signing_key,
    is_loopback,
    prints_dev_token,
)
from app.auth.service import DEV_AUDIENCE, TokenVerifier, issue_dev_token
from app.errors import Unauthenticated, Unprocessable
from app.main import create_app
from app.settings import Settings
from tests.conftest import DbHandle

ROOT = Path(__file__).resolve().parents[2]
# the value app/settings.py shipped as its default: published, so an attacker's first guess
PUBLISHED_SECRET = "ewall-dev-secret-change-me-0123456789abcdef"
ALL_ROLES = ["admin", "conflicts", "compliance", "lawyer"]
ANYWHERE = "0.0.0.0"  # noqa: S104 (the bind address a careless deployment uses)
EXTERNAL_URL = "postgresql://ewall_app:pw@db.example:5432/ewall"


def _defaults(data_dir: Path, **overrides: Any) -> Settings:
    """Settings as a careless deployment has them: nothing set but where the data lives."""
    return Settings(_env_file=None, data_dir=data_dir, **overrides)


def _forged(secret: str, **claims: Any) -> str:
    now = int(time.time())
    body = {
        "sub": "mallory@outside.example",
        "roles": ALL_ROLES,
        "iss": "ewall-dev",
        "aud": DEV_AUDIENCE,
        "iat": now,
        "nbf": now,
        "exp": now + 3 * 365 * 86400,
        **claims,
    }
    return jwt.encode(body, secret, algorithm="HS256")


def _cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EWALL_")}
    env.update(EWALL_DATA_DIR=str(data_dir), EWALL_LOG_JSON="false", PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def _ewall(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )


# --- tokens under the default settings --------------------------------------------------


def test_tokens_forged_with_the_published_or_any_other_secret_are_refused(
    tmp_path: Path,
) -> None:
    verifier = TokenVerifier(_defaults(tmp_path))
    for secret in (PUBLISHED_SECRET, secrets.token_urlsafe(48)):
        with pytest.raises(Unauthenticated):
            verifier.verify(_forged(secret))
        # even one within the lifetime cap
        with pytest.raises(Unauthenticated):
            verifier.verify(_forged(secret, exp=int(time.time()) + 3600))


def test_the_default_key_is_generated_per_data_dir_0600_and_signs_what_verifies(
    tmp_path: Path,
) -> None:
    settings = _defaults(tmp_path)
    token = issue_dev_token(settings, "ldekker@firm.nl", ["lawyer"])
    path = tmp_path / DEV_SECRET_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    assert TokenVerifier(_defaults(tmp_path)).verify(token).person_id == "ldekker@firm.nl"
    # another data directory has another key
    with pytest.raises(Unauthenticated):
        TokenVerifier(_defaults(tmp_path / "other")).verify(token)
    os.chmod(path, 0o644)
    with pytest.raises(InsecureConfiguration):
        dev_signing_key(settings)
    # a key written there by hand is held to the rules of EWALL_DEV_SECRET (a fuzz: 40 'a's)
    path.write_text("a" * 40 + "\n")
    os.chmod(path, 0o600)
    with pytest.raises(InsecureConfiguration, match="repeats"):
        dev_signing_key(settings)


def test_ewall_token_reuses_the_data_dir_key(tmp_path: Path) -> None:
    printed = _ewall(["token", "--sub", "x@firm.nl", "--role", "lawyer"], _cli_env(tmp_path))
    assert printed.returncode == 0, printed.stderr
    key = (tmp_path / DEV_SECRET_FILE).read_text().strip()
    assert (tmp_path / DEV_SECRET_FILE).stat().st_mode & 0o777 == 0o600
    # what the loopback server verifies with: the same data directory's key
    assert dev_signing_key(_defaults(tmp_path)) == key
    principal = TokenVerifier(_defaults(tmp_path)).verify(printed.stdout.strip())
    assert principal.person_id == "x@firm.nl" and principal.roles == {"lawyer"}
    too_long = _ewall(
        ["token", "--sub", "x@firm.nl", "--ttl", str(DEV_TOKEN_MAX_TTL_S + 1)], _cli_env(tmp_path)
    )
    assert too_long.returncode != 0 and not too_long.stdout.strip()


def test_long_lived_or_iat_less_dev_tokens_are_refused_even_when_properly_signed(
    tmp_path: Path,
) -> None:
    strong = secrets.token_urlsafe(48)
    verifier = TokenVerifier(_defaults(tmp_path, dev_secret=strong))
    now = int(time.time())
    assert verifier.verify(_forged(strong, exp=now + 3600)).person_id
    for claims in (
        {},  # three years
        {"exp": now + DEV_TOKEN_MAX_TTL_S + 3600},
        {"iat": now + 3 * 86400, "nbf": now, "exp": now + 3 * 86400 + 3600},
    ):
        with pytest.raises(Unauthenticated):
            verifier.verify(_forged(strong, **claims))
    no_iat = jwt.encode(
        {"sub": "a", "roles": ["lawyer"], "iss": "ewall-dev", "aud": DEV_AUDIENCE,
         "exp": now + 3600},
        strong, algorithm="HS256",
    )
    with pytest.raises(Unauthenticated):
        verifier.verify(no_iat)
    # numeric strings pass jwt.decode; the lifetime check needs numbers (was a 500)
    as_strings: list[dict[str, object]] = [
        {"exp": str(now + 3600)},
        {"iat": str(now), "exp": now + 3600},
    ]
    for odd in as_strings:
        with pytest.raises(Unauthenticated):
            verifier.verify(_forged(strong, **odd))
    with pytest.raises(Unauthenticated):
        verifier.verify(_forged(strong, sub=" a@firm.nl", exp=now + 3600))
    with pytest.raises(ValueError, match="ttl"):
        issue_dev_token(_defaults(tmp_path, dev_secret=strong), "a", ["lawyer"], 86400)


# --- the start-up check ------------------------------------------------------------------


def test_loopback_names() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost"]))
    assert is_loopback("::ffff:127.0.0.1")  # an IPv4 peer of a dual-stack socket
    assert not any(map(is_loopback, [ANYWHERE, "::", "10.0.0.5", "", "ewall.firm.nl"]))
    assert not is_loopback("::ffff:10.0.0.5")


def test_dev_mode_beyond_loopback_or_on_an_external_database_needs_a_strong_secret(
    tmp_path: Path,
) -> None:
    check_serve(_defaults(tmp_path), "127.0.0.1")  # the newcomer's case starts
    for settings, host in (
        (_defaults(tmp_path), ANYWHERE),
        (_defaults(tmp_path), "10.1.2.3"),
        (_defaults(tmp_path, database_url=EXTERNAL_URL), "127.0.0.1"),
    ):
        with pytest.raises(InsecureConfiguration):
            check_serve(settings, host)
    # and secrets a fuzz had accepted: the alphabet in order, keyboard rows, 16 random bytes
    # in hex, 32 bytes of 16 characters
    for weak in (
        "short-secret", PUBLISHED_SECRET, "a" * 64, "abcd" * 10, "abcdefgh" * 4,
        "abcdefghijklmnopqrstuvwxyz012345", "qwertyuiopasdfghjklzxcvbnm123456",
        secrets.token_hex(16), "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8" * 2,
        "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        # and a second review's: doubled letters, every other letter, decimal digits only
        "aabbccddeeffgghhiijjkkllmmnnooppqqrrssttuuvvwwxxyyzz",
        "acegikmoqsuwybdfhjlnprtvxz0246813579ACEG", "".join(secrets.choice("0123456789")
                                                           for _ in range(56)),
    ):  # fmt: skip
        with pytest.raises(InsecureConfiguration):
            check_serve(_defaults(tmp_path, dev_secret=weak), "127.0.0.1")
    for strong in (secrets.token_urlsafe(32), secrets.token_hex(32), secrets.token_urlsafe(48)):
        check_serve(_defaults(tmp_path, dev_secret=strong, database_url=EXTERNAL_URL), ANYWHERE)
    strong = secrets.token_urlsafe(48)
    with pytest.raises(InsecureConfiguration):
        check_serve(_defaults(tmp_path, auth_mode="oidc"), ANYWHERE)
    # the key set every token is checked against comes over https (plain http on loopback)
    oidc = {"auth_mode": "oidc", "oidc_issuer": "https://idp.example", "oidc_audience": "api"}
    for jwks in ("https://idp.example/keys", "http://127.0.0.1:8080/keys"):
        check_serve(_defaults(tmp_path, oidc_jwks_url=jwks, **oidc), ANYWHERE)
    for jwks in ("http://idp.example/keys", "ftp://idp.example/keys", "idp.example/keys"):
        with pytest.raises(InsecureConfiguration, match="https"):
            check_serve(_defaults(tmp_path, oidc_jwks_url=jwks, **oidc), ANYWHERE)


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["--host", ANYWHERE], {}),
        ([], {"EWALL_DATABASE_URL": EXTERNAL_URL}),
        ([], {"EWALL_DEV_SECRET": "too-short"}),
        (["--host", ANYWHERE], {"EWALL_AUTH_MODE": "oidc"}),
    ],
)
def test_ewall_serve_refuses_before_it_serves(
    tmp_path: Path, args: list[str], extra: dict[str, str]
) -> None:
    # the port is one nobody listens on: were the check missing, serve would start and block
    started = _ewall(["serve", *args, "--port", "9"], _cli_env(tmp_path, **extra))
    assert started.returncode != 0
    assert "refusing to serve" in started.stderr
    assert "Bearer" not in started.stdout + started.stderr
    assert not (tmp_path / "pg").exists()  # nothing started, nothing migrated


def test_without_an_operator_secret_the_app_answers_on_loopback_only(
    tmp_path: Path, db: DbHandle, settings: Settings, embedder: Any
) -> None:
    """`ewall serve` refuses such a bind, but the app factory served under uvicorn
    (`uvicorn app.serve:worker_app --factory --host 0.0.0.0`) was not asked: a check found
    it answering tokens signed with the data directory's key from the machine's address."""
    local = settings.model_copy(
        update={"dev_secret": None, "data_dir": tmp_path, "database_url": None}
    )
    headers = {"Authorization": f"Bearer {issue_dev_token(local, 'a@firm.nl', ['lawyer'])}"}
    app = create_app(local, db.database, embedder=embedder, start_worker=False)
    for base, status in (
        ("http://127.0.0.1:8000", 200), ("http://[::1]:8000", 200),
        ("http://[::ffff:127.0.0.1]:8000", 200),  # a dual-stack socket (a review)
        ("http://10.1.2.3:8000", 403), ("http://ewall.firm.nl", 403),
        ("http://[::ffff:10.1.2.3]:8000", 403),
    ):  # fmt: skip
        with TestClient(app, base_url=base, raise_server_exceptions=False) as client:
            answer = client.post("/v1/search", json={"query": "octrooi"}, headers=headers)
            assert answer.status_code == status, (base, answer.text)
            if status == 403:
                assert "EWALL_DEV_SECRET" in answer.json()["error"]["message"]
                assert client.get("/console").status_code == 403  # the console as well
    # with a secret the operator set, the address is the operator's choice
    with TestClient(
        create_app(settings, db.database, embedder=embedder, start_worker=False),
        base_url="http://10.1.2.3:8000",
    ) as client:
        token = issue_dev_token(settings, "a@firm.nl", ["lawyer"])
        answer = client.post(
            "/v1/search", json={"query": "octrooi"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 200, answer.text


def test_only_the_loopback_embedded_dev_server_prints_a_token(tmp_path: Path) -> None:
    strong = secrets.token_urlsafe(48)
    assert prints_dev_token(_defaults(tmp_path), "127.0.0.1")
    assert not prints_dev_token(_defaults(tmp_path, dev_secret=strong), ANYWHERE)
    assert not prints_dev_token(
        _defaults(tmp_path, dev_secret=strong, database_url=EXTERNAL_URL), "127.0.0.1"
    )
    assert not prints_dev_token(_defaults(tmp_path, auth_mode="oidc"), "127.0.0.1")


# --- audit paging cursors ----------------------------------------------------------------


def test_cursors_signed_with_a_key_from_the_source_are_refused(tmp_path: Path) -> None:
    published = hmac.new(PUBLISHED_SECRET.encode(), b"ewall audit cursor", hashlib.sha256)
    forged = encode_cursor(42, key=published.digest(), kind="retrievals")
    for settings in (_defaults(tmp_path), _defaults(tmp_path, auth_mode="oidc")):
        key = cursor_key(settings)
        with pytest.raises(Unprocessable):
            decode_cursor(forged, key=key, kind="retrievals")
        own = encode_cursor(42, key=key, kind="retrievals")
        assert decode_cursor(own, key=cursor_key(settings), kind="retrievals") == 42
    assert (tmp_path / "cursor-secret").stat().st_mode & 0o777 == 0o600
    with pytest.raises(InsecureConfiguration):
        cursor_key(_defaults(tmp_path, cursor_secret="short"))


# --- the container files -----------------------------------------------------------------


def test_compose_holds_no_secret_and_requires_them_from_the_environment() -> None:
    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    for name in ("EWALL_DEV_SECRET", "EWALL_CURSOR_SECRET", "POSTGRES_PASSWORD"):
        for value in re.findall(rf"^\s*{name}:\s*(.+)$", compose, re.MULTILINE):
            assert value.strip().strip('"').startswith("${"), (name, value)
    # every password in a URL comes from a required variable
    for password in re.findall(r"postgresql://[^:/]+:([^@]*)@", compose):
        assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]+\}", password), password
    assert re.search(r"EWALL_CURSOR_SECRET:\s*\"?\$\{EWALL_CURSOR_SECRET:\?", compose)
    assert re.search(r"EWALL_AUTH_MODE:\s*\"?\$\{EWALL_AUTH_MODE:-oidc\}", compose)
    assert PUBLISHED_SECRET not in compose and "change-me" not in compose
    initdb = (ROOT / "docker" / "initdb.sql").read_text(encoding="utf-8")
    assert "PASSWORD '" not in initdb.upper()


def test_compose_gives_the_schema_owner_to_the_one_shot_migration_only() -> None:
    """The API and the worker (which parses untrusted files) run as ewall_app: a process
    holding the owner's URL could rewrite the audit chain's head."""
    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    # top-level keys and services start at columns 0 and 2
    blocks = re.split(r"^(?=\S|  \w[\w-]*:\s*$)", compose, flags=re.MULTILINE)
    owners = [b.split(":", 1)[0].strip() for b in blocks if "postgresql://postgres:" in b]
    assert owners == ["migrate"], owners
    assert "EWALL_MIGRATIONS_DATABASE_URL" not in next(
        b for b in blocks if b.startswith("x-ewall-environment")
    )


def test_compose_publishes_the_api_only() -> None:
    """No service needs PostgreSQL from the host: a published port, even on 127.0.0.1, lets
    every local user try the superuser's password."""
    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    published = re.findall(r'^\s*-\s*"?([\d.]*:?\d+:\d+)"?\s*$', compose, re.MULTILINE)
    assert published == ["127.0.0.1:8000:8000"], published


def test_the_image_does_not_serve_dev_auth_on_all_interfaces() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    runtime = dockerfile.split("FROM python:3.11-slim\n")[-1]
    env = " ".join(re.findall(r"^ENV (.+?)(?<!\\)$", runtime, re.MULTILINE | re.DOTALL))
    assert re.search(r"\bEWALL_AUTH_MODE=oidc\b", env), env
    instructions = "\n".join(
        line for line in runtime.splitlines() if not line.lstrip().startswith("#")
    )
    assert "EWALL_DEV_SECRET" not in instructions
    # and were dev selected there, the server-side check refuses the image's bind address
    cmd = re.search(r"^CMD (.+)$", runtime, re.MULTILINE)
    assert cmd and f'"{ANYWHERE}"' in cmd.group(1)
    with pytest.raises(InsecureConfiguration):
        check_serve(Settings(_env_file=None, auth_mode="dev"), ANYWHERE)


def test_the_image_user_owns_its_data_directory() -> None:
    """WORKDIR made /srv/ewall root's: the cursor key, `ewall audit keygen` and `ewall audit
    checkpoint` could not write the default data directory (a read of 2026-12-06)."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    runtime = dockerfile.split("FROM python:3.11-slim\n")[-1]
    workdir = re.search(r"^WORKDIR (\S+)$", runtime, re.MULTILINE)
    user = re.search(r"^USER (\S+)$", runtime, re.MULTILINE)
    assert workdir and user
    name, folder = user.group(1), workdir.group(1)
    owned = re.search(rf"chown {name}:{name} {folder}/\.ewall\b", runtime)
    assert owned and owned.start() < user.start()
    compose = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    assert f":{folder}/.ewall" in compose
