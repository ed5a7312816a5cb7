"""Version 3 of the citation normaliser gives version 2's output (migration 20261217_0074).

sql/functions/legal_normalize.v3.sql runs each of version 2's passes only on a text that
holds a literal every match of the pass's pattern holds, so that a question or a chunk that
cannot hold a citation compiles and runs few of its 25 regular expressions (PostgreSQL keeps
32 a connection; tests/search/test_query_regexps.py). Stored tsvectors were not rebuilt: that
holds only while the output is version 2's for every input, which this test checks over the
shared corpus (cut as chunks are), every citation form the citation tests use, and
generated text that puts the literals, the list mark and the law names together in many
orders and cases.
"""

from __future__ import annotations

import html
import random
import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import DbHandle
from tests.fakes.rechtspraak import corpus_dir
from tests.shared_data import require

ROOT = Path(__file__).resolve().parents[2]
PREVIOUS = ROOT / "sql" / "functions" / "legal_normalize.v2.sql"
TAG = re.compile(r"<[^>]*>")
KEYWORD = re.compile(r"\b(artikel(en)?|artt?\.?)", re.I)
PIECE = 1500  # about a chunk's length

# every form tests/search/test_citation_forms.py, test_lexeme_cut.py, test_typed_syntax.py and
# the gates' tests write, and more of each law
CITATIONS = [
    "artikel 8:29, eerste lid, van de Awb",
    "artikel 8:29, tweede en derde lid, aanhef en onder a, Awb",
    "artikel 6:19 van de Algemene wet bestuursrecht (Awb)",
    "de artikelen 6:18 en 6:19, eerste lid, van de Awb",
    "de artikelen 8:72, 8:74 en 8:75 Awb",
    "artikel 6:162 van het Burgerlijk Wetboek",
    "6:162 (oud) BW",
    "6:162BW",
    "art. 6: 162 BW",
    "art. 6:162 lid 2 e.v. BW",
    "artikel 162 van Boek 6 BW",
    "Boek 6 artikel 248",
    "Boek 1 artikel 3 van het Wetboek van Burgerlijke Rechtsvordering",
    "Artikel 5 Handelsnaamwet",
    "art. 5 Hnw",
    "artikel 53 Rijksoctrooiwet 1995",
    "art. 10 Wob",
    "artikel 10 van de Wet openbaarheid van bestuur",
    "art. 81 RO",
    "artikel 81 van de Wet op de rechterlijke organisatie",
    "Artikel 5:24 van de Algemene wet bestuursrecht (hierna: Awb) luidt",
    "artikel 2:23, lid 1, (oud) BW",
    "art. 56 EPC",
    "de artikelen 6:18 en 6:19, eerste lid, in verbinding met artikel 6:24 van de "
    "Algemene wet bestuursrecht",
    "artikel 2:276, letter c, (oud) van het Burgerlijk Wetboek (hierna: BW)",
    "artikel 6:162 jo. 6:163 BW",
    "art. 23 E-wet",
    "art. 23 Elektriciteitswet 1998",
    "ECLI:NL:HR:2019:1278, artikel 6:18 Awb",
    "om 10:30, artikel 8:29 Awb",
    "Johannes 3:16 juncto artikel 6:18 Awb",
    "de score was 2:1 of art. 6:18 Awb",
    "artikel 3 van boek 2 van de Awb",
    "artt. 3:40 en 3:44 BW",
    "art. 56 EOV",
    "BW art. 6:162",
    "artikel 6:162 lid 1 BW",
    "om 10:30 uur",
    "de stand was 2:1",
    "artikel 6 en 7",
    "6:1 en 6:2",
    "om 10:30 en",
    "art. 350 Sr",
    "artikel 350 van het Wetboek van Strafrecht (Sr)",
    "artikel 359a van het Wetboek van Strafvordering",
    "art. 359a Sv",
    "artikel 27 Algemene wet inzake rijksbelastingen (AWR)",
    "art. 1 Grondwet",
    "art. 13 Auteurswet 1912",
    "artikel 13 van de Auteurswet",
    "art. 8 EVRM",
    "artikel 6 EHRM",
    "art. 7 Wvw",
    "art. 6 AVG",
    "art. 3 Fw",
    "artikel 7:658 BW en artikel 6:162 BW",
    "art. 7:611 BW; art. 7:658 lid 2 BW",
    "ECLI:NL:RBAMS:2012:BZ5426",
    "ecli:nl:crvb:2013:1886",
    "art6x18awb",
    "art6x19Algemene wet bestuursrecht (Awb)",
    "art5handelsnaamwet",
    "ART. 6:162 BW",
    "ARTIKEL 6:19 VAN DE ALGEMENE WET BESTUURSRECHT",
    "Art 6:18 AWB",
    '"art. 6:162 BW" onrechtmatige daad OR schadevergoeding -huur',
    "6:18 Awb",
    "en 6:19, eerste lid, van de Awb",
    "artikel 3:40 BW, 3:44 BW en 6:162 BW",
]

# pieces that the generated texts put together: the literals the passes look for, the list
# mark (U+E000), the law names in every case, joins and plain words
FRAGMENTS = [
    *("artikel", "artikelen", "art.", "artt.", "Art", "ARTIKEL", "art", "kaart", "start"),
    *("6:162", "6: 162", "8:29", "3:16", "10:30", "2:1", "162", "6", "359a", ":", "\ue000"),
    *("6\ue000162", "art6x18", "art6x19", "art5", "art12x3b", "boek 6", "Boek", "BOEK 2"),
    *("lid 2", "eerste lid", "tweede en derde lid", "aanhef en", "onder a", "sub b", "e.v."),
    *("(oud)", "van de", "van het", "en", "of", "t/m", "juncto", "jo.", "in verbinding met"),
    *(",", ";", "(", ")", "(hierna: Awb)", "(Awb)", "(BW)", "(Rv)", "(Sr)", "(Sv)", "(AWR)"),
    *("Awb", "BW", "Rv", "Sr", "Sv", "AWR", "Wob", "RO", "Hnw", "Aw", "ROW", "Gw", "EW"),
    *("EPC", "epc", "EOV", "EVRM", "EHRM", "Wvw", "Fw", "AVG"),
    *("Algemene wet bestuursrecht", "Burgerlijk Wetboek", "burgerlijk wetboek"),
    *("Wetboek van Burgerlijke Rechtsvordering", "Wetboek van Strafrecht"),
    *("Wetboek van Strafvordering", "Algemene wet inzake rijksbelastingen"),
    *("Wet openbaarheid van bestuur", "Wet op de rechterlijke organisatie"),
    *("Rijksoctrooiwet 1995", "Auteurswet 1912", "Handelsnaamwet", "Grondwet", "E-wet"),
    *("Elektriciteitswet 1998", "ALGEMENE WET BESTUURSRECHT", "wet", "wetgever"),
    *("ECLI:NL:HR:2019:1278", "ECLI", "ecli:nl:rbams:2012:bz5426", "de", "huur", "Ünïcode"),
]


def _corpus_pieces() -> list[str]:
    """The shared corpus's texts (tags left out) cut into pieces of about a chunk."""
    root = corpus_dir()
    require(root.is_dir(), "the shared corpus (../shared/corpus)")
    patterns = [*("rechtspraak/xml/*.xml", "rechtspraak/malformed/*.xml"), "rechtspraak_csv/*.csv"]
    patterns += ["wetgeving/bwb_xml/*.xml", "wetgeving/markdown/*.md"]
    files = sorted(file for pattern in patterns for file in root.glob(pattern))
    pieces: list[str] = []
    for file in files:
        raw = file.read_bytes().decode("utf-8", errors="replace")
        body = html.unescape(TAG.sub(" ", raw)).replace("\x00", "")
        words = body.split(" ")
        piece: list[str] = []
        size = 0
        for word in words:
            piece.append(word)
            size += len(word) + 1
            if size >= PIECE:
                pieces.append(" ".join(piece))
                piece, size = [], 0
        if piece:
            pieces.append(" ".join(piece))
    return pieces


def _generated(count: int) -> list[str]:
    """Fragments in random order, joined and spaced in many ways; a third of the texts
    without any fragment that holds "art" (the passes that need no keyword)."""
    rng = random.Random(20261217)
    without_art = [f for f in FRAGMENTS if "art" not in f.lower()]
    out = []
    for n in range(count):
        pool = without_art if n % 3 == 0 else FRAGMENTS
        text = ""
        for _ in range(rng.randint(1, 14)):
            fragment = rng.choice(pool)
            if rng.random() < 0.2:  # the spaces inside a name or a form
                fragment = fragment.replace(" ", rng.choice(["  ", "\n", "\t", " \n "]))
            text += rng.choice([" ", " ", "", ", ", "\n", "  "]) + fragment
        out.append(text.upper() if rng.random() < 0.1 else text)
    return out


def _outputs(conn: psycopg.Connection[tuple[Any, ...]], texts: list[str]) -> list[str]:
    row = conn.execute(
        "SELECT array_agg(ewall_legal_normalize(t) ORDER BY n)"
        " FROM unnest(CAST(%s AS text[])) WITH ORDINALITY AS u(t, n)",
        (texts,),
    ).fetchone()
    assert row is not None
    return [str(out) for out in row[0]]


def test_version_3_gives_version_2s_output_for_every_input(db: DbHandle) -> None:
    pieces = _corpus_pieces()[::2]  # every second: half the time, every file (all: 0 differ)
    assert len(pieces) > 1000, len(pieces)
    crafted = [
        *CITATIONS,
        *(f"{a} {b}" for a in CITATIONS for b in CITATIONS[:12]),
        *(f"Zie {c} en vgl. de uitspraak." for c in CITATIONS),
        # the list mark typed in the text, with and without the keyword
        *(c.replace(":", "\ue000", 1) for c in CITATIONS),
        *(KEYWORD.sub("", c.replace(":", "\ue000", 1)) for c in CITATIONS),
        *(KEYWORD.sub("", c) for c in CITATIONS),
    ]
    texts = [*pieces, *crafted, *_generated(4000)]
    with psycopg.connect(db.superuser_url) as conn:
        current = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'ewall_legal_normalize'"
        ).fetchone()
        assert current is not None and "strpos(low, 'art')" in str(current[0])
        new = _outputs(conn, texts)
        # version 2 in this transaction only, which is rolled back
        conn.execute(PREVIOUS.read_text(encoding="utf-8"))
        old = _outputs(conn, texts)
        conn.rollback()
    # the inputs hold what the passes act on: every kind of token comes out of them
    joined = "\n".join(old)
    for token in ("art6x162bw", "art6x19awb", "art5hnw", "art53row", "art56eov", "art6x248bw"):
        assert token in joined, token
    assert "ECLINLHR20191278" in joined
    differ = [(t, o, n) for t, o, n in zip(texts, old, new, strict=True) if o != n]
    assert differ == [], differ[:5]


@pytest.mark.parametrize(
    ("text", "most"),
    [
        ("ontbinding van de huurovereenkomst wegens huurachterstand", 0),
        ("een kaart van de gemeente", 2),  # "art": the plain article passes only
        ("art. 6:162 BW onrechtmatige daad", 9),
        ("ECLI:NL:HR:2019:1278", 2),
    ],
)
def test_a_text_without_what_a_pass_needs_runs_few_patterns(
    db: DbHandle, text: str, most: int
) -> None:
    """Version 2 ran its 25 patterns on every text."""
    with psycopg.connect(db.superuser_url) as conn:
        conn.execute("SELECT ewall_legal_normalize(%s)", (text,))
        (count,) = conn.execute(
            "SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'RegexpMemoryContext'"
        ).fetchone()  # type: ignore[misc]
    assert count <= most, count
