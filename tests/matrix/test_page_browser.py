"""The matrix page in a real browser: headless Chromium from the distribution's packages, driven
by Selenium pointed at that binary and its driver (nothing is downloaded). Checks the DOM (cells,
details, filters when clicked) and keeps a screenshot as a test artifact (``$PATCHKIT_ARTIFACTS``,
else pytest's temporary directory). A missing Chromium fails the test: CI installs it
(``scripts/ci_browser.sh``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from patchkit.matrix.page import render_html
from testing.matrix import Releases

pytestmark = pytest.mark.browser


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"no {names[0]} on PATH: run scripts/ci_browser.sh (apt-get install chromium)")


@pytest.fixture
def browser() -> Iterator[Any]:
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never try to download a browser
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: pip install -e '.[dev]'")
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument("--window-size=1400,900")
    service = Service(executable_path=_binary("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


def _artifacts(tmp_path: Path) -> Path:
    where = Path(os.environ.get("PATCHKIT_ARTIFACTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def test_page_cells_details_and_filters_in_chromium(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    rel = Releases(tmp_path / "world")
    page = tmp_path / "matrix.html"
    page.write_text(render_html(rel.matrix(releases="v1.0..v1.4")))
    browser.get(page.as_uri())

    def visible_rows() -> list[str]:
        rows = browser.find_elements(By.CSS_SELECTOR, "tr.row")
        return [r.get_attribute("data-patch") for r in rows if r.is_displayed()]

    cells = browser.find_elements(By.CSS_SELECTOR, "td.cell")
    assert len(cells) == 15 and all(c.is_displayed() for c in cells)
    colours = {
        c.get_attribute("data-outcome"): c.value_of_css_property("background-color") for c in cells
    }
    assert len(set(colours.values())) == len(colours) == 4  # one colour per outcome
    assert visible_rows() == ["bump", "tail", "other"]

    conflict = browser.find_element(
        By.CSS_SELECTOR, "tr[data-patch='tail'] td[data-release='1.4'] a"
    )
    conflict.click()
    detail = browser.find_element(By.ID, browser.current_url.split("#")[1])
    assert detail.is_displayed() and "pkg/tail.py" in detail.text and "conflict" in detail.text

    for outcome in ("applied", "carried", "upstreamed"):
        browser.find_element(By.ID, f"f-outcome-{outcome}").click()
    assert visible_rows() == ["tail"]
    dim = browser.find_elements(By.CSS_SELECTOR, "tr[data-patch='tail'] td.cell.dim")
    assert len(dim) == 4
    assert browser.find_element(By.ID, "shown").text == "1"

    browser.find_element(By.ID, "f-outcome-applied").click()
    browser.find_element(By.ID, "f-set-demo").click()
    assert visible_rows() == []
    browser.find_element(By.ID, "f-set-demo").click()
    assert visible_rows() == ["bump", "tail", "other"]

    browser.execute_script("window.scrollTo(0, 0)")
    shot = _artifacts(tmp_path) / "matrix-page.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
