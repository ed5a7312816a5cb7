"""Every registered connector imports; ``create`` builds the HTTP ones from settings."""

from __future__ import annotations

import importlib.util

import pytest

from connectors import registry
from connectors.imanage.connector import IManageConnector
from connectors.netdocuments.connector import NetDocumentsConnector
from tests.conftest import make_settings


@pytest.mark.parametrize("source", sorted(registry.REGISTRY))
def test_every_entry_imports(source: str) -> None:
    module = registry.REGISTRY[source].partition(":")[0]
    assert importlib.util.find_spec(module) is not None, f"{module} (registry {source!r})"
    cls = registry.load(source)
    assert isinstance(cls, type)
    assert cls.__name__ == registry.REGISTRY[source].partition(":")[2]
    assert getattr(cls, "source", source) == source


def test_the_expected_sources_are_registered() -> None:
    assert {"imanage", "netdocuments", "folder"} <= set(registry.REGISTRY)
    assert registry.REGISTRY["folder"] == "connectors.folder.connector:FolderConnector"


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
    netdocs = registry.create("netdocuments", settings)
    try:
        assert isinstance(imanage, IManageConnector)
        assert imanage.page_size == 10
        assert isinstance(netdocs, NetDocumentsConnector)
    finally:
        imanage.close()
        netdocs.close()


def test_unknown_source() -> None:
    with pytest.raises(KeyError, match="unknown connector"):
        registry.load("sharepoint")
