"""Source connectors: iManage Work, NetDocuments and export folders, behind one interface."""
