"""A delta's security pass: what a change listing cannot see.

A DMS stamps a new modification date on new content, not on every change that decides who may
read a document: a wall that adds a deny, a profile edit that moves it to another matter, a
deletion (docs/dms-apis.md §1.4-1.5). Invariant 9 wants those on the next sync, so after its
change listing a delta lists every document's place and rules in scope without content
(`connectors.base.SecurityPass`), asks the index which it holds under another version, place
or rules (`Pipeline.stale_placements`), applies rules that only narrow the stored ones at the
same version and place without the content (`Pipeline.narrow_rules`: a wall needs no
download), and reads the rest of those again in full, as the change listing's documents are
read. When the pass listed the whole scope, a document the index
holds that it did not list is hidden (visible to nobody): its rules were not read, and it
may be gone, moved out of scope, or in a library the account can no longer list. The pass
deletes nothing on a listing's word: a full crawl's sweep does that, with its point checks
and its hold on large removals (a delta must not empty a library that could not be listed);
a document read again and found gone at the source leaves as in any delta. A later pass
that lists it again gives it its rules back (it is then stale, and read in full).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from connectors.base import Checkpoint, Placed, SourceDocument
from connectors.state import SyncState, age_s

if TYPE_CHECKING:
    from connectors.sync import _SyncRun


_UNLISTED = ("not in the whole listing of the scope that a delta's security pass made: its "
             "rules were not read; hidden until a listing holds it again (a full crawl's "
             "sweep deletes what is gone)")


def security_pass(sync: _SyncRun, st: SyncState) -> dict[str, Any]:
    """Run the source's pass, hide what its whole listing did not give, and report. A pass
    whose last whole run is younger than ``sync.security_pass_every`` waits (a tenant
    whose rules cost a request per document may not afford one per delta)."""
    last = st.last_security_pass_at
    # a stamp in the future (another host's clock, a restored state) is no reason to wait
    if sync.security_pass_every and last and 0 <= age_s(last) < sync.security_pass_every:
        return {"ran": False, "reason": f"the last whole pass ran at {last} "
                f"(EWALL_SECURITY_PASS_EVERY={int(sync.security_pass_every)} s)"}
    listed: set[str] = set()
    stale: set[str] = set()
    narrowed: set[str] = set()

    def ask(placed: list[Placed]) -> set[str]:
        listed.update(p.external_id for p in placed)
        found = sync.pipeline.stale_placements(sync.source, placed) if placed else set()
        stale.update(found)
        # rules that only narrow, on the same version and place, need no download
        done = sync.pipeline.narrow_rules(sync.run, sync.source,
                                          [p for p in placed if p.external_id in found])
        narrowed.update(done)
        return found - done

    # what the index holds now: a source may read the rules of those only, and only these
    # may be hidden (a document first stored while the pass runs was never asked about)
    versions = sync.pipeline.known_versions(sync.source)
    held = set(versions)
    sync.origin.hint_versions(versions)
    items = sync.origin.security_pass(ask)
    if items is None:
        sync.collect_warnings()
        return {"ran": False, "reason": "the source cannot list its rules in bulk here; "
                "rules, moves and deletions that keep the modification date wait for "
                "the full crawl (EWALL_FULL_CRAWL_EVERY)"}
    sync.phase = "security pass"
    failures_before = len(sync.listing_failures)
    read_again = 0
    for item in items:
        if isinstance(item, Checkpoint):
            continue
        sync.items += 1
        if isinstance(item, SourceDocument):
            sync.ingest(item)
            read_again += 1
        else:
            sync.failure(item)
        sync.progress()
    complete = len(sync.listing_failures) == failures_before
    hidden = 0
    if complete:
        st.last_security_pass_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for external_id in sorted(k for k in held - listed if sync.origin.owns(k)):
            hidden += sync.hide(external_id, _UNLISTED, None)
        if hidden > sync.sweep_max_fraction * len(held):  # said, as a sweep's hold would be
            sync.warn(f"the security pass hid {hidden} of {len(held)} documents its listing "
                      "did not give (a library or cabinet gone from the listing?); a full "
                      "crawl's sweep holds their deletion until `ewall ingest confirm-sweep`")
    return {"ran": True, "listed": len(listed), "stale": len(stale), "narrowed": len(narrowed),
            "read_again": read_again, "complete": complete, "hidden": hidden}
