"""NetDocuments REST connector (see README.md in this folder)."""

from connectors.netdocuments.connector import NetDocumentsConnector

__all__ = ["NetDocumentsConnector"]
