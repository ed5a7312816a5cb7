"""Fixtures for connector tests: fake servers over real HTTP and a sleep that only records."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from app.db.engine import Database
from app.settings import Settings, get_settings
from connectors.imanage.connector import IManageConnector
from connectors.netdocuments.connector import NetDocumentsConnector
from tests.conftest import DbHandle, make_settings
from tests.fakes.imanage import FakeIManage
from tests.fakes.netdocuments import FakeNetDocuments
from tests.fakes.server import AppSlot, serve
from tests.helpers import cli_environment

if TYPE_CHECKING:
    from tests.connectors.nd_tenant import Syncs
    from tests.helpers import Firm


class DbFixture(Protocol):
    """The shared ``db`` fixture, as these tests use it."""

    database: Database


class Sleeps(list[float]):
    """Injected instead of time.sleep: records the waits, never waits."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


FAST = {"connector_rate_per_s": 1000.0, "connector_timeout_s": 5.0, "connector_overlap_s": 300}


def imanage_settings(fake: FakeIManage, **overrides: Any) -> Settings:
    return make_settings(imanage_url=fake.url, **{**FAST, **fake.settings(), **overrides})


def netdocuments_settings(fake: FakeNetDocuments, **overrides: Any) -> Settings:
    return make_settings(netdocuments_url=fake.url, **{**FAST, **fake.settings(), **overrides})


@pytest.fixture(scope="session")
def imanage_server() -> Iterator[tuple[AppSlot, str]]:
    slot = AppSlot()
    with serve(slot) as url:
        yield slot, url


@pytest.fixture(scope="session")
def netdocuments_server() -> Iterator[tuple[AppSlot, str]]:
    slot = AppSlot()
    with serve(slot) as url:
        yield slot, url


@pytest.fixture
def imanage_fake(imanage_server: tuple[AppSlot, str]) -> Iterator[FakeIManage]:
    """A fresh fake per test, behind the session's server."""
    slot, url = imanage_server
    fake = FakeIManage()
    fake.url = url
    slot.app = fake.app
    yield fake
    slot.app = None


@pytest.fixture
def netdocuments_fake(netdocuments_server: tuple[AppSlot, str]) -> Iterator[FakeNetDocuments]:
    slot, url = netdocuments_server
    fake = FakeNetDocuments()
    fake.url = url
    slot.app = fake.app
    yield fake
    slot.app = None


ImanageFactory = Callable[..., IManageConnector]
NetDocumentsFactory = Callable[..., NetDocumentsConnector]


@pytest.fixture
def imanage(imanage_fake: FakeIManage, sleeps: Sleeps) -> Iterator[ImanageFactory]:
    """Build connectors against the running fake; they share its clock and never sleep."""
    made: list[IManageConnector] = []

    def build(settings: dict[str, Any] | None = None, **kw: Any) -> IManageConnector:
        kw.setdefault("sleep", sleeps)
        kw.setdefault("clock", imanage_fake.clock)
        kw.setdefault("page_size", 2)
        connector = IManageConnector(imanage_settings(imanage_fake, **(settings or {})), **kw)
        made.append(connector)
        return connector

    yield build
    for connector in made:
        connector.close()


@pytest.fixture
def netdocuments(
    netdocuments_fake: FakeNetDocuments, sleeps: Sleeps
) -> Iterator[NetDocumentsFactory]:
    made: list[NetDocumentsConnector] = []

    def build(settings: dict[str, Any] | None = None, **kw: Any) -> NetDocumentsConnector:
        kw.setdefault("sleep", sleeps)
        kw.setdefault("clock", netdocuments_fake.clock)
        kw.setdefault("page_size", 2)
        connector = NetDocumentsConnector(
            netdocuments_settings(netdocuments_fake, **(settings or {})), **kw
        )
        made.append(connector)
        return connector

    yield build
    for connector in made:
        connector.close()


@pytest.fixture
def tenant(
    client: Any,
    auth: Any,
    db: DbFixture,
    netdocuments_fake: FakeNetDocuments,
    netdocuments: NetDocumentsFactory,
) -> tuple[Firm, Syncs]:
    """The NetDocuments tenant of tests/connectors/nd_tenant.py, fully crawled once."""
    from tests.connectors.nd_tenant import Syncs, build_tenant
    from tests.helpers import Firm

    firm = Firm(client, auth)
    build_tenant(firm, netdocuments_fake)
    sync = Syncs(client, db, netdocuments_fake, netdocuments)
    assert sync("full")["complete"] is True
    return firm, sync


@pytest.fixture
def imanage_cli_env(
    db: DbHandle, embedder: Any, imanage_fake: FakeIManage, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DbHandle]:
    """`app.cli.main` as an operator runs it: EWALL_* at the test database and the fake
    iManage tenant, the session's loaded model handed to the command."""
    cli_environment(monkeypatch, db)
    monkeypatch.setenv("EWALL_IMANAGE_URL", imanage_fake.url)
    monkeypatch.setenv("EWALL_CONNECTOR_RATE_PER_S", "1000")
    monkeypatch.setenv("COLUMNS", "200")  # the report's per-library table, unwrapped
    for name, value in imanage_fake.settings().items():
        monkeypatch.setenv(f"EWALL_{name.upper()}", value)
    monkeypatch.setattr("app.embeddings.Embedder", lambda _settings: embedder)
    get_settings.cache_clear()
    yield db
    get_settings.cache_clear()
