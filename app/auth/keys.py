"""Where the development signing key and the audit cursor key come from, and when
`ewall serve` must refuse to start.

Development auth is a one-machine mode: bound to loopback, with the embedded database. There,
without EWALL_DEV_SECRET, a random key is generated once per data directory (a 0600 file) and
shared by every process that reads that directory, so `ewall token` prints tokens the running
server accepts. Anywhere else the operator sets the secret, or the server does not start:
no key that anyone could read in this source tree ever signs or verifies a token or a cursor.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import itertools
import math
import os
import secrets
import string
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from app.settings import Settings

DEV_SECRET_FILE = "dev-secret"  # noqa: S105 (a file name)
CURSOR_SECRET_FILE = "cursor-secret"  # noqa: S105 (a file name)
MIN_SECRET_BYTES = 32
# a leaked development token is worth a working day at most, whatever its claims say
DEV_TOKEN_MAX_TTL_S = 12 * 3600
# words that mark a placeholder someone forgot to replace
_PLACEHOLDER_WORDS = ("change", "secret", "password", "example", "default")
_MIN_DISTINCT_CHARACTERS = 8
# share of neighbours next in alphabet or keyboard order, or twice the share alike (random:
# up to about 20%)
_MAX_IN_SEQUENCE = 0.6
_MAX_STEP_RUN = 8  # characters a constant step apart ("acegikmo")
# 32 bytes less a margin for a random draw that misses a class (no digit in 43 base64)
_MIN_SECRET_BITS = 7 * MIN_SECRET_BYTES
_GENERATE = 'python -c "import secrets; print(secrets.token_urlsafe(48))"'


class InsecureConfiguration(Exception):
    """The settings would serve, sign or verify with a secret nobody set or anyone could know."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1, localhost and 127.x written as IPv6 (::ffff:127.0.0.1, how a
    dual-stack socket names an IPv4 peer); anything else (0.0.0.0, a name) is not."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return (mapped or address).is_loopback


def _alphabet_bits(secret: str) -> float:
    """Bits a character of ``secret`` can carry at most, from the alphabet it is written in
    (hex 4, letters and digits about 6): what "32 random bytes" asks of its length."""
    if all(c in string.digits for c in secret):
        return math.log2(10)
    if all(c in string.hexdigits for c in secret):
        return 4.0
    classes = [string.ascii_lowercase, string.ascii_uppercase, string.digits, "-_+/="]
    size = sum(len(c) for c in classes if any(ch in c for ch in secret))
    others = {ch for ch in secret if not any(ch in c for c in classes)}
    return math.log2(max(size + len(others) * 4, 2))  # each other character: a few more


def _in_sequence(secret: str) -> float:
    """The share of neighbouring characters that are alike or follow each other in the
    alphabet or on a keyboard row ("aabbcc", "abcdef", "012345", "qwerty"): a few percent in
    a random secret."""
    rows = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")
    lowered = secret.lower()
    pairs = list(itertools.pairwise(lowered))
    if not pairs:
        return 0.0
    def keyboard(a: str, b: str) -> bool:
        return any(a in r and b in r and abs(r.index(a) - r.index(b)) == 1 for r in rows)

    near = sum(1 for a, b in pairs if abs(ord(a) - ord(b)) == 1 or keyboard(a, b))
    alike = sum(1 for a, b in pairs if a == b)
    # doubled letters ("aabbcc") count as much as a sequence; random: alike 2-10% of pairs
    return max(near, 2 * alike) / len(pairs)


def _longest_step_run(secret: str) -> int:
    """The longest stretch of characters a constant step apart ("acegikmo": 8)."""
    steps = [ord(b) - ord(a) for a, b in itertools.pairwise(secret)]
    longest = run = 1
    for before, step in itertools.pairwise(steps):
        run = run + 1 if step == before else 1
        longest = max(longest, run)
    return longest + 1 if steps else len(secret)


def weakness(secret: str) -> str | None:
    """Why ``secret`` is not fit to sign tokens, or None when it is: at least 32 random
    bytes, so at least 32 characters, and as many bits as 32 bytes hold by its alphabet (64
    hex digits, 43 base64 characters)."""
    if len(secret.encode()) < MIN_SECRET_BYTES or len(secret) < MIN_SECRET_BYTES:
        return f"is shorter than {MIN_SECRET_BYTES} bytes"
    lowered = secret.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return "looks like a placeholder"
    if len(set(secret)) < _MIN_DISTINCT_CHARACTERS:
        return "repeats too few characters to be random"
    if (secret + secret).find(secret, 1) < len(secret):  # "abcdefgh" * 4: one period repeated
        return "repeats a shorter pattern"
    if _in_sequence(secret) > _MAX_IN_SEQUENCE or _longest_step_run(secret) >= _MAX_STEP_RUN:
        return "follows the alphabet or the keyboard"
    if len(secret) * _alphabet_bits(secret) < _MIN_SECRET_BITS:
        return (
            f"holds fewer than {MIN_SECRET_BYTES} random bytes for its alphabet "
            "(e.g. 32 hex digits are 16 bytes)"
        )
    return None


def dev_signing_key(settings: Settings) -> str:
    """The HS256 key of development tokens: EWALL_DEV_SECRET, else the data directory's own."""
    if settings.dev_secret is not None:
        problem = weakness(settings.dev_secret.get_secret_value())
        if problem:
            raise InsecureConfiguration(
                f"EWALL_DEV_SECRET {problem}; generate one with {_GENERATE}"
            )
        return settings.dev_secret.get_secret_value()
    if not settings.uses_embedded_database:
        raise InsecureConfiguration(
            "development auth with an external database (EWALL_DATABASE_URL) needs "
            f"EWALL_DEV_SECRET (at least {MIN_SECRET_BYTES} random bytes: {_GENERATE}), "
            "or EWALL_AUTH_MODE=oidc"
        )
    return data_dir_secret(settings.data_dir, DEV_SECRET_FILE)


def cursor_key(settings: Settings) -> bytes:
    """The HMAC key of audit paging cursors.

    EWALL_CURSOR_SECRET when set; in development, derived from the development key (which
    the operator set or this data directory generated); otherwise a key generated for this
    data directory. Processes on several machines must share EWALL_CURSOR_SECRET.
    """
    if settings.cursor_secret is not None:
        value = settings.cursor_secret.get_secret_value()
        problem = weakness(value)
        if problem:
            raise InsecureConfiguration(
                f"EWALL_CURSOR_SECRET {problem}; generate one with {_GENERATE}"
            )
        return value.encode()
    if settings.auth_mode == "dev":
        base = dev_signing_key(settings)
    else:
        base = data_dir_secret(settings.data_dir, CURSOR_SECRET_FILE)
    return hmac.new(base.encode(), b"ewall audit cursor", hashlib.sha256).digest()


def check_serve(settings: Settings, host: str) -> None:
    """Raise InsecureConfiguration when `ewall serve` must not start on ``host``.

    Runs before the model loads and before any migration, so a careless deployment stops
    at once; it also makes the generated keys now, not in the middle of a request.
    """
    if settings.auth_mode == "oidc":
        missing = [
            name
            for name, value in (
                ("EWALL_OIDC_ISSUER", settings.oidc_issuer),
                ("EWALL_OIDC_AUDIENCE", settings.oidc_audience),
                ("EWALL_OIDC_JWKS_URL", settings.oidc_jwks_url),
            )
            if not value
        ]
        if missing:
            raise InsecureConfiguration(f"EWALL_AUTH_MODE=oidc needs {', '.join(missing)}")
        jwks = urlsplit(settings.oidc_jwks_url or "")
        # the keys every token is checked against: over plain HTTP anyone on the path could
        # hand the service their own
        on_loopback = jwks.scheme == "http" and is_loopback(jwks.hostname or "")
        if jwks.scheme != "https" and not on_loopback:
            raise InsecureConfiguration(
                "EWALL_OIDC_JWKS_URL must be an https:// URL (plain http only on loopback)"
            )
    else:
        if settings.dev_secret is None and not is_loopback(host):
            raise InsecureConfiguration(
                f"development auth bound to {host!r}, beyond loopback, needs EWALL_DEV_SECRET "
                f"(at least {MIN_SECRET_BYTES} random bytes: {_GENERATE}); for anything real "
                "set EWALL_AUTH_MODE=oidc with your identity provider"
            )
        dev_signing_key(settings)
    cursor_key(settings)


def prints_dev_token(settings: Settings, host: str) -> bool:
    """Only the loopback development server on the embedded database prints a token."""
    return settings.auth_mode == "dev" and is_loopback(host) and settings.uses_embedded_database


def data_dir_secret(data_dir: Path, name: str) -> str:
    """The random secret ``name`` of this data directory, made (0600) on first use.

    Several processes may start at once: each writes its own candidate and links it into
    place; the link fails for all but one, and every process reads the one that won.
    """
    folder = data_dir.expanduser().resolve()
    path = folder / name
    if not path.exists():
        # the folder keeps the default mode: the embedded server (its own system user when
        # run as root) has to traverse it
        folder.mkdir(parents=True, exist_ok=True)
        descriptor, candidate = tempfile.mkstemp(dir=folder, prefix=f".{name}.")  # 0600
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(secrets.token_urlsafe(48) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first
                os.link(candidate, path)
        finally:
            os.unlink(candidate)
    if path.is_symlink() or not path.is_file():
        raise InsecureConfiguration(f"{path} is not a plain file; remove it")
    if path.stat().st_mode & 0o077:
        raise InsecureConfiguration(f"{path} is readable by others; `chmod 600 {path}`")
    value = path.read_text(encoding="ascii").strip()
    problem = weakness(value)
    if problem:
        raise InsecureConfiguration(f"{path} {problem}; remove it and a new one is made")
    return value
