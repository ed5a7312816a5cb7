"""Sentence splitting for Dutch legal prose."""

from __future__ import annotations

import pytest

from app.gates.sentences import answer_sentences, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "De rechtbank wijst de vordering af. Het hof bekrachtigt het vonnis.",
            ["De rechtbank wijst de vordering af.", "Het hof bekrachtigt het vonnis."],
        ),
        (
            "Op grond van art. 6:162 BW is gedaagde aansprakelijk. "
            "Dat volgt uit r.o. 3.4 van het arrest.",
            [
                "Op grond van art. 6:162 BW is gedaagde aansprakelijk.",
                "Dat volgt uit r.o. 3.4 van het arrest.",
            ],
        ),
        (
            "Zie o.a. HR 12 april 2013, ECLI:NL:HR:2013:477. De rechtbank volgt dat.",
            ["Zie o.a. HR 12 april 2013, ECLI:NL:HR:2013:477.", "De rechtbank volgt dat."],
        ),
        (
            "Eiser wordt bijgestaan door mr. J.A. de Vries. "
            "Hij voert aan dat de termijn is verstreken.",
            [
                "Eiser wordt bijgestaan door mr. J.A. de Vries.",
                "Hij voert aan dat de termijn is verstreken.",
            ],
        ),
        (
            "De schade is vergoed [1]. Rente is verschuldigd. [2, 3] De kosten zijn voor gedaagde.",
            [
                "De schade is vergoed [1].",
                "Rente is verschuldigd. [2, 3]",
                "De kosten zijn voor gedaagde.",
            ],
        ),
        (
            "Rente is verschuldigd.[4] Zo oordeelde de rechtbank.",
            ["Rente is verschuldigd.[4]", "Zo oordeelde de rechtbank."],
        ),
        (
            "Art. 3 lid 1 jo. art. 4 Awb is van toepassing. Zie ook i.c. de conclusie.",
            ["Art. 3 lid 1 jo. art. 4 Awb is van toepassing.", "Zie ook i.c. de conclusie."],
        ),
        (
            "Vgl. EHRM 1 januari 2000, nr. 12345/99. Het EU-recht is niet van toepassing.",
            ["Vgl. EHRM 1 januari 2000, nr. 12345/99.", "Het EU-recht is niet van toepassing."],
        ),
        (
            "3.4. De rechtbank overweegt als volgt. Het beroep is gegrond.",
            ["3.4. De rechtbank overweegt als volgt.", "Het beroep is gegrond."],
        ),
        (
            "De zitting was op 12 jan. 2014. Partijen zijn gehoord.",
            ["De zitting was op 12 jan. 2014.", "Partijen zijn gehoord."],
        ),
        (
            "Zij stelt: “Dit is onjuist.” De rechtbank volgt haar niet.",
            ["Zij stelt: “Dit is onjuist.”", "De rechtbank volgt haar niet."],
        ),
        (
            "De raadsheren waren P.Th. Gründemann en M.i. Jansen e.a. Zij beslisten unaniem.",
            ["De raadsheren waren P.Th. Gründemann en M.i. Jansen e.a. Zij beslisten unaniem."],
        ),
        (
            "Acme B.V. heeft geleverd. Vgl. ook m.i. terecht HR 2019.",
            ["Acme B.V. heeft geleverd.", "Vgl. ook m.i. terecht HR 2019."],
        ),
        ("(…) De rechtbank oordeelt.", ["(…) De rechtbank oordeelt."]),
        ("Is dat juist? Nee. Dat is het niet!", ["Is dat juist?", "Nee.", "Dat is het niet!"]),
        (
            "De vordering is toewijsbaar in 2013. 4. Proceskosten worden gecompenseerd.",
            ["De vordering is toewijsbaar in 2013.", "4. Proceskosten worden gecompenseerd."],
        ),
        (
            "Eerste alinea zonder punt\n\nTweede alinea.",
            ["Eerste alinea zonder punt", "Tweede alinea."],
        ),
        ("  \n\n ", []),
        (
            # guilders, "d.d.", court abbreviations and "pag." (a fuzz of the gate saw the
            # stumps "... geheven van fl." and "300. [2]" ship in a trimmed answer)
            "Er wordt een recht geheven van fl. 300. [2] Bij brief d.d. 1 november 2026 is "
            "opgezegd. Rb. Amsterdam en Ktr. Utrecht oordeelden anders. Zie pag. 4 daarvan.",
            [
                "Er wordt een recht geheven van fl. 300. [2]",
                "Bij brief d.d. 1 november 2026 is opgezegd.",
                "Rb. Amsterdam en Ktr. Utrecht oordeelden anders.",
                "Zie pag. 4 daarvan.",
            ],
        ),
        (
            # a currency mark ends a sentence, unless an amount follows it
            "Het bedrag is 300 EUR. De rest volgt. Het bedrag is EUR. 300 in totaal.",
            ["Het bedrag is 300 EUR.", "De rest volgt.", "Het bedrag is EUR. 300 in totaal."],
        ),
        (
            # a statute's or court's acronym ends a sentence before a word that opens one, as
            # real decisions write it (ECLI:NL:RVS:2014:400, ECLI:NL:HR:2014:3148); before a
            # name or a number it does not
            "Het college moet afdeling 3.4 van de Awb. Indien een nieuw besluit wordt "
            "genomen, volgt bekendmaking. Daarop ziet artikel 359a Sv. Het hof overweegt "
            "voorts. Zie artikel 81 RO. Dit betekent het. Zie HR. Jansen en HR. 12 maart.",
            [
                "Het college moet afdeling 3.4 van de Awb.",
                "Indien een nieuw besluit wordt genomen, volgt bekendmaking.",
                "Daarop ziet artikel 359a Sv.",
                "Het hof overweegt voorts.",
                "Zie artikel 81 RO.",
                "Dit betekent het.",
                "Zie HR. Jansen en HR. 12 maart.",
            ],
        ),
        (
            # markers before the full stop, as language models write them
            "De huur is € 36.250 [1]. De boete is € 7.250 [2, 3]. Zie ook [4].",
            ["De huur is € 36.250 [1].", "De boete is € 7.250 [2, 3].", "Zie ook [4]."],
        ),
    ],
)
def test_split(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_whitespace_inside_a_paragraph_is_normalized() -> None:
    assert split_sentences("Een  zin\nover twee regels. En nog\teen.") == [
        "Een zin over twee regels.",
        "En nog een.",
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("- Eerste zin\n- Tweede zin.", ["Eerste zin", "Tweede zin."]),
        ("<p>Eén.</p><p>Twee &amp; drie.</p>", ["Eén.", "Twee & drie."]),
        ("Eén. **Twee.**", ["Eén.", "Twee."]),
        ("Het hof slaagt. het beroep faalt.", ["Het hof slaagt.", "het beroep faalt."]),
        (
            "Zie o.a. r.o. 3.4. het hof en art. 6:162 BW.",
            ["Zie o.a. r.o. 3.4. het hof en art. 6:162 BW."],
        ),
        ("Een zin\nover twee regels.", ["Een zin over twee regels."]),
        ("Eerste zin.\ntweede zin.", ["Eerste zin.", "tweede zin."]),
        ("## Conclusie\nDe vordering faalt.", ["De vordering faalt."]),
        (
            "De rechtbank oordeelt:\n\n3. De vordering faalt.",
            ["De vordering faalt."],
        ),
        ("Zie [de uitspraak](https://x.nl/a) van 2019. [1]", ["Zie de uitspraak van 2019. [1]"]),
        ("a < b en c > d.", ["a < b en c > d."]),
        ("| a | De huur is opgezegd. |\n|---|---|", ["a", "De huur is opgezegd."]),
        # a review: abbreviations before lower case and at a line's end are no ends
        ("Het kost EUR 1.500 incl. btw per maand.", ["Het kost EUR 1.500 incl. btw per maand."]),
        (
            "Eiseres in conv. en verweerster in reconv. vordert.",
            ["Eiseres in conv. en verweerster in reconv. vordert."],
        ),
        (
            "Het hof verwijst naar art.\n6:162 BW en oordeelt.",
            ["Het hof verwijst naar art. 6:162 BW en oordeelt."],
        ),
        ("Volgens mr.\nJansen is dat zo.", ["Volgens mr. Jansen is dat zo."]),
        ("Dat was in 2020. de rechter wees af.", ["Dat was in 2020.", "de rechter wees af."]),
        ("Schrijf <jansen@firm.nl> een <!-- x --> brief.", ["Schrijf <jansen@firm.nl> een brief."]),
        (
            "## Een kop van heel veel woorden zonder punt\nDe vordering faalt.",
            ["Een kop van heel veel woorden zonder punt", "De vordering faalt."],
        ),
        # a heading or lead-in that makes a claim is judged on its own; a label is not
        (
            "### Het beroep slaagt\nDe vordering faalt.",
            ["Het beroep slaagt", "De vordering faalt."],
        ),
        (
            "De Hoge Raad vernietigt het arrest:\nDe vordering faalt.",
            ["De Hoge Raad vernietigt het arrest:", "De vordering faalt."],
        ),
        ("**Let op:** de vordering faalt.", ["de vordering faalt."]),
        ("Dat is zo.¹ Het hof wijst af.", ["Dat is zo.", "Het hof wijst af."]),
        ("Dat is zo.Het hof wijst af.", ["Dat is zo.", "Het hof wijst af."]),
        ("Het is 100 m² groot.", ["Het is 100 m² groot."]),
        # hard-wrapped at 72-80 characters (the answer shows it: a long line is cut before
        # a lower-case word): a long line cut mid-sentence goes on after a capital (a name)
        (
            "Het hof heeft de vordering van de verhuurder tot ontruiming van de woning van\n"
            "Jansen aan de Havenstraat toegewezen. De kosten van de procedure zijn voor de\n"
            "huurder.",
            [
                "Het hof heeft de vordering van de verhuurder tot ontruiming van de woning van "
                "Jansen aan de Havenstraat toegewezen.",
                "De kosten van de procedure zijn voor de huurder.",
            ],
        ),
        (
            "- Het hof heeft de vordering van de verhuurder tot ontruiming van de woning van\n"
            "  Jansen toegewezen.\n- De kosten van de procedure zijn in beide instanties geheel voor\n"
            "  de huurder.",
            [
                "Het hof heeft de vordering van de verhuurder tot ontruiming van de woning van "
                "Jansen toegewezen.",
                "De kosten van de procedure zijn in beide instanties geheel voor de huurder.",
            ],
        ),
        # a re-run's layouts (2026-12-06): a letter footnote, a chat assistant's source
        # marker, an answer sent escaped twice; a Windows path stays as it is
        ("Dat is zo.[a] Het hof wijst af.", ["Dat is zo.", "Het hof wijst af."]),
        (
            "Zie de brief (bijlage B.) Het hof wijst af.",
            ["Zie de brief (bijlage B.)", "Het hof wijst af."],
        ),
        (
            "Volgens mr. J. de Vries wijst het hof af.",
            ["Volgens mr. J. de Vries wijst het hof af."],
        ),
        ("Dat is zo.【4:0†source】 Het hof wijst af.", ["Dat is zo.", "Het hof wijst af."]),
        ("Dat is zo.\\nHet hof wijst af.", ["Dat is zo.", "Het hof wijst af."]),
        ("- Een\\n- Twee", ["Een", "Twee"]),
        (
            "Het bestand staat in C:\\nieuw op de schijf.",
            ["Het bestand staat in C:\\nieuw op de schijf."],
        ),
        # not hard-wrapped elsewhere: a line that starts with a capital is a sentence of its own
        (
            "Het hof heeft de vordering van de verhuurder tot ontruiming van de woning van\n"
            "Jansen aan de Havenstraat toegewezen.",
            [
                "Het hof heeft de vordering van de verhuurder tot ontruiming van de woning van",
                "Jansen aan de Havenstraat toegewezen.",
            ],
        ),
        ("Het beroep slaagt\nDe vordering faalt.", ["Het beroep slaagt", "De vordering faalt."]),
    ],
)
def test_answer_sentences_read_markup_as_layout(answer: str, expected: list[str]) -> None:
    assert answer_sentences(answer) == expected
