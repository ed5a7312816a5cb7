"""What /readyz says of a replica it cannot reach: /readyz answers anyone, so never the driver's
text, which quotes the connection's host as the driver read it (and so, from a URL whose
password holds an unencoded "@", the password's tail), the login role and server paths."""

from __future__ import annotations

from typing import Any

from tests.conftest import DbHandle, make_client, make_settings
from tests.helpers import ok

PASSWORD_TAIL = "tail0fThePassw0rd"


def test_readyz_names_no_driver_text_of_a_replica_it_cannot_reach(
    db: DbHandle, embedder: Any
) -> None:
    settings = make_settings(
        replica_urls=(
            f"postgresql://ewall_reader:head@{PASSWORD_TAIL}@replica-host.invalid:5432/ewall,"
            "postgresql://ewall_reader:pw@127.0.0.1:1/ewall"
        ),
        replica_check_interval_s=0.05,
    )
    with make_client(db, settings, embedder) as client:
        replicas = client.app.state.resources.replicas  # type: ignore[attr-defined]
        states = [replicas.check(replica) for replica in replicas]
        assert [s.state for s in states] == ["down", "down"]
        shown = ok(client.get("/readyz"))["checks"]["replicas"]
    assert [r["state"] for r in shown] == ["down", "down"]
    for replica in shown:
        error = replica["error"]
        assert error.startswith("OperationalError"), error
        for secret in (PASSWORD_TAIL, "ewall_reader", "127.0.0.1", "resolve", "refused"):
            assert secret not in error, error
