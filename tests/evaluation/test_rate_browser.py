"""The rating page end to end in headless Chromium: the real app on a real port, sign in
with a token, rate three results with the keyboard only, find the ratings in the database.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium
chromium-driver``) and selenium from PyPI. Nothing is downloaded: the browser and the
driver are the system's, given by path, and Selenium Manager is told to stay offline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app.evaluation import sets
from app.evaluation.repository import QueryIn
from app.settings import Settings
from tests.browser import WAIT_S, chromium, require_chromium, served
from tests.conftest import DbHandle, Tokens, make_client
from tests.helpers import Firm, retag

RATER = "lisa@firm.nl"
SCREENED = "bram@firm.nl"

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def _chromium() -> None:
    require_chromium()


@pytest.fixture
def firm_data(db: DbHandle, settings: Settings, embedder: Any, auth: Tokens) -> None:
    """Documents behind and outside a wall, and a two-query set, made through the API."""
    with make_client(db, settings, embedder) as client:
        f = Firm(client, auth)
        for p in (RATER, SCREENED):
            f.person(p)
        f.client_("C-7", "Bouwcombinatie Noord B.V.")
        f.matter("M-70", "C-7", title="Lekkage nieuwbouw")
        f.matter("M-71", "C-7", title="Geheim dossier")
        f.wall(kind="exclusionary", protects={"matters": ["M-71"]}, screened=[RATER])
        bodies = [
            "De aannemer erkent de lekkage bij het kozijn van de tweede verdieping.",
            "Het kozijn is volgens de deskundige ondeugdelijk afgekit; lekkage volgt daaruit.",
            "Na regen ontstaat lekkage langs de aansluiting van kozijn en gevel.",
            "De opdrachtgever stelt de aannemer in gebreke wegens de lekkage.",
        ]
        for i, body in enumerate(bodies):
            f.document(
                f"brief-{i}",
                body,
                client_id="C-7",
                matter_id="M-70",
                title=f"Brief {i} <i>over</i> lekkage",
            )
        f.document(
            "geheim-1",
            "Geheim: lekkage kozijn schikking aannemer honderdduizend.",
            client_id="C-7",
            matter_id="M-71",
            title="Geheime schikking",
        )
        retag(client)
    with db.database.transaction() as conn:
        sets.import_queries(
            conn,
            "browser-set",
            "Browsertest",
            "tester",
            [
                QueryIn("b1", "lekkage kozijn aannemer"),
                QueryIn("b2", "ingebrekestelling opdrachtgever"),
            ],
        )


@pytest.fixture
def server_url(firm_data: None, db: DbHandle, settings: Settings, embedder: Any) -> Iterator[str]:
    from app.main import create_app

    app = create_app(settings, db.database, embedder=embedder, start_worker=False)
    with served(app, "rate-page-server") as url:
        yield url


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with chromium(tmp_path / "chromium-profile", monkeypatch, window="1280,1600") as driver:
        yield driver


def _judgements(db: DbHandle) -> list[tuple[str, int, str]]:
    with db.database.transaction() as conn:
        rows = conn.execute(
            text(
                "SELECT j.target_id, j.grade, j.judged_by FROM relevance_judgements j "
                "JOIN relevance_queries q USING (query_id) WHERE q.query_key = 'b1' "
                "ORDER BY j.target_id"
            )
        )
        return [(r.target_id, int(r.grade), r.judged_by) for r in rows]


def test_rate_three_results_with_the_keyboard(
    server_url: str, browser: Any, db: DbHandle, auth: Tokens
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_S)

    def keys(*values: str) -> None:
        # to whatever has the focus, as a person at the keyboard would
        ActionChains(browser).send_keys(*values).perform()

    def status_contains(fragment: str) -> None:
        wait.until(ec.text_to_be_present_in_element((By.ID, "status"), fragment))

    browser.get(f"{server_url}/rate")
    token_field = wait.until(ec.visibility_of_element_located((By.ID, "token")))
    assert browser.switch_to.active_element == token_field  # focus starts in the field
    token = auth(RATER, "lawyer")["Authorization"].removeprefix("Bearer ")
    keys(token, Keys.ENTER)

    # the sets appear and the first one has the focus: Enter opens it
    first_set = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#set-list button")))
    assert "browser-set" in first_set.text
    wait.until(lambda d: d.switch_to.active_element == first_set)
    keys(Keys.ENTER)
    status_contains("Vraag 1 geladen")
    assert browser.find_element(By.ID, "query-title").text == "lekkage kozijn aannemer"
    items = browser.find_elements(By.CSS_SELECTOR, "#results > li")
    assert len(items) == 4  # the walled document is not among them
    assert "Geheime schikking" not in browser.page_source
    assert "geheim-1" not in browser.page_source
    # titles arrive as text, never as markup
    assert "<i>over</i>" in items[0].find_element(By.CLASS_NAME, "title").text
    shown = [li.find_element(By.CLASS_NAME, "meta").text.split(" · ")[-1] for li in items]

    # j/k move, 0-3 rate the selected result and move on
    keys("j", "k")
    keys("3")
    keys("2")
    keys("1")
    deadline = time.monotonic() + WAIT_S
    while len(_judgements(db)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    stored = _judgements(db)
    assert len(stored) == 3
    by_document = {sets.document_of_chunk(target): (grade, who) for target, grade, who in stored}
    assert by_document == {shown[0]: (3, RATER), shown[1]: (2, RATER), shown[2]: (1, RATER)}
    wait.until(lambda d: d.find_element(By.ID, "progress-text").text.startswith("1 van 2"))

    # n: the next query; ?: the help; p: back, with the grades shown as pressed buttons
    keys("n")
    status_contains("Vraag 2 geladen")
    assert browser.find_element(By.ID, "query-title").text == "ingebrekestelling opdrachtgever"
    keys("?")
    wait.until(lambda d: d.find_element(By.ID, "help").get_attribute("open") is not None)
    keys(Keys.ESCAPE)
    wait.until(lambda d: d.find_element(By.ID, "help").get_attribute("open") is None)
    keys("p")
    status_contains("Vraag 1 geladen")
    pressed = [
        li.find_element(By.CSS_SELECTOR, "button[aria-pressed='true']").text
        for li in browser.find_elements(By.CSS_SELECTOR, "#results > li")[:3]
    ]
    assert [p[0] for p in pressed] == ["3", "2", "1"]
    labels = [
        b.get_attribute("aria-label")
        for b in browser.find_elements(By.CSS_SELECTOR, "#result-0 button")
    ]
    assert labels[3] == "Cijfer 3, zeer relevant, voor resultaat 1"
    # the page's own style applied (allowed by its CSP hash), and nothing was refused
    title = browser.find_element(By.CSS_SELECTOR, "header h1")
    assert title.value_of_css_property("font-size") != "32px"
    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == []
