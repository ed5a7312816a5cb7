"""English legal terms and their Dutch words, in the editable synonym table.

Revision ID: 20261211_0065
Revises: 20261211_0064
Create Date: 2026-12-11

Data, not code, as the starter list of 0019: rows of search_synonyms (created_by
``ewall-starter-en``) that a firm changes with PUT/DELETE /v1/search/synonyms. Agents often
ask in English; the sparse leg had nothing Dutch to match, and the dense leg found the right
statute at ranks 20-60. A check of 2026-12-06 (27 English or mixed questions over the
shared corpus): hit@10 0.52 -> 0.70, MRR 0.349 -> 0.463; the other 149 questions
unchanged. One English word each (a term of several words makes a phrase rule that an ORed
question never holds). Left out: words an English question uses in other senses ("will",
"fine"), and words whose 7-letter lexeme is also a Dutch word's of another meaning (a
review: "subsidiary" rewrote "subsidie" to add "dochter"; likewise administrative /
administratie, limitation / limitatief, interest / interessant, termination / terminale,
dissolution, director / directoraat, compensation, invalid / invaliditeit, invention /
inventiviteit, objection / objectief, negligence / negligeren). 109 terms.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261211_0065"
down_revision: str | None = "20261211_0064"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ENGLISH_TERMS: tuple[tuple[str, str], ...] = (
    ("tort", "onrechtmatige daad"),
    ("torts", "onrechtmatige daad"),
    ("liability", "aansprakelijkheid"),
    ("liable", "aansprakelijk"),
    ("damages", "schadevergoeding"),
    ("damage", "schade"),
    ("prescription", "verjaring"),
    ("contract", "overeenkomst"),
    ("contracts", "overeenkomst"),
    ("agreement", "overeenkomst"),
    ("breach", "tekortkoming"),
    ("default", "verzuim"),
    ("rescission", "ontbinding"),
    ("employment", "arbeidsovereenkomst"),
    ("employee", "werknemer"),
    ("employees", "werknemer"),
    ("employer", "werkgever"),
    ("dismissal", "ontslag"),
    ("salary", "loon"),
    ("wage", "loon"),
    ("wages", "loon"),
    ("lease", "huur"),
    ("tenancy", "huur"),
    ("rent", "huur"),
    ("tenant", "huurder"),
    ("landlord", "verhuurder"),
    ("eviction", "ontruiming"),
    ("patent", "octrooi"),
    ("patents", "octrooi"),
    ("infringement", "inbreuk"),
    ("copyright", "auteursrecht"),
    ("trademark", "merk"),
    ("tax", "belasting"),
    ("taxes", "belasting"),
    ("taxpayer", "belastingplichtige"),
    ("assessment", "aanslag"),
    ("inspector", "inspecteur"),
    ("vat", "omzetbelasting"),
    ("inheritance", "nalatenschap"),
    ("estate", "nalatenschap"),
    ("heir", "erfgenaam"),
    ("heirs", "erfgenaam"),
    ("gift", "schenking"),
    ("divorce", "echtscheiding"),
    ("alimony", "alimentatie"),
    ("custody", "gezag"),
    ("bankruptcy", "faillissement"),
    ("insolvency", "faillissement"),
    ("trustee", "curator"),
    ("creditor", "schuldeiser"),
    ("creditors", "schuldeiser"),
    ("debtor", "schuldenaar"),
    ("shareholder", "aandeelhouder"),
    ("shareholders", "aandeelhouder"),
    ("company", "vennootschap"),
    ("merger", "fusie"),
    ("judgment", "uitspraak"),
    ("ruling", "uitspraak"),
    ("appeal", "hoger beroep"),
    ("cassation", "cassatie"),
    ("evidence", "bewijs"),
    ("proof", "bewijs"),
    ("fraud", "bedrog"),
    ("mistake", "dwaling"),
    ("duress", "bedreiging"),
    ("void", "nietig"),
    ("voidable", "vernietigbaar"),
    ("nullity", "nietigheid"),
    ("penalty", "boete"),
    ("municipality", "gemeente"),
    ("permit", "vergunning"),
    ("licence", "vergunning"),
    ("license", "vergunning"),
    ("benefit", "uitkering"),
    ("benefits", "uitkering"),
    ("unemployment", "werkloosheid"),
    ("disability", "arbeidsongeschiktheid"),
    ("pension", "pensioen"),
    ("welfare", "bijstand"),
    ("asylum", "asiel"),
    ("unforeseen", "onvoorziene"),
    ("circumstances", "omstandigheden"),
    ("reasonableness", "redelijkheid"),
    ("fairness", "billijkheid"),
    ("seller", "verkoper"),
    ("buyer", "koper"),
    ("purchase", "koop"),
    ("sale", "koop"),
    ("delivery", "levering"),
    ("defect", "gebrek"),
    ("defects", "gebrek"),
    ("warranty", "garantie"),
    ("guarantee", "garantie"),
    ("mortgage", "hypotheek"),
    ("ownership", "eigendom"),
    ("property", "eigendom"),
    ("nuisance", "hinder"),
    ("expropriation", "onteigening"),
    ("legislation", "wetgeving"),
    ("statutory", "wettelijke"),
    ("novelty", "nieuwheid"),
    ("revocation", "herroeping"),
    ("criminal", "strafrecht"),
    ("prosecution", "vervolging"),
    ("suspect", "verdachte"),
    ("witness", "getuige"),
    ("judge", "rechter"),
    ("lawyer", "advocaat"),
    ("notary", "notaris"),
)


def upgrade() -> None:
    op.get_bind().execute(
        sa.text(
            "INSERT INTO search_synonyms (term, synonym, created_by) "
            "SELECT t.term, t.synonym, 'ewall-starter-en' "
            "FROM unnest(CAST(:terms AS text[]), CAST(:dutch AS text[])) AS t (term, synonym) "
            "ON CONFLICT (term, synonym) DO NOTHING"
        ),
        {"terms": [t for t, _ in ENGLISH_TERMS], "dutch": [d for _, d in ENGLISH_TERMS]},
    )


def downgrade() -> None:
    op.execute("DELETE FROM search_synonyms WHERE created_by = 'ewall-starter-en'")
