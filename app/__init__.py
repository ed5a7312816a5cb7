"""ewall: retrieval with ethical walls, inside PostgreSQL."""

__version__ = "0.1.0"
