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
    options.add_argument("--window-size=1280,900")
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

    conflict = browser.find_element(By.CSS_SELECTOR, "tr[data-patch='tail'] td[data-release='1.4']")
    detail = browser.find_element(By.ID, "detail")
    assert not detail.is_displayed()  # details on demand
    conflict.click()
    assert detail.is_displayed() and "pkg/tail.py" in detail.text and "conflict" in detail.text
    assert "tail @ 1.4" in detail.text and browser.current_url.endswith("#c-9")
    browser.find_element(By.ID, "close").click()
    assert not detail.is_displayed()

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


def _box(browser: Any, selector: str) -> dict[str, float]:
    box: dict[str, float] = browser.execute_script(
        "const r=document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {left:r.left,right:r.right};",
        selector,
    )
    return box


def test_many_releases_scroll_between_fixed_patch_and_summary_columns(
    browser: Any, tmp_path: Path
) -> None:
    """At 1280 px with 21 releases: the table scrolls inside its box, the patch column stays
    at the left and `absorbed by` / `broke in` at the right, all on screen, scrolled or not."""
    import dataclasses

    from selenium.webdriver.common.by import By

    m = Releases(tmp_path / "world").matrix(releases="v1.0..v1.4")
    releases = tuple(f"1.{i}" for i in range(21))
    failed = {"cpu": {"result": "failed", "stale": False}}
    cells = tuple(
        dataclasses.replace(
            m.cells[0], patch=r.patch, release=rel, verified=failed if rel == "1.3" else None
        )
        for r in m.rows
        for rel in releases
    )
    page = tmp_path / "wide.html"
    page.write_text(render_html(dataclasses.replace(m, releases=releases, cells=cells)))
    browser.get(page.as_uri())
    width = browser.execute_script("return window.innerWidth")
    assert width <= 1280
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    scroller = browser.find_element(By.CSS_SELECTOR, ".scroll")
    for left in (0, 10_000):
        browser.execute_script("arguments[0].scrollLeft=arguments[1]", scroller, left)
        patch = _box(browser, "tr[data-patch='tail'] th.patch")
        absorbed = _box(browser, "tr[data-patch='tail'] td.s1")
        broke = _box(browser, "tr[data-patch='tail'] td.s2")
        assert 0 <= patch["left"] < 60 and patch["right"] < absorbed["left"]
        assert absorbed["right"] <= broke["left"] + 1 and broke["right"] <= width
    assert browser.execute_script("return arguments[0].scrollLeft", scroller) > 0
    failing = browser.find_element(By.CSS_SELECTOR, "td.cell.fail")
    assert "repeating-linear-gradient" in failing.value_of_css_property("background-image")
    browser.find_element(By.CSS_SELECTOR, "tr[data-patch='bump'] td[data-release='1.20']").click()
    assert "bump @ 1.20" in browser.find_element(By.ID, "detail").text
    shot = _artifacts(tmp_path) / "matrix-page-1280.png"
    assert browser.save_screenshot(str(shot))


def test_hostile_patch_text_stays_text_and_filters_still_work(browser: Any, tmp_path: Path) -> None:
    """`<!--<script>` in a set name, a title and a detail (issue 24's case): no script runs,
    the detail shows the text as it is, the filters still hide and show the rows."""
    import dataclasses

    from selenium.webdriver.common.by import By

    evil = "x<!--<script>window.pwned=1</script>'\"&"
    m = Releases(tmp_path / "world").matrix(releases="v1.0..v1.4")
    rows = tuple(dataclasses.replace(r, title=evil, set=evil) for r in m.rows)
    cells = tuple(dataclasses.replace(c, detail={"message": evil}) for c in m.cells)
    page = tmp_path / "evil.html"
    page.write_text(render_html(dataclasses.replace(m, rows=rows, cells=cells)))
    browser.get(page.as_uri())
    assert browser.execute_script("return window.pwned === undefined")
    browser.find_element(By.CSS_SELECTOR, "td.cell").click()
    assert evil in browser.find_element(By.CSS_SELECTOR, "#detail pre.message").text
    boxes = browser.find_elements(By.CSS_SELECTOR, "input.f-set")
    assert [b.get_attribute("value") for b in boxes] == [evil]
    boxes[0].click()
    assert browser.find_element(By.ID, "shown").text == "0"
    boxes[0].click()
    assert browser.find_element(By.ID, "shown").text == "3"
