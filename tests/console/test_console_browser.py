"""The console end to end in headless Chromium, one browser session against the real app on a
real port with its re-tag worker running:

- a lawyer's token opens no console page;
- the conflicts partner signs in and, with the keyboard only, fills in the issue-wall form,
  previews the impact and issues a wall screening the lawyer from a matter; a form posted
  without its CSRF token is refused; the lawyer's next API search no longer returns it;
- compliance signs in, finds that search and the earlier one, opens one, exports the filter.

Each main page is saved as a screenshot in docs/console/ (the README shows them). Needs
Debian's ``chromium`` and ``chromium-driver`` and selenium; nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.browser import WAIT_S, chromium, require_chromium, served
from tests.conftest import DbHandle, Tokens, make_client
from tests.console.conftest import COMPLIANCE, LAWYER, PARTNER, build_firm

# The README's screenshots: rewritten only when asked (`make screenshots`), so that a test run
# leaves the working tree clean; otherwise they go to a temporary folder.
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"
UPDATE_SHOTS = os.environ.get("EWALL_UPDATE_SCREENSHOTS") == "1"
QUERY = "lekkage magazijn huurovereenkomst dak"

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def _chromium() -> None:
    require_chromium()


def _detached(element: Any) -> bool:
    """True once ``element``'s page has been replaced. Chromium reports a detached node
    either as a stale element or as an inspector error, both WebDriverExceptions."""
    from selenium.common.exceptions import WebDriverException

    try:
        element.is_enabled()
    except WebDriverException:
        return True
    return False


@pytest.fixture
def server_url(db: DbHandle, settings: Settings, embedder: Any, auth: Tokens) -> Iterator[str]:
    from app.main import create_app

    with make_client(db, settings, embedder) as client:
        build_firm(client, auth)
    app = create_app(settings, db.database, embedder=embedder, start_worker=True)
    with served(app, "console-server") as url:
        yield url


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    folder = tmp_path / "downloads"
    folder.mkdir()
    return folder


@pytest.fixture
def browser(tmp_path: Path, downloads: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with chromium(
        tmp_path / "chromium-profile", monkeypatch, window="1280,1000", downloads=downloads
    ) as driver:
        yield driver


def _api_search(url: str, auth: Tokens, person: str) -> dict[str, Any]:
    response = httpx.post(
        f"{url}/v1/search",
        json={"query": QUERY, "k": 10},
        headers=auth(person, "lawyer"),
        timeout=WAIT_S,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_partner_issues_a_wall_and_compliance_finds_the_searches(
    server_url: str, browser: Any, downloads: Path, auth: Tokens, tmp_path: Path
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    # a page that is replaced while a condition reads it is simply read again
    wait = WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,))
    shots = SHOTS if UPDATE_SHOTS else tmp_path / "shots"
    shots.mkdir(parents=True, exist_ok=True)

    def keys(*values: str) -> None:
        ActionChains(browser).send_keys(*values).perform()

    def focused_id() -> str:
        return str(browser.switch_to.active_element.get_attribute("id"))

    def text_appears(fragment: str) -> None:
        def shown(d: Any) -> bool:
            try:
                return fragment in d.find_element(By.TAG_NAME, "body").text
            except WebDriverException as exc:
                # Chromium's form of a stale element: the body was replaced while being read
                if "does not belong to the document" in str(exc):
                    return False
                raise

        wait.until(shown)

    def sign_in(person: str, role: str) -> None:
        browser.get(f"{server_url}/console/signin")
        field = wait.until(ec.visibility_of_element_located((By.ID, "token")))
        assert browser.switch_to.active_element == field
        keys(auth(person, role)["Authorization"].removeprefix("Bearer "), Keys.ENTER)
        # the form's navigation must finish before the test navigates on its own (else the
        # sign-in's redirect can land after, and replace, the next page the test opens)
        wait.until(lambda _driver: _detached(field))

    def shot(name: str) -> None:
        assert browser.save_screenshot(str(shots / f"{name}.png")), name

    earlier = _api_search(server_url, auth, LAWYER)
    assert "M-2" in {r["matter_id"] for r in earlier["results"]}

    # a lawyer's token opens no console page
    sign_in(LAWYER, "lawyer")
    text_appears("has no console pages")
    browser.get(f"{server_url}/console/walls")
    wait.until(ec.visibility_of_element_located((By.ID, "token")))
    assert "/console/signin" in browser.current_url

    # the conflicts partner: the walls list, then the issue-wall form by keyboard only
    sign_in(PARTNER, "conflicts")
    wait.until(ec.visibility_of_element_located((By.ID, "walls")))
    shot("walls")
    browser.get(f"{server_url}/console/walls/new")
    wait.until(lambda d: focused_id() == "kind")  # the form starts with the focus in it
    keys(Keys.TAB, "Screen Lena from the Acme lease")
    assert focused_id() == "title"
    keys(Keys.TAB, "Lena advised the landlord before she joined")
    assert focused_id() == "reason"
    keys(Keys.TAB, "M-2")
    assert focused_id() == "matters"
    keys(Keys.TAB)
    assert focused_id() == "clients"
    keys(Keys.TAB, LAWYER)
    assert focused_id() == "screened"
    keys(Keys.ESCAPE)  # closes the suggestion list, as a keyboard user would
    order = []
    for _ in range(20):
        keys(Keys.TAB)
        order.append(focused_id())
        if order[-1] == "preview-button":
            break
    assert order[0] == "allowed" and order[-1] == "preview-button"
    assert {"include_team", "effective_from", "effective_until"} <= set(order)
    shot("issue-form")
    keys(Keys.ENTER)
    changes = wait.until(ec.visibility_of_element_located((By.ID, "access-changes")))
    assert LAWYER in changes.text and "M-2" in changes.text and "loses access" in changes.text
    assert "1 chunk(s) to re-tag" in browser.find_element(By.ID, "retag-summary").text
    shot("preview")
    assert focused_id() == "issue-button"
    keys(Keys.ENTER)
    wait.until(ec.visibility_of_element_located((By.ID, "issued")))
    text_appears("Re-tagging done")  # the page refreshes itself while the worker runs
    wall_id = browser.current_url.rstrip("/").split("/")[-1].split("?")[0]
    shot("wall")

    # the lawyer's next search no longer returns the matter
    later = _api_search(server_url, auth, LAWYER)
    assert "M-2" not in {r["matter_id"] for r in later["results"]}

    # a form posted without its CSRF token is refused (the token removed as an attacker's
    # page would lack it), and nothing is lifted
    browser.execute_script("document.querySelector('#lift-form input[name=csrf]').remove()")
    browser.find_element(By.ID, "lift-reason").send_keys("no token")
    browser.find_element(By.CSS_SELECTOR, "#lift-form button").click()
    text_appears("security token is missing or stale")
    wall = httpx.get(
        f"{server_url}/v1/walls/{wall_id}", headers=auth(PARTNER, "conflicts"), timeout=WAIT_S
    ).json()
    assert wall["lifted_at"] is None

    browser.get(f"{server_url}/console/access?person_id={LAWYER}&matter_id=M-2")
    wait.until(ec.visibility_of_element_located((By.ID, "decision")))
    assert "may not" in browser.find_element(By.ID, "decision").text
    shot("access")
    browser.find_element(By.CSS_SELECTOR, "form.signout button").click()
    wait.until(ec.visibility_of_element_located((By.ID, "token")))

    # compliance finds both searches, opens one and exports the filter
    sign_in(COMPLIANCE, "compliance")
    browser.get(f"{server_url}/console/audit?person_id={LAWYER}")
    table = wait.until(ec.visibility_of_element_located((By.ID, "retrievals")))
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 2 and all(QUERY in r.text for r in rows)
    assert "Audit chains verified" in browser.find_element(By.ID, "chain-banner").text
    shot("audit")
    rows[-1].find_element(By.TAG_NAME, "a").click()  # the earlier search
    wait.until(ec.visibility_of_element_located((By.ID, "results")))
    assert earlier["retrieval_id"] in browser.page_source
    assert "M-2" in browser.find_element(By.ID, "results").text
    shot("retrieval")
    browser.back()
    browser.find_element(By.ID, "export-jsonl").click()
    deadline = time.monotonic() + WAIT_S
    files: list[Path] = []
    while time.monotonic() < deadline:
        files = list(downloads.glob("*.jsonl"))
        if files and not list(downloads.glob("*.crdownload")):
            break
        time.sleep(0.1)
    assert len(files) == 1
    exported = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert [x["retrieval_id"] for x in exported] == [
        later["retrieval_id"],
        earlier["retrieval_id"],
    ]
    browser.get(f"{server_url}/console/audit/matter?matter_id=M-2")
    wait.until(ec.visibility_of_element_located((By.ID, "timeline")))
    shot("matter")

    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    # the only refusals are the 403s this test asked for (lawyer sign-in, the CSRF post)
    assert all("403" in e.get("message", "") for e in errors), errors
