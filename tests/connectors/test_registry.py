"""Every registered source imports; ``create`` builds every source by name: the HTTP ones from
settings, the folder ones from a path."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from connectors import registry
from connectors.base import Checkpoint, DocumentFailure, SourceDocument
from connectors.crawl import ConnectorSource
from connectors.folder.source import FolderSource
from connectors.imanage.connector import IManageConnector
from connectors.netdocuments.connector import NetDocumentsConnector
from tests.conftest import make_settings


@pytest.mark.parametrize("source", sorted(registry.REGISTRY))
def test_every_entry_imports(source: str) -> None:
    module, _, name = registry.REGISTRY[source].target.partition(":")
    assert importlib.util.find_spec(module) is not None, f"{module} (registry {source!r})"
    cls = registry.load(source)
    assert isinstance(cls, type)
    assert cls.__name__ == name
    assert (getattr(cls, "kind", None) or getattr(cls, "source", None)) == source


def test_the_expected_sources_are_registered() -> None:
    assert {"imanage", "netdocuments", "folder", "rechtspraak"} <= set(registry.REGISTRY)
    assert registry.needs_path("folder") and registry.needs_path("rechtspraak")
    assert not registry.needs_path("imanage")


def test_create_builds_the_folder_source(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("tekst", encoding="utf-8")
    rows: list[dict[str, Any]] = [
        {"external_id": "A", "path": "a.txt", "client_id": "C", "matter_id": "M"},
        {"external_id": "B", "path": "missing.txt"},
    ]
    (tmp_path / "metadata.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    source = registry.create("folder", make_settings(), path=tmp_path, source="export")
    assert isinstance(source, FolderSource)
    assert (source.name, source.kind) == ("export", "folder")
    assert not source.capabilities.sweep and not source.capabilities.keeps_state
    assert source.total() == 2
    items = list(source.full(None))
    assert isinstance(items[0], SourceDocument) and items[0].source == "export"
    assert isinstance(items[1], DocumentFailure) and items[1].details == {"line": 2}
    with pytest.raises(registry.SourceNotConfiguredError, match="needs a path"):
        registry.create("folder", make_settings())


def test_not_configured_is_a_usage_error() -> None:
    with pytest.raises(registry.SourceNotConfiguredError, match="EWALL_IMANAGE_URL"):
        registry.check_configured("imanage", make_settings(imanage_url=""))


def test_create_from_settings() -> None:
    settings = make_settings(
        imanage_url="http://127.0.0.1:9",
        imanage_username="u",
        imanage_password="p-secret",
        imanage_client_id="c",
        netdocuments_url="http://127.0.0.1:9",
        netdocuments_client_id="c",
        netdocuments_client_secret="s-secret",
        netdocuments_repository_id="CA-1",
    )
    imanage = registry.create("imanage", settings, page_size=10)
    # the same arguments are offered to every source (app.ingest.runs): each takes its own
    netdocs = registry.create("netdocuments", settings, pipeline=object(), source="x")
    try:
        assert isinstance(imanage, ConnectorSource)
        assert isinstance(imanage.connector, IManageConnector)
        assert imanage.connector.page_size == 10
        caps = imanage.capabilities
        assert caps.resumable and caps.changes and caps.point_check and caps.sweep
        assert isinstance(netdocs, ConnectorSource)
        assert isinstance(netdocs.connector, NetDocumentsConnector)
    finally:
        imanage.close()
        netdocs.close()


def test_unknown_source() -> None:
    with pytest.raises(registry.SourceNotConfiguredError, match="unknown connector"):
        registry.load("sharepoint")


def test_crawl_items_become_typed() -> None:
    class Crawl:
        source = "dms"
        scope = "s"

        def load_all(self) -> Any:
            yield SourceDocument(source="dms", external_id="1")
            yield "opaque-position"
            yield object()

    items = list(ConnectorSource(Crawl()).full(None))
    assert isinstance(items[0], SourceDocument)
    assert items[1] == Checkpoint("opaque-position")
    assert isinstance(items[2], DocumentFailure) and items[2].reason.startswith("unexpected")
