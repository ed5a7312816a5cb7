"""The withdrawal state machine used at ingestion, and the second-source cross-check."""

from __future__ import annotations

import pytest

from app.caselaw.parse import RechtspraakRecord, parse_rechtspraak
from app.caselaw.state import (
    CaseLawState,
    NotHeldError,
    Status,
    confirm,
    crosscheck,
    next_state,
)
from tests.caselaw.test_parse import minimal

ECLI = "ECLI:NL:HR:2019:1278"


def record(extra: str = "") -> RechtspraakRecord:
    return parse_rechtspraak(minimal(extra))


ACTIVE = ""
WITHDRAWN = "<psi:ingetrokken>ja</psi:ingetrokken>"
NOT_WITHDRAWN = "<psi:ingetrokken>nee</psi:ingetrokken>"
EMPTY_WITHDRAWAL = "<psi:ingetrokken/>"
UNREADABLE_WITHDRAWAL = "<psi:ingetrokken>misschien</psi:ingetrokken>"
REPLACED = "<dcterms:isReplacedBy>ECLI:NL:HR:2019:2000</dcterms:isReplacedBy>"
EMPTY_REPLACED = "<dcterms:isReplacedBy/>"
SET_ASIDE = (
    '<dcterms:relation ecli:resourceIdentifier="ECLI:NL:HR:2020:9" '
    'psi:type="http://psi.rechtspraak.nl/cassatie" '
    'psi:aanleg="http://psi.rechtspraak.nl/latereAanleg" '
    'psi:gevolg="http://psi.rechtspraak.nl/gevolg#Vernietiging en verwijzing">x</dcterms:relation>'
)
VERVALLEN = (
    '<dcterms:relation ecli:resourceIdentifier="ECLI:NL:HR:2020:10" '
    'psi:type="http://psi.rechtspraak.nl/vervallenverklaring" '
    'psi:aanleg="http://psi.rechtspraak.nl/latereAanleg">x</dcterms:relation>'
)


@pytest.mark.parametrize(
    ("extra", "state", "searchable"),
    [
        (ACTIVE, Status.ACTIVE, True),
        (NOT_WITHDRAWN, Status.ACTIVE, True),
        (WITHDRAWN, Status.WITHDRAWN, False),
        (REPLACED, Status.VOIDED, False),
        (VERVALLEN, Status.VOIDED, False),
        (SET_ASIDE, Status.SET_ASIDE, False),
    ],
)
def test_first_ingestion(extra: str, state: Status, searchable: bool) -> None:
    t = next_state(None, record(extra))
    assert t.state.state is state
    assert t.searchable is searchable
    assert t.previous is None
    assert t.changed
    assert not t.held
    assert t.parse_errors == ()


def test_markers_are_tri_state_in_the_state() -> None:
    assert next_state(None, record(ACTIVE)).state.withdrawn is None
    assert next_state(None, record(NOT_WITHDRAWN)).state.withdrawn is False
    assert next_state(None, record(WITHDRAWN)).state.withdrawn is True
    voided = next_state(None, record(REPLACED)).state
    assert voided.voided is True
    assert voided.replaced_by == "ECLI:NL:HR:2019:2000"
    set_aside = next_state(None, record(SET_ASIDE)).state
    assert set_aside.set_aside is True
    assert set_aside.set_aside_by == "ECLI:NL:HR:2020:9"


@pytest.mark.parametrize(
    ("known", "broken"),
    [
        (WITHDRAWN, EMPTY_WITHDRAWAL),
        (WITHDRAWN, UNREADABLE_WITHDRAWAL),
        (NOT_WITHDRAWN, EMPTY_WITHDRAWAL),
        (REPLACED, EMPTY_REPLACED),
        (ACTIVE, EMPTY_REPLACED),
        (ACTIVE, EMPTY_WITHDRAWAL),
        (ACTIVE, UNREADABLE_WITHDRAWAL),
        # the other marker, still present, is read as usual
        (WITHDRAWN + REPLACED, EMPTY_WITHDRAWAL + REPLACED),
        (REPLACED + NOT_WITHDRAWN, EMPTY_REPLACED + NOT_WITHDRAWN),
    ],
)
def test_an_empty_or_unreadable_marker_never_overwrites_a_known_state(
    known: str, broken: str
) -> None:
    before = next_state(None, record(known)).state
    t = next_state(before, record(broken))
    assert t.parse_errors, "the broken marker must be reported"
    assert t.state == before
    assert t.searchable is before.searchable
    assert not t.held
    assert not t.changed


def test_empty_marker_on_first_sight_is_held() -> None:
    t = next_state(None, record(EMPTY_REPLACED))
    assert t.state.state is Status.HELD
    assert t.held
    assert not t.searchable
    assert t.parse_errors == ("empty isReplacedBy marker",)
    assert t.search_state == "held"
    assert "unreadable status markers" in (t.state.held_reason or "")


def test_empty_marker_next_to_a_definite_one_keeps_the_definite_state() -> None:
    t = next_state(None, record(EMPTY_WITHDRAWAL + REPLACED))
    assert t.state.state is Status.VOIDED
    assert t.parse_errors


@pytest.mark.parametrize("dead", [WITHDRAWN, REPLACED, SET_ASIDE, VERVALLEN])
def test_flip_back_to_active_is_held_until_confirmed(dead: str) -> None:
    before = next_state(None, record(dead)).state
    assert not before.searchable

    flipped = next_state(before, record(ACTIVE))
    assert flipped.held
    assert flipped.state.state is Status.HELD
    assert not flipped.searchable
    assert flipped.search_state == "held"
    assert flipped.previous is before.state
    assert flipped.changed
    assert f"was {before.state.value}" in (flipped.state.held_reason or "")

    # another ingestion that still reads as active does not release the hold
    again = next_state(flipped.state, record(ACTIVE))
    assert again.held
    assert again.state.held_reason == flipped.state.held_reason
    assert not again.changed

    confirmed = confirm(again.state)
    assert confirmed.state is Status.ACTIVE
    assert confirmed.searchable
    assert confirmed.held_reason is None
    assert confirmed.search_state == "active"

    # once confirmed, later ingestions are ordinary
    later = next_state(confirmed, record(ACTIVE))
    assert later.state.state is Status.ACTIVE
    assert not later.held
    assert not later.changed


def test_held_record_that_dies_again_leaves_the_hold() -> None:
    held = next_state(next_state(None, record(WITHDRAWN)).state, record(ACTIVE)).state
    assert held.state is Status.HELD
    t = next_state(held, record(REPLACED))
    assert t.state.state is Status.VOIDED
    assert not t.held
    assert t.state.held_reason is None


def test_explicit_false_withdrawal_also_flips_to_held() -> None:
    before = next_state(None, record(WITHDRAWN)).state
    t = next_state(before, record(NOT_WITHDRAWN))
    assert t.held
    assert t.state.withdrawn is False


def test_active_to_dead_needs_no_confirmation() -> None:
    before = next_state(None, record(ACTIVE)).state
    t = next_state(before, record(SET_ASIDE))
    assert t.state.state is Status.SET_ASIDE
    assert not t.held
    assert not t.searchable
    assert t.search_state == "withdrawn"


def test_confirm_only_held_records() -> None:
    active = CaseLawState(ecli=ECLI, state=Status.ACTIVE)
    with pytest.raises(NotHeldError):
        confirm(active)


def test_state_of_another_ecli_is_refused() -> None:
    other = CaseLawState(ecli="ECLI:NL:HR:2000:1", state=Status.ACTIVE)
    with pytest.raises(ValueError, match="cannot take"):
        next_state(other, record(ACTIVE))


# --- cross-check ---------------------------------------------------------------------------------


def test_crosscheck_agreeing_sources() -> None:
    assert crosscheck(record(REPLACED), record(REPLACED)) == []


def test_crosscheck_lists_discrepancies_without_resolving_them() -> None:
    primary = record(ACTIVE)
    secondary = record(REPLACED + SET_ASIDE)
    found = crosscheck(primary, secondary)
    text = "\n".join(found)
    assert "is_replaced_by: primary absent, second source 'ECLI:NL:HR:2019:2000'" in text
    assert "set_aside_by" in text
    assert "relation cassatie to ECLI:NL:HR:2020:9 only in the second source" in text
    assert "liveness" in text
    # the primary record is untouched: nothing is resolved automatically
    assert primary.is_replaced_by is None
    assert not primary.relations


def test_crosscheck_empty_marker_differs_from_absent() -> None:
    found = crosscheck(record(ACTIVE), record(EMPTY_REPLACED))
    assert any(f.startswith("is_replaced_by: primary absent, second source ''") for f in found)


def test_crosscheck_missing_secondary() -> None:
    assert crosscheck(record(ACTIVE), None) == [f"{ECLI}: no record in the second source"]
