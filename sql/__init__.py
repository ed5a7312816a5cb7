"""The hand-written SQL as named blocks (``*.sql``), shipped as package data.

Only ``app.db.sqlfiles`` reads these files, through ``importlib.resources``, so the same code
works from a checkout, an editable install and an installed wheel. ``functions/`` holds the
database functions' definitions, which migrations apply through ``app.db.function_sources``.
"""
