"""The demo firm's conflict matrix, as data: people, clients, matters, parties, teams, walls.

A mid-sized Amsterdam firm ("Dekker Meijer Advocaten") with the situations that ethical
walls exist for:

- a lateral hire (mr. B. de Vries) who acted for Genova Generics against our client
  Medivers Pharma at his previous firm: an exclusionary screen on the Medivers/Genova
  patent matters;
- a confidential acquisition ("Project Tulp") where the seller, the municipality of
  Zuiderveen, is also a client: an inclusionary need-to-know wall around the deal team;
- a corporate family (Zeeburg Holding with a logistics and a real-estate subsidiary) that
  demanded a fixed client team: an inclusionary wall on the parent client, which covers the
  subsidiaries' matters too, including one the loader opens only after the wall exists;
- a tender on which the firm advises the municipality while a construction client may bid:
  an exclusionary screen with an effective window that ends at the award decision.

Everything here is fictional (names, numbers, facts) except the legal framework.
Identifiers look like the firm's DMS: people by e-mail address, with the iManage user id
as alias; clients and matters by readable codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal, TypedDict

FIRM_NAME = "Dekker Meijer Advocaten"

# The people the rest of the code (CLI, README, tests) refers to by role.
DEMO_LAWYER = "ldekker@firm.nl"  # sees most things; the CLI's curl example runs as her
CONFLICTS_PARTNER = "hmeijer@firm.nl"  # issues the walls
COMPLIANCE_OFFICER = "rbos@firm.nl"
LATERAL_HIRE = "bdevries@firm.nl"


@dataclass(frozen=True)
class DemoPerson:
    person_id: str
    name: str
    role: str
    imanage_id: str

    @property
    def alias(self) -> str:
        """The DMS principal that source ACLs name (lower-cased like every principal)."""
        return f"imanage:user:{self.imanage_id}".lower()


@dataclass(frozen=True)
class DemoClient:
    client_id: str
    name: str
    sector: str
    parent_id: str | None = None


@dataclass(frozen=True)
class DemoParty:
    name: str
    role: Literal["adverse", "related"]


@dataclass(frozen=True)
class DemoMatter:
    matter_id: str
    client_id: str
    title: str
    practice_area: str
    team: tuple[str, ...]
    parties: tuple[DemoParty, ...] = ()
    status: Literal["open", "closed", "on_hold"] = "open"
    opened: date = date(2025, 1, 6)
    # Opened after the walls were issued: proves that a client-level wall covers matters
    # that did not exist when it was issued.
    opened_after_walls: bool = False


@dataclass(frozen=True)
class DemoWall:
    kind: Literal["exclusionary", "inclusionary"]
    title: str  # the loader matches existing walls by title, so titles are unique
    reason: str
    protects_matters: tuple[str, ...] = ()
    protects_clients: tuple[str, ...] = ()
    screened: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    include_team: bool = True
    effective_from: datetime | None = None
    effective_until: datetime | None = None


class ExampleSearch(TypedDict):
    title: str
    query: str
    people: list[str]  # [allowed person, blocked person]
    explanation: str
    matters: list[str]  # walled matters the first person finds and the second never sees


def _adverse(name: str) -> DemoParty:
    return DemoParty(name, "adverse")


def _related(name: str) -> DemoParty:
    return DemoParty(name, "related")


# --- people -----------------------------------------------------------------------------

PEOPLE: tuple[DemoPerson, ...] = (
    DemoPerson(CONFLICTS_PARTNER, "Hanneke Meijer", "partner, conflictenpartner", "HMEIJER"),
    DemoPerson(COMPLIANCE_OFFICER, "Ruud Bos", "compliance officer", "RBOS"),
    DemoPerson(
        DEMO_LAWYER, "Lotte Dekker", "advocaat, senior medewerker IE en procespraktijk", "LDEKKER"
    ),
    DemoPerson(
        LATERAL_HIRE,
        "Bas de Vries",
        "partner IE (zijinstromer, tot september 2026 bij Van Houten & Partners)",
        "BDEVRIES",
    ),
    DemoPerson("sjansen@firm.nl", "Sander Jansen", "partner ondernemingsrecht en M&A", "SJANSEN"),
    DemoPerson("evandenberg@firm.nl", "Eva van den Berg", "partner arbeidsrecht", "EVANDENBERG"),
    DemoPerson(
        "mvanleeuwen@firm.nl",
        "Maarten van Leeuwen",
        "partner vastgoed en huurrecht, relatiepartner Zeeburg",
        "MVANLEEUWEN",
    ),
    DemoPerson("kdejong@firm.nl", "Karin de Jong", "partner bestuursrecht", "KDEJONG"),
    DemoPerson("tvisser@firm.nl", "Thijs Visser", "advocaat ondernemingsrecht", "TVISSER"),
    DemoPerson("nsmit@firm.nl", "Noor Smit", "advocaat arbeidsrecht", "NSMIT"),
    DemoPerson(
        "jbakker@firm.nl",
        "Jeroen Bakker",
        "advocaat procespraktijk en aansprakelijkheid",
        "JBAKKER",
    ),
    DemoPerson("fmulder@firm.nl", "Fleur Mulder", "advocaat intellectuele eigendom", "FMULDER"),
    DemoPerson("ayilmaz@firm.nl", "Ayşe Yılmaz", "paralegal", "AYILMAZ"),
    DemoPerson("dhendriks@firm.nl", "Daan Hendriks", "advocaat-stagiair", "DHENDRIKS"),
)

# --- clients ----------------------------------------------------------------------------

CLIENTS: tuple[DemoClient, ...] = (
    DemoClient("ZEEBURG", "Zeeburg Holding B.V.", "familieconcern, holding"),
    DemoClient(
        "ZEEBURG-LOG", "Zeeburg Logistiek B.V.", "logistiek en koeltransport", parent_id="ZEEBURG"
    ),
    DemoClient("ZEEBURG-VAST", "Zeeburg Vastgoed B.V.", "bedrijfsvastgoed", parent_id="ZEEBURG"),
    DemoClient("MEDIVERS", "Medivers Pharma B.V.", "farmacie (originator)"),
    DemoClient("HELDERGLAS", "Helderglas Nederland N.V.", "glasindustrie"),
    DemoClient("ZUIDERVEEN", "Gemeente Zuiderveen", "openbaar bestuur"),
    DemoClient("KLAASSEN", "Bouwbedrijf Klaassen & Zonen B.V.", "bouw en infrastructuur"),
    DemoClient("NIMBUS", "Nimbus Analytics B.V.", "technologie-start-up (SaaS)"),
    DemoClient("NOORDZEE", "Noordzee Energie N.V.", "energie (wind en warmte)"),
    DemoClient("VDLINDEN", "Bakkerij Van der Linden B.V.", "ambachtelijke bakkerijketen"),
)

# --- matters ----------------------------------------------------------------------------

GENOVA = "Genova Generics B.V."

MATTERS: tuple[DemoMatter, ...] = (
    # Medivers Pharma: patent litigation against a generic, licensing, employment, regulatory
    DemoMatter(
        "MEDIVERS-001",
        "MEDIVERS",
        "Medivers / Genova – inbreuk EP 2 471 839 (retard-tablet medivastine)",
        "octrooirecht",
        ("ldekker@firm.nl", "fmulder@firm.nl"),
        (_adverse(GENOVA),),
        opened=date(2025, 3, 3),
    ),
    DemoMatter(
        "MEDIVERS-002",
        "MEDIVERS",
        "Medivers / Genova – oppositie EPO tegen EP 2 471 839",
        "octrooirecht",
        ("ldekker@firm.nl", "fmulder@firm.nl"),
        (_adverse(GENOVA),),
        opened=date(2024, 11, 18),
    ),
    DemoMatter(
        "MEDIVERS-003",
        "MEDIVERS",
        "Licentieovereenkomst medivastine met Zorgpunt Apotheken",
        "contractenrecht",
        ("sjansen@firm.nl",),
        (_related("Zorgpunt Apotheken B.V."),),
        opened=date(2025, 6, 2),
    ),
    DemoMatter(
        "MEDIVERS-004",
        "MEDIVERS",
        "Ontslag op staande voet senior onderzoeker (schending geheimhouding)",
        "arbeidsrecht",
        ("evandenberg@firm.nl", "nsmit@firm.nl"),
        (_adverse("dr. P. Verhoeven"),),
        opened=date(2025, 9, 15),
    ),
    DemoMatter(
        "MEDIVERS-005",
        "MEDIVERS",
        "Bezwaar tegen besluit CBG over productinformatie medivastine",
        "bestuursrecht",
        ("fmulder@firm.nl", "kdejong@firm.nl"),
        (_adverse("College ter Beoordeling van Geneesmiddelen"),),
        opened=date(2026, 2, 9),
    ),
    # Helderglas: a furnace failure, a collective redundancy, a coating patent
    DemoMatter(
        "HELDERGLAS-001",
        "HELDERGLAS",
        "Helderglas / Thermtec – schade door storing smeltoven 3",
        "aansprakelijkheid",
        ("jbakker@firm.nl", "ldekker@firm.nl"),
        (_adverse("Thermtec Industrieöfen GmbH"),),
        opened=date(2025, 4, 22),
    ),
    DemoMatter(
        "HELDERGLAS-002",
        "HELDERGLAS",
        "Collectief ontslag en sociaal plan vestiging Dordrecht",
        "arbeidsrecht",
        ("evandenberg@firm.nl", "nsmit@firm.nl"),
        (_related("FNV"), _related("Ondernemingsraad Helderglas Dordrecht")),
        opened=date(2026, 1, 12),
    ),
    DemoMatter(
        "HELDERGLAS-003",
        "HELDERGLAS",
        "Nietigheidsactie Glastech tegen NL-octrooi coatingproces",
        "octrooirecht",
        ("bdevries@firm.nl", "ldekker@firm.nl", "fmulder@firm.nl"),
        (_adverse("Glastech Europe B.V."),),
        opened=date(2025, 10, 6),
    ),
    # Gemeente Zuiderveen: open government, enforcement, a tender (walled, see below)
    DemoMatter(
        "ZUIDERVEEN-001",
        "ZUIDERVEEN",
        "Wob-verzoek Stichting Groen Zuiderveen – beslissing op bezwaar",
        "bestuursrecht",
        ("kdejong@firm.nl", "dhendriks@firm.nl"),
        (_adverse("Stichting Groen Zuiderveen"),),
        opened=date(2025, 5, 19),
    ),
    DemoMatter(
        "ZUIDERVEEN-002",
        "ZUIDERVEEN",
        "Last onder dwangsom geluidsoverlast evenementenhal De Kolk",
        "bestuursrecht",
        ("kdejong@firm.nl",),
        (_adverse("Evenementenhal De Kolk B.V."),),
        opened=date(2025, 8, 25),
    ),
    DemoMatter(
        "ZUIDERVEEN-003",
        "ZUIDERVEEN",
        "Aanbesteding renovatie stadhuis – advies aanbestedende dienst",
        "bestuursrecht",
        ("kdejong@firm.nl",),
        (),
        opened=date(2026, 9, 14),
    ),
    # Klaassen: a bridge for the municipality (a client in other matters), an accident,
    # a subcontractor, a permit
    DemoMatter(
        "KLAASSEN-001",
        "KLAASSEN",
        "Klaassen / Gemeente Zuiderveen – meerwerk en boete brug Westhaven",
        "contractenrecht",
        ("jbakker@firm.nl", "ayilmaz@firm.nl"),
        (_adverse("Gemeente Zuiderveen"),),
        opened=date(2025, 2, 17),
    ),
    DemoMatter(
        "KLAASSEN-002",
        "KLAASSEN",
        "Bedrijfsongeval steigerbouwer – werkgeversaansprakelijkheid",
        "arbeidsrecht",
        ("evandenberg@firm.nl", "nsmit@firm.nl"),
        (_adverse("R. Pinas"),),
        opened=date(2025, 7, 7),
    ),
    DemoMatter(
        "KLAASSEN-003",
        "KLAASSEN",
        "Klaassen / Funderingstechniek Holland – ondeugdelijke heipalen",
        "aansprakelijkheid",
        ("jbakker@firm.nl", "dhendriks@firm.nl"),
        (_adverse("Funderingstechniek Holland B.V."),),
        opened=date(2025, 11, 3),
    ),
    DemoMatter(
        "KLAASSEN-004",
        "KLAASSEN",
        "Beroep omwonenden tegen omgevingsvergunning appartementen Park Zuid",
        "bestuursrecht",
        ("jbakker@firm.nl", "dhendriks@firm.nl"),
        (_adverse("Vereniging Omwonenden Park Zuid"),),
        opened=date(2026, 3, 30),
    ),
    # Nimbus Analytics: financing round, customer contracts, a non-compete
    DemoMatter(
        "NIMBUS-001",
        "NIMBUS",
        "Serie A-financiering – participatieovereenkomst",
        "ondernemingsrecht",
        ("sjansen@firm.nl", "tvisser@firm.nl"),
        (_related("Amstel Ventures Fund II C.V."),),
        opened=date(2025, 12, 1),
    ),
    DemoMatter(
        "NIMBUS-002",
        "NIMBUS",
        "SaaS-modelovereenkomst en verwerkersovereenkomst",
        "contractenrecht",
        ("tvisser@firm.nl", "ldekker@firm.nl"),
        (),
        opened=date(2026, 4, 20),
    ),
    DemoMatter(
        "NIMBUS-003",
        "NIMBUS",
        "Concurrentiebeding voormalig CTO",
        "arbeidsrecht",
        ("evandenberg@firm.nl", "nsmit@firm.nl"),
        (_adverse("M. Hoekstra"),),
        opened=date(2026, 5, 11),
    ),
    # Noordzee Energie: Project Tulp (walled), grid connection, cable damage, subsidy
    DemoMatter(
        "NOORDZEE-001",
        "NOORDZEE",
        "Project Tulp – overname Warmtenet Zuiderveen B.V.",
        "fusies en overnames",
        ("sjansen@firm.nl", "tvisser@firm.nl"),
        (_related("Warmtenet Zuiderveen B.V."), _related("Gemeente Zuiderveen")),
        opened=date(2026, 6, 1),
    ),
    DemoMatter(
        "NOORDZEE-002",
        "NOORDZEE",
        "Project Tulp – financiering en ACM-melding",
        "fusies en overnames",
        ("tvisser@firm.nl", "kdejong@firm.nl"),
        (_related("Warmtenet Zuiderveen B.V."), _related("Autoriteit Consument & Markt")),
        opened=date(2026, 7, 6),
    ),
    DemoMatter(
        "NOORDZEE-003",
        "NOORDZEE",
        "Netaansluiting windpark Zuiderveen-Oost – geschil met netbeheerder",
        "bestuursrecht",
        ("kdejong@firm.nl", "dhendriks@firm.nl"),
        (_adverse("Netbeheer Kust B.V."),),
        opened=date(2025, 10, 20),
    ),
    DemoMatter(
        "NOORDZEE-004",
        "NOORDZEE",
        "Schade exportkabel door baggerwerkzaamheden",
        "aansprakelijkheid",
        ("jbakker@firm.nl", "ldekker@firm.nl"),
        (_adverse("Baggermaatschappij De Schelde B.V."),),
        opened=date(2026, 1, 26),
    ),
    DemoMatter(
        "NOORDZEE-005",
        "NOORDZEE",
        "Bezwaar vaststelling SDE++-subsidie",
        "bestuursrecht",
        ("kdejong@firm.nl",),
        (_adverse("Rijksdienst voor Ondernemend Nederland"),),
        opened=date(2026, 8, 3),
    ),
    # Bakkerij Van der Linden: a shop lease, an allergen claim, a trade name
    DemoMatter(
        "VDLINDEN-001",
        "VDLINDEN",
        "Huurprijsherziening winkelruimte Hoogstraat 14",
        "huurrecht",
        ("mvanleeuwen@firm.nl", "ayilmaz@firm.nl"),
        (_adverse("Vastgoedfonds Hoogstraat C.V."),),
        opened=date(2025, 9, 1),
    ),
    DemoMatter(
        "VDLINDEN-002",
        "VDLINDEN",
        "Productaansprakelijkheid allergenen – regres op leverancier",
        "aansprakelijkheid",
        ("jbakker@firm.nl", "dhendriks@firm.nl"),
        (_adverse("Graanhandel De Hoop B.V."), _related("mw. S. Doğan")),
        opened=date(2026, 2, 23),
    ),
    DemoMatter(
        "VDLINDEN-003",
        "VDLINDEN",
        "Handelsnaam Bakkerij Van der Linde – inbreuk",
        "intellectuele eigendom",
        ("bdevries@firm.nl", "ldekker@firm.nl"),
        (_adverse("Broodbakkerij Van der Linde B.V."),),
        opened=date(2026, 4, 6),
    ),
    # The Zeeburg family (client-level wall on the parent)
    DemoMatter(
        "ZEEBURG-001",
        "ZEEBURG",
        "Herstructurering concern – juridische fusie 2025",
        "ondernemingsrecht",
        ("sjansen@firm.nl", "tvisser@firm.nl"),
        (),
        status="closed",
        opened=date(2024, 9, 2),
    ),
    DemoMatter(
        "ZEEBURG-002",
        "ZEEBURG",
        "Enquêteprocedure minderheidsaandeelhouder",
        "ondernemingsrecht",
        ("sjansen@firm.nl", "ldekker@firm.nl"),
        (_adverse("Stichting Administratiekantoor Familie Zeeburg"),),
        opened=date(2026, 3, 2),
    ),
    DemoMatter(
        "ZEEBURG-LOG-001",
        "ZEEBURG-LOG",
        "Verloren lading koelcontainers – vordering Frisco Foods",
        "contractenrecht",
        ("ldekker@firm.nl",),
        (_adverse("Frisco Foods B.V."),),
        opened=date(2025, 11, 24),
    ),
    DemoMatter(
        "ZEEBURG-LOG-002",
        "ZEEBURG-LOG",
        "Reorganisatie distributiecentrum Tilburg",
        "arbeidsrecht",
        ("evandenberg@firm.nl", "nsmit@firm.nl"),
        (),
        opened=date(2026, 6, 22),
    ),
    DemoMatter(
        "ZEEBURG-VAST-001",
        "ZEEBURG-VAST",
        "Gebreken koelhuis Moerdijk – huurprijsvermindering",
        "huurrecht",
        ("mvanleeuwen@firm.nl", "ayilmaz@firm.nl"),
        (_adverse("Koelhuis Moerdijk B.V."),),
        opened=date(2025, 6, 16),
    ),
    DemoMatter(
        "ZEEBURG-VAST-002",
        "ZEEBURG-VAST",
        "Huurachterstand en ontruiming Brasserie Havenkwartier",
        "huurrecht",
        ("mvanleeuwen@firm.nl", "ayilmaz@firm.nl"),
        (_adverse("Brasserie Het Havenkwartier B.V."),),
        opened=date(2026, 10, 19),
        opened_after_walls=True,
    ),
)

# --- walls --------------------------------------------------------------------------------

KLAASSEN_TEAM: tuple[str, ...] = tuple(
    sorted({p for m in MATTERS if m.client_id == "KLAASSEN" for p in m.team})
)

WALLS: tuple[DemoWall, ...] = (
    DemoWall(
        kind="exclusionary",
        title="Scherm zijinstromer B. de Vries – Medivers/Genova",
        reason=(
            "Mr. B. de Vries stond tot september 2026 bij Van Houten & Partners Genova "
            "Generics B.V. bij in het geschil over EP 2 471 839. Hij wordt afgeschermd van "
            "alle dossiers van Medivers tegen Genova (belangenconflict; geheimhoudingsplicht "
            "jegens de voormalige cliënt)."
        ),
        protects_matters=("MEDIVERS-001", "MEDIVERS-002"),
        screened=(LATERAL_HIRE,),
    ),
    DemoWall(
        kind="inclusionary",
        title="Project Tulp – need-to-know",
        reason=(
            "Vertrouwelijke voorgenomen overname van Warmtenet Zuiderveen B.V. door Noordzee "
            "Energie N.V. De verkoper, de gemeente Zuiderveen, is ook cliënt van het kantoor; "
            "beide cliënten hebben ingestemd op voorwaarde van een informatiebarrière. "
            "Toegang alleen voor het dealteam."
        ),
        protects_matters=("NOORDZEE-001", "NOORDZEE-002"),
        allowed=("sjansen@firm.nl", "tvisser@firm.nl"),
    ),
    DemoWall(
        kind="inclusionary",
        title="Zeeburg-concern – vast cliëntteam",
        reason=(
            "Op verzoek van de raad van bestuur van Zeeburg Holding B.V. (lopende "
            "enquêteprocedure en media-aandacht) zijn alle dossiers van het concern, ook "
            "later geopende dossiers van dochtermaatschappijen, alleen toegankelijk voor de "
            "relatiepartner en de leden van de Zeeburg-dossierteams."
        ),
        protects_clients=("ZEEBURG",),
        allowed=("mvanleeuwen@firm.nl",),
    ),
    DemoWall(
        kind="exclusionary",
        title="Aanbestedingsscherm renovatie stadhuis Zuiderveen (tot gunning)",
        reason=(
            "Bouwbedrijf Klaassen & Zonen B.V. (cliënt) schrijft mogelijk in op de "
            "aanbesteding waarover het kantoor de gemeente Zuiderveen adviseert. Van de "
            "publicatie tot de gunningsbeslissing worden de Klaassen-teams afgeschermd."
        ),
        protects_matters=("ZUIDERVEEN-003",),
        screened=KLAASSEN_TEAM,
        effective_from=datetime(2026, 10, 1, tzinfo=UTC),
        effective_until=datetime(2027, 4, 1, tzinfo=UTC),
    ),
)

# --- example searches (README) ------------------------------------------------------------

EXAMPLE_SEARCHES: list[ExampleSearch] = [
    {
        "title": "The lateral hire is screened from his former client's opponent",
        "query": "inbreuk retard-tablet medivastine Genova",
        "people": [DEMO_LAWYER, LATERAL_HIRE],
        "explanation": (
            "Lotte Dekker works on Medivers v. Genova and finds the claim chart, the "
            "pleitnota and the expert report. Bas de Vries acted for Genova at his previous "
            "firm; the exclusionary wall removes both Medivers/Genova matters from his "
            "search, so he only gets public law (EOV, Rijksoctrooiwet) and unwalled matters."
        ),
        "matters": ["MEDIVERS-001", "MEDIVERS-002"],
    },
    {
        "title": "Only the deal team sees Project Tulp",
        "query": "Project Tulp warmtenet koopprijs due diligence",
        "people": ["tvisser@firm.nl", DEMO_LAWYER],
        "explanation": (
            "Thijs Visser is on the deal team of the inclusionary Project Tulp wall and "
            "finds the due-diligence memo, the draft SPA and the deal e-mails. Lotte Dekker, "
            "who may see almost everything else, is not an insider: Tulp does not exist for "
            "her search."
        ),
        "matters": ["NOORDZEE-001", "NOORDZEE-002"],
    },
    {
        "title": "A client wall covers the whole corporate family, including new matters",
        "query": "huurachterstand ontruiming Havenkwartier",
        "people": ["mvanleeuwen@firm.nl", "jbakker@firm.nl"],
        "explanation": (
            "The wall protects the client Zeeburg Holding B.V., so it covers every matter "
            "of its subsidiaries, including the Havenkwartier eviction of Zeeburg Vastgoed "
            "that was opened after the wall was issued. Maarten van Leeuwen (relationship "
            "partner) finds it; Jeroen Bakker gets only other rent matters and public law."
        ),
        "matters": ["ZEEBURG-VAST-002"],
    },
]


def person(person_id: str) -> DemoPerson:
    for candidate in PEOPLE:
        if candidate.person_id == person_id:
            return candidate
    raise KeyError(person_id)


def matter(matter_id: str) -> DemoMatter:
    for candidate in MATTERS:
        if candidate.matter_id == matter_id:
            return candidate
    raise KeyError(matter_id)


def client(client_id: str) -> DemoClient:
    for candidate in CLIENTS:
        if candidate.client_id == client_id:
            return candidate
    raise KeyError(client_id)
