"""Starter list of Dutch legal abbreviations and synonyms in search_synonyms.

Revision ID: 20261201_0019
Revises: 20261201_0018
Create Date: 2026-12-01

Data, not code: rows of the editable synonym table (created_by ``ewall-starter``) that a
firm changes with PUT/DELETE /v1/search/synonyms. Measured in docs/quality.md.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261201_0019"
down_revision: str | None = "20261201_0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Legal abbreviations and synonyms a Dutch lawyer types interchangeably: a starter list in the
# editable table (PUT/DELETE /v1/search/synonyms). A term that is one word is replaced in
# the question by itself OR the synonym; both directions are listed where both are typed.
# (octrooi/patent is left to the firm: the tests of the synonym API use that pair.)
STARTER_SYNONYMS: tuple[tuple[str, str], ...] = (
    ("bw", "burgerlijk wetboek"),
    ("rv", "wetboek van burgerlijke rechtsvordering"),
    ("awb", "algemene wet bestuursrecht"),
    ("ww", "werkloosheidswet"),
    ("wob", "wet openbaarheid van bestuur"),
    ("sr", "wetboek van strafrecht"),
    ("sv", "wetboek van strafvordering"),
    ("row", "rijksoctrooiwet"),
    ("eov", "europees octrooiverdrag"),
    ("evrm", "europees verdrag voor de rechten van de mens"),
    ("avg", "algemene verordening gegevensbescherming"),
    ("ob", "omzetbelasting"),
    ("btw", "omzetbelasting"),
    ("omzetbelasting", "btw"),
    ("ib", "inkomstenbelasting"),
    ("vpb", "vennootschapsbelasting"),
    ("woz", "waardering onroerende zaken"),
    ("dga", "directeur-grootaandeelhouder"),
    ("ontslag", "opzegging"),
    ("opzegging", "ontslag"),
    ("fiscus", "belastingdienst"),
    ("fiscus", "inspecteur"),
    ("erfbelasting", "successierecht"),
    ("schenkbelasting", "schenkingsrecht"),
)

DOWNGRADE = "DELETE FROM search_synonyms WHERE created_by = 'ewall-starter'"


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    values = ", ".join(
        "('" + term.replace("'", "''") + "', '" + synonym.replace("'", "''") + "', 'ewall-starter')"
        for term, synonym in STARTER_SYNONYMS
    )
    _run(
        "INSERT INTO search_synonyms (term, synonym, created_by) VALUES "
        + values
        + " ON CONFLICT (term, synonym) DO NOTHING"
    )


def downgrade() -> None:
    _run(DOWNGRADE)
