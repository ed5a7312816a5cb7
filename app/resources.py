"""What the lifespan builds once and routes borrow: settings, database, encoder, caches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.auth.service import TokenVerifier
from app.db.engine import Database
from app.settings import Settings

if TYPE_CHECKING:
    from app.embeddings import Embedder
    from app.walls.resolution import AccessResolver


@dataclass
class Resources:
    settings: Settings
    database: Database
    verifier: TokenVerifier
    embedder: Embedder | None = None
    resolver: AccessResolver | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def require_embedder(self) -> Embedder:
        if self.embedder is None:
            raise RuntimeError("embedding model not loaded")
        return self.embedder

    def require_resolver(self) -> AccessResolver:
        if self.resolver is None:
            raise RuntimeError("access resolver not initialised")
        return self.resolver
