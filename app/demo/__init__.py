"""The demo firm: a realistic Dutch law firm with ethical walls, loaded by ``ewall demo``.

``firm`` holds the conflict matrix as data, ``documents`` the generated firm documents,
``loader`` puts both (and public case law and statutes) into a database, idempotently.
"""
