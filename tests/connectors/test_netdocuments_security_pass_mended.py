"""What an independent check of the NetDocuments security pass found (2026-12-06, on
20fb19d), kept as regression tests: each failed then. The pass's purpose: a change that keeps
the modified date reaches the index on the next delta, fail closed, and a quiet delta
downloads nothing.

Fake knobs used (tests/fakes/netdocuments.py): ``lookup_fault``,
``on_lookup_page``, ``groups_status``, ``deleted_items``, ``search_lag``.
"""

from __future__ import annotations

import copy
from typing import Any

from connectors.sync import run_sync
from tests.connectors.nd_tenant import (
    DOWNLOADS,
    FALCON,
    NOTES,
    Syncs,
    who_finds,
)
from tests.fakes.netdocuments import CABINET, FakeNetDocuments
from tests.helpers import Firm

WALL_0008 = "Litigation|VES*U:john.smith@firm.com|N"


def test_a_lookup_row_deleted_while_the_pass_reads_the_table_drops_another_matters_wall(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """The lookup table is paged by $skip (N5). A server that caps $top (a quirk the fake
    already models) and an administrator who removes one (closed) matter row while the pass
    reads the table: every later row shifts one place down, the row after the removed one is
    never read, and its ``|N`` deny lapses. Nothing reconciles a lookup listing (no total,
    and skipped rows are not repeated rows). Fail OPEN: john finds a document of a matter
    whose row still denies him."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup[2].insert(0, {"key": "0001", "parent": "10025", "access": "Litigation|VES"})
    fake.lookup[2][1]["access"] = WALL_0008  # matter 0008: the wall on john
    fake.lookup_top_cap = 1
    sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"amir@firm.nl"}  # the wall holds

    removed = {"done": False}

    def remove_closed_matter(fake: Any, attr: int, skip: int) -> None:
        if attr == 2 and skip == 0 and not removed["done"]:
            removed["done"] = True
            del fake.lookup[2][0]  # matter 0001's row removed between two pages

    fake.on_lookup_page = remove_closed_matter
    report = sync()
    assert removed["done"]
    assert fake.lookup[2][0]["access"] == WALL_0008  # the wall is still at the source
    assert "john@firm.nl" not in who_finds(firm, FALCON, "dagvaarding"), report[
        "security_pass"
    ]


def test_a_lookup_page_in_another_shape_ends_the_table_early(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """A lookup page answered 200 with a body that holds no rows under any known key is read
    as an empty page, i.e. the end of the table (parse_search raises on the same thing for
    search pages, so that a listing is never shortened). The ``|N`` rows after it lapse."""
    firm, sync = tenant
    fake = netdocuments_fake
    assert who_finds(firm, NOTES, "zitting") == {"amir@firm.nl"}  # 0007's row denies john
    fake.lookup_top_cap = 1
    fake.lookup_fault[(2, 1)] = {"Message": "An error has occurred."}  # page 2: 0007's row
    sync()
    assert "john@firm.nl" not in who_finds(firm, NOTES, "zitting")


def test_group_names_unreadable_during_the_pass_narrow_and_keep_no_old_rules(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """The cabinet's group-name listing (N21) answered 500 during the pass: the error left
    the pass, the delta failed, and a wall added to matter 0008 as a ``U:user|N`` row (which
    needs no group name) never reached the index while the listing failed. Names that
    cannot be read are now unknown, as on 403/404: grants by name admit nobody."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.lookup[2][0]["access"] = WALL_0008
    fake.groups_status = 500
    report = sync()
    assert any("group names" in w for w in report["warnings"]), report["warnings"]
    assert "john@firm.nl" not in who_finds(firm, FALCON, "dagvaarding")


def test_the_pass_heeds_the_deleted_flag_it_reads_from_info(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """A tenant whose search rows carry no custom attributes: the pass reads /info for every
    held document (20fb19d). A document moved to Deleted Items while the search index still
    lists it: /info says ``deleted``, and the full read deletes it; the pass dropped the
    flag, found place and rules unchanged and left it visible."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.search_custom = False
    fake.search_lag[FALCON] = copy.deepcopy(fake.docs[FALCON])  # the index has not caught up
    fake.deleted_items.add(FALCON)
    info = len(fake.calls(rf"^/v1/Document/{FALCON}/info$"))
    sync()
    assert len(fake.calls(rf"^/v1/Document/{FALCON}/info$")) == info + 2  # pass, full read
    assert who_finds(firm, FALCON, "dagvaarding") == set()


def test_a_search_row_that_disagrees_with_info_is_not_downloaded_every_delta(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """The other side of the same lag: the full crawl stored /info's matter (0009) while the
    search row still says 0008. Every pass judged the document moved and downloaded it
    again, for as long as the row disagreed; a stale row is now asked again from /info."""
    _firm, sync = tenant
    fake = netdocuments_fake
    fake.search_lag[FALCON] = copy.deepcopy(fake.docs[FALCON])
    fake.docs[FALCON].custom[1002] = "0009"
    sync("full")
    downloads = len(fake.calls(DOWNLOADS))
    first, second = sync(), sync()
    assert (first["security_pass"]["read_again"], second["security_pass"]["read_again"]) == (
        0,
        0,
    ), (first["security_pass"], second["security_pass"])
    assert len(fake.calls(DOWNLOADS)) == downloads


def test_a_quarantined_document_is_re_evaluated_by_the_pass(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """Narrower, not a leak: stored_placements read active documents only, so a document
    the pass quarantined (re-profiled to a matter the matrix does not know) was never stale
    again; re-profiled back to its matter (modified date kept) it stayed invisible until a
    full crawl. Mended by 025726d (quarantined documents compared by their raw values)."""
    firm, sync = tenant
    fake = netdocuments_fake
    fake.docs[FALCON].custom[1002] = "0099"
    assert sync()["outcomes"] == {"quarantined": 1}
    assert who_finds(firm, FALCON, "dagvaarding") == set()
    fake.docs[FALCON].custom[1002] = "0008"  # put back
    report = sync()
    assert who_finds(firm, FALCON, "dagvaarding") == {"john@firm.nl", "amir@firm.nl"}, report[
        "security_pass"
    ]


def test_a_last_pass_stamped_in_the_future_stops_no_later_pass(
    tenant: tuple[Firm, Syncs], netdocuments_fake: FakeNetDocuments
) -> None:
    """EWALL_SECURITY_PASS_EVERY: age_s of a stamp ahead of this host's clock (another host's
    clock, a restored state) is negative, below any interval, so the pass waited until that
    moment: a wall added meanwhile never reached the index. Such a stamp is now no reason to
    wait (as DeltaWatermark drops a stored watermark in the future)."""
    firm, sync = tenant
    fake = netdocuments_fake
    scope = f"cabinets={CABINET}"
    state = sync.store.load("netdocuments", scope)
    state.last_security_pass_at = "2099-01-01T00:00:00Z"
    sync.store.save("netdocuments", scope, state)
    fake.lookup[2][0]["access"] = WALL_0008
    connector = sync.netdocuments({"netdocuments_cabinets": CABINET})
    report = run_sync("netdocuments", connector, sync.pipeline, sync.store, mode="delta",
                      started_by="svc", security_pass_every_s=3600)  # fmt: skip
    assert report["sync"]["security_pass"]["ran"] is True, report["sync"]["security_pass"]
    assert who_finds(firm, FALCON, "dagvaarding") == {"amir@firm.nl"}
