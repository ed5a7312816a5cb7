"""A local stand-in for the judiciary's open-data endpoint (data.rechtspraak.nl).

A real HTTP server (FastAPI under uvicorn, in a background thread, on 127.0.0.1 and a free
port) serving ``GET /uitspraken/content?id=ECLI:...`` from the real records in the shared
corpus, with per-ECLI knobs for the situations the citation gate must handle: voided
(isReplacedBy), an empty isReplacedBy marker, set aside by a later instance, declared
lapsed, an explicit withdrawal marker, slow answers, HTTP errors and garbage bodies.

    with FakeRechtspraak() as fake:
        fake.replaced("ECLI:NL:HR:1995:AA1532", by="ECLI:NL:HR:1996:AA1742")
        settings = make_settings(rechtspraak_url=fake.url)
"""

from __future__ import annotations

import asyncio
import csv
import math
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import urlencode

import uvicorn
from fastapi import FastAPI, Query
from fastapi.responses import Response, StreamingResponse
from lxml import etree

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
DCTERMS = "http://purl.org/dc/terms/"
PSI = "http://psi.rechtspraak.nl/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
ECLI_NS = "https://e-justice.europa.eu/ecli"
PATH = "/uitspraken/content"
_STEP_S = 0.05


def corpus_dir() -> Path:
    """The shared corpus: EWALL_CORPUS_DIR, else ../shared/corpus next to the repository."""
    env = os.environ.get("EWALL_CORPUS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def rechtspraak_dir() -> Path:
    return corpus_dir() / "rechtspraak"


def manifest() -> list[dict[str, str]]:
    with (rechtspraak_dir() / "manifest.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def record_files() -> dict[str, Path]:
    """ECLI -> file of the clean records (the first file wins for a duplicated ECLI)."""
    out: dict[str, Path] = {}
    for row in manifest():
        out.setdefault(row["ecli"], rechtspraak_dir() / row["file"])
    return out


@dataclass
class Knob:
    """How the fake answers for one ECLI. Fields combine (e.g. slow AND replaced)."""

    status: int = 200
    delay_s: float = 0.0  # before the headers
    trickle_s: float = 0.0  # headers at once, then the body in pieces over this long
    garbage: bool = False
    base: str | None = None  # serve this corpus record under the requested ECLI
    other: str | None = None  # answer with this other ECLI's record, unchanged
    empty_replaced: bool = False
    replaced_by: str | None = None
    set_aside_by: str | None = None
    vervallen_by: str | None = None
    withdrawal: str | None = None  # text of an explicit <ingetrokken> marker ("" = empty)
    redirect_to: str | None = None  # answer 302 to this URL (with the ECLI, once)
    stray_bytes: int = 0  # this many Latin-1 bytes in a comment: declared UTF-8, not UTF-8


@dataclass
class _State:
    knobs: dict[str, Knob] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: bool = False


def _q(ns: str, local: str) -> str:
    return f"{{{ns}}}{local}"


def _add_relation(description: etree._Element, target: str, kind: str, gevolg: str | None) -> None:
    rel = etree.SubElement(description, _q(DCTERMS, "relation"))
    rel.set(_q(RDFS, "label"), "Formele relatie")
    rel.set(_q(ECLI_NS, "resourceIdentifier"), target)
    rel.set(_q(PSI, "type"), f"http://psi.rechtspraak.nl/{kind}")
    rel.set(_q(PSI, "aanleg"), "http://psi.rechtspraak.nl/latereAanleg")
    if gevolg is not None:
        rel.set(_q(PSI, "gevolg"), f"http://psi.rechtspraak.nl/gevolg#{gevolg}")
    rel.text = f"{kind}: {target}" + (f", {gevolg}" if gevolg else "")


def render(ecli: str, knob: Knob, files: dict[str, Path]) -> bytes | None:
    """The record the fake serves for ``ecli`` under ``knob``; None when it has none."""
    source = files.get(knob.other or knob.base or ecli)
    if source is None:
        return None
    data = source.read_bytes()
    changes = (
        knob.base,
        knob.empty_replaced,
        knob.replaced_by,
        knob.set_aside_by,
        knob.vervallen_by,
        knob.withdrawal,
    )
    if all(c in (None, False) for c in changes):
        return data
    root = etree.fromstring(data)
    description = root.find(f".//{_q(RDF, 'Description')}")
    assert description is not None, f"{source} has no rdf:Description"
    if knob.base is not None and knob.other is None:
        identifier = description.find(_q(DCTERMS, "identifier"))
        assert identifier is not None
        identifier.text = ecli
    if knob.empty_replaced:
        etree.SubElement(description, _q(DCTERMS, "isReplacedBy"))
    if knob.replaced_by is not None:
        etree.SubElement(description, _q(DCTERMS, "isReplacedBy")).text = knob.replaced_by
    if knob.set_aside_by is not None:
        _add_relation(
            description,
            knob.set_aside_by,
            "cassatie",
            "(Gedeeltelijke) vernietiging en zelf afgedaan",
        )
    if knob.vervallen_by is not None:
        _add_relation(description, knob.vervallen_by, "vervallenverklaring", None)
    if knob.withdrawal is not None:
        marker = etree.SubElement(description, _q(PSI, "ingetrokken"))
        marker.set(_q(RDFS, "label"), "Ingetrokken")
        marker.text = knob.withdrawal
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


async def _trickle(body: bytes, seconds: float, state: _State) -> AsyncIterator[bytes]:
    """The body in 20 pieces, each gap far shorter than any per-read timeout."""
    pieces = 20
    size = max(1, math.ceil(len(body) / pieces))
    for start in range(0, len(body), size):
        if state.closing:
            return
        yield body[start : start + size]
        await asyncio.sleep(seconds / pieces)


def _build_app(state: _State, files: dict[str, Path]) -> FastAPI:
    app = FastAPI(title="fake data.rechtspraak.nl")

    @app.get(PATH)
    async def content(ecli: str = Query("", alias="id"), moved: str = Query("")) -> Response:
        with state.lock:
            state.hits[ecli] += 1
            knob = state.knobs.get(ecli, Knob())
        # sleep in steps so that stopping the server does not have to cancel handlers
        steps = math.ceil(knob.delay_s / _STEP_S)
        for _ in range(steps):
            if state.closing:
                break
            await asyncio.sleep(knob.delay_s / steps)
        if knob.status != 200:
            return Response(f"error {knob.status}", status_code=knob.status)
        if knob.garbage:
            return Response(b"\x00\xffnot <xml at all", media_type="application/xml")
        if knob.redirect_to is not None and not moved:
            target = f"{knob.redirect_to}?{urlencode({'id': ecli, 'moved': '1'})}"
            return Response(status_code=302, headers={"Location": target})
        body = render(ecli, knob, files)
        if body is None:
            return Response("Not found", status_code=404, media_type="text/plain")
        if knob.stray_bytes:
            end = body.index(b"?>") + 2 if body.startswith(b"<?xml") else 0
            body = body[:end] + b"<!-- " + b"\xe9" * knob.stray_bytes + b" -->" + body[end:]
        if knob.trickle_s > 0:
            return StreamingResponse(
                _trickle(body, knob.trickle_s, state), media_type="application/xml"
            )
        return Response(body, media_type="application/xml")

    return app


class FakeRechtspraak:
    """The fake server; a context manager. ``url`` is what EWALL_RECHTSPRAAK_URL takes."""

    def __init__(self) -> None:
        self.files = record_files()
        self._state = _State()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeRechtspraak:
        self._state.closing = False
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            _build_app(self._state, self.files),
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            daemon=True,
            name="fake-rechtspraak",
        )
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake Rechtspraak server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._state.closing = True
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeRechtspraak:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.base_url + PATH

    # --- knobs ---------------------------------------------------------------------------

    def reset(self) -> None:
        with self._state.lock:
            self._state.knobs.clear()
            self._state.hits.clear()

    def set(self, ecli: str, **changes: object) -> Knob:
        with self._state.lock:
            knob = self._state.knobs.setdefault(ecli, Knob())
            for name, value in changes.items():
                if not hasattr(knob, name):
                    raise AttributeError(f"Knob has no field {name!r}")
                setattr(knob, name, value)
            return knob

    def alias(self, ecli: str, base: str) -> None:
        """Serve the corpus record ``base`` as if it were ``ecli``."""
        self.set(ecli, base=base)

    def wrong_record(self, ecli: str, other: str) -> None:
        """Answer for ``ecli`` with the record of ``other`` (a confused source)."""
        self.set(ecli, other=other)

    def empty_replaced(self, ecli: str) -> None:
        self.set(ecli, empty_replaced=True)

    def replaced(self, ecli: str, by: str) -> None:
        self.set(ecli, replaced_by=by)

    def set_aside(self, ecli: str, by: str) -> None:
        self.set(ecli, set_aside_by=by)

    def vervallen(self, ecli: str, by: str) -> None:
        self.set(ecli, vervallen_by=by)

    def withdrawn(self, ecli: str, marker: str = "ingetrokken") -> None:
        self.set(ecli, withdrawal=marker)

    def slow(self, ecli: str, seconds: float) -> None:
        self.set(ecli, delay_s=seconds)

    def trickle(self, ecli: str, seconds: float) -> None:
        """Send the headers at once and the body slowly, over ``seconds``."""
        self.set(ecli, trickle_s=seconds)

    def fail(self, ecli: str, status: int = 500) -> None:
        self.set(ecli, status=status)

    def garbage(self, ecli: str) -> None:
        self.set(ecli, garbage=True)

    def hits(self, ecli: str) -> int:
        with self._state.lock:
            return self._state.hits[ecli]


@contextmanager
def running_fake() -> Iterator[FakeRechtspraak]:
    with FakeRechtspraak() as fake:
        yield fake


# Bound, never listening, held for the process's life: a connection there is refused, and
# no other xdist worker's server can take the port (a port closed again could be given to
# one, and the "unreachable" source answered).
_REFUSING: list[socket.socket] = []


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    _REFUSING.append(sock)
    port = int(sock.getsockname()[1])
    return f"http://127.0.0.1:{port}{PATH}"
