"""Which matters a reader of "who retrieved what" may see named (invariant 11).

One rule for every answer built from the retrieval audit: the audit API (one retrieval, a
page of them, and the filters that select that page) and the session gate's reasons.
Compliance audits the whole log, so it sees every matter; anyone else, a lawyer reading their
own rows, sees only the matters the conflict graph lets them access now. A wall issued after
a retrieval therefore also hides that retrieval's matters from its own author: naming them
would tell the screened lawyer which matter the new wall protects.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from app.auth.service import Principal
from app.walls.graph import MatrixSnapshot

MaySee = Callable[[str], bool]

# roles that read the audit whole: they audit the conflict matrix, whatever walls say
FULL_VIEW_ROLES = ("compliance",)


def _everything(_matter_id: str) -> bool:
    return True


@dataclass(frozen=True)
class MatterView:
    """``may_see`` decides a single matter; ``hidden`` lists the matters it refuses among
    those the matrix knows (what a SQL filter must leave out), None when it refuses none."""

    may_see: MaySee
    hidden: tuple[str, ...] | None

    @property
    def full(self) -> bool:
        return self.hidden is None


def matter_view(
    principal: Principal, snapshot: Callable[[], tuple[MatrixSnapshot, datetime]]
) -> MatterView:
    """The view of ``principal``; ``snapshot`` gives the matrix and the instant to judge it
    at (the database's clock: app/db/clock.py), read only for a narrow view."""
    if principal.has_any(*FULL_VIEW_ROLES):
        return MatterView(_everything, None)
    snap, at = snapshot()
    person_id = principal.person_id

    def may_see(matter_id: str) -> bool:
        # a matter the matrix does not know is not seen either: were it shown while a hidden
        # one is withheld, echoing a guessed id back would tell which guesses exist. An id
        # recorded decomposed (an audit row from before ids were read in NFC) is its NFC
        # matter's, unless the matrix still holds that spelling itself
        for spelled in dict.fromkeys((matter_id, unicodedata.normalize("NFC", matter_id))):
            if spelled in snap.matters:
                return snap.may_access(person_id, spelled, at)
        return False

    # only a walled matter can be refused to a known, active person; an inactive person is
    # refused every matter, so every matter the matrix knows is a candidate
    candidates = set(snap.walls_by_matter) | set(snap.matters)
    return MatterView(may_see, tuple(sorted(m for m in candidates if not may_see(m))))
