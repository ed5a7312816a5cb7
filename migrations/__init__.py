"""Alembic, the only way the schema changes: env.py, alembic.ini and versions/.

Shipped inside the wheel; ``app.db.migrate`` finds it with ``importlib.resources``.
``schema.sql`` is the normalised catalog the migrations build (``make schema-snapshot``).
"""
