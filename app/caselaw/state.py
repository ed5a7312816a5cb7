"""Withdrawal state of a case-law record across ingestions (pure functions).

States: ``active`` (searchable), ``withdrawn`` (explicit withdrawal marker), ``voided``
(``isReplacedBy`` set, or declared lapsed by a ``vervallenverklaring``), ``set_aside``
(a later instance set it aside) and ``held``.

Each status marker is tri-state per ingestion: True, False, or absent (None). Two rules
keep a bad feed from silently reviving or burying a decision:

1. A marker that is present but empty, or unreadable, never overwrites what we knew: the
   previous value is kept and the problem is reported in ``parse_errors``. On first sight
   there is nothing to keep, so such a record is held (not searchable).
2. A record that was withdrawn, voided or set aside and now reads as active is HELD, not
   searchable, until a person confirms it (``confirm``). Feeds do drop markers by mistake;
   a decision coming back to life is rare enough to deserve a look.

``crosscheck`` compares the primary record with a second source and lists discrepancies;
they are recorded for a person to resolve, never resolved automatically.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

from app.caselaw.parse import RechtspraakRecord, liveness


class Status(StrEnum):
    ACTIVE = "active"
    WITHDRAWN = "withdrawn"
    VOIDED = "voided"
    SET_ASIDE = "set_aside"
    HELD = "held"


DEAD_STATES = frozenset({Status.WITHDRAWN, Status.VOIDED, Status.SET_ASIDE})

SearchState = Literal["active", "withdrawn", "held"]


@dataclass(frozen=True)
class CaseLawState:
    """What is known about one ECLI after an ingestion (mirrors the ``case_law`` row).

    Marker fields are tri-state: True / False / None (never seen, or absent in the feed).
    """

    ecli: str
    state: Status
    withdrawn: bool | None = None
    voided: bool | None = None
    replaced_by: str | None = None
    vervallen: bool | None = None
    vervallen_by: str | None = None
    set_aside: bool | None = None
    set_aside_by: str | None = None
    held_reason: str | None = None

    @property
    def searchable(self) -> bool:
        return self.state is Status.ACTIVE

    @property
    def search_state(self) -> SearchState:
        """The value for ``documents.search_state``."""
        if self.state is Status.ACTIVE:
            return "active"
        if self.state is Status.HELD:
            return "held"
        return "withdrawn"


@dataclass(frozen=True)
class Transition:
    state: CaseLawState
    previous: Status | None
    searchable: bool
    held: bool  # listed for confirmation until `confirm` is called
    parse_errors: tuple[str, ...]
    changed: bool

    @property
    def search_state(self) -> SearchState:
        return self.state.search_state


class NotHeldError(ValueError):
    """confirm() on a record that is not held."""


@dataclass(frozen=True)
class _Observed:
    value: bool | None
    by: str | None = None
    error: str | None = None


def _observe(record: RechtspraakRecord) -> dict[str, _Observed]:
    errors = record.marker_errors
    observed: dict[str, _Observed] = {}

    if "withdrawn" in errors:
        observed["withdrawn"] = _Observed(None, error=errors["withdrawn"])
    else:
        observed["withdrawn"] = _Observed(record.withdrawn)

    if "is_replaced_by" in errors:
        observed["voided"] = _Observed(None, error=errors["is_replaced_by"])
    elif record.is_replaced_by:
        observed["voided"] = _Observed(True, by=record.is_replaced_by)
    else:
        observed["voided"] = _Observed(None)

    observed["vervallen"] = (
        _Observed(True, by=record.vervallen_by) if record.vervallen else _Observed(None)
    )

    if record.set_aside:
        # a definite "set aside" relation wins over another relation's empty outcome
        observed["set_aside"] = _Observed(True, by=record.set_aside_by)
    elif "set_aside" in errors:
        observed["set_aside"] = _Observed(None, error=errors["set_aside"])
    else:
        observed["set_aside"] = _Observed(None)
    return observed


def _derive(
    withdrawn: bool | None, voided: bool | None, vervallen: bool | None, set_aside: bool | None
) -> Status:
    if withdrawn:
        return Status.WITHDRAWN
    if voided or vervallen:
        return Status.VOIDED
    if set_aside:
        return Status.SET_ASIDE
    return Status.ACTIVE


def _merge(
    observed: _Observed, previous_value: bool | None, previous_by: str | None
) -> tuple[bool | None, str | None]:
    if observed.error is not None:
        return previous_value, previous_by
    return observed.value, observed.by


def next_state(previous: CaseLawState | None, record: RechtspraakRecord) -> Transition:
    """The state after ingesting ``record``, given what was known before (None: new ECLI)."""
    if previous is not None and previous.ecli != record.ecli:
        raise ValueError(f"state of {previous.ecli} cannot take a record of {record.ecli}")
    observed = _observe(record)
    errors = tuple(o.error for o in observed.values() if o.error is not None)

    base = previous or CaseLawState(ecli=record.ecli, state=Status.ACTIVE)
    withdrawn, _ = _merge(observed["withdrawn"], base.withdrawn, None)
    voided, replaced_by = _merge(observed["voided"], base.voided, base.replaced_by)
    vervallen, vervallen_by = _merge(observed["vervallen"], base.vervallen, base.vervallen_by)
    set_aside, set_aside_by = _merge(observed["set_aside"], base.set_aside, base.set_aside_by)
    candidate = _derive(withdrawn, voided, vervallen, set_aside)

    held_reason: str | None = None
    state = candidate
    if candidate is Status.ACTIVE:
        if previous is None and errors:
            state = Status.HELD
            held_reason = "first ingestion with unreadable status markers: " + "; ".join(errors)
        elif previous is not None and previous.state in DEAD_STATES:
            state = Status.HELD
            held_reason = (
                f"was {previous.state.value}, the source now reads as active; "
                "confirm before it is searchable again"
            )
        elif previous is not None and previous.state is Status.HELD:
            state = Status.HELD
            held_reason = previous.held_reason

    new = CaseLawState(
        ecli=record.ecli,
        state=state,
        withdrawn=withdrawn,
        voided=voided,
        replaced_by=replaced_by,
        vervallen=vervallen,
        vervallen_by=vervallen_by,
        set_aside=set_aside,
        set_aside_by=set_aside_by,
        held_reason=held_reason,
    )
    return Transition(
        state=new,
        previous=previous.state if previous is not None else None,
        searchable=new.searchable,
        held=state is Status.HELD,
        parse_errors=errors,
        changed=previous is None or new != previous,
    )


def confirm(previous: CaseLawState) -> CaseLawState:
    """A person confirmed a held record: it takes the state its markers describe."""
    if previous.state is not Status.HELD:
        raise NotHeldError(f"{previous.ecli} is {previous.state.value}, not held")
    state = _derive(previous.withdrawn, previous.voided, previous.vervallen, previous.set_aside)
    return replace(previous, state=state, held_reason=None)


# --- second source ----------------------------------------------------------------------


def _show(value: object) -> str:
    return "absent" if value is None else repr(value)


def crosscheck(primary: RechtspraakRecord, secondary: RechtspraakRecord | None) -> list[str]:
    """Discrepancies between two sources for the same decision (empty: they agree)."""
    if secondary is None:
        return [f"{primary.ecli}: no record in the second source"]
    found: list[str] = []
    pairs: list[tuple[str, object, object]] = [
        ("ecli", primary.ecli, secondary.ecli),
        ("court", primary.court, secondary.court),
        ("decision_date", primary.decision_date, secondary.decision_date),
        ("type", primary.type, secondary.type),
        ("is_replaced_by", primary.is_replaced_by, secondary.is_replaced_by),
        ("withdrawal marker", primary.withdrawal_marker, secondary.withdrawal_marker),
        ("withdrawn", primary.withdrawn, secondary.withdrawn),
        ("set_aside_by", primary.set_aside_by, secondary.set_aside_by),
        ("vervallen_by", primary.vervallen_by, secondary.vervallen_by),
        ("vervallen", primary.vervallen, secondary.vervallen),
        ("body_kind", primary.body_kind, secondary.body_kind),
    ]
    for name, ours, theirs in pairs:
        if ours != theirs:
            found.append(f"{name}: primary {_show(ours)}, second source {_show(theirs)}")
    ours_rel = {(r.target, r.type, r.aanleg, r.gevolg) for r in primary.relations}
    theirs_rel = {(r.target, r.type, r.aanleg, r.gevolg) for r in secondary.relations}
    found.extend(
        f"relation {rel[1]} to {rel[0]} only in the primary source"
        for rel in sorted(ours_rel - theirs_rel, key=str)
    )
    found.extend(
        f"relation {rel[1]} to {rel[0]} only in the second source"
        for rel in sorted(theirs_rel - ours_rel, key=str)
    )
    live_ours, reason_ours, _ = liveness(primary)
    live_theirs, reason_theirs, _ = liveness(secondary)
    if live_ours != live_theirs:
        found.append(f"liveness: primary {reason_ours!r}, second source {reason_theirs!r}")
    return found
