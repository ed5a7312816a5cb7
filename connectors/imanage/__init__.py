"""iManage Work REST v2 connector (see README.md in this folder)."""

from connectors.imanage.connector import IManageConnector

__all__ = ["IManageConnector"]
