"""The demo firm's own documents, generated deterministically in Dutch.

Every matter has a dossier (facts, question, analysis, articles) written for it; templates
per document kind turn a dossier into the memo, the court or objection brief, the e-mail
to the client and, where the matter calls for them, a claim chart, an expert report, a
witness statement or a draft agreement. The templates follow the shapes the chunkers
recognise (``app.ingest.chunking``): claim-chart rows ``1[a] | ...`` and ``1 | [a] | ...``,
Markdown and numbered brief headings, ``V:``/``A:`` and ``Vraag 1:`` transcripts, numbered
expert paragraphs, RFC 822 e-mails, so one demo load runs every chunker path.

Nothing here is random: the same code yields byte-identical documents, so a second load
finds every chunk already stored (content-addressed ids) and changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from app.demo.firm import (
    CONFLICTS_PARTNER,
    FIRM_NAME,
    MATTERS,
    DemoMatter,
    client,
    person,
)

SOURCE = "imanage"
LIBRARY = "ACTIVE"
# Documents are dated relative to this day, so their texts ("vóór 15 december 2026") and
# their dates agree. Fixed, not today: the documents must not change between loads.
DEMO_TODAY = date(2026, 11, 23)


@dataclass(frozen=True)
class FirmDocument:
    """One document as the DMS would hand it over (see connectors.base.SourceDocument)."""

    external_id: str
    title: str
    doc_type: str  # the DMS's own spelling, normalised by the pipeline
    kind: str  # the canonical type that spelling must normalise to (checked by tests)
    client_id: str | None
    matter_id: str | None
    author: str
    modified_at: datetime
    text: str | None = None
    content: bytes | None = None
    mime_type: str | None = None
    acl_allow: tuple[str, ...] | None = None  # source ACL (private to these aliases)


@dataclass(frozen=True)
class Contact:
    name: str
    salutation: str  # "Geachte mevrouw Koster,"
    function: str
    email: str


@dataclass(frozen=True)
class Dossier:
    facts: tuple[str, ...]  # sentences
    question: str
    analysis: tuple[str, ...]  # paragraphs; the first words up to the period are a label
    articles: tuple[str, ...]
    amount: str
    next_step: str
    counsel: str = ""  # the other side's lawyer
    forum: str = ""  # court or authority
    brief: str = ""  # the DMS document type of the main brief, "" when there is none
    markdown_brief: bool = False  # Markdown headings (as exported from Word) vs numbered


@dataclass(frozen=True)
class ExpertReport:
    expert: str
    discipline: str
    assignment: str
    investigation: tuple[str, ...]
    findings: tuple[str, ...]
    conclusions: tuple[str, ...]


@dataclass(frozen=True)
class Hearing:
    witness: str
    capacity: str
    place: str
    pairs: tuple[tuple[str, str], ...]  # (question, answer)
    numbered: bool = False  # "Vraag 1:" / "Antwoord:" instead of "V:" / "A:"


@dataclass(frozen=True)
class Agreement:
    title: str
    parties: tuple[str, str]
    recitals: tuple[str, ...]
    clauses: tuple[tuple[str, str], ...]  # (heading, text)


# --- client contacts ----------------------------------------------------------------------

CONTACTS: dict[str, Contact] = {
    "ZEEBURG": Contact("W.J. Zeeburg", "Geachte heer Zeeburg,",
                       "voorzitter raad van bestuur", "wj.zeeburg@zeeburg.example"),
    "ZEEBURG-LOG": Contact("R. Kuipers", "Geachte heer Kuipers,", "directeur",
                           "r.kuipers@zeeburglogistiek.example"),
    "ZEEBURG-VAST": Contact("M. de Graaf", "Geachte mevrouw De Graaf,", "assetmanager",
                            "m.degraaf@zeeburgvastgoed.example"),
    "MEDIVERS": Contact("dr. A. Koster", "Geachte mevrouw Koster,", "General Counsel",
                        "a.koster@medivers.example"),
    "HELDERGLAS": Contact("mr. C. Willems", "Geachte heer Willems,", "bedrijfsjurist",
                          "c.willems@helderglas.example"),
    "ZUIDERVEEN": Contact("mr. F. el Idrissi", "Geachte mevrouw El Idrissi,",
                          "senior juridisch adviseur", "f.elidrissi@zuiderveen.example"),
    "KLAASSEN": Contact("G. Klaassen", "Geachte heer Klaassen,", "directeur-grootaandeelhouder",
                        "g.klaassen@klaassenbouw.example"),
    "NIMBUS": Contact("S. Chen", "Beste Sophie,", "CEO en medeoprichter",
                      "sophie@nimbusanalytics.example"),
    "NOORDZEE": Contact("mr. E. Brouwer", "Geachte heer Brouwer,", "directeur juridische zaken",
                        "e.brouwer@noordzee-energie.example"),
    "VDLINDEN": Contact("H. van der Linden", "Beste Henk,", "eigenaar",
                        "henk@bakkerijvanderlinden.example"),
}

# --- dossiers -----------------------------------------------------------------------------

DOSSIERS: dict[str, Dossier] = {
    "MEDIVERS-001": Dossier(
        facts=(
            "Medivers Pharma B.V. is houdster van Europees octrooi EP 2 471 839 voor een "
            "retard-tablet met gereguleerde afgifte van medivastine, verleend op 14 mei 2019 en "
            "gevalideerd in Nederland.",
            "Genova Generics B.V. brengt sinds 1 februari 2025 onder de naam 'Medivastine Genova "
            "20 mg retard' een generieke tablet op de Nederlandse markt.",
            "Uit de SmPC en de eigen dissolutiemetingen van Medivers blijkt dat het product alle "
            "kenmerken van conclusie 1 bezit, met uitzondering van de letterlijke "
            "viscositeitsrange van de HPMC-matrix.",
            "Genova stelt dat het octrooi nietig is wegens gebrek aan inventiviteit ten opzichte "
            "van WO 2009/112345 (D1).",
        ),
        question=(
            "Maakt Medivastine Genova 20 mg retard letterlijk of equivalent inbreuk op conclusie "
            "1 en 2 van EP 2 471 839, en is het octrooi bestand tegen de nietigheidsverweren van "
            "Genova?"
        ),
        analysis=(
            "Beschermingsomvang. Op grond van art. 69 EOV en het Protocol inzake de uitleg "
            "daarvan wordt de beschermingsomvang bepaald door de conclusies, uitgelegd met de "
            "beschrijving en de tekeningen. Kenmerk 1[c] (HPMC met een viscositeit van 4.000 tot "
            "15.000 mPa·s) is in het product van Genova niet letterlijk aanwezig: Genova gebruikt "
            "hypromellose van 100.000 mPa·s.",
            "Equivalentie. Volgens het rapport van prof. Van Amerongen vervult de hoog-viskeuze "
            "HPMC in het Genova-product dezelfde functie (een gellaag die de afgifte vertraagt), "
            "op in wezen dezelfde wijze en met hetzelfde resultaat. Sinds Medinol/Abbott weegt de "
            "rechter daarbij de redelijke rechtszekerheid voor derden mee. Het risico is dat de "
            "rechtbank de numerieke range leest als een bewuste beperking, omdat Medivers die "
            "range tijdens de verlening heeft ingevoegd om D1 te ontwijken.",
            "Geldigheid. Genova beroept zich op gebrek aan inventiviteit (art. 56 EOV) vanuit D1 "
            "in combinatie met de algemene vakkennis. D1 openbaart een matrixtablet met een "
            "andere werkzame stof en geeft geen aanwijzing voor het afgifteprofiel van kenmerk "
            "1[d]. Volgens de probleem-oplossingsbenadering is het objectieve technische probleem "
            "een eenmaal-daagse formulering met een vlak plasmaprofiel; de vakman zou D1 "
            "daarvoor niet als startpunt kiezen. Nieuwheid (art. 54 EOV) betwist Genova niet.",
            "Voorlopige maatregelen. Gezien de prijserosie na markttoetreding van een generiek is "
            "spoed geboden. Een kort geding met een inbreukverbod en een opgave van afnemers en "
            "genoten winst (art. 70 Rijksoctrooiwet 1995) ligt in de rede; bij toewijzing moet "
            "Medivers rekening houden met een zekerheidstelling.",
        ),
        articles=("art. 53 Rijksoctrooiwet 1995", "art. 69 EOV", "art. 56 EOV",
                  "art. 70 Rijksoctrooiwet 1995"),
        amount="€ 4,8 miljoen (geschatte omzetschade over 2025)",
        next_step=(
            "De dagvaarding in kort geding wordt vóór 15 december 2026 uitgebracht; de pleitnota "
            "en het deskundigenrapport zijn gereed."
        ),
        counsel="mr. R. Brink (Van Houten & Partners)",
        forum="de voorzieningenrechter van de Rechtbank Den Haag",
        brief="Pleitnota kort geding",
        markdown_brief=True,
    ),
    "MEDIVERS-002": Dossier(
        facts=(
            "Genova Generics B.V. heeft op 21 oktober 2024 oppositie ingesteld tegen EP 2 471 839 "
            "op de gronden van art. 100(a) EOV (gebrek aan nieuwheid en inventiviteit) en art. "
            "100(c) EOV (toegevoegde materie).",
            "De oppositieafdeling heeft in haar voorlopige opinie van 3 juni 2026 het octrooi "
            "zoals verleend nieuw geacht, maar twijfel geuit over de inventiviteit ten opzichte "
            "van D1 en D3.",
            "De mondelinge behandeling is bepaald op 12 februari 2027.",
        ),
        question=(
            "Welke hulpverzoeken dienen wij in en hoe verdedigen wij de inventiviteit van "
            "conclusie 1 van de retard-tablet?"
        ),
        analysis=(
            "Naaste stand van de techniek. De oppositieafdeling neemt D3 (een artikel over "
            "HPMC-matrices uit 2007) als startpunt. Wij betogen dat D1 de naaste stand van de "
            "techniek is, omdat D1 hetzelfde doel (eenmaal-daagse dosering) nastreeft. Het "
            "verschil met D1 is het afgifteprofiel van kenmerk 1[d], dat tot een vlakkere "
            "plasmaspiegel leidt; dat effect is aangetoond in de klinische studie MV-203.",
            "Hulpverzoeken. Hulpverzoek 1 beperkt de viscositeitsrange tot 4.000 tot 8.000 "
            "mPa·s; hulpverzoek 2 voegt het kenmerk 'eenmaal daags' uit conclusie 2 toe aan "
            "conclusie 1. Beide vinden steun in de aanvrage zoals ingediend (p. 7, r. 12-20) en "
            "voldoen aan art. 123(2) EOV.",
            "Samenhang met de inbreukzaak. Een beperking in oppositie werkt terug (art. 68 EOV) "
            "en raakt de equivalentiediscussie in de Nederlandse inbreukzaak tegen Genova. "
            "Hulpverzoek 1 verzwakt het equivalentiebetoog tegen het Genova-product met 100.000 "
            "mPa·s; dit moet met cliënt worden afgestemd.",
        ),
        articles=("art. 54 EOV", "art. 56 EOV", "art. 100 EOV", "art. 123 EOV"),
        amount="",
        next_step=(
            "Schriftelijke stukken en hulpverzoeken indienen uiterlijk op 12 december 2026 "
            "(termijn van Regel 116 van het Uitvoeringsreglement)."
        ),
        counsel="dr. S. Lindqvist (European patent attorney van Genova)",
        forum="de oppositieafdeling van het Europees Octrooibureau",
        brief="Verweerschrift in oppositie",
        markdown_brief=True,
    ),
    "MEDIVERS-003": Dossier(
        facts=(
            "Medivers wil Zorgpunt Apotheken B.V. een niet-exclusieve licentie verlenen voor de "
            "distributie van medivastine retard onder het eigen label van Zorgpunt in de Benelux.",
            "Zorgpunt vraagt een looptijd van vijf jaar, een royalty van 6% van de netto-omzet en "
            "exclusiviteit voor de apotheekketens.",
            "Medivers wil de licentie kunnen beëindigen als Zorgpunt een generiek van een "
            "concurrent gaat voeren.",
        ),
        question=(
            "Hoe structureren wij royalty, exclusiviteit en beëindiging, en is een "
            "concurrentiebeding toelaatbaar?"
        ),
        analysis=(
            "Inschrijving. Een licentie onder het octrooi werkt pas tegenover derden na "
            "inschrijving in het octrooiregister (art. 56 lid 2 Rijksoctrooiwet 1995). Wij "
            "adviseren de inschrijving als opschortende voorwaarde voor de eerste royaltybetaling "
            "op te nemen.",
            "Niet-concurrentie. Het verbod om concurrerende generieken te voeren is een "
            "niet-concurrentiebeding in een verticale overeenkomst. Onder de groepsvrijstelling "
            "voor verticale overeenkomsten is zo'n beding toegestaan voor maximaal vijf jaar, mits "
            "de marktaandelen onder 30% blijven. Het aandeel van Medivers in "
            "retard-formuleringen ligt rond 34%, dus een individuele toets is nodig.",
            "Beëindiging. Wij adviseren opzegging met een termijn van zes maanden, ontbinding bij "
            "een tekortkoming (art. 6:265 BW) en een uitdrukkelijke regeling van de afwikkeling "
            "van voorraden.",
        ),
        articles=("art. 56 Rijksoctrooiwet 1995", "artikel 6:248 BW", "artikel 6:265 BW"),
        amount="€ 750.000 minimumroyalty per jaar",
        next_step="Het tweede concept van de licentieovereenkomst gaat vóór 5 december 2026 naar "
        "Zorgpunt.",
        counsel="mr. D. Vos (bedrijfsjurist Zorgpunt)",
    ),
    "MEDIVERS-004": Dossier(
        facts=(
            "Dr. P. Verhoeven, senior onderzoeker formulering, heeft op 28 augustus 2026 "
            "vertrouwelijke stabiliteitsdata van het medivastine-project naar een "
            "privé-e-mailadres gestuurd en twee dagen later gesproken met een recruiter van een "
            "generieke concurrent.",
            "Medivers heeft hem op 1 september 2026 op staande voet ontslagen wegens schending van "
            "de geheimhoudingsverplichting.",
            "Verhoeven verzoekt de kantonrechter het ontslag te vernietigen en verzoekt "
            "doorbetaling van loon en een billijke vergoeding.",
        ),
        question=(
            "Houdt het ontslag op staande voet stand (dringende reden, onverwijldheid, mededeling "
            "van de reden) en hoe groot is het risico op een billijke vergoeding?"
        ),
        analysis=(
            "Dringende reden. Het doorsturen van bedrijfsgeheime data naar een privé-account is "
            "een ernstige schending van art. 7 van de arbeidsovereenkomst en van de gedragscode. "
            "Gelet op de concurrentiegevoeligheid van de data is de dringende reden naar "
            "verwachting voldoende onderbouwd. De rechter weegt wel de persoonlijke "
            "omstandigheden mee: 21 dienstjaren en geen eerdere waarschuwingen.",
            "Onverwijldheid. Medivers heeft na de ontdekking op 29 augustus een kort intern "
            "onderzoek laten doen door IT-security en Verhoeven op 1 september gehoord. Een "
            "onderzoek van enkele dagen is toelaatbaar; het ontslag is onverwijld gegeven.",
            "Bewijs. De verklaring van de IT-securitymanager in het getuigenverhoor van 14 oktober "
            "2026 bevestigt het tijdstip en de inhoud van de doorgestuurde bestanden. Wij "
            "adviseren geen schikking boven het bedrag van de transitievergoeding.",
        ),
        articles=("artikel 7:677 BW", "artikel 7:678 BW", "artikel 7:681 BW"),
        amount="€ 186.000 aan verzochte billijke vergoeding",
        next_step="Het verweerschrift moet uiterlijk 9 december 2026 bij de kantonrechter Haarlem "
        "zijn ingediend.",
        counsel="mr. L. Kok (Kok Arbeidsrecht)",
        forum="de kantonrechter van de Rechtbank Noord-Holland, locatie Haarlem",
        brief="Verweerschrift ontslag op staande voet",
    ),
    "MEDIVERS-005": Dossier(
        facts=(
            "Het College ter Beoordeling van Geneesmiddelen (CBG) heeft op 22 januari 2026 "
            "besloten dat de SmPC en de bijsluiter van medivastine retard een extra waarschuwing "
            "voor levertoxiciteit moeten bevatten.",
            "Medivers acht de onderbouwing, één casuïstiekmelding uit 2024, onvoldoende en vreest "
            "reputatieschade.",
        ),
        question=(
            "Is het besluit zorgvuldig voorbereid en deugdelijk gemotiveerd, en heeft een verzoek "
            "om voorlopige voorziening kans?"
        ),
        analysis=(
            "Zorgvuldigheid. Het CBG heeft de farmacovigilantiedata die Medivers in maart 2025 "
            "aanleverde niet kenbaar betrokken. Dat is in strijd met het zorgvuldigheidsbeginsel "
            "(art. 3:2 Awb).",
            "Motivering. Eén casuïstiekmelding maakt een causaal verband niet aannemelijk; het "
            "advies waarop het CBG zich beroept, ziet op een andere statine met een afwijkend "
            "metabolisme. Het besluit is onvoldoende gemotiveerd (art. 7:12 Awb).",
            "Voorlopige voorziening. Het spoedeisend belang is beperkt, omdat de aanpassing pas "
            "bij de volgende drukgang van de bijsluiter hoeft te worden doorgevoerd. Wij adviseren "
            "de bezwaarprocedure af te wachten.",
        ),
        articles=("art. 3:2 Awb", "art. 7:12 Awb", "Geneesmiddelenwet"),
        amount="",
        next_step="De hoorzitting van de bezwaaradviescommissie van het CBG is op 16 december "
        "2026.",
        counsel="mr. T. Aydın (afdeling juridische zaken CBG)",
        forum="het College ter Beoordeling van Geneesmiddelen",
        brief="Bezwaarschrift",
    ),
    "HELDERGLAS-001": Dossier(
        facts=(
            "Thermtec Industrieöfen GmbH heeft in 2023 smeltoven 3 van Helderglas in Dordrecht "
            "gerenoveerd.",
            "Op 8 maart 2025 faalde de regenerator door een scheur in het vuurvaste metselwerk, "
            "waarna de oven twaalf dagen stillag en 1.400 ton glas verloren ging.",
            "Helderglas houdt Thermtec aansprakelijk voor de herstelkosten en de bedrijfsschade.",
            "Thermtec beroept zich op de exoneratieclausule in haar algemene voorwaarden en stelt "
            "dat Helderglas de oven te snel heeft opgestookt.",
        ),
        question=(
            "Is Thermtec toerekenbaar tekortgeschoten en kan zij zich op haar exoneratiebeding "
            "beroepen?"
        ),
        analysis=(
            "Tekortkoming. Thermtec heeft het voorgeschreven vuurvaste materiaal toegepast, maar "
            "de dilatatievoegen niet volgens haar eigen montagehandleiding aangebracht. Volgens "
            "het deskundigenrapport van ir. Bosman is dat de primaire oorzaak van de "
            "scheurvorming. Dat is een tekortkoming die Thermtec kan worden toegerekend (art. "
            "6:74 en 6:75 BW).",
            "Exoneratie. Een beroep op de exoneratieclausule kan naar maatstaven van redelijkheid "
            "en billijkheid onaanvaardbaar zijn (art. 6:248 lid 2 BW), met name bij bewuste "
            "roekeloosheid van leidinggevenden. De verklaring van ovenmeester Brandsma dat de "
            "voorman van Thermtec de voegen bewust heeft weggelaten om tijd te winnen, is "
            "daarvoor van groot belang.",
            "Eigen schuld. Thermtec stelt dat de oven met 40°C per uur is opgestookt in plaats "
            "van de voorgeschreven 25°C per uur. De procesdata van de ovenbesturing spreken dat "
            "tegen; een beroep op eigen schuld (art. 6:101 BW) achten wij weinig kansrijk.",
            "Bewijsaanbod. Het bewijsaanbod moet concreet zijn en vermelden welke getuigen wat "
            "kunnen verklaren; een te algemeen aanbod kan in hoger beroep worden gepasseerd (zie "
            "de als productie gevoegde conclusie van A-G Wissink, ECLI:NL:PHR:2011:BP5608).",
        ),
        articles=("artikel 6:74 BW", "artikel 6:75 BW", "artikel 6:248 BW", "artikel 6:101 BW",
                  "artikel 6:96 BW"),
        amount="€ 2.350.000 (herstel € 610.000, bedrijfsschade € 1.740.000)",
        next_step="De conclusie van repliek moet uiterlijk 17 december 2026 op de rol van de "
        "Rechtbank Rotterdam staan.",
        counsel="mr. A. Hofstra (Hofstra Litigation)",
        forum="de Rechtbank Rotterdam",
        brief="Conclusie van repliek",
    ),
    "HELDERGLAS-002": Dossier(
        facts=(
            "Helderglas sluit de floatglaslijn in Dordrecht wegens structureel lagere vraag en "
            "hoge energiekosten.",
            "Daardoor vervallen 64 van de 210 arbeidsplaatsen.",
            "Een melding collectief ontslag bij het UWV en de vakbonden is vereist, en de "
            "ondernemingsraad moet om advies worden gevraagd.",
            "Met FNV wordt over een sociaal plan onderhandeld.",
        ),
        question=(
            "Welke procedure en termijnen gelden, hoe wordt het afspiegelingsbeginsel toegepast "
            "en wat moet het sociaal plan regelen?"
        ),
        analysis=(
            "Meldingsplicht. Omdat binnen drie maanden ten minste twintig werknemers in één "
            "werkgebied worden ontslagen, is de Wet melding collectief ontslag van toepassing. Het "
            "UWV neemt ontslagaanvragen pas in behandeling een maand na de melding, tenzij de "
            "vakbonden verklaren te zijn geraadpleegd.",
            "Adviesrecht. Het besluit tot sluiting valt onder art. 25 lid 1 WOR. Het advies moet "
            "worden gevraagd op een moment dat het nog wezenlijke invloed op het besluit kan "
            "hebben.",
            "Afspiegeling. Per uitwisselbare functie en per leeftijdscategorie wordt afgespiegeld "
            "binnen de bedrijfsvestiging. De selectie van boventallige functies staat in de "
            "vertrouwelijke notitie die alleen voor het arbeidsrechtteam toegankelijk is.",
        ),
        articles=("artikel 7:669 BW", "Wet melding collectief ontslag", "art. 25 WOR"),
        amount="voorziening sociaal plan € 5,1 miljoen",
        next_step="De adviesaanvraag gaat op 2 december 2026 naar de ondernemingsraad; de "
        "melding aan het UWV volgt direct daarna.",
        counsel="mr. J. Groen (juridisch adviseur FNV)",
    ),
    "HELDERGLAS-003": Dossier(
        facts=(
            "Glastech Europe B.V. vordert de nietigverklaring van het Nederlandse deel van EP 3 "
            "118 207 van Helderglas, dat een werkwijze beschermt voor het aanbrengen van een "
            "zelfreinigende titaniumdioxidecoating op floatglas bij 580-620°C in de tinbadzone.",
            "Glastech stelt dat de werkwijze niet nieuw is ten opzichte van JP 2008-155402 (D1) "
            "en niet inventief ten opzichte van een congrespublicatie uit 2010 (D2).",
            "Helderglas overweegt een reconventionele inbreukvordering, omdat Glastech sinds 2025 "
            "gecoat glas met vergelijkbare eigenschappen levert.",
        ),
        question=(
            "Houdt EP 3 118 207 stand tegen D1 en D2, en is een reconventionele inbreukvordering "
            "kansrijk?"
        ),
        analysis=(
            "Nieuwheid. D1 openbaart een sol-gelcoating die na de productie bij 450°C wordt "
            "aangebracht, niet in de tinbadzone. Kenmerk [c] is in D1 dus niet direct en "
            "ondubbelzinnig geopenbaard (art. 54 EOV).",
            "Inventiviteit. D2 beschrijft chemische dampafzetting in de tinbadzone, maar voor een "
            "siliciumoxidelaag. De stap naar titaniumdioxide bij 580-620°C vergt een andere "
            "precursor en levert een onverwachte fotokatalytische activiteit op (voorbeeld 3 van "
            "het octrooi); die stap ligt voor de vakman niet voor de hand (art. 56 EOV).",
            "Reconventie. Voor inbreuk op een werkwijzeconclusie moet Helderglas bewijzen dat "
            "Glastech de werkwijze toepast. Een bewijsbeslag op de productielijn van Glastech is "
            "daarvoor het aangewezen middel.",
        ),
        articles=("art. 54 EOV", "art. 56 EOV", "art. 138 EOV", "art. 75 Rijksoctrooiwet 1995"),
        amount="",
        next_step="De conclusie van antwoord, tevens eis in reconventie, moet uiterlijk 14 januari "
        "2027 bij de Rechtbank Den Haag worden genomen.",
        counsel="mr. K. Dijkstra (Dijkstra IP Litigation)",
        forum="de Rechtbank Den Haag",
        brief="Conclusie van antwoord tevens eis in reconventie",
    ),
    "ZUIDERVEEN-001": Dossier(
        facts=(
            "Stichting Groen Zuiderveen heeft op 15 november 2021 op grond van de Wet "
            "openbaarheid van bestuur (Wob) verzocht om openbaarmaking van de stukken over de "
            "verkoop van gemeentegrond aan projectontwikkelaar Polderzicht B.V.",
            "Het college heeft 72 van de 212 documenten gedeeltelijk geweigerd met een beroep op "
            "art. 10 lid 1 onder c en art. 11 Wob.",
            "Na bezwaar en beroep heeft de rechtbank de beslissing op bezwaar in 2025 vernietigd "
            "en het college opgedragen opnieuw te beslissen.",
            "De stichting verzoekt nu ook om schadevergoeding wegens overschrijding van de "
            "redelijke termijn.",
        ),
        question=(
            "Kan de weigering op grond van art. 10 en 11 Wob in de nieuwe beslissing op bezwaar "
            "standhouden, en welke schadevergoeding wegens overschrijding van de redelijke termijn "
            "is verschuldigd?"
        ),
        analysis=(
            "Bedrijfsgegevens. Art. 10 lid 1 onder c Wob is een absolute weigeringsgrond, maar "
            "alleen voor gegevens die vertrouwelijk aan de overheid zijn meegedeeld en waaruit "
            "wetenswaardigheden over de bedrijfsvoering kunnen worden afgeleid. De koopprijs van "
            "de grond valt daar niet onder; de grondexploitatie van Polderzicht wel.",
            "Intern beraad. Art. 11 Wob beschermt persoonlijke beleidsopvattingen in documenten "
            "voor intern beraad, niet de feitelijke gegevens daarin. De rechtbank oordeelde dat "
            "het college die scheiding onvoldoende heeft gemaakt; de nieuwe beslissing moet per "
            "document en per passage motiveren.",
            "Redelijke termijn. Voor bezwaar en beroep samen geldt in beginsel een redelijke "
            "termijn van twee jaar. Bij overschrijding kent de bestuursrechter forfaitair € 500 "
            "per half jaar toe (zie de als productie opgenomen uitspraak "
            "ECLI:NL:RBAMS:2010:BO3979). De overschrijding bedraagt ruim twee jaar; wij schatten "
            "de vergoeding op circa € 2.500, te verdelen tussen de gemeente en de Staat.",
        ),
        articles=("art. 10 Wob", "art. 11 Wob", "art. 6 EVRM", "art. 8:88 Awb"),
        amount="circa € 2.500 (immateriële schade)",
        next_step="De nieuwe beslissing op bezwaar moet uiterlijk 23 december 2026 worden genomen.",
        counsel="mr. B. Yıldız (gemachtigde Stichting Groen Zuiderveen)",
        forum="het college van burgemeester en wethouders van Zuiderveen",
        brief="Verweerschrift in beroep",
    ),
    "ZUIDERVEEN-002": Dossier(
        facts=(
            "Evenementenhal De Kolk B.V. overschrijdt volgens metingen van de omgevingsdienst bij "
            "dance-evenementen herhaaldelijk de geluidsnorm van 50 dB(A) op de gevels van "
            "omliggende woningen.",
            "Het college heeft op 12 augustus 2025 een last onder dwangsom opgelegd van € 10.000 "
            "per overtreding, met een maximum van € 100.000.",
            "De Kolk heeft bezwaar gemaakt en stelt dat de metingen onbetrouwbaar zijn en dat het "
            "college had moeten gedogen in afwachting van een nieuw geluidsscherm.",
        ),
        question="Kan de last in bezwaar standhouden, en is de hoogte van de dwangsom evenredig?",
        analysis=(
            "Beginselplicht tot handhaving. Bij een overtreding moet het bestuursorgaan in de "
            "regel handhaven; alleen bij concreet zicht op legalisatie of onevenredigheid kan "
            "daarvan worden afgezien. Een geluidsscherm waarvoor nog geen vergunning is "
            "aangevraagd, biedt geen concreet zicht op legalisatie.",
            "Metingen. De omgevingsdienst heeft gemeten volgens de Handleiding meten en rekenen "
            "industrielawaai met gekalibreerde apparatuur; een tweede akoestisch adviseur heeft de "
            "meetrapporten gecontroleerd.",
            "Hoogte. De dwangsom moet in redelijke verhouding staan tot de zwaarte van het "
            "geschonden belang en de beoogde werking (art. 5:32b Awb). Bij een omzet van circa "
            "€ 60.000 per evenement is € 10.000 per overtreding niet onevenredig.",
        ),
        articles=("art. 5:32 Awb", "art. 5:32b Awb", "art. 5:2 Awb"),
        amount="dwangsom € 10.000 per overtreding (maximaal € 100.000)",
        next_step="De hoorzitting van de commissie bezwaarschriften is op 10 december 2026.",
        counsel="mr. P. Wouters (advocaat De Kolk)",
        forum="de commissie bezwaarschriften van de gemeente Zuiderveen",
        brief="Verweerschrift in bezwaar",
    ),
    "ZUIDERVEEN-003": Dossier(
        facts=(
            "De gemeente Zuiderveen besteedt de renovatie en verduurzaming van het stadhuis "
            "Europees aan via een niet-openbare procedure, met een geraamde opdrachtwaarde van "
            "€ 18,5 miljoen.",
            "Het kantoor adviseert over de selectiecriteria, de gunningscriteria (beste "
            "prijs-kwaliteitverhouding) en de conceptovereenkomst op basis van de UAV-GC 2005.",
            "De aankondiging is op 1 oktober 2026 op TenderNed gepubliceerd; de gunningsbeslissing "
            "is voorzien voor maart 2027.",
        ),
        question=(
            "Zijn de geschiktheidseisen en gunningscriteria proportioneel en transparant, en hoe "
            "beperkt de gemeente het risico op een kort geding van afgewezen inschrijvers?"
        ),
        analysis=(
            "Proportionaliteit. De referentie-eis van twee vergelijkbare renovaties van "
            "monumentale overheidsgebouwen in de afgelopen vijf jaar is streng. Wij adviseren "
            "'ten minste één' en een ruimere omschrijving van 'vergelijkbaar', om de markt niet "
            "onnodig te beperken.",
            "Gunningscriteria. De weging van kwaliteit (60%) en prijs (40%) is verdedigbaar. De "
            "subcriteria voor circulair bouwen moeten zo zijn geformuleerd dat inschrijvers vooraf "
            "weten hoe zij worden beoordeeld.",
            "Rechtsbescherming. Na de gunningsbeslissing geldt een opschortende termijn van "
            "twintig dagen. Afgewezen inschrijvers moeten de relevante redenen ontvangen, met de "
            "kenmerken en relatieve voordelen van de winnende inschrijving.",
        ),
        articles=("Aanbestedingswet 2012", "UAV-GC 2005"),
        amount="geraamde opdrachtwaarde € 18,5 miljoen",
        next_step="Nota van inlichtingen 1 wordt op 4 december 2026 gepubliceerd.",
    ),
    "KLAASSEN-001": Dossier(
        facts=(
            "Bouwbedrijf Klaassen & Zonen B.V. heeft in opdracht van de gemeente Zuiderveen de "
            "beweegbare brug over de Westhaven gebouwd onder de UAV 2012.",
            "De oplevering liep vier maanden vertraging op doordat de gemeente de kabels en "
            "leidingen niet tijdig liet verleggen en het ontwerp van het bewegingswerk twee keer "
            "wijzigde.",
            "De gemeente heeft een contractuele boete van € 412.000 ingehouden; Klaassen vordert "
            "€ 1.180.000 aan meerwerk en stagnatiekosten.",
            "De gemeente Zuiderveen is in andere zaken cliënt van het kantoor; beide cliënten "
            "hebben schriftelijk ingestemd met ons optreden.",
        ),
        question=(
            "Is de boete verschuldigd, en heeft Klaassen recht op vergoeding van meerwerk en op "
            "verlenging van de bouwtijd?"
        ),
        analysis=(
            "Bouwtijdverlenging. De aannemer heeft recht op verlenging van de bouwtijd bij "
            "vertraging door omstandigheden die voor risico van de opdrachtgever komen (par. 8 "
            "UAV 2012). Het tijdig verleggen van kabels en leidingen was volgens het bestek een "
            "verplichting van de gemeente, en de vertraging is tijdig gemeld in de bouwverslagen.",
            "Boete. Omdat de vertraging aan de gemeente is toe te rekenen, is de boete niet "
            "verbeurd. Subsidiair vraagt Klaassen matiging (art. 6:94 BW).",
            "Meerwerk. De twee ontwerpwijzigingen zijn opdrachten tot meerwerk (par. 36 UAV 2012). "
            "Dat de gemeente de wijzigingen niet schriftelijk bevestigde, doet aan het recht op "
            "betaling niet af, nu de gemeente begreep dat zij tot een hogere prijs zouden leiden.",
            "Wijziging van eis. Een vermeerdering van eis is tot het vonnis in beginsel "
            "toelaatbaar, tenzij zij in strijd is met de goede procesorde (zie de als productie "
            "opgenomen uitspraak ECLI:NL:GHAMS:2011:1684).",
        ),
        articles=("par. 8 UAV 2012", "par. 36 UAV 2012", "artikel 6:94 BW", "artikel 6:74 BW"),
        amount="vordering € 1.180.000; ingehouden boete € 412.000",
        next_step="De mondelinge behandeling bij de Rechtbank Rotterdam is op 26 januari 2027; de "
        "akte vermeerdering van eis wordt voorbereid.",
        counsel="mr. H. Vermeer (Vermeer Overheidsadvocaten)",
        forum="de Rechtbank Rotterdam",
        brief="Dagvaarding",
    ),
    "KLAASSEN-002": Dossier(
        facts=(
            "Op 19 mei 2025 viel steigerbouwer R. Pinas, in dienst van Klaassen, van 4,5 meter "
            "hoogte van een rolsteiger op het project Park Zuid.",
            "Hij liep een gecompliceerde polsbreuk en rugletsel op en is sindsdien gedeeltelijk "
            "arbeidsongeschikt.",
            "Pinas stelt Klaassen aansprakelijk op grond van art. 7:658 BW; volgens hem ontbrak de "
            "randbeveiliging.",
            "De Arbeidsinspectie heeft een boeterapport opgemaakt.",
        ),
        question=(
            "Heeft Klaassen aan haar zorgplicht voldaan, en is sprake van opzet of bewuste "
            "roekeloosheid van de werknemer?"
        ),
        analysis=(
            "Zorgplicht. Op de werkgever rust een vergaande zorgplicht; hij moet aantonen dat hij "
            "de maatregelen heeft getroffen die redelijkerwijs nodig waren om schade te "
            "voorkomen. Uitvoerder De Wit verklaart dat de randbeveiliging die ochtend aanwezig "
            "was, maar door een collega was verwijderd om materiaal door te geven.",
            "Bewuste roekeloosheid. Daarvoor is vereist dat de werknemer zich onmiddellijk voor "
            "het ongeval daadwerkelijk bewust was van het roekeloze karakter van zijn gedrag. Die "
            "zware maatstaf zal niet worden gehaald.",
            "Schade. De aansprakelijkheidsverzekeraar heeft de aansprakelijkheid nog niet erkend. "
            "Wij adviseren een medisch adviseur in te schakelen en een voorschot van € 15.000 te "
            "overwegen om de kosten van een deelgeschil te beperken.",
        ),
        articles=("artikel 7:658 BW", "artikel 6:96 BW", "artikel 6:101 BW"),
        amount="€ 240.000 gevorderd (verlies arbeidsvermogen en smartengeld)",
        next_step="De reactie op de aansprakelijkstelling gaat uiterlijk 12 december 2026 uit.",
        counsel="mr. N. Ramdin (letselschadeadvocaat van Pinas)",
    ),
    "KLAASSEN-003": Dossier(
        facts=(
            "Funderingstechniek Holland B.V. heeft als onderaannemer van Klaassen 186 prefab "
            "betonpalen geheid voor het appartementencomplex Park Zuid.",
            "Bij een integriteitsmeting in december 2025 bleken 23 palen gescheurd en reikten 9 "
            "palen niet tot de draagkrachtige zandlaag.",
            "Het herstel met 32 extra schroefpalen kost € 690.000 en leidde tot vijf weken "
            "vertraging.",
            "Funderingstechniek wijst op het sonderingsrapport dat Klaassen aanleverde.",
        ),
        question="Kan Klaassen de herstelkosten en de vertragingsschade verhalen op "
        "Funderingstechniek?",
        analysis=(
            "Tekortkoming. Funderingstechniek moest heien tot de diepte uit het funderingsadvies "
            "en de heistaten bijhouden. Uit de heistaten blijkt dat bij 9 palen de voorgeschreven "
            "stuit niet is gehaald zonder dat dit aan Klaassen werd gemeld. Dat is een "
            "toerekenbare tekortkoming (art. 6:74 BW).",
            "Waarschuwingsplicht. Ook als het sonderingsrapport onjuist was, had "
            "Funderingstechniek als deskundige onderaannemer moeten waarschuwen toen de palen "
            "eerder stuitten dan verwacht (art. 7:754 BW).",
            "Verzuim. Klaassen heeft Funderingstechniek op 8 januari 2026 in gebreke gesteld en "
            "gelegenheid tot herstel gegeven, die onbenut bleef. Het verzuim is ingetreden (art. "
            "6:82 BW); Klaassen mocht het herstel door een derde laten uitvoeren.",
        ),
        articles=("artikel 6:74 BW", "artikel 6:82 BW", "artikel 7:754 BW", "artikel 6:96 BW"),
        amount="€ 690.000 herstel en € 145.000 vertragingsschade",
        next_step="Het rapport van ir. Hoogland wordt met cliënt besproken; het concept van de "
        "dagvaarding is op 18 december 2026 gereed.",
        counsel="mr. S. Post (Post & Van Dam Advocaten)",
    ),
    "KLAASSEN-004": Dossier(
        facts=(
            "Het college van Zuiderveen heeft Klaassen een omgevingsvergunning verleend voor een "
            "appartementencomplex met 46 woningen op de locatie Park Zuid, in afwijking van het "
            "bestemmingsplan.",
            "De Vereniging Omwonenden Park Zuid heeft beroep ingesteld en stelt dat een bouwhoogte "
            "van 24 meter in strijd is met een goede ruimtelijke ordening en dat de "
            "stikstofdepositie tijdens de bouw niet is onderzocht.",
            "Klaassen is als vergunninghouder derde-partij in de procedure.",
        ),
        question=(
            "Welke risico's lopen de vergunning en Klaassen, en hoe versterken wij de positie van "
            "Klaassen als derde-partij?"
        ),
        analysis=(
            "Ruimtelijke onderbouwing. De onderbouwing bevat een bezonningsstudie en een "
            "beeldkwaliteitsplan. De rechter toetst terughoudend of het college in redelijkheid "
            "heeft kunnen besluiten dat het project past binnen een goede ruimtelijke ordening.",
            "Stikstof. De AERIUS-berekening bij de aanvraag ziet op de gebruiksfase, niet op de "
            "bouwfase. Sinds de rechtspraak over de bouwvrijstelling moet ook de bouwfase worden "
            "beoordeeld; wij adviseren een aanvullende berekening in te brengen.",
            "Relativiteit. De vereniging kan zich alleen beroepen op normen die strekken tot "
            "bescherming van haar belangen (art. 8:69a Awb). Voor de stikstofgrond is dat bij een "
            "vereniging van omwonenden zonder natuurdoelstelling twijfelachtig.",
        ),
        articles=("art. 8:69a Awb", "art. 2.12 Wabo"),
        amount="",
        next_step="De schriftelijke uiteenzetting als derde-partij moet vóór de zitting van 20 "
        "januari 2027 worden ingediend.",
        counsel="mr. W. Janssens (advocaat omwonenden)",
        forum="de Rechtbank Rotterdam, team bestuursrecht",
        brief="Processtuk: schriftelijke uiteenzetting derde-partij",
    ),
    "NIMBUS-001": Dossier(
        facts=(
            "Nimbus Analytics B.V. haalt € 8 miljoen op in een Serie A-ronde onder leiding van "
            "Amstel Ventures Fund II C.V., bij een pre-money waardering van € 24 miljoen.",
            "De investeerders verlangen een liquidatiepreferentie van 1x non-participating, "
            "anti-verwateringsbescherming (broad-based weighted average), een zetel in de raad van "
            "commissarissen en goedkeuringsrechten voor belangrijke besluiten.",
            "De oprichters houden na de ronde 58% van de aandelen.",
        ),
        question=(
            "Welke investeerdersrechten zijn marktconform en hoe worden zij statutair en "
            "contractueel verankerd?"
        ),
        analysis=(
            "Liquidatiepreferentie. Een 1x non-participating preferentie is marktconform. Zij "
            "hoort in de statuten als preferentie van de serie A-aandelen bij exit of liquidatie, "
            "uitgewerkt in een waterfall-bijlage bij de participatieovereenkomst.",
            "Goedkeuringsrechten. De lijst van goedkeuringsbesluiten is te ruim: goedkeuring van "
            "elke arbeidsovereenkomst boven € 80.000 hindert de groei. Wij stellen een drempel "
            "van € 150.000 voor, beperkt tot functies op C-niveau.",
            "Vesting. De oprichters accepteren een vesting van vier jaar met een cliff van één "
            "jaar. Bij een bad leaver worden de aandelen tegen nominale waarde aangeboden; die "
            "definitie moet scherp zijn om geschillen te voorkomen.",
        ),
        articles=("art. 2:192 BW", "art. 2:201 BW"),
        amount="investering € 8 miljoen; pre-money waardering € 24 miljoen",
        next_step="Closing is gepland op 15 januari 2027; de notariële akte van uitgifte en de "
        "statutenwijziging worden voorbereid.",
        counsel="mr. L. de Haan (De Haan Venture Law)",
    ),
    "NIMBUS-002": Dossier(
        facts=(
            "Nimbus levert een SaaS-platform voor voorspellend onderhoud aan industriële klanten "
            "en verwerkt daarbij sensordata en beperkte persoonsgegevens van monteurs.",
            "Het kantoor stelt een modelovereenkomst op met algemene voorwaarden, een service "
            "level agreement en een verwerkersovereenkomst.",
            "Een grote klant eist onbeperkte aansprakelijkheid voor datalekken.",
        ),
        question=(
            "Hoe beperken wij de aansprakelijkheid van Nimbus, en voldoet de "
            "verwerkersovereenkomst aan de AVG?"
        ),
        analysis=(
            "Aansprakelijkheid. Een beperking tot twaalf maanden abonnementsgeld, met "
            "uitzondering van opzet en bewuste roekeloosheid, is in de markt gebruikelijk en "
            "wordt tussen professionele partijen in de regel aanvaard; een beroep erop kan wel "
            "onaanvaardbaar zijn naar maatstaven van redelijkheid en billijkheid (art. 6:248 lid 2 "
            "BW).",
            "Verwerkersovereenkomst. De overeenkomst moet de onderwerpen van art. 28 lid 3 AVG "
            "regelen: onderwerp en duur, aard en doel van de verwerking, beveiliging, "
            "subverwerkers, bijstand bij rechten van betrokkenen en auditrechten.",
            "Service levels. Een beschikbaarheid van 99,5% per maand met servicecredits als enige "
            "remedie voorkomt discussie over schadevergoeding bij storingen.",
        ),
        articles=("artikel 6:248 BW", "art. 28 AVG", "artikel 6:233 BW"),
        amount="",
        next_step="Het concept van de modelovereenkomst gaat met toelichting op 8 december 2026 "
        "naar cliënt.",
    ),
    "NIMBUS-003": Dossier(
        facts=(
            "M. Hoekstra, medeoprichter en tot 1 mei 2026 CTO van Nimbus, is in dienst getreden "
            "bij een concurrent die ook software voor voorspellend onderhoud ontwikkelt.",
            "Zijn arbeidsovereenkomst bevat een concurrentiebeding van twaalf maanden en een "
            "relatiebeding, met een boete van € 5.000 per dag.",
            "Hoekstra stelt dat het beding is vervallen omdat zijn functie in 2024 ingrijpend is "
            "gewijzigd.",
        ),
        question=(
            "Is het concurrentiebeding geldig en handhaafbaar, en kan Nimbus in kort geding "
            "nakoming afdwingen?"
        ),
        analysis=(
            "Geldigheid. Het beding is schriftelijk overeengekomen met een meerderjarige "
            "werknemer in een arbeidsovereenkomst voor onbepaalde tijd (art. 7:653 BW). De "
            "functiewijziging van lead developer naar CTO maakte het beding niet zwaarder "
            "drukkend; eerder is het belang van Nimbus groter geworden.",
            "Belangenafweging. De rechter kan het beding geheel of gedeeltelijk vernietigen als "
            "Hoekstra onbillijk wordt benadeeld ten opzichte van het te beschermen belang. "
            "Hoekstra kent de volledige roadmap en de broncode; dat weegt zwaar.",
            "Kort geding. Voor een voorlopig verbod is een spoedeisend belang aanwezig. De boete "
            "kan worden gematigd (art. 6:94 BW); wij adviseren een verbod op straffe van een "
            "dwangsom te vorderen.",
        ),
        articles=("artikel 7:653 BW", "artikel 6:94 BW"),
        amount="contractuele boete € 5.000 per dag",
        next_step="De sommatiebrief aan Hoekstra is verzonden; het concept van de dagvaarding in "
        "kort geding is op 4 december 2026 gereed.",
        counsel="mr. F. Prins (advocaat Hoekstra)",
        forum="de voorzieningenrechter van de Rechtbank Amsterdam",
        brief="Dagvaarding in kort geding",
    ),
    "NOORDZEE-001": Dossier(
        facts=(
            "Noordzee Energie N.V. wil alle aandelen verwerven in Warmtenet Zuiderveen B.V., dat "
            "het warmtenet van Zuiderveen exploiteert met 14.000 aansluitingen.",
            "Verkoper is de gemeente Zuiderveen, enig aandeelhouder.",
            "De indicatieve koopprijs is € 63 miljoen op cash-free/debt-free-basis, met een "
            "earn-out van maximaal € 7 miljoen gekoppeld aan de aansluiting van de nieuwbouwwijk "
            "Zuiderhaven.",
            "De transactie heeft de codenaam Project Tulp en is strikt vertrouwelijk.",
        ),
        question=(
            "Welke bevindingen uit het due diligence-onderzoek raken de koopprijs van Project "
            "Tulp, en hoe vertalen wij die in garanties en vrijwaringen in de koopovereenkomst?"
        ),
        analysis=(
            "Concessie. Het warmtenet wordt geëxploiteerd op basis van een concessieovereenkomst "
            "met de gemeente tot 2041, met een change-of-control-clausule. Omdat de gemeente "
            "zelf verkoper is, moet haar toestemming als opschortende voorwaarde in de SPA "
            "worden opgenomen. Onder het wetsvoorstel voor collectieve warmte kan een publiek "
            "meerderheidsbelang in warmtebedrijven worden voorgeschreven; dat raakt de "
            "waardering.",
            "Technische staat. Volgens de technische due diligence moet 18 km transportleiding "
            "vóór 2030 worden vervangen, geschat op € 9,4 miljoen. Wij adviseren een specifieke "
            "vrijwaring of een verlaging van de koopprijs met het niet voorziene deel.",
            "Personeel en pensioen. De 46 werknemers zijn aangesloten bij het ABP; bij overgang "
            "naar een private aandeelhouder kan uittreding met waardeoverdracht nodig zijn.",
            "Mededinging. De transactie moet vooraf bij de ACM worden gemeld (zie het "
            "financierings- en ACM-dossier). Wij stellen een long stop date van negen maanden "
            "voor en wijzen een hell-or-high-water-verplichting af.",
        ),
        articles=("art. 2:201 BW", "artikel 6:248 BW", "art. 34 Mededingingswet"),
        amount="indicatieve koopprijs € 63 miljoen plus een earn-out van maximaal € 7 miljoen",
        next_step="Het eerste concept van de SPA gaat op 11 december 2026 naar de gemeente; de "
        "management presentation is op 17 december.",
        counsel="mr. M. Hendriks (Stadhuis Advocaten, namens de gemeente)",
    ),
    "NOORDZEE-002": Dossier(
        facts=(
            "Voor Project Tulp sluit Noordzee Energie een acquisitiefinanciering van € 45 miljoen "
            "af bij een consortium van twee banken.",
            "De overname van Warmtenet Zuiderveen moet vooraf bij de Autoriteit Consument & Markt "
            "worden gemeld, omdat de omzetdrempels van de Mededingingswet worden overschreden.",
            "Noordzee Energie exploiteert al een warmtenet in de buurgemeente Westerveld.",
        ),
        question=(
            "Leidt de overname van het warmtenet tot een significante beperking van de "
            "mededinging, en welke voorwaarden stellen de financiers aan de koopovereenkomst?"
        ),
        analysis=(
            "Meldingsplicht. De gezamenlijke omzet van de betrokken ondernemingen overschrijdt "
            "€ 150 miljoen en ten minste twee van hen behalen elk € 30 miljoen in Nederland (art. "
            "29 Mededingingswet). Na de melding geldt een wachttermijn van vier weken (art. 34 "
            "Mededingingswet).",
            "Relevante markt. Warmtenetten zijn lokale natuurlijke monopolies. De netten van "
            "Westerveld en Zuiderveen zijn niet verbonden, zodat wij geen horizontale overlap "
            "verwachten; de ACM zal wel kijken naar de inkoop van restwarmte uit de "
            "Zuiderhaven-industrie.",
            "Financiering. De term sheet verlangt certain funds tot de long stop date, een "
            "pandrecht op de aandelen Warmtenet Zuiderveen (art. 3:236 BW) en inzage in de due "
            "diligence; de koopprijs mag niet zonder toestemming van de banken wijzigen.",
        ),
        articles=("art. 29 Mededingingswet", "art. 34 Mededingingswet", "art. 3:236 BW"),
        amount="acquisitiefinanciering € 45 miljoen",
        next_step="Het pre-notificatiegesprek met de ACM is op 9 januari 2027; het concept van de "
        "melding is op 20 december 2026 gereed.",
        counsel="mr. R. de Wit (advocaat van de banken)",
    ),
    "NOORDZEE-003": Dossier(
        facts=(
            "Noordzee Energie ontwikkelt windpark Zuiderveen-Oost met 9 turbines en 54 MW.",
            "Netbeheer Kust B.V. weigert vóór 2029 een aansluiting met volledige "
            "transportcapaciteit wegens congestie op het 150 kV-station Zuiderveen en biedt "
            "alleen een non-firm transportovereenkomst aan.",
            "Noordzee Energie heeft de ACM om een geschilbesluit gevraagd.",
        ),
        question=(
            "Is de netbeheerder verplicht binnen een redelijke termijn aan te sluiten en "
            "transportcapaciteit te bieden, en wat kan de ACM opleggen?"
        ),
        analysis=(
            "Aansluitplicht. Art. 23 Elektriciteitswet 1998 verplicht de netbeheerder om wie "
            "daarom verzoekt van een aansluiting te voorzien. De aansluitplicht is niet hetzelfde "
            "als de transportplicht: bij fysieke congestie mag transport worden geweigerd, mits de "
            "netbeheerder de congestie onderbouwt en congestiemanagement heeft onderzocht.",
            "Congestieonderzoek. Het congestierapport van Netbeheer Kust dateert uit 2023 en gaat "
            "uit van een verouderde prognose. Wij vragen de ACM de netbeheerder op te dragen een "
            "actueel onderzoek naar congestiemanagement te doen.",
            "Schade. De vertraging kost Noordzee Energie circa € 380.000 per maand aan gederfde "
            "opbrengst. Bij schending van de aansluitplicht is aansprakelijkheid uit "
            "onrechtmatige daad (art. 6:162 BW) denkbaar.",
        ),
        articles=("art. 23 Elektriciteitswet 1998", "artikel 6:162 BW"),
        amount="gederfde opbrengst circa € 380.000 per maand",
        next_step="De zienswijze op het ontwerpbesluit van de ACM moet uiterlijk 15 december 2026 "
        "worden ingediend.",
        counsel="mr. I. Meijers (juridische zaken Netbeheer Kust)",
        forum="de Autoriteit Consument & Markt",
        brief="Processtuk: zienswijze op het ontwerpgeschilbesluit",
    ),
    "NOORDZEE-004": Dossier(
        facts=(
            "Op 7 januari 2026 werd de 66 kV-exportkabel van windpark Zuiderveen-Oost bij de "
            "havenmond beschadigd door de sleephopperzuiger 'Scheldestroom' van Baggermaatschappij "
            "De Schelde B.V.",
            "Het windpark lag elf dagen stil.",
            "De Schelde stelt dat de kabel ondieper lag dan op de revisietekening.",
        ),
        question="Is De Schelde aansprakelijk uit onrechtmatige daad, en welke schadeposten zijn "
        "toewijsbaar?",
        analysis=(
            "Onrechtmatigheid. Wie graaft of baggert, moet zich vooraf op de hoogte stellen van "
            "de ligging van kabels en leidingen. De Schelde deed een KLIC-melding, maar peilde "
            "niet, hoewel de revisietekening een marge van 1,5 meter aangaf. Dat is in strijd met "
            "de zorgvuldigheid die in het maatschappelijk verkeer betaamt (art. 6:162 lid 2 BW).",
            "Eigen schuld. Volgens de deskundige lag de kabel 0,8 meter ondieper dan getekend, "
            "maar binnen de gebruikelijke tolerantie. Een beroep op art. 6:101 BW leidt hooguit "
            "tot een beperkte vermindering.",
            "Schade. Toewijsbaar zijn de herstelkosten, de gederfde productie en de redelijke "
            "kosten ter vaststelling van schade en aansprakelijkheid (art. 6:96 lid 2 BW), voor "
            "zover zij in verband staan met de beschadiging (art. 6:98 BW).",
        ),
        articles=("artikel 6:162 BW", "artikel 6:101 BW", "artikel 6:96 BW", "artikel 6:98 BW"),
        amount="€ 1.640.000 (herstel € 870.000, productieverlies € 770.000)",
        next_step="De verzekeraar van De Schelde is aansprakelijk gesteld; het schikkingsoverleg "
        "is op 14 januari 2027.",
        counsel="mr. E. Smits (Smits Maritiem)",
        forum="de Rechtbank Zeeland-West-Brabant",
        brief="Dagvaarding",
    ),
    "NOORDZEE-005": Dossier(
        facts=(
            "RVO heeft de SDE++-subsidie voor zonnepark Noordzee-Zuid over 2025 vastgesteld op "
            "€ 1,12 miljoen in plaats van de aangevraagde € 1,46 miljoen.",
            "Volgens RVO is de productie in januari 2025 niet via een gecertificeerde "
            "meetinrichting gemeten.",
            "De netbeheerder heeft de meetdata over die maand gevalideerd.",
        ),
        question="Mocht RVO de subsidie lager vaststellen, en is een beroep op het "
        "evenredigheidsbeginsel kansrijk?",
        analysis=(
            "Vaststelling. De subsidie wordt vastgesteld op basis van de productie gemeten via een "
            "gecertificeerde meetinrichting. Over januari 2025 ontbrak de certificering; de lagere "
            "vaststelling over die maand is in beginsel juist.",
            "Evenredigheid. De productie in januari is door de netbeheerder gevalideerd en niet "
            "betwist. Volledige weigering over die maand is onevenredig in verhouding tot het doel "
            "van de meetvoorschriften (art. 3:4 lid 2 Awb).",
            "Termijn. RVO moet binnen zes weken na afloop van de bezwaartermijn beslissen; bij "
            "uitblijven volgt een ingebrekestelling.",
        ),
        articles=("art. 3:4 Awb", "art. 4:46 Awb"),
        amount="€ 340.000",
        next_step="De aanvullende gronden van bezwaar worden vóór 11 december 2026 ingediend.",
        counsel="mr. H. Boelens (RVO)",
        forum="de Rijksdienst voor Ondernemend Nederland",
        brief="Bezwaarschrift",
    ),
    "VDLINDEN-001": Dossier(
        facts=(
            "Bakkerij Van der Linden B.V. huurt sinds 2016 de winkelruimte Hoogstraat 14 in "
            "Zuiderveen van Vastgoedfonds Hoogstraat C.V. tegen € 78.000 per jaar.",
            "De verhuurder vordert huurprijsherziening naar € 112.000 op basis van "
            "vergelijkingspanden in het kernwinkelgebied.",
            "Na een geschil over het onderhoud van de koelcel heeft de bakkerij een deel van de "
            "huur opgeschort; de verhuurder noemt dat een huurachterstand en dreigt met "
            "ontbinding en ontruiming.",
        ),
        question=(
            "Wat is de juiste herziene huurprijs (art. 7:303 BW), en mocht de bakkerij de huur "
            "opschorten?"
        ),
        analysis=(
            "Huurprijsherziening. De nieuwe huurprijs wordt bepaald aan de hand van de huurprijzen "
            "van vergelijkbare bedrijfsruimte ter plaatse over de afgelopen vijf jaar (art. 7:303 "
            "BW). Drie van de vijf vergelijkingspanden liggen op een A1-locatie en zijn niet "
            "vergelijkbaar; ons eigen deskundigenrapport komt uit op € 84.500.",
            "Opschorting. De bakkerij mocht de huur opschorten voor zover de verhuurder "
            "tekortschoot in het herstel van de koelcel (art. 6:262 BW), maar alleen in "
            "verhouding tot het ontbrekende huurgenot. Wij adviseren het meerdere onder protest "
            "te betalen, zodat een vordering tot ontbinding en ontruiming geen kans heeft.",
            "Procedure. Een vordering tot vaststelling van de huurprijs moet worden voorbereid met "
            "een advies van deskundigen (art. 7:304 BW).",
        ),
        articles=("artikel 7:303 BW", "artikel 7:304 BW", "artikel 6:262 BW"),
        amount="huurprijs € 78.000; gevorderd € 112.000; ons standpunt € 84.500",
        next_step="Betaling onder protest en reactie op het deskundigenrapport vóór 10 december "
        "2026.",
        counsel="mr. Q. Janssen (advocaat Vastgoedfonds Hoogstraat)",
        forum="de kantonrechter van de Rechtbank Rotterdam",
        brief="Conclusie van antwoord",
    ),
    "VDLINDEN-002": Dossier(
        facts=(
            "Mw. S. Doğan kreeg op 3 januari 2026 een ernstige allergische reactie na het eten "
            "van speculaas van Bakkerij Van der Linden.",
            "Laboratoriumonderzoek wees uit dat de bloem van Graanhandel De Hoop B.V. sporen van "
            "pinda bevatte, hoewel de specificatie 'notenvrij' vermeldde.",
            "Doğan stelt de bakkerij als producent aansprakelijk; de bakkerij wil regres nemen op "
            "De Hoop.",
        ),
        question=(
            "Is de bakkerij als producent aansprakelijk jegens Doğan, en kan zij de schade "
            "volledig verhalen op De Hoop?"
        ),
        analysis=(
            "Productaansprakelijkheid. De bakkerij is producent van het eindproduct en "
            "aansprakelijk voor schade door een gebrek daarin (art. 6:185 BW). Het product bood "
            "niet de veiligheid die men mocht verwachten, omdat het etiket geen waarschuwing voor "
            "pinda bevatte.",
            "Regres. De Hoop is als producent van een grondstof eveneens aansprakelijk, en is "
            "bovendien contractueel tekortgeschoten, omdat de bloem niet aan de specificatie "
            "voldeed (art. 6:74 BW). Een beroep op de beperking tot de factuurwaarde in haar "
            "leveringsvoorwaarden is bij een allergeen dat de specificatie uitdrukkelijk uitsloot "
            "naar ons oordeel onaanvaardbaar (art. 6:248 lid 2 BW).",
            "Schade. De schade van Doğan (ziekenhuisopname, inkomensverlies, smartengeld) schatten "
            "wij op € 28.000. De bakkerij moet haar verzekeraar direct informeren.",
        ),
        articles=("artikel 6:185 BW", "artikel 6:74 BW", "artikel 6:248 BW", "artikel 6:96 BW"),
        amount="circa € 28.000 letselschade plus € 41.000 terugroepkosten",
        next_step="De regresbrief aan De Hoop en de melding aan de verzekeraar gaan vóór 5 "
        "december 2026 uit.",
        counsel="mr. Y. Bos (Bos Letselschade)",
    ),
    "VDLINDEN-003": Dossier(
        facts=(
            "Broodbakkerij Van der Linde B.V. opende in april 2026 een winkel onder de naam "
            "'Bakkerij Van der Linde' op 600 meter van de vestiging van Bakkerij Van der Linden in "
            "Zuiderveen.",
            "Klanten plaatsen bestellingen bij de verkeerde bakker en op sociale media worden de "
            "bedrijven verward.",
            "Van der Linden voert de handelsnaam sinds 1987.",
        ),
        question=(
            "Maakt Van der Linde inbreuk op de oudere handelsnaam van Van der Linden, en wat kan "
            "in kort geding worden gevorderd?"
        ),
        analysis=(
            "Handelsnaamrecht. Het is verboden een handelsnaam te voeren die slechts in geringe "
            "mate afwijkt van een oudere handelsnaam, voor zover verwarring te duchten is gelet "
            "op de aard van de ondernemingen en de plaats van vestiging (art. 5 Handelsnaamwet). "
            "'Van der Linde' wijkt één letter af, beide zijn bakkerijen en zij zijn in dezelfde "
            "stad gevestigd.",
            "Verwarring. De verkeerde bestellingen en de reacties op sociale media zijn concreet "
            "bewijs van verwarring. Dat de oprichter van de concurrent werkelijk Van der Linde "
            "heet, staat niet in de weg aan een verbod; hij kan een onderscheidende toevoeging "
            "gebruiken.",
            "Vorderingen. Naast een verzoek aan de kantonrechter (art. 6 Handelsnaamwet) "
            "vorderen wij in kort geding een verbod op grond van onrechtmatige daad (art. 6:162 "
            "BW), op straffe van een dwangsom, en een rectificatie op de website.",
        ),
        articles=("art. 5 Handelsnaamwet", "art. 6 Handelsnaamwet", "artikel 6:162 BW"),
        amount="",
        next_step="De sommatie is verzonden; het concept van de dagvaarding in kort geding is op 3 "
        "december 2026 gereed.",
        counsel="mr. A. Veenstra (advocaat Van der Linde)",
        forum="de voorzieningenrechter van de Rechtbank Rotterdam",
        brief="Dagvaarding in kort geding",
    ),
    "ZEEBURG-001": Dossier(
        facts=(
            "In 2025 is de concernstructuur van Zeeburg Holding B.V. vereenvoudigd: Zeeburg "
            "Transport B.V. en Zeeburg Koelopslag B.V. zijn juridisch gefuseerd met Zeeburg "
            "Logistiek B.V. als verkrijgende vennootschap.",
            "Het fusievoorstel is op 3 maart 2025 bij het handelsregister gedeponeerd en de akte "
            "van fusie is op 30 mei 2025 gepasseerd.",
            "Het dossier is afgesloten.",
        ),
        question="Welke stappen en termijnen golden voor de juridische fusie, en welke nazorg is "
        "nodig?",
        analysis=(
            "Fusievoorstel. Het voorstel is door alle bestuurders ondertekend en met de "
            "toelichting en de jaarrekeningen ter inzage gelegd; schuldeisers konden tot een "
            "maand na de aankondiging van de nederlegging in verzet komen (art. 2:316 BW).",
            "Ondernemingsraad. Het adviesrecht van de ondernemingsraad van Zeeburg Logistiek is "
            "gerespecteerd; het advies was positief.",
            "Nazorg. Vergunningen, verzekeringen en lopende contracten van de verdwenen "
            "vennootschappen zijn van rechtswege overgegaan; contractpartijen zijn schriftelijk "
            "geïnformeerd.",
        ),
        articles=("art. 2:309 BW", "art. 2:312 BW", "art. 2:316 BW"),
        amount="",
        next_step="Het dossier is op 30 juni 2025 gesloten en wordt zeven jaar bewaard.",
    ),
    "ZEEBURG-002": Dossier(
        facts=(
            "Stichting Administratiekantoor Familie Zeeburg houdt 22% van de aandelen in Zeeburg "
            "Holding B.V. en vertegenwoordigt de familietak die niet in de onderneming werkt.",
            "Zij verzoekt de Ondernemingskamer een onderzoek te bevelen naar het beleid, met name "
            "de dividendpolitiek sinds 2021 en een managementvergoeding van € 1,9 miljoen aan de "
            "CEO.",
            "Als onmiddellijke voorziening verzoekt zij de benoeming van een tijdelijke "
            "commissaris.",
        ),
        question=(
            "Bestaan er gegronde redenen om aan een juist beleid te twijfelen, en hoe verweren "
            "wij ons tegen de onmiddellijke voorziening?"
        ),
        analysis=(
            "Gegronde redenen. De Ondernemingskamer beveelt een onderzoek als blijkt van gegronde "
            "redenen om aan een juist beleid te twijfelen (art. 2:350 BW). Het terughoudende "
            "dividendbeleid is door de algemene vergadering goedgekeurd en gemotiveerd met de "
            "investeringen in de koelopslag; de managementvergoeding is na een benchmark door de "
            "raad van commissarissen vastgesteld.",
            "Onmiddellijke voorziening. Een tijdelijke commissaris met doorslaggevende stem is een "
            "zware ingreep, die alleen wordt getroffen als de toestand van de vennootschap of het "
            "belang van het onderzoek dat vordert (art. 2:349a BW). De onderneming is financieel "
            "gezond en het bestuur functioneert.",
            "Strategie. Wij adviseren mediation aan te bieden en een vrijwillige informatieronde "
            "voor de certificaathouders te houden, zodat blijkt dat de vennootschap de zorgen "
            "serieus neemt.",
        ),
        articles=("art. 2:344 BW", "art. 2:349a BW", "art. 2:350 BW"),
        amount="managementvergoeding € 1,9 miljoen",
        next_step="Het verweerschrift moet uiterlijk 7 januari 2027 bij de Ondernemingskamer zijn; "
        "de mondelinge behandeling is op 28 januari.",
        counsel="mr. G. Lambrechts (advocaat van de STAK)",
        forum="de Ondernemingskamer van het Gerechtshof Amsterdam",
        brief="Verweerschrift enquêteverzoek",
    ),
    "ZEEBURG-LOG-001": Dossier(
        facts=(
            "Zeeburg Logistiek vervoerde op 2 november 2025 twee koelcontainers met diepvriesvis "
            "van Rotterdam naar Lyon voor Frisco Foods B.V.",
            "Door een storing in het koelaggregaat van één container liep de temperatuur op tot "
            "-4°C en werd de lading van 18 ton afgekeurd.",
            "Frisco vordert € 214.000; het vervoer valt onder het CMR-verdrag.",
        ),
        question="Is Zeeburg Logistiek aansprakelijk, en tot welk bedrag kan zij haar "
        "aansprakelijkheid beperken?",
        analysis=(
            "Aansprakelijkheid. De vervoerder is aansprakelijk voor verlies of beschadiging "
            "tussen inontvangstneming en aflevering (art. 17 lid 1 CMR); een gebrek aan het "
            "voertuig bevrijdt hem niet (art. 17 lid 3 CMR). Een beroep op art. 17 lid 4 onder d "
            "CMR vereist dat alle maatregelen zijn genomen ten aanzien van keuze, onderhoud en "
            "gebruik van de koelinrichting; het onderhoudsrapport van oktober 2025 is cruciaal.",
            "Limitering. De aansprakelijkheid is beperkt tot 8,33 rekeneenheden per kilogram "
            "brutogewicht (art. 23 lid 3 CMR), circa € 180.000 voor 18 ton. Doorbraak vereist "
            "opzet of daarmee gelijk te stellen schuld (art. 29 CMR); de verklaring van de "
            "chauffeur over de temperatuurcontroles is daarvoor van belang.",
            "Verjaring. De vordering verjaart een jaar na aflevering (art. 32 CMR); Frisco heeft "
            "de verjaring tijdig gestuit.",
        ),
        articles=("art. 17 CMR", "art. 23 CMR", "art. 29 CMR", "artikel 3:310 BW"),
        amount="gevorderd € 214.000; limiet circa € 180.000",
        next_step="De conclusie van antwoord wordt op 16 december 2026 genomen.",
        counsel="mr. O. van Dam (advocaat Frisco Foods)",
        forum="de Rechtbank Rotterdam",
        brief="Conclusie van antwoord",
    ),
    "ZEEBURG-LOG-002": Dossier(
        facts=(
            "Zeeburg Logistiek automatiseert het distributiecentrum in Tilburg met een "
            "gerobotiseerd opslagsysteem.",
            "Daardoor vervallen 31 functies van orderpicker en ontstaan 12 functies van "
            "systeemoperator.",
            "Het plan is met de ondernemingsraad besproken; een sociaal plan met een "
            "omscholingsbudget ligt klaar.",
        ),
        question=(
            "Hoe verloopt de ontslagprocedure voor de vervallen functies, en wat is de positie "
            "van werknemers die een aanbod voor een nieuwe functie weigeren?"
        ),
        analysis=(
            "Bedrijfseconomische redenen. Ontslag wegens het vervallen van arbeidsplaatsen "
            "vereist toestemming van het UWV (art. 7:669 lid 3 onder a BW). De werkgever moet "
            "aantonen dat herplaatsing binnen een redelijke termijn, eventueel met scholing, niet "
            "mogelijk is.",
            "Herplaatsing. Voor de functie van systeemoperator is een opleiding van drie maanden "
            "nodig. Werknemers die daarvoor in aanmerking komen, moeten die kans krijgen; "
            "weigering van een passende functie kan gevolgen hebben voor de ontslagvergoeding.",
            "Afspiegeling. De 31 orderpickers vormen één uitwisselbare functie; de afspiegeling "
            "per leeftijdscategorie bepaalt wie voor ontslag wordt voorgedragen.",
        ),
        articles=("artikel 7:669 BW", "artikel 7:673 BW", "art. 25 WOR"),
        amount="omscholingsbudget € 450.000",
        next_step="De ontslagaanvragen worden in week 2 van 2027 bij het UWV ingediend.",
    ),
    "ZEEBURG-VAST-001": Dossier(
        facts=(
            "Zeeburg Vastgoed verhuurt het koelhuis aan de Havenweg in Moerdijk aan Koelhuis "
            "Moerdijk B.V. voor € 940.000 per jaar.",
            "Na lekkage van de dakconstructie en uitval van de vloerverwarming onder de vriescel "
            "vordert de huurder 30% huurprijsvermindering sinds maart 2025 en vergoeding van "
            "bedorven voorraad.",
            "Zeeburg Vastgoed erkent het dakgebrek, maar stelt dat de vloerverwarming door "
            "verkeerd gebruik van de huurder is uitgevallen.",
        ),
        question=(
            "Heeft de huurder recht op huurprijsvermindering en schadevergoeding, en wie draagt "
            "de kosten van het herstel van de vloerverwarming?"
        ),
        analysis=(
            "Gebrek. Een gebrek is een staat of eigenschap van het gehuurde waardoor het niet het "
            "genot kan verschaffen dat de huurder mocht verwachten (art. 7:204 lid 2 BW). De "
            "daklekkage is een gebrek; de uitval van de vloerverwarming door overbelasting met "
            "heftrucks van 8 ton mogelijk niet, als de huurder de belastingsnormen van het "
            "huurcontract heeft overschreden.",
            "Huurprijsvermindering. De huurder kan een evenredige vermindering van de huurprijs "
            "vorderen vanaf de dag van de melding (art. 7:207 BW). Voor het dakgebrek achten wij "
            "10% over vier maanden redelijk.",
            "Deskundige. Het rapport van ir. Van Wijk moet de oorzaak van het falen van de "
            "vloerverwarming vaststellen. Bij verkeerd gebruik komen de herstelkosten voor "
            "rekening van de huurder.",
        ),
        articles=("artikel 7:204 BW", "artikel 7:206 BW", "artikel 7:207 BW", "artikel 7:208 BW"),
        amount="30% huurprijsvermindering (circa € 282.000 per jaar) en € 160.000 "
        "schadevergoeding, gevorderd door de huurder",
        next_step="Het rapport van ir. Van Wijk wordt op 11 december 2026 verwacht; daarna volgt "
        "een schikkingsvoorstel.",
        counsel="mr. J. Dekkers (advocaat Koelhuis Moerdijk)",
    ),
    "ZEEBURG-VAST-002": Dossier(
        facts=(
            "Brasserie Het Havenkwartier B.V. huurt van Zeeburg Vastgoed de horecaruimte aan de "
            "Havenkade 3 in Zuiderveen voor € 7.250 per maand.",
            "Sinds juni 2026 betaalt de huurder niet of onvolledig; de huurachterstand bedraagt "
            "op 1 november 2026 € 36.250, vijf maanden huur.",
            "Aanmaningen en een ingebrekestelling zijn onbeantwoord gebleven.",
            "De huurder heeft mondeling gesteld dat de gemeente de terrasvergunning heeft beperkt.",
        ),
        question=(
            "Kan Zeeburg Vastgoed de huurovereenkomst met het Havenkwartier laten ontbinden en "
            "ontruiming vorderen, en is een kort geding aangewezen?"
        ),
        analysis=(
            "Ontbinding. Een huurachterstand van drie maanden of meer rechtvaardigt in beginsel "
            "ontbinding van de huurovereenkomst. Bij bedrijfsruimte moet de rechter de ontbinding "
            "uitspreken (art. 7:231 BW); buitengerechtelijke ontbinding is niet mogelijk.",
            "Kort geding. Voor ontruiming in kort geding moet de vordering in een bodemprocedure "
            "met grote mate van waarschijnlijkheid worden toegewezen en moet er een spoedeisend "
            "belang zijn. Bij een oplopende huurachterstand van vijf maanden en een huurder die "
            "niet reageert, is aan beide eisen voldaan.",
            "Verweer. De beperking van de terrasvergunning is geen gebrek van het gehuurde; de "
            "vergunning valt volgens art. 4 van de huurovereenkomst onder de verantwoordelijkheid "
            "van de huurder, die zich dus niet op opschorting kan beroepen.",
            "Zekerheid. De bankgarantie van drie maanden huur (€ 21.750) kan worden ingeroepen, "
            "zodat de vordering gedeeltelijk is gedekt.",
        ),
        articles=("artikel 7:231 BW", "artikel 6:265 BW", "artikel 7:290 BW", "artikel 6:119 BW"),
        amount="huurachterstand € 36.250 (vijf maanden) plus wettelijke rente",
        next_step="De dagvaarding in kort geding tot ontruiming gaat vóór 4 december 2026 uit; "
        "conservatoir beslag op de inventaris wordt overwogen.",
        forum="de voorzieningenrechter van de Rechtbank Rotterdam",
        brief="Dagvaarding in kort geding (ontruiming)",
    ),
}

# --- claim charts -------------------------------------------------------------------------

# Infringement chart: element, claim language, the accused product, our assessment.
MEDIVERS_CHART: tuple[tuple[str, str, str, str], ...] = (
    ("1[a]", "Een farmaceutische tablet met gereguleerde afgifte,",
     "Medivastine Genova 20 mg retard is een tablet met verlengde afgifte (SmPC, rubriek 3 en "
     "5.2; productie 7).", "Letterlijk aanwezig."),
    ("1[b]", "omvattende 5 tot 40 mg medivastine of een farmaceutisch aanvaardbaar zout daarvan,",
     "Bevat 20 mg medivastinehydrochloride (SmPC, rubriek 2).",
     "Letterlijk aanwezig; het hydrochloride is een aanvaardbaar zout."),
    ("1[c]", "ingebed in een matrix van hydroxypropylmethylcellulose (HPMC) met een viscositeit "
     "van 4.000 tot 15.000 mPa·s,",
     "De hulpstoffenlijst vermeldt hypromellose 100.000 mPa·s (productie 8).",
     "Niet letterlijk; equivalent volgens het rapport van prof. Van Amerongen: dezelfde functie "
     "(gellaag), dezelfde wijze, hetzelfde resultaat."),
    ("1[d]", "waarbij de tablet in vitro na 8 uur 60 tot 85% van de werkzame stof afgeeft "
     "(Ph. Eur. 2.9.3, paddle, 50 rpm).",
     "Dissolutieprofiel Genova: 71% na 8 uur (meting Medivers, productie 9).",
     "Letterlijk aanwezig."),
    ("2", "Tablet volgens conclusie 1, waarbij de tablet eenmaal daags wordt toegediend.",
     "Bijsluiter: 'neem eenmaal per dag één tablet'.",
     "Aanwezig; aanbieden met deze instructie is inbreuk (art. 53 Rijksoctrooiwet 1995)."),
)

# Invalidity chart with the element in its own column: claim, element, feature, D1, D2.
HELDERGLAS_CHART: tuple[tuple[str, str, str, str, str], ...] = (
    ("1", "[a]", "Werkwijze voor het aanbrengen van een zelfreinigende coating op floatglas,",
     "D1: zelfreinigende coating op vlakglas (par. [0012]).",
     "D2: coating op floatglas, maar anti-reflectie, niet zelfreinigend."),
    ("1", "[b]", "waarbij een titaniumhoudende precursor in de gasfase wordt toegevoerd,",
     "D1: sol-gel uit vloeibare titaniumalkoxide; geen gasfase.",
     "D2: gasfase (CVD), maar met een siliciumprecursor."),
    ("1", "[c]", "tijdens het floatproces in de tinbadzone bij een glastemperatuur van 580 tot "
     "620°C,", "D1: na de productie, in een oven bij 450°C. Niet geopenbaard.",
     "D2: in de tinbadzone bij 600-650°C, voor een andere laag."),
    ("1", "[d]", "zodat een anatase-laag van 10 tot 40 nm ontstaat.",
     "D1: rutiel-anatasemengsel van 80-120 nm. Niet geopenbaard.",
     "D2: geen titaniumdioxide. Niet geopenbaard."),
    ("4", "[a]", "Werkwijze volgens conclusie 1, waarbij de precursor titaniumtetrachloride is.",
     "D1: niet geopenbaard.", "D2: niet geopenbaard; wel tetraethylorthosilicaat."),
)

# --- expert reports -----------------------------------------------------------------------

EXPERT_REPORTS: dict[str, ExpertReport] = {
    "MEDIVERS-001": ExpertReport(
        expert="prof. dr. H.J. van Amerongen",
        discipline="hoogleraar farmaceutische technologie",
        assignment=(
            "Mij is gevraagd te beoordelen of de hypromellose-matrix van Medivastine Genova 20 mg "
            "retard dezelfde technische functie vervult als de HPMC-matrix volgens kenmerk 1[c] "
            "van EP 2 471 839, en of het afgifteprofiel binnen kenmerk 1[d] valt."
        ),
        investigation=(
            "Ik heb drie partijen van het Genova-product (batches GX2211, GX2302 en GX2307) "
            "onderzocht volgens Ph. Eur. 2.9.3 met de paddle-methode bij 50 rpm in fosfaatbuffer "
            "pH 6,8.",
            "Daarnaast heb ik de zwelling van de matrix gevolgd met MRI-beeldvorming op 1, 4 en 8 "
            "uur, naast tabletten van Medivers met HPMC van 15.000 mPa·s.",
        ),
        findings=(
            "Het Genova-product geeft na 8 uur gemiddeld 71% medivastine af (spreiding 68-74%), "
            "binnen de range van kenmerk 1[d].",
            "In beide producten vormt zich binnen dertig minuten een gellaag van vergelijkbare "
            "dikte; de afgifte wordt in beide gevallen gestuurd door diffusie door die gellaag.",
            "De hogere viscositeit van de Genova-hypromellose wordt gecompenseerd door een lager "
            "gewichtspercentage polymeer (18% tegenover 30%), met als resultaat een nagenoeg "
            "identiek afgifteprofiel (f2-similariteitsfactor 78).",
        ),
        conclusions=(
            "De matrix van het Genova-product vervult dezelfde functie op in wezen dezelfde wijze "
            "met hetzelfde resultaat als de matrix volgens kenmerk 1[c].",
            "Voor de gemiddelde vakman was in 2012 bekend dat viscositeit en polymeergehalte "
            "uitwisselbaar zijn om hetzelfde afgifteprofiel te bereiken.",
        ),
    ),
    "HELDERGLAS-001": ExpertReport(
        expert="ir. M. Bosman",
        discipline="ingenieur vuurvaste materialen en industriële ovenbouw",
        assignment=(
            "Mij is gevraagd de oorzaak vast te stellen van het bezwijken van de regenerator van "
            "smeltoven 3 van Helderglas op 8 maart 2025, en te beoordelen of de renovatie door "
            "Thermtec in 2023 volgens de regels der kunst is uitgevoerd."
        ),
        investigation=(
            "Ik heb de oven op 14 en 15 maart 2025 na afkoeling geïnspecteerd, monsters van het "
            "metselwerk genomen en de procesdata van de ovenbesturing over januari tot en met "
            "maart 2025 geanalyseerd.",
            "Ik heb de montagehandleiding van Thermtec (revisie 4, 2022) en de opleverdocumentatie "
            "van de renovatie bestudeerd.",
        ),
        findings=(
            "In de noordwand van de regenerator ontbreken over een lengte van 6,2 meter de "
            "dilatatievoegen die de montagehandleiding elke 1,5 meter voorschrijft.",
            "De scheur loopt precies door het deel zonder voegen; de thermische uitzetting kon "
            "daar niet worden opgevangen.",
            "De procesdata tonen een opstooksnelheid van gemiddeld 24°C per uur, binnen de "
            "voorgeschreven 25°C per uur; van te snel opstoken is geen sprake.",
        ),
        conclusions=(
            "De primaire oorzaak van het bezwijken is het ontbreken van dilatatievoegen in de "
            "noordwand.",
            "De renovatie is op dit punt niet uitgevoerd volgens de eigen voorschriften van "
            "Thermtec en de regels der kunst.",
        ),
    ),
    "KLAASSEN-003": ExpertReport(
        expert="ir. T. Hoogland",
        discipline="geotechnisch adviseur",
        assignment=(
            "Mij is gevraagd te onderzoeken waarom 23 palen van het appartementencomplex Park Zuid "
            "gescheurd zijn en 9 palen de draagkrachtige zandlaag niet bereiken, en of het "
            "sonderingsrapport daarvoor een verklaring biedt."
        ),
        investigation=(
            "Ik heb de heistaten van alle 186 palen, de resultaten van de integriteitsmetingen van "
            "december 2025 en de acht sonderingen uit het funderingsadvies geanalyseerd.",
            "Op 20 januari 2026 zijn op mijn verzoek vier aanvullende sonderingen gemaakt.",
        ),
        findings=(
            "De aanvullende sonderingen bevestigen de diepte van de zandlaag uit het "
            "oorspronkelijke rapport (NAP -17,5 m, afwijking minder dan 0,4 m).",
            "Bij de 9 korte palen is het heien gestaakt op NAP -15,8 m, terwijl de kalender nog "
            "geen stuit aangaf; de heistaten vermelden als reden 'tijd'.",
            "De scheurvorming in 23 palen past bij heien met een te hoge valhoogte van het "
            "heiblok in de kleilaag, zonder aanpassing van de heienergie.",
        ),
        conclusions=(
            "Het sonderingsrapport was juist; de afwijkingen zijn ontstaan door de uitvoering van "
            "het heiwerk.",
            "Een zorgvuldige heier had het staken van het heien bij de 9 palen aan de "
            "hoofdaannemer gemeld.",
        ),
    ),
    "NOORDZEE-004": ExpertReport(
        expert="ing. L. Vermaat",
        discipline="kabeltechnisch expert hoogspanning",
        assignment=(
            "Mij is gevraagd de oorzaak en de omvang van de schade aan de 66 kV-exportkabel van "
            "windpark Zuiderveen-Oost vast te stellen, en de diepteligging van de kabel te "
            "vergelijken met de revisietekening."
        ),
        investigation=(
            "Ik heb de kabel ter plaatse van de schade laten opgraven en de beschadigde sectie van "
            "42 meter onderzocht.",
            "Ik heb de multibeam-opname van de havenmond van 9 januari 2026 vergeleken met de "
            "revisietekening en met de baggerregistratie van de 'Scheldestroom'.",
        ),
        findings=(
            "De kabelmantel en de afscherming zijn over 3,1 meter doorgesneden door de sleepkop "
            "van de zuigbuis.",
            "De kabel lag op NAP -8,9 m, 0,8 m ondieper dan de revisietekening, binnen de op de "
            "tekening vermelde tolerantie van 1,5 m.",
            "De baggerregistratie toont dat de sleepkop tot NAP -9,2 m is gezakt, dieper dan het "
            "bestek toestond (NAP -8,5 m).",
        ),
        conclusions=(
            "De schade is veroorzaakt door baggeren dieper dan het bestek toestond.",
            "De herstelkosten van de kabel bedragen € 870.000.",
        ),
    ),
    "ZEEBURG-VAST-001": ExpertReport(
        expert="ir. S. van Wijk",
        discipline="bouwfysicus",
        assignment=(
            "Mij is gevraagd de oorzaak vast te stellen van de lekkage van het dak en van de "
            "uitval van de vloerverwarming onder de vriescel van het koelhuis Havenweg te Moerdijk."
        ),
        investigation=(
            "Ik heb het koelhuis op 18 november 2026 geïnspecteerd, de vloer op zes plaatsen laten "
            "aanboren en de logboeken van het heftruckgebruik van de huurder opgevraagd.",
        ),
        findings=(
            "De daklekkage is veroorzaakt door verouderde dakbedekking bij de dakdoorvoeren; "
            "dit is een onderhoudsgebrek.",
            "De verwarmingsleidingen onder de vriescel zijn geknikt in de rijbaan waar heftrucks "
            "met een aslast van 8 ton rijden, terwijl de vloer is berekend op 5 ton.",
        ),
        conclusions=(
            "De uitval van de vloerverwarming is het gevolg van overbelasting van de vloer door de "
            "huurder.",
            "De daklekkage is een gebrek dat voor rekening van de verhuurder komt.",
        ),
    ),
}

# --- witness hearings ---------------------------------------------------------------------

HEARINGS: dict[str, Hearing] = {
    "HELDERGLAS-001": Hearing(
        witness="ing. K. Brandsma",
        capacity="ovenmeester bij Helderglas Nederland N.V.",
        place="Rechtbank Rotterdam, voorlopig getuigenverhoor",
        pairs=(
            ("Wat was uw rol tijdens de renovatie van smeltoven 3 in 2023?",
             "Ik was namens Helderglas het aanspreekpunt voor Thermtec op de vloer en tekende de "
             "dagrapporten af."),
            ("Heeft u gezien hoe de noordwand van de regenerator werd gemetseld?",
             "Ja. Op 12 en 13 juni 2023 heb ik gezien dat de ploeg van Thermtec doorwerkte zonder "
             "de kartonnen inlagen voor de dilatatievoegen."),
            ("Heeft u daar iets over gezegd?",
             "Ik heb de voorman, de heer Krüger, erop aangesproken. Hij zei dat de voegen "
             "achteraf niet nodig waren en dat ze anders de planning niet haalden."),
            ("Staat dat in een dagrapport?",
             "Ja, in het dagrapport van 13 juni 2023 heb ik genoteerd: 'voegen noordwand niet "
             "aangebracht, volgens voorman niet nodig'."),
            ("Hoe snel is de oven in januari 2025 opgestookt?",
             "Volgens het programma, 25 graden per uur. Dat staat vast in de besturing en kan "
             "niet handmatig worden verhoogd."),
        ),
    ),
    "KLAASSEN-002": Hearing(
        witness="P. de Wit",
        capacity="uitvoerder bij Bouwbedrijf Klaassen & Zonen B.V.",
        place="kantoor Dekker Meijer Advocaten, Amsterdam",
        pairs=(
            ("Was de rolsteiger op 19 mei 2025 voorzien van randbeveiliging?",
             "Ja. Ik heb om half acht de startwerkbespreking gehouden en de steiger gecontroleerd. "
             "De leuning en de kantplank zaten erop."),
            ("Hoe verklaart u dat de leuning bij het ongeval ontbrak?",
             "Een collega van de heer Pinas heeft de bovenste leuning rond tien uur losgehaald om "
             "platen door te geven. Dat heb ik later van hem gehoord."),
            ("Was dat toegestaan?",
             "Nee. Volgens de werkinstructie moet daarvoor de materiaallift worden gebruikt. Dat "
             "is in de toolbox van april nog besproken."),
            ("Wie hield toezicht op de steiger tussen half acht en het ongeval?",
             "Ik was op de bouwvergadering in de keet. De voorman was op de andere kant van het "
             "project."),
        ),
        numbered=True,
    ),
    "MEDIVERS-004": Hearing(
        witness="R. Lammers",
        capacity="IT-securitymanager bij Medivers Pharma B.V.",
        place="Rechtbank Noord-Holland, locatie Haarlem",
        pairs=(
            ("Hoe kwam de verzending van de stabiliteitsdata aan het licht?",
             "Ons data loss prevention-systeem gaf op 29 augustus om 08.12 uur een melding van een "
             "bijlage met het label 'vertrouwelijk' die naar een Gmail-adres was gestuurd."),
            ("Welke bestanden waren het?",
             "Drie Excel-bestanden met de stabiliteitsdata van de medivastine-formuleringen F7 tot "
             "en met F9, samen ongeveer 14 megabyte."),
            ("Kan iemand anders dan de heer Verhoeven de e-mail hebben verstuurd?",
             "Nee. De e-mail is verstuurd vanaf zijn account, op zijn laptop, met "
             "tweefactorauthenticatie via zijn telefoon."),
        ),
    ),
    "ZEEBURG-LOG-001": Hearing(
        witness="D. Nowak",
        capacity="chauffeur bij Zeeburg Logistiek B.V.",
        place="kantoor Dekker Meijer Advocaten, Amsterdam",
        pairs=(
            ("Hoe vaak controleerde u tijdens de rit naar Lyon de temperatuur van de containers?",
             "Bij elke stop, dus ongeveer elke vier uur. Ik noteer het in de app en maak een foto "
             "van het display."),
            ("Wanneer zag u voor het eerst dat de temperatuur opliep?",
             "Bij de stop in Beaune, op 3 november om 06.40 uur. Het display gaf -11 graden aan in "
             "plaats van -22."),
            ("Wat heeft u toen gedaan?",
             "Ik heb de planning gebeld. Die stuurde een monteur, maar die kon pas na vier uur "
             "komen; toen was het -4 graden."),
        ),
    ),
}

# --- draft agreements ---------------------------------------------------------------------

AGREEMENTS: dict[str, Agreement] = {
    "NOORDZEE-001": Agreement(
        title="Concept koopovereenkomst aandelen Warmtenet Zuiderveen B.V. (Project Tulp)",
        parties=("de gemeente Zuiderveen, als verkoper", "Noordzee Energie N.V., als koper"),
        recitals=(
            "Verkoper houdt alle aandelen in het kapitaal van Warmtenet Zuiderveen B.V.",
            "Koper wenst de aandelen te kopen, en verkoper wenst de aandelen te verkopen, op de "
            "voorwaarden van deze overeenkomst.",
            "De raad van de gemeente Zuiderveen is in de gelegenheid gesteld wensen en bedenkingen "
            "ter kennis van het college te brengen.",
        ),
        clauses=(
            ("Koopprijs", "De koopprijs bedraagt € 63.000.000 op cash-free/debt-free-basis, te "
             "vermeerderen met de earn-out van artikel 3 en aan te passen aan de hand van de "
             "closing accounts."),
            ("Opschortende voorwaarden", "De verplichtingen van partijen zijn opgeschort totdat "
             "(a) de ACM heeft verklaard dat voor de concentratie geen vergunning is vereist, en "
             "(b) de gemeente als concessieverlener toestemming heeft gegeven voor de change of "
             "control. Wordt niet uiterlijk op de long stop date aan de voorwaarden voldaan, dan "
             "kan ieder van partijen de overeenkomst ontbinden."),
            ("Earn-out", "Verkoper heeft recht op een aanvullende koopprijs van ten hoogste "
             "€ 7.000.000 indien vóór 31 december 2029 ten minste 2.500 woningen in Zuiderhaven "
             "op het warmtenet zijn aangesloten."),
            ("Garanties en vrijwaringen", "Verkoper geeft de garanties van bijlage 6. Verkoper "
             "vrijwaart koper voor de kosten van vervanging van de transportleidingen die in het "
             "technische due diligence-rapport als 'kritiek' zijn aangemerkt, tot een maximum van "
             "€ 6.000.000."),
            ("Geheimhouding", "Partijen houden het bestaan en de inhoud van deze overeenkomst en "
             "van Project Tulp geheim, behoudens een wettelijke openbaarmakingsplicht."),
        ),
    ),
    "NIMBUS-001": Agreement(
        title="Concept participatieovereenkomst Serie A Nimbus Analytics B.V.",
        parties=("Amstel Ventures Fund II C.V., als investeerder",
                 "Nimbus Analytics B.V., als vennootschap, en haar oprichters"),
        recitals=(
            "De vennootschap ontwikkelt software voor voorspellend onderhoud.",
            "De investeerder is bereid € 8.000.000 in de vennootschap te investeren tegen uitgifte "
            "van serie A-preferente aandelen.",
        ),
        clauses=(
            ("Investering", "De investeerder neemt 2.500.000 serie A-aandelen tegen een "
             "uitgifteprijs van € 3,20 per aandeel, overeenkomend met een pre-money waardering van "
             "€ 24.000.000 op volledig verwaterde basis."),
            ("Liquidatiepreferentie", "Bij een exit of liquidatie ontvangen de houders van serie "
             "A-aandelen eerst hun investering (1x, non-participating), daarna ontvangen de "
             "houders van gewone aandelen de rest naar rato."),
            ("Goedkeuringsbesluiten", "Voor de besluiten van bijlage 3, waaronder het aangaan van "
             "arbeidsovereenkomsten met een jaarsalaris boven € 150.000 en het uitgeven van "
             "aandelen, is voorafgaande goedkeuring van de raad van commissarissen vereist."),
            ("Leaver", "Een oprichter die binnen vier jaar vertrekt, biedt zijn niet-gevestigde "
             "aandelen aan; bij een bad leaver tegen nominale waarde, bij een good leaver tegen "
             "reële waarde."),
        ),
    ),
    "MEDIVERS-003": Agreement(
        title="Concept licentieovereenkomst medivastine retard (Benelux)",
        parties=("Medivers Pharma B.V., als licentiegever", "Zorgpunt Apotheken B.V., als "
                 "licentienemer"),
        recitals=(
            "Licentiegever is houder van EP 2 471 839 en van de handelsvergunning voor medivastine "
            "retard.",
            "Licentienemer wenst medivastine retard onder eigen label te distribueren.",
        ),
        clauses=(
            ("Licentie", "Licentiegever verleent licentienemer een niet-exclusieve, niet "
             "overdraagbare licentie onder EP 2 471 839 voor de Benelux, voor de duur van vijf "
             "jaar."),
            ("Royalty", "Licentienemer betaalt een royalty van 6% van de netto-omzet, met een "
             "minimum van € 750.000 per kalenderjaar."),
            ("Inschrijving", "Partijen laten de licentie inschrijven in het octrooiregister; de "
             "eerste royaltybetaling is verschuldigd na inschrijving."),
            ("Beëindiging", "Ieder van partijen kan de overeenkomst opzeggen met een termijn van "
             "zes maanden. Licentiegever kan de overeenkomst met onmiddellijke ingang ontbinden "
             "indien licentienemer een concurrerend generiek product gaat voeren."),
        ),
    ),
}

# --- case law filed into matters (productions) --------------------------------------------

EXHIBITS: tuple[tuple[str, str, str], ...] = (
    ("HELDERGLAS-001", "ECLI:NL:PHR:2011:BP5608",
     "Productie 12: conclusie A-G Wissink over het bewijsaanbod in hoger beroep"),
    ("KLAASSEN-001", "ECLI:NL:GHAMS:2011:1684",
     "Productie 7: arrest Hof Amsterdam over wijziging van eis en goede procesorde"),
    ("ZUIDERVEEN-001", "ECLI:NL:RBAMS:2010:BO3979",
     "Productie 3: uitspraak Rechtbank Amsterdam over schadevergoeding wegens overschrijding "
     "van de redelijke termijn"),
)

# --- helpers ------------------------------------------------------------------------------


def short_name(person_id: str) -> str:
    """'Lotte Dekker' -> 'mr. L. Dekker' (the paralegal carries no title)."""
    who = person(person_id)
    first, _, rest = who.name.partition(" ")
    title = "" if who.role == "paralegal" else "mr. "
    return f"{title}{first[0]}. {rest}"


def _at(day: date, hour: int = 10) -> datetime:
    return datetime(day.year, day.month, day.day, hour, 0, tzinfo=UTC)


def _document_day(m: DemoMatter, days_before_today: int) -> date:
    """A date between the matter's opening and DEMO_TODAY (closed matters: soon after opening)."""
    if m.status == "closed":
        return m.opened + timedelta(days=30 + (60 - days_before_today) // 2)
    day = DEMO_TODAY - timedelta(days=days_before_today)
    return max(day, m.opened + timedelta(days=1))


def _external_id(matter_id: str, number: int) -> str:
    return f"{LIBRARY}!{matter_id}.{number:02d}"


def _sentences_as_paragraphs(prefix: str, sentences: tuple[str, ...]) -> list[str]:
    return [f"{prefix}.{i} {s}" for i, s in enumerate(sentences, start=1)]


def _label_and_body(paragraph: str) -> tuple[str, str]:
    """'Tekortkoming. Thermtec ...' -> ('Tekortkoming', 'Thermtec ...')."""
    label, _, body = paragraph.partition(". ")
    return label, body


def _adverse_names(m: DemoMatter) -> list[str]:
    return [p.name for p in m.parties if p.role == "adverse"]


def _articles_sentence(d: Dossier) -> str:
    if not d.articles:
        return ""
    if len(d.articles) == 1:
        return f"Het juridisch kader wordt bepaald door {d.articles[0]}."
    return (
        "Het juridisch kader wordt bepaald door " + ", ".join(d.articles[:-1])
        + f" en {d.articles[-1]}."
    )


# --- templates ----------------------------------------------------------------------------


def _addressees(m: DemoMatter) -> str:
    others = [short_name(p) for p in m.team[1:]]
    return f"dossierteam {m.matter_id} ({', '.join(others)})" if others else "dossier"


def _memo(m: DemoMatter, d: Dossier) -> str:
    client_name = client(m.client_id).name
    lines = [
        "MEMO – VERTROUWELIJK, GEHEIMHOUDINGSPLICHT ADVOCAAT",
        "",
        f"Aan: {_addressees(m)}",
        f"Van: {short_name(m.team[0])}",
        f"Cliënt: {client_name}",
        f"Dossier: {m.matter_id} – {m.title}",
        f"Rechtsgebied: {m.practice_area}",
        "",
        "1. Feiten",
        "",
        " ".join(d.facts),
        "",
        "2. Vraagstelling",
        "",
        d.question,
        "",
        "3. Juridisch kader",
        "",
        _articles_sentence(d),
        "",
        "4. Analyse",
        "",
    ]
    for paragraph in d.analysis:
        lines += [paragraph, ""]
    lines += ["5. Conclusie en vervolg", ""]
    conclusion = d.next_step
    if d.amount:
        conclusion = f"Financieel belang: {d.amount}. {conclusion}"
    lines.append(conclusion)
    return "\n".join(lines).strip() + "\n"


# Sentences of a dossier's analysis that speak to the client ("wij adviseren", "het risico
# is") belong in the memo, not in a pleading; _pleading_text leaves them out of the brief.
_ADVICE_RE = re.compile(r"\b(?:wij|ons|onze|risico|adviseren|achten)\b", re.IGNORECASE)
# Where ". " does not end a sentence: titles and legal abbreviations before a capital.
_NO_SPLIT_RE = re.compile(r"(?:\b(?:ir|prof|mr|dr|art|jo|nr|mw|A-G)\.)$")


def _sentences(paragraph: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in re.finditer(r"[.?!] (?=[A-Z'\"(])", paragraph):
        candidate = paragraph[start:match.start() + 1]
        if _NO_SPLIT_RE.search(candidate):
            continue
        out.append(candidate.strip())
        start = match.end()
    out.append(paragraph[start:].strip())
    return [s for s in out if s]


def _pleading_text(paragraph: str) -> str:
    return " ".join(s for s in _sentences(paragraph) if not _ADVICE_RE.search(s))


def _request(m: DemoMatter, d: Dossier) -> str:
    forum = d.forum or "de bevoegde instantie"
    if m.practice_area == "bestuursrecht":
        return (f"Op grond van het voorgaande verzoekt cliënte {forum} te beslissen "
                "overeenkomstig haar standpunt.")
    return (f"Cliënte biedt bewijs aan van al haar stellingen, in het bijzonder met de "
            f"producties en door het horen van getuigen. Op grond van het voorgaande verzoekt "
            f"cliënte {forum} te beslissen overeenkomstig haar standpunt, met veroordeling "
            f"van de wederpartij in de proceskosten.")


def _brief(m: DemoMatter, d: Dossier) -> str:
    client_name = client(m.client_id).name
    adverse = _adverse_names(m) or ["de wederpartij"]
    counsel = d.counsel or "nog onbekend"
    parties = [
        f"inzake: {client_name}, advocaat {short_name(m.team[0])} ({FIRM_NAME})",
        "",
        f"tegen: {', '.join(adverse)}, advocaat {counsel}",
        "",
    ]
    if d.forum:
        parties += [f"Gericht aan {d.forum}.", ""]
    sections: list[tuple[str, list[str]]] = [
        ("Inleiding", [
            f"{client_name} (hierna: cliënte) legt in dit processtuk haar standpunt voor. "
            f"Kern van het geschil: {d.question[0].lower()}{d.question[1:]}",
        ]),
        ("Feiten", list(d.facts)),
        ("Juridisch kader", [_articles_sentence(d)] if d.articles else []),
    ]
    grounds = [
        (label, body)
        for label, body in (_label_and_body(p) for p in d.analysis)
        if _pleading_text(body)
    ]
    grounds = [(label, _pleading_text(body)) for label, body in grounds]
    closing = _request(m, d)
    if d.markdown_brief:
        # A pleading exported from Word with heading styles: Markdown headings.
        out = [f"# {d.brief}", "", *parties]
        for number, (title, paragraphs) in enumerate(sections, start=1):
            out += [f"## {number}. {title}", ""]
            out += [p + "\n" for p in paragraphs]
        out += [f"## {len(sections) + 1}. Beoordeling", ""]
        for sub, (label, body) in enumerate(grounds, start=1):
            out += [f"### {len(sections) + 1}.{sub} {label}", "", body, ""]
        out += [f"## {len(sections) + 2}. Conclusie", "", closing, ""]
        return "\n".join(out).strip() + "\n"
    # A typed pleading: numbered headings over numbered paragraphs (1., 2.1, ...).
    out = [d.brief.upper(), "", *parties]
    for number, (title, paragraphs) in enumerate(sections, start=1):
        out += [f"{number}. {title}", ""]
        out += [f"{number}.{i} {p}" for i, p in enumerate(paragraphs, start=1)]
        out.append("")
    base = len(sections) + 1
    out += [f"{base}. Standpunt van cliënte", ""]
    for sub, (label, body) in enumerate(grounds, start=1):
        out += [f"{base}.{sub} {label}", "", body, ""]
    out += [f"{base + 1}. Conclusie", "", f"{base + 1}.1 {closing}", ""]
    return "\n".join(out).strip() + "\n"


def _email(m: DemoMatter, d: Dossier, sent: datetime, number: int) -> bytes:
    contact = CONTACTS[m.client_id]
    author = m.team[0]
    msg = EmailMessage()
    msg["From"] = f"{person(author).name} <{author}>"
    msg["To"] = f"{contact.name} <{contact.email}>"
    if len(m.team) > 1:
        msg["Cc"] = ", ".join(f"{person(p).name} <{p}>" for p in m.team[1:])
    msg["Subject"] = f"{m.matter_id} – {m.title}: stand van zaken"
    msg["Date"] = format_datetime(sent)
    # Fixed Message-ID: the default one carries the host name and a random part.
    msg["Message-ID"] = f"<{m.matter_id.lower()}.{number}@firm.nl>"
    body = [
        contact.salutation,
        "",
        f"Hierbij praat ik u kort bij over het dossier {m.title}.",
        "",
        " ".join(d.facts[:2]),
        "",
        f"De vraag die nu voorligt: {d.question[0].lower()}{d.question[1:]}",
        "",
        "Onze voorlopige inschatting is als volgt. " + _label_and_body(d.analysis[0])[1],
        "",
        d.next_step,
    ]
    if d.amount:
        body += ["", f"Financieel belang: {d.amount}."]
    body += [
        "",
        "Uiteraard bespreek ik dit graag telefonisch met u.",
        "",
        "Met vriendelijke groet,",
        "",
        short_name(author),
        FIRM_NAME,
        "",
        "Dit bericht is uitsluitend bestemd voor de geadresseerde en kan vertrouwelijke of "
        "door het verschoningsrecht beschermde informatie bevatten.",
    ]
    msg.set_content("\n".join(body))
    return bytes(msg)


def _deal_email(m: DemoMatter, sent: datetime) -> bytes:
    """Project Tulp: an internal deal e-mail with the draft SPA attached."""
    msg = EmailMessage()
    msg["From"] = "Thijs Visser <tvisser@firm.nl>"
    msg["To"] = "Sander Jansen <sjansen@firm.nl>"
    msg["Subject"] = "Project Tulp – koopprijs, earn-out en concept SPA v3"
    msg["Date"] = format_datetime(sent)
    msg["Message-ID"] = f"<{m.matter_id.lower()}.tulp-spa-v3@firm.nl>"
    msg.set_content(
        "Sander,\n\n"
        "Bijgaand versie 3 van de concept SPA voor Project Tulp. De belangrijkste wijzigingen:\n\n"
        "- koopprijs € 63 miljoen cash-free/debt-free, met locked box per 30 juni 2026 als "
        "alternatief voor closing accounts;\n"
        "- earn-out tot € 7 miljoen bij 2.500 aansluitingen in Zuiderhaven vóór eind 2029;\n"
        "- specifieke vrijwaring voor de kritieke transportleidingen uit de technische due "
        "diligence, gemaximeerd op € 6 miljoen;\n"
        "- toestemming van de gemeente als concessieverlener als opschortende voorwaarde.\n\n"
        "De gemeente wil de earn-out liever vervangen door een hogere vaste koopprijs. Ik stel "
        "voor dat we daar pas op ingaan als de banken akkoord zijn; de financiering gaat uit van "
        "€ 63 miljoen.\n\n"
        "Let op: alleen het dealteam heeft toegang tot dit dossier (informatiebarrière).\n\n"
        "Groet,\nThijs\n"
    )
    msg.add_attachment(
        b"Concept SPA v3 (zie DMS)", maintype="application", subtype="octet-stream",
        filename="Concept SPA Project Tulp v3.docx",
    )
    # Fixed MIME boundary: the default is random and would change the bytes on every load.
    msg.set_boundary("==ewall-demo-tulp-spa-v3==")
    return bytes(msg)


def _claim_chart_medivers() -> str:
    lines = [
        "CLAIM CHART – EP 2 471 839 tegen Medivastine Genova 20 mg retard",
        "",
        "Vertrouwelijk – opgesteld ten behoeve van de procedure Medivers / Genova. Kolommen: "
        "kenmerk | conclusietekst | Genova-product | beoordeling.",
        "",
    ]
    lines += [" | ".join(row) for row in MEDIVERS_CHART]
    lines += [
        "",
        "Toelichting: kenmerk 1[c] wordt in de pleitnota onder de equivalentieleer besproken; "
        "de overige kenmerken zijn letterlijk aanwezig. Bron van de productgegevens: SmPC en "
        "bijsluiter van het Genova-product en eigen metingen van Medivers.",
    ]
    return "\n".join(lines) + "\n"


def _claim_chart_helderglas() -> str:
    lines = [
        "KENMERKENANALYSE (INVALIDITY CHART) – EP 3 118 207 tegen D1 en D2",
        "",
        "Conclusie | kenmerk | tekst | D1 (JP 2008-155402) | D2 (congrespublicatie 2010)",
        "",
    ]
    lines += [" | ".join(row) for row in HELDERGLAS_CHART]
    lines += [
        "",
        "Samenvatting: geen van beide documenten openbaart kenmerken [c] en [d] van conclusie "
        "1; de combinatie D1 met D2 leidt niet tot de werkwijze van conclusie 1 (art. 56 EOV).",
    ]
    return "\n".join(lines) + "\n"


def _expert_report(m: DemoMatter, report: ExpertReport) -> str:
    lines = [
        f"DESKUNDIGENRAPPORT {report.expert.upper()}",
        "",
        f"Opgesteld door {report.expert}, {report.discipline}, op verzoek van "
        f"{client(m.client_id).name} in de zaak {m.title}.",
        "",
        "1. Opdracht",
        f"1.1 {report.assignment}",
        "1.2 Ik ben onafhankelijk van partijen en heb geen eerdere opdrachten voor hen verricht.",
        "",
        "2. Onderzoek",
    ]
    lines += _sentences_as_paragraphs("2", report.investigation)
    lines += ["", "3. Bevindingen"]
    lines += _sentences_as_paragraphs("3", report.findings)
    lines += ["", "4. Conclusies"]
    lines += _sentences_as_paragraphs("4", report.conclusions)
    lines += [
        "",
        "5. Verklaring",
        "5.1 Ik verklaar dat ik dit rapport naar waarheid, onpartijdig en naar beste weten heb "
        "opgesteld.",
        "",
        report.expert,
    ]
    return "\n".join(lines) + "\n"


def _hearing(m: DemoMatter, hearing: Hearing, day: date) -> str:
    lines = [
        "PROCES-VERBAAL VAN GETUIGENVERHOOR",
        "",
        f"Zaak: {m.title}",
        f"Getuige: {hearing.witness}, {hearing.capacity}",
        f"Plaats: {hearing.place}",
        f"Datum: {day.day} {_MONTHS[day.month - 1]} {day.year}",
        "",
        f"De getuige heeft de belofte afgelegd de gehele waarheid en niets dan de waarheid te "
        f"zeggen. Vragen gesteld door {short_name(m.team[0])}.",
        "",
    ]
    for number, (question, answer) in enumerate(hearing.pairs, start=1):
        if hearing.numbered:
            lines += [f"Vraag {number}: {question}", f"Antwoord: {answer}", ""]
        else:
            lines += [f"V: {question}", f"A: {answer}", ""]
    lines.append("Na voorlezing volhardt de getuige bij zijn verklaring en ondertekent deze.")
    return "\n".join(lines) + "\n"


def _agreement(agreement: Agreement) -> str:
    lines = [
        f"{agreement.title.upper()}",
        "CONCEPT – onder voorbehoud van instemming van cliënt; vertrouwelijk",
        "",
        "DE ONDERGETEKENDEN:",
        f"1. {agreement.parties[0]};",
        f"2. {agreement.parties[1]};",
        "",
        "OVERWEGENDE DAT:",
    ]
    lines += [f"{chr(ord('A') + i)}. {r}" for i, r in enumerate(agreement.recitals)]
    lines += ["", "KOMEN OVEREEN ALS VOLGT:", ""]
    for number, (heading, text) in enumerate(agreement.clauses, start=1):
        lines += [f"Artikel {number} {heading}", f"{number}.1 {text}", ""]
    lines.append("Aldus overeengekomen en in tweevoud ondertekend.")
    return "\n".join(lines) + "\n"


_MONTHS = ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus",
           "september", "oktober", "november", "december")


def _selection_note() -> str:
    rows = [
        ("productiemedewerker float", "15-25", "3", "1"),
        ("productiemedewerker float", "25-35", "9", "4"),
        ("productiemedewerker float", "35-45", "14", "6"),
        ("productiemedewerker float", "45-55", "17", "7"),
        ("productiemedewerker float", "55+", "11", "5"),
        ("operator snijlijn", "35-45", "6", "3"),
        ("ploegleider", "45-55", "4", "2"),
    ]
    lines = [
        "VERTROUWELIJKE NOTITIE – SELECTIE BOVENTALLIGE FUNCTIES VESTIGING DORDRECHT",
        "",
        "Alleen voor het arbeidsrechtteam. Niet doorsturen. Bevat personeelsgegevens.",
        "",
        "De afspiegeling is toegepast per uitwisselbare functie en per leeftijdscategorie "
        "binnen de bedrijfsvestiging Dordrecht. Per categorie is het aantal werknemers en het "
        "aantal voor ontslag voorgedragen werknemers vermeld; de namen staan in de bijlage bij "
        "de UWV-aanvraag.",
        "",
        "functie | leeftijdscategorie | werknemers | boventallig",
    ]
    lines += [" | ".join(r) for r in rows]
    lines += [
        "",
        "Drie werknemers met een arbeidsbeperking vallen buiten de afspiegeling (art. 7:669 "
        "BW en de Ontslagregeling). Over de positie van twee ondernemingsraadsleden wordt "
        "afzonderlijk geadviseerd.",
    ]
    return "\n".join(lines) + "\n"


def _unfiled_letter() -> str:
    return (
        "Aangetekend\n\n"
        "Aan: Dekker Meijer Advocaten, t.a.v. de postkamer\n"
        "Betreft: uw kenmerk onleesbaar – ingebrekestelling\n\n"
        "Geachte heer, mevrouw,\n\n"
        "Namens onze cliënte stellen wij uw cliënte hierbij in gebreke wegens het uitblijven van "
        "betaling van de facturen 2026-118 tot en met 2026-131. Wij verzoeken u binnen veertien "
        "dagen te betalen, bij gebreke waarvan wij zonder nadere aankondiging tot dagvaarding "
        "overgaan.\n\n"
        "Hoogachtend,\n\nIncassobureau Noord (kenmerk ontbreekt op de scan)\n"
    )


# --- assembly -----------------------------------------------------------------------------


def _matter_documents(m: DemoMatter, d: Dossier) -> list[FirmDocument]:
    docs: list[FirmDocument] = []

    def add(title: str, doc_type: str, kind: str, author: str, days: int, *,
            text: str | None = None, content: bytes | None = None,
            mime_type: str | None = None, acl_allow: tuple[str, ...] | None = None) -> None:
        docs.append(FirmDocument(
            external_id=_external_id(m.matter_id, len(docs) + 1),
            title=title, doc_type=doc_type, kind=kind, client_id=m.client_id,
            matter_id=m.matter_id, author=author,
            modified_at=_at(_document_day(m, days)),
            text=text, content=content, mime_type=mime_type, acl_allow=acl_allow,
        ))

    lead = m.team[0]
    add(f"Memo {m.title}", "Memo", "memo", lead, 40, text=_memo(m, d))
    if d.brief:
        add(f"{d.brief} – {m.title}", d.brief, "brief", lead, 14, text=_brief(m, d))
    chart_author = m.team[-1]
    if m.matter_id == "MEDIVERS-001":
        add("Claim chart EP 2 471 839 – Medivastine Genova 20 mg retard", "Claim chart",
            "claim_chart", chart_author, 21, text=_claim_chart_medivers())
    if m.matter_id == "HELDERGLAS-003":
        add("Kenmerkenanalyse EP 3 118 207 tegen D1 en D2", "Kenmerkenanalyse",
            "claim_chart", chart_author, 18, text=_claim_chart_helderglas())
    report = EXPERT_REPORTS.get(m.matter_id)
    if report is not None:
        add(f"Deskundigenrapport {report.expert} – {m.title}", "Deskundigenrapport",
            "expert_report", lead, 25, text=_expert_report(m, report))
    hearing = HEARINGS.get(m.matter_id)
    if hearing is not None:
        doc_type = "Getuigenverklaring" if hearing.numbered else "Proces-verbaal getuigenverhoor"
        add(f"{doc_type} {hearing.witness}", doc_type, "deposition", lead, 30,
            text=_hearing(m, hearing, _document_day(m, 30)))
    agreement = AGREEMENTS.get(m.matter_id)
    if agreement is not None:
        add(agreement.title, "Conceptovereenkomst", "contract", lead, 10,
            text=_agreement(agreement))
    if m.matter_id == "HELDERGLAS-002":
        # Private in the DMS: only the employment team; no wall is involved, the source
        # ACL alone keeps it from the rest of the firm.
        allowed = tuple(person(p).alias for p in ("evandenberg@firm.nl", "nsmit@firm.nl"))
        add("Vertrouwelijke notitie selectie boventallige functies", "Notitie", "memo",
            "nsmit@firm.nl", 8, text=_selection_note(), acl_allow=allowed)
    sent = _at(_document_day(m, 3), 16)
    add(f"E-mail aan cliënt: {m.title}", "E-mail", "email", lead, 3,
        content=_email(m, d, sent, len(docs) + 1), mime_type="message/rfc822")
    if m.matter_id == "NOORDZEE-001":
        deal_sent = _at(_document_day(m, 6), 9)
        add("E-mail Project Tulp – koopprijs, earn-out en concept SPA v3", "E-mail", "email",
            "tvisser@firm.nl", 6, content=_deal_email(m, deal_sent),
            mime_type="message/rfc822")
    return docs


def unfiled_document() -> FirmDocument:
    """A scan the post room filed without client or matter: present but EMPTY fields, which
    must quarantine it (visible to no one) rather than make it public."""
    return FirmDocument(
        external_id=f"{LIBRARY}!POSTKAMER-2026-1187.01",
        title="Scan inkomende post 20-11-2026 (niet gekoppeld)",
        doc_type="Correspondentie",
        kind="other",
        client_id="",
        matter_id="",
        author=CONFLICTS_PARTNER,
        modified_at=_at(date(2026, 11, 20), 9),
        text=_unfiled_letter(),
    )


def firm_documents(*, opened_after_walls: bool | None = None) -> list[FirmDocument]:
    """Every generated firm document, in a stable order.

    ``opened_after_walls`` selects the documents of matters opened before (False) or after
    (True) the walls; None returns all of them plus the unfiled scan.
    """
    out: list[FirmDocument] = []
    for m in MATTERS:
        if opened_after_walls is not None and m.opened_after_walls != opened_after_walls:
            continue
        out += _matter_documents(m, DOSSIERS[m.matter_id])
    if opened_after_walls is None:
        out.append(unfiled_document())
    return out


def exhibit_title(matter_id: str, ecli: str) -> str:
    for m_id, e, title in EXHIBITS:
        if (m_id, e) == (matter_id, ecli):
            return title
    raise KeyError((matter_id, ecli))


__all__ = [
    "DOSSIERS",
    "EXHIBITS",
    "SOURCE",
    "FirmDocument",
    "exhibit_title",
    "firm_documents",
    "short_name",
    "unfiled_document",
]
