"""The `ewall` command line."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import OperationalError as SQLAlchemyOperationalError

from app.auth.keys import InsecureConfiguration, check_serve, prints_dev_token
from app.chunks import cli as chunks_cli
from app.db.engine import WrongEncoding
from app.demo import cli as demo_cli
from app.evaluation import cli as evaluation_cli
from app.ingest import cli as ingest_cli
from app.logging import configure_logging
from app.matrix import cli as matrix_cli
from app.model import cli as model_cli
from app.reembed import cli as reembed_cli
from app.settings import Settings, get_settings
from app.types import rounded_up_to_microseconds

Handler = Callable[[argparse.Namespace, Settings], int]
log = logging.getLogger("ewall.cli")


def _port(value: str) -> int:
    """A TCP port for argparse: 1-65535, else a usage error (not an OverflowError later)."""
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1-65535, not {port}")
    return port


def _fail(message: str) -> int:
    print(f"ewall: {message}", file=sys.stderr)
    return 2


# --- serve --------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    host = args.host or settings.host
    port = args.port or settings.port
    # before the model, the database and the migrations: a careless deployment stops here
    try:
        check_serve(settings, host)
    except InsecureConfiguration as exc:
        return _fail(f"refusing to serve: {exc}")
    problem = _cannot_listen(host, port)
    if problem:  # before the migrations and the model, which take a while
        return _fail(f"cannot listen on {host}:{port}: {problem}")

    import uvicorn

    from app.db.runtime import open_database
    from app.embeddings import Embedder, EncoderUnavailable
    from app.http11 import uvicorn_options
    from app.main import StartupError, check_dimensions, create_app

    # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, so code after
    # uvicorn.run may never run: the database (and the embedded server) is released from the
    # app's shutdown hook as well as on the way out; closing twice is harmless.
    resources = ExitStack()
    try:
        database = resources.enter_context(open_database(settings))
        try:
            embedder = Embedder(settings)
        except (OSError, ValueError, EncoderUnavailable) as exc:
            return _fail(f"the model {settings.embedding_model!r} did not load: {exc}")
        try:
            check_dimensions(settings, database, embedder.dimension, embedder.model_id)
        except StartupError as exc:
            return _fail(str(exc))
        if args.demo_if_empty:
            from app.demo.cli import progress_bars
            from app.demo.loader import is_empty, load_demo

            if is_empty(database):
                print(
                    "The database is empty: loading the demo firm (a few minutes the first "
                    "time; it embeds real case law).",
                    flush=True,
                )
                with progress_bars() as on_progress:
                    load_demo(database, settings, embedder, progress=on_progress)
        if args.workers > 1:
            from app.serve import serve_workers

            _print_welcome(settings, host, port)
            # the workers each load their own model; the parent's copy is not needed now
            del embedder
            serve_workers(settings, database, host, port, args.workers)
            return 0
        app = create_app(
            settings,
            database,
            embedder=embedder,
            job_process=settings.job_process,
            on_shutdown=resources.close,
        )
        _print_welcome(settings, host, port)
        try:
            uvicorn.run(app, host=host, port=port, **uvicorn_options())
        except StartupError as exc:
            return _fail(str(exc))
    finally:
        resources.close()
    return 0


def _cannot_listen(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound (in use, not ours to take), as uvicorn would bind
    it, or None. Uvicorn finds out only after the migrations and the model and then exits 3
    with the reason in a log line (a check of 2026-12-06). The port may still be taken
    between this test and uvicorn's bind: then uvicorn's own exit stands."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _print_welcome(settings: Settings, host: str, port: int) -> None:
    from app.auth.service import issue_dev_token

    if prints_dev_token(settings, host):
        # the newcomer's ready-to-paste search; a server others can reach prints no token
        token = issue_dev_token(settings, "ldekker@firm.nl", ["lawyer"])
        print(f"\newall is starting on http://{host}:{port}  (docs: /docs)")
        print("Try a search as a lawyer of the demo firm (development token, 8 h):\n")
        print(
            f"curl -s -X POST http://{host}:{port}/v1/search "
            f"-H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' "
            '-d \'{"query": "onrechtmatige daad schadevergoeding", "k": 5}\'\n',
            flush=True,
        )
        print(
            f"The console for conflicts and compliance: http://{host}:{port}/console\n"
            "sign in with the token of `ewall token --sub hmeijer@firm.nl --role conflicts`"
            " (the conflicts partner) or `--sub rbos@firm.nl --role compliance`.\n",
            flush=True,
        )


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return number


# --- worker -------------------------------------------------------------------------------


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from app.db import migrate
    from app.db.runtime import open_database
    from app.jobs.worker import read_settings, run_worker
    from app.main import StartupError

    if args.supervised:  # started by `ewall serve`: settings and commands on stdin
        given = read_settings(sys.stdin)
        if given is None:
            return 0  # the API process went away before it said anything
        configure_logging(given.log_level, given.log_json)
        with open_database(given, run_migrations=False) as database:
            try:
                return run_worker(
                    given, database, commands=sys.stdin, parent_pid=args.parent_pid or None
                )
            except StartupError as exc:
                return _fail(str(exc))
    with open_database(settings, run_migrations=False) as database:
        current = migrate.current_revision(database.urls.migrations)
        head = migrate.head_revision()
        if current != head:
            return _fail(
                f"the schema is at {current}, not at {head}: run `ewall migrate` (or start "
                "`ewall serve`, which migrates) first"
            )
        try:
            return run_worker(settings, database)
        except StartupError as exc:
            return _fail(str(exc))


# --- migrate, token -----------------------------------------------------------------------


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    from app.db import migrate
    from app.db.runtime import open_database

    with open_database(settings) as database:
        print(f"schema at {migrate.current_revision(database.urls.migrations)} (head)")
    return 0


def cmd_token(args: argparse.Namespace, settings: Settings) -> int:
    from app.auth.service import issue_dev_token

    if settings.auth_mode != "dev":
        return _fail("tokens are issued by your identity provider when EWALL_AUTH_MODE=oidc")
    try:
        print(issue_dev_token(settings, args.sub, args.role or ["lawyer"], args.ttl))
    except (ValueError, InsecureConfiguration) as exc:
        return _fail(str(exc))
    return 0


def cmd_schema_snapshot(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from app.db import snapshot

    current = snapshot.scratch_snapshot()
    if args.check:
        expected = snapshot.committed()
        if current != expected:
            print(snapshot.diff(expected, current))
            return _fail(f"the migrations and the snapshot differ; run {snapshot.REGENERATE}")
        print("the schema snapshot matches the migrations")
        return 0
    path = Path(args.output) if args.output else snapshot.snapshot_path()
    path.write_text(current, encoding="utf-8")
    print(f"wrote {path}")
    return 0


# --- audit --------------------------------------------------------------------------------


def cmd_audit_verify(args: argparse.Namespace, settings: Settings) -> int:
    from app.audit import checkpoints
    from app.db.engine import begin_snapshot
    from app.db.runtime import open_database

    public = None
    if args.checkpoints is not None:
        public_file = (
            Path(args.public_key)
            if args.public_key
            else checkpoints.public_key_path(checkpoints.key_path(settings))
        )
        try:
            public = checkpoints.load_public_key(public_file)
        except checkpoints.CheckpointError as exc:
            return _fail(str(exc))
    with open_database(settings) as database, database.engine.connect() as conn:
        begin_snapshot(conn)  # one committed state, as the checkpoint writes (searches go on)
        report = (
            checkpoints.verify_configured(conn, settings)
            if public is None
            else checkpoints.verify_with_checkpoints(conn, Path(args.checkpoints), public)
        )
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


def cmd_audit_keygen(args: argparse.Namespace, settings: Settings) -> int:
    from app.audit import checkpoints

    key = Path(args.key) if args.key else checkpoints.key_path(settings)
    try:
        public = checkpoints.generate_key(key)
    except checkpoints.CheckpointError as exc:
        return _fail(str(exc))
    print(json.dumps({"key": str(key), "public_key": str(public)}, indent=2))
    return 0


def cmd_audit_checkpoint(args: argparse.Namespace, settings: Settings) -> int:
    from app.audit import checkpoints
    from app.db.engine import begin_snapshot
    from app.db.runtime import open_database

    key_file = Path(args.key) if args.key else checkpoints.key_path(settings)
    directory = Path(args.dir) if args.dir else checkpoints.checkpoint_dir(settings)
    try:
        key, made = checkpoints.signing_key(key_file)  # as the service's schedule takes it
        if made is not None:
            print(f"generated the signing key {key_file} (public key {made})", file=sys.stderr)
        with open_database(settings) as database, database.engine.connect() as conn:
            # one state: the rows verified are the rows whose heads are signed
            begin_snapshot(conn)
            written = checkpoints.write_checkpoint(conn, key, directory)
    except checkpoints.CheckpointError as exc:
        return _fail(str(exc))
    out = {
        "file": str(written.path),
        "chains": written.heads,
        "public_key": str(checkpoints.public_key_path(key_file)),
    }
    print(json.dumps(out, indent=2))
    return 0


def _instant(value: str) -> datetime:
    """An RFC 3339 date-time with its zone, as the API takes it (never a guessed zone): an
    audit export's since or until, so a fraction finer than a microsecond is rounded up as
    the API rounds it (app/audit/router.py Bound); cut, --until ...00.123456001Z left out a
    retrieval made at ...00.123456."""
    wrong = argparse.ArgumentTypeError(
        f"{value!r} is not an RFC 3339 date-time with a zone, e.g. 2026-01-31T09:00:00Z"
    )
    try:
        parsed = rounded_up_to_microseconds(value.strip(), datetime.fromisoformat)
    except (ValueError, OverflowError):
        raise wrong from None
    if parsed.tzinfo is None:
        raise wrong
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise wrong from None


def _sequence_number(value: str) -> int:
    """A chain position: 0 or more, within PostgreSQL's bigint."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 0 <= number < 2**63:
        raise argparse.ArgumentTypeError("must be 0 or more (a seq of the chain)")
    return number


def cmd_audit_export(args: argparse.Namespace, settings: Settings) -> int:
    from app.audit.service import export_lines, final_before
    from app.db.runtime import open_database

    if args.since is not None and args.until is not None and args.since > args.until:
        # an empty export would read as "nobody read anything then"
        print("ewall audit export: --until must not be before --since", file=sys.stderr)
        return 2
    with open_database(settings) as database:
        final = final_before(database.transaction)
        if args.until is None or args.until > final:
            print(
                f"ewall audit export: retrievals resolved after {final.isoformat()} may still "
                "be recorded (searches still running); export that window again later to have "
                "it whole",
                file=sys.stderr,
            )
        for line in export_lines(
            database.transaction, since=args.since, until=args.until, after_seq=args.after_seq
        ):
            sys.stdout.write(line)
    return 0


# --- settings -----------------------------------------------------------------------------


def cmd_settings_doc(args: argparse.Namespace, settings: Settings) -> int:
    from app.settings_doc import render

    # the class's defaults, not this environment's values: the page is the same everywhere
    sys.stdout.write(render())
    return 0


# --- parser -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ewall", description="Retrieval with ethical walls, inside PostgreSQL."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", help="apply migrations, load the model, serve the API")
    p.add_argument("--host", default=None)
    p.add_argument("--port", type=_port, default=None)
    p.add_argument(
        "--demo-if-empty", action="store_true", help="load the demo firm into an empty database"
    )
    p.add_argument(
        "--workers",
        type=_positive,
        default=1,
        help="API processes behind the one address (each loads the model; the database, "
        "migrations and background workers are set up once, by this process)",
    )
    p.set_defaults(handler=cmd_serve)

    p = sub.add_parser(
        "worker",
        help="run the background jobs (large documents, connector runs) in this process, at "
        "a lower OS priority; `ewall serve` starts one itself unless EWALL_JOB_PROCESS=false",
    )
    p.add_argument(
        "--supervised",
        action="store_true",
        help="started by `ewall serve`: read the settings from stdin, stop when it closes",
    )
    p.add_argument(
        "--parent-pid",
        type=int,
        default=0,
        help="with --supervised: the API process's pid; the worker stops once it is not "
        "its parent any more (the API process is gone)",
    )
    p.set_defaults(handler=cmd_worker)

    p = sub.add_parser("migrate", help="bring the schema to the latest revision")
    p.set_defaults(handler=cmd_migrate)

    schema = sub.add_parser("schema", help="schema tools").add_subparsers(
        dest="schema_command", required=True
    )
    p = schema.add_parser(
        "snapshot",
        help="migrate a scratch embedded PostgreSQL to head and write its catalog "
        "(migrations/schema.sql)",
    )
    p.add_argument("--output", default=None, help="write here instead of migrations/schema.sql")
    p.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    p.set_defaults(handler=cmd_schema_snapshot)

    p = sub.add_parser("token", help="print a development token (EWALL_AUTH_MODE=dev)")
    p.add_argument("--sub", required=True, help="person id, e.g. alice@firm.nl")
    p.add_argument(
        "--role", action="append", choices=["lawyer", "conflicts", "compliance", "admin"]
    )
    p.add_argument(
        "--ttl", type=int, default=8 * 3600, help="lifetime in seconds, 12 hours at most"
    )
    p.set_defaults(handler=cmd_token)

    audit = sub.add_parser("audit", help="audit log tools").add_subparsers(
        dest="audit_command", required=True
    )
    p = audit.add_parser("verify", help="verify the hash chains")
    p.add_argument(
        "--checkpoints",
        default=None,
        metavar="DIR",
        help="also prove that the chains still extend every signed checkpoint in DIR "
        "(catches a superuser who rewrote history and recomputed the chain)",
    )
    p.add_argument(
        "--public-key",
        default=None,
        help="the checkpoints' public key (default: EWALL_AUDIT_CHECKPOINT_KEY + .pub)",
    )
    p.set_defaults(handler=cmd_audit_verify)
    p = audit.add_parser(
        "keygen",
        help="create the Ed25519 key that signs audit checkpoints (0600) and its public key",
    )
    p.add_argument("--key", default=None, help="default: EWALL_AUDIT_CHECKPOINT_KEY")
    p.set_defaults(handler=cmd_audit_keygen)
    p = audit.add_parser(
        "checkpoint",
        help="verify the chains, sign their heads and write a checkpoint file to a directory "
        "out of the database's reach (the key is generated on first use)",
    )
    p.add_argument("--key", default=None, help="default: EWALL_AUDIT_CHECKPOINT_KEY")
    p.add_argument("--dir", default=None, help="default: EWALL_AUDIT_CHECKPOINT_DIR")
    p.set_defaults(handler=cmd_audit_checkpoint)
    p = audit.add_parser("export", help="write retrievals as JSON lines to stdout")
    p.add_argument("--since", type=_instant, default=None, help="RFC 3339, with a zone")
    p.add_argument("--until", type=_instant, default=None, help="RFC 3339, with a zone")
    p.add_argument(
        "--after-seq",
        type=_sequence_number,
        default=None,
        help="only retrievals after this seq (the last one a previous export wrote): "
        "exports that continue one another miss nothing",
    )
    p.set_defaults(handler=cmd_audit_export)

    settings_cmd = sub.add_parser("settings", help="settings tools").add_subparsers(
        dest="settings_command", required=True
    )
    p = settings_cmd.add_parser(
        "doc",
        help="print docs/settings.md, the reference of every setting, from app/settings.py "
        "(`ewall settings doc > docs/settings.md`)",
    )
    p.set_defaults(handler=cmd_settings_doc)

    for register in _registrations():
        register(sub)
    return parser


def _registrations() -> list[Callable[[Any], None]]:
    """Commands that live with their domain (ingest, demo, eval, reembed, chunks, model,
    ids)."""
    return [
        ingest_cli.register,
        demo_cli.register,
        evaluation_cli.register,
        reembed_cli.register,
        chunks_cli.register,
        model_cli.register,
        matrix_cli.register,
    ]


def _stop_on_sigterm(signum: int, frame: object) -> None:
    # SIGTERM (systemd, Kubernetes, `kill`) unwinds like Ctrl-C: an ingest or re-embed run is
    # closed as failed ("interrupted"), and this process's hold on the embedded PostgreSQL is
    # released, which stops the server when no other process holds it. A second SIGTERM (a
    # supervisor that repeats) must not interrupt that cleanup.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


@contextmanager
def _sigterm_unwinds(handler: Handler) -> Iterator[None]:
    """SIGTERM raises SystemExit while ``handler`` runs, so its ``finally`` blocks run.
    `serve` and `worker` handle SIGTERM themselves (a graceful shutdown)."""
    own_handling = handler in (cmd_serve, cmd_worker)
    if own_handling or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = get_settings()
    except ValidationError as exc:
        # one line per setting, named as the operator sets it
        for error in exc.errors():
            loc = error["loc"]
            name = "EWALL_" + "_".join(str(p) for p in loc).upper() if loc else "settings"
            print(f"ewall: {name}: {error['msg']}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_json)
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        with _sigterm_unwinds(handler):
            return handler(args, settings)
    except KeyboardInterrupt:
        return 130
    except WrongEncoding as exc:  # before anything was migrated or served
        return _fail(str(exc))
    except OSError as exc:  # a path that is missing, a folder, unwritable, ...
        return _fail(str(exc))
    except SQLAlchemyOperationalError as exc:
        print(f"ewall: the database cannot be reached: {exc.orig}", file=sys.stderr)
        return 1
    except (DBAPIError, psycopg.Error) as exc:
        # the database refused a statement (a lock not had in time, a constraint): one line
        # naming it; the rest is for those who asked for debug logs
        log.debug("database error", exc_info=True)
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        print(f"ewall: the database refused: {reason[0] if reason else type(exc).__name__}",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
