"""What the two document-management connectors (iManage, NetDocuments) share.

* ``client``: settings checks, downloads, and one-request listings of the vendor clients.
* ``acl``: principal names and the allow/deny/notes bookkeeping of an access-list mapping.
* ``connector``: ``DmsConnector``, the crawl skeleton (paging drive, per-container full crawl
  with checkpoints, deltas with watermarks, failure verdicts, parallel fetching, lifecycle).

Each vendor package keeps its own endpoints, response shapes and permission semantics.
"""
