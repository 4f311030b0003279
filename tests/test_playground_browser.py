"""The playground's page in a real browser: the system's Chromium (Debian's package
``chromium``; pip cannot download browsers), driven by Playwright. Marked ``browser``, so the
README's test command leaves them out; CI installs Chromium and runs them with
``pytest -m browser``. Each run leaves a screenshot of the page in ``test-artifacts/`` (or
``$TINYNET_TEST_ARTIFACTS``)."""

from __future__ import annotations

import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from jupyter_lab import launched_chromium
from playground_server import WAIT, Served

from tinynet.packing import draw
from tinynet.playground import read_form
from tinynet.playground.payload import boundaries, extent
from tinynet.playground.watch import snapshot_epochs, unit_maps
from tinynet.snapshots import fit_snapshots
from tinynet.xor import build_network

pytestmark = pytest.mark.browser


ARTIFACTS = Path(os.environ.get("TINYNET_TEST_ARTIFACTS",
                                Path(__file__).resolve().parents[1] / "test-artifacts"))

SMALL = {"seeds": "36", "epochs": "500", "first": "2000"}
LONG = {"seeds": "1000", "hidden": "16,16", "epochs": "20000"}
MS = int(WAIT * 1000)


@pytest.fixture(scope="module")
def served():
    served = Served()
    yield served
    served.close()


@pytest.fixture(scope="module")
def browser():
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                  accept_downloads=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    yield page
    context.close()
    assert errors == [], f"the page's scripts failed: {errors}"


def trained(page, served, fields: dict) -> dict:
    """Open the page with ``fields`` in its address, press Train, wait until it is done, and
    return the study the server gave it."""
    page.goto(served.url + "?" + urlencode(fields))
    page.click("#train")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Done')",
                           timeout=MS)
    status, body, _ = served.request(page.get_attribute("#download-json", "href"))
    assert status == 200
    return json.loads(body)


def test_the_page_trains_a_study_and_shows_every_seed_and_the_apis_numbers(page, served):
    study = trained(page, served, SMALL)
    for letter, arm in zip("ab", study["arms"]):
        panels = page.locator(f"#grid-{letter} .seed")
        assert panels.count() == int(SMALL["seeds"])
        outcomes = panels.evaluate_all("nodes => nodes.map(n => n.dataset.outcome)")
        assert outcomes == arm["outcomes"]
        low, high = arm["interval"]
        assert page.inner_text(f"#rate-{letter}") == \
            f"{100 * arm['rate']:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"
        assert page.inner_text(f"#solved-{letter}") == f"{arm['successes']} of {arm['n']}"
    assert page.locator("#grid-a .seed.differs").count() == len(study["differ"])
    assert study["verdict"] in page.inner_text("#comparison")
    assert page.locator("#curves canvas").count() == 2
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "playground.png", full_page=True)


def test_clicking_a_seed_shows_it_up_close(page, served):
    study = trained(page, served, SMALL)
    page.locator("#grid-b .seed").nth(5).click()
    assert page.inner_text("#detail-title") == f"Seed {int(SMALL['first']) + 5}"
    assert page.locator("#detail canvas.large").count() == 2
    layers = len(study["sizes"]) - 1
    assert page.locator("#detail table.weights").count() == 2 * 2 * layers  # arms x as init/trained
    page.screenshot(path=ARTIFACTS / "playground-seed.png", full_page=True)


RESIDUAL = {"hidden": "8,8,8", "residual": "standard", "norm": "pre", "seeds": "16",
            "epochs": "100", "first": "3"}


def test_a_residual_study_shows_its_blocks_moments_beside_the_grid(page, served):
    """Pre-norm blocks chosen in the form: the moments table names each layer and block, its
    numbers are the API's, and a seed up close shows its four dense layers' weights and its
    blocks' LayerNorm gains and biases."""
    page.goto(served.url)
    page.wait_for_function("document.querySelector('[name=residual]').options.length > 1",
                           timeout=MS)  # the menus fill once the server's options arrive
    assert page.locator("[name=residual] option").evaluate_all(
        "options => options.map(o => o.value)") == ["", "standard", "rezero", "fixup", "deepnet"]
    page.select_option("[name=residual]", "standard")
    page.select_option("[name=norm]", "pre")
    page.fill("[name=hidden]", RESIDUAL["hidden"])
    for name in ("seeds", "epochs", "first"):
        page.fill(f"[name={name}]", RESIDUAL[name])
    page.click("#train")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Done')",
                           timeout=MS)
    status, body, _ = served.request(page.get_attribute("#download-json", "href"))
    study = json.loads(body)
    assert study["fields"]["residual"] == "standard" and study["fields"]["norm"] == "pre"
    table = page.locator("#moments table.moments")
    heads = table.locator("thead th").evaluate_all("cells => cells.map(c => c.textContent)")
    assert heads == ["initializer", "", "layer 1 (8)", "block 1 (8)", "block 2 (8)",
                     "output (1)"]
    rows = table.locator("tbody tr")
    assert rows.count() == 4  # measured and predicted, per arm
    for a, arm in enumerate(study["arms"]):
        measured = rows.nth(2 * a).locator("td").evaluate_all(
            "cells => cells.map(c => c.textContent)")
        assert measured[:2] == [arm["name"], "measured"]
        for shown, moment in zip(measured[2:], arm["moments"], strict=True):
            numbers = [float(number) for number in re.findall(r"[-+.\de]+", shown)]
            assert numbers[0] == pytest.approx(moment["mean"], rel=5e-3)  # shown to 3 digits
            q1, _, q3 = moment["quartiles"]
            assert numbers[1:] == pytest.approx([q1, q3], rel=5e-2)  # and to 2
        predicted = rows.nth(2 * a + 1).locator("td").evaluate_all(
            "cells => cells.map(c => c.textContent)")
        assert predicted[0] == "predicted" and predicted[1] == predicted[-1] == "–"
        assert [float(v) for v in predicted[2:-1]] == pytest.approx(
            arm["predicted_moments"][1:-1], rel=1e-2)  # shown to 3 digits
    page.locator("#grid-a .seed").nth(2).click()
    captions = page.locator("#detail table.weights caption").evaluate_all(
        "captions => captions.map(c => c.textContent)")
    # per arm, as initialised and as trained: four dense layers, then each block's γ and β
    assert len(captions) == 2 * 2 * (4 + 2 * 2)
    assert captions[4:8] == ["block 1: LayerNorm γ (8)", "block 1: LayerNorm β (8)",
                             "block 2: LayerNorm γ (8)", "block 2: LayerNorm β (8)"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "playground-residual.png", full_page=True)


DIGITS = {"data": "digits", "seeds": "16", "epochs": "3", "batch": "32", "lr": "0.1",
          "activation": "relu", "loss": "cross_entropy", "a": "normal(std=0.01)"}


def test_the_digits_show_every_seeds_test_accuracy_and_a_seeds_confusion_matrix(page, served):
    study = trained(page, served, DIGITS)
    assert page.inner_text("#grid-title") == "Every seed's test accuracy"
    for letter, arm in zip("ab", study["arms"]):
        tiles = page.locator(f"#grid-{letter} .seed")
        assert tiles.count() == 16
        assert tiles.evaluate_all("nodes => nodes.map(n => n.dataset.outcome)") == arm["outcomes"]
        assert page.inner_text(f"#solved-{letter}") == f"{arm['successes']} of {arm['n']}"
        q1, median, q3 = arm["accuracy_quartiles"]
        assert page.inner_text(f"#accuracy-{letter}") == \
            f"{100 * median:.1f} % [{100 * q1:.1f}, {100 * q3:.1f}]"
    assert study["verdict"] in page.inner_text("#comparison")
    page.locator("#grid-b .seed").nth(3).click()
    assert page.inner_text("#detail-title") == "Seed 3"
    matrices = page.locator("#detail table.confusion")
    assert matrices.count() == 2
    counts = matrices.nth(1).locator("tbody td").evaluate_all(
        "cells => cells.map(c => Number(c.textContent))")
    assert sum(counts) == 355  # every test image, in one cell of its row
    assert page.locator("#detail figure canvas").count() == 2
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "playground-digits.png", full_page=True)


def test_stop_stops_a_long_study(page, served):
    trained(page, served, {**SMALL, "seeds": "4"})
    for name, value in LONG.items():
        page.fill(f"[name={name}]", value)
    page.click("#train")
    page.wait_for_function("/Training|Compiling/.test(document.getElementById('status')"
                           ".textContent)", timeout=MS)
    assert page.is_visible("#progress")
    page.click("#stop")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Stopped.')",
                           timeout=MS)
    assert page.is_disabled("#stop") and page.is_hidden("#progress")
    assert page.locator("#grid-a .seed").count() == 4  # the last results stay


def test_a_refused_field_shows_the_servers_message_beside_it(page, served):
    trained(page, served, {**SMALL, "seeds": "4"})
    page.fill("[name=epochs]", "lots")
    message = page.locator('.error[data-error-for="epochs"]')
    message.wait_for(state="visible", timeout=MS)
    assert message.inner_text().startswith("epochs must be an integer")
    page.click("#train")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Not "
                           "started')", timeout=MS)
    assert page.get_attribute("[name=epochs]", "aria-invalid") is not None


def test_the_address_holds_the_settings_and_reproduces_the_study(page, served, browser):
    first = trained(page, served, {**SMALL, "seeds": "9"})
    page.fill("[name=epochs]", "300")
    page.select_option("[name=b]", "xavier_uniform")
    page.click("#train")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Done')"
                           " && document.getElementById('describe').textContent"
                           ".includes('300 epochs')", timeout=MS)
    query = dict(parse_qsl(urlsplit(page.url).query, keep_blank_values=True))
    assert query == {**SMALL, "seeds": "9", "epochs": "300", "b": "xavier_uniform"}
    again = browser.new_context().new_page()
    again.goto(page.url)
    again.click("#train")
    again.wait_for_function("document.getElementById('status').textContent.startsWith('Done')",
                            timeout=MS)
    assert again.input_value("[name=epochs]") == "300"
    assert again.inner_text("#rate-b") == page.inner_text("#rate-b")
    assert first["arms"][1]["name"] == "B: he_normal"


def test_the_address_takes_the_words_the_server_takes(page, served):
    study = trained(page, served, {**SMALL, "seeds": "4", "shuffle": "Yes"})
    assert page.is_checked("[name=shuffle]")
    assert study["fields"]["shuffle"] == "1"


def test_the_downloaded_html_file_shows_the_study_offline(page, served, browser, tmp_path):
    study = trained(page, served, SMALL)
    with page.expect_download() as download:
        page.click("#download-html")
    saved = tmp_path / "study.html"
    download.value.save_as(saved)
    context = browser.new_context(offline=True)
    requests = []
    context.on("request", lambda request: requests.append(request.url))
    offline = context.new_page()
    errors = []
    offline.on("pageerror", lambda error: errors.append(error))
    offline.goto(saved.as_uri())
    offline.wait_for_selector("#grid-a .seed", timeout=MS)
    assert offline.locator("#grid-b .seed").count() == int(SMALL["seeds"])
    assert offline.inner_text("#rate-a") == page.inner_text("#rate-a")
    assert offline.is_hidden("#train")
    offline.locator("#grid-a .seed").nth(2).click()
    assert offline.inner_text("#detail-title") == f"Seed {int(SMALL['first']) + 2}"
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == []
    assert errors == []
    assert study["seeds"] == int(SMALL["seeds"])
    offline.screenshot(path=ARTIFACTS / "playground-offline.png", full_page=True)
    context.close()


def studies_of(served) -> int:
    """How many studies the server has been asked for."""
    return served.server.trainer._next_id - 1


def test_a_link_fills_the_form_but_only_train_starts_the_study(page, served):
    before = studies_of(served)
    page.goto(served.url + "?" + urlencode({**SMALL, "seeds": "7", "epochs": "300"}))
    page.wait_for_function("document.querySelector('[name=seeds]').value === '7'", timeout=MS)
    assert page.input_value("[name=epochs]") == "300"
    assert page.inner_text("#status") == "Press Train to run this study."
    page.wait_for_load_state("networkidle")  # the form checked, and nothing else asked
    assert studies_of(served) == before
    page.click("#train")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Done')",
                           timeout=MS)
    assert studies_of(served) == before + 1
    assert page.locator("#grid-a .seed").count() == 7


class Stranger:
    """Another origin (another port) on this machine, serving one page that frames the
    playground at ``target`` and asks it for a study three ways: a JSON fetch (which needs a
    preflight), a fetch that needs none, and a form's POST."""

    PAGE = """<!DOCTYPE html><html><body>
<iframe id="framed" src="{target}?seeds=1000&epochs=20000&optimizer=adam" width="400"
  height="300" onload="window.framedLoaded = true"></iframe>
<iframe name="sink" width="10" height="10"></iframe>
<form id="post" method="POST" action="{target}api/studies" enctype="text/plain" target="sink">
  <input name='{{"seeds": "1000", "x": "' value='"}}'></form>
<script>
const fields = JSON.stringify({{seeds: "1000", epochs: "20000"}});
window.results = [];
fetch("{target}api/studies", {{method: "POST", headers: {{"Content-Type":
  "application/json"}}, body: fields}}).then((r) => results.push("json " + r.status),
  (e) => results.push("json refused"));
fetch("{target}api/studies", {{method: "POST", mode: "no-cors", body: fields}})
  .then((r) => results.push("no-cors " + r.type), (e) => results.push("no-cors refused"));
document.getElementById("post").submit();
</script></body></html>"""

    def __init__(self, target: str) -> None:
        page = self.PAGE.format(target=target).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://localhost:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_another_origin_can_neither_frame_the_page_nor_start_a_study(browser, served):
    stranger = Stranger(served.url)
    context = browser.new_context()
    try:
        page = context.new_page()
        before = studies_of(served)
        def posted_form(response) -> bool:
            return response.url == f"{served.url}api/studies" and \
                response.request.resource_type == "document"

        with page.expect_response(posted_form, timeout=MS) as form:
            page.goto(stranger.url)
        page.wait_for_function("window.framedLoaded === true", timeout=MS)  # loaded or refused
        framed = page.locator("#framed").element_handle().content_frame()
        assert framed.url.startswith("chrome-error://")  # refused: the browser's error page
        assert page.frame_locator("#framed").locator("#train").count() == 0  # not rendered
        assert form.value.status == 403  # another origin's POST (and text/plain, not JSON)
        page.wait_for_function("window.results.length === 2", timeout=MS)
        assert "json refused" in page.evaluate("window.results")  # no preflight answered
        assert studies_of(served) == before
    finally:
        context.close()
        stranger.close()


WATCHED = {"seeds": "16", "epochs": "300", "first": "40", "data": "moons", "n": "60",
           "shuffle": "1"}


def snapshots_here(fields: dict, seed: int) -> list:
    """Per arm: (network, snapshots) of ``seed`` of the study of ``fields``, recorded in this
    process by tinynet.snapshots.fit_snapshots with the study's settings."""
    form = read_form(fields)
    setup, found = form.setup, []
    X, y = setup.task.training_data()
    for arm in form.arms:
        like = build_network(setup, arm, seed)
        found.append((like, fit_snapshots(
            like, draw(like, [seed]), X, y, seeds=[seed], at=snapshot_epochs(setup.epochs),
            epochs=setup.epochs, lr=setup.lr, batch_size=setup.batch_size,
            shuffle=arm.shuffle, update=arm.update, loss=arm.loss, optimizer=arm.optimizer)))
    return found


def pixel(page, selector: str, row: int, column: int) -> list[int]:
    """The colour of pixel (row, column) of the canvas at ``selector``, as its bytes say."""
    return page.eval_on_selector(selector, "(canvas, [r, c]) => Array.from(canvas"
                                 ".getContext('2d').getImageData(c, r, 1, 1).data.slice(0, 3))",
                                 [row, column])


def test_a_seed_clicked_replays_its_training_as_the_snapshot_api_recorded_it(page, served):
    """The drawn weights (each line's value and width) and the unit and output maps at
    several positions of the scrubber are those of fit_snapshots' snapshots of that seed."""
    trained(page, served, WATCHED)
    page.locator("#grid-a .seed").nth(5).click()
    page.wait_for_selector("#scrub", timeout=MS)
    seed = 45
    expected = snapshots_here(WATCHED, seed)
    box = extent(read_form(WATCHED).setup.task.training_data()[0])
    colour = "b => window.playground.outputColour(b, 255)"
    last = len(expected[0][1].epochs) - 1
    for t in (0, 3, 17, last):
        page.eval_on_selector("#scrub", "(s, t) => { s.value = t; "
                              "s.dispatchEvent(new Event('input')); }", t)
        assert page.get_attribute("#watch", "data-epoch") == str(expected[0][1].epochs[t])
        assert f"epoch {expected[0][1].epochs[t]:,} of 300" in page.inner_text("#watch-epoch")
        for letter, (like, shots) in zip("ab", expected):
            theta = shots.theta[t, 0]
            lines = page.locator(f"#network-{letter} line").evaluate_all(
                "lines => lines.map(l => [Number(l.dataset.layer), Number(l.dataset.from), "
                "Number(l.dataset.to), Number(l.dataset.value), "
                "Number(l.getAttribute('stroke-width'))])")
            assert len(lines) == 2 * 8 + 8 * 1
            for layer, i, o, value, width in lines:
                W = like.layers[layer]
                at = sum(lay.W.size + lay.b.size for lay in like.layers[:layer])
                assert value == theta[at + o * W.n_in + i]  # float64, every bit
                assert width == pytest.approx(0.5 + 5.5 * min(1, abs(value) / 3), abs=1e-3)
            maps, _ = unit_maps(shots.theta[:, 0], like, box)
            for unit, (row, column) in ((0, (0, 0)), (3, (12, 7)), (7, (23, 20))):
                drawn = pixel(page, f"#network-{letter} canvas.unit[data-unit='{unit}']",
                              row, column)
                assert drawn == page.evaluate(colour, int(maps[0][t, unit, row, column]))
            output = boundaries(shots.theta[:, 0], like, box)
            for row, column in ((0, 0), (20, 20), (39, 5)):
                drawn = pixel(page, f"#network-{letter} canvas.output-map", row, column)
                assert drawn == page.evaluate(colour, int(output[t, row, column]))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#watch").screenshot(path=ARTIFACTS / "playground-watch.png")


def test_at_1280_by_720_both_grids_are_in_view(browser, served):
    """A projector's screen: the default study's two grids lie inside the viewport."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(served.url)
        page.click("#train")
        page.wait_for_function("document.getElementById('status').textContent"
                               ".startsWith('Done')", timeout=MS)
        page.evaluate("window.scrollTo(0, 0)")  # the click scrolled to Train: the page's top
        for letter in "ab":
            box = page.locator(f"#grid-{letter}").bounding_box()
            assert box["x"] >= 0 and box["y"] >= 0, box
            assert box["x"] + box["width"] <= 1280 and box["y"] + box["height"] <= 720, box
            assert page.locator(f"#grid-{letter} .seed").count() == 100
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=ARTIFACTS / "playground-1280x720.png")
    finally:
        context.close()


def test_past_100_seeds_the_grids_show_a_page_at_a_time_and_moons_reads_accuracy(page,
                                                                                 served):
    study = trained(page, served, {"seeds": "150", "epochs": "100", "data": "moons",
                                   "n": "40"})
    assert page.locator("#pages button").all_inner_texts() == ["0–99", "100–149"]
    assert page.locator("#grid-a .seed").count() == 100
    page.click("#pages button[data-page='1']")
    tiles = page.locator("#grid-b .seed")
    assert tiles.count() == 50 and tiles.first.get_attribute("data-seed") == "100"
    assert tiles.evaluate_all("nodes => nodes.map(n => n.dataset.outcome)") == \
        study["arms"][1]["outcomes"][100:]
    heads = page.locator("table.numbers thead th").all_inner_texts()
    assert "training accuracy: median [quartiles]" in heads and "below 95%" in heads
    assert "3+ wrong" not in heads
    q1, median, q3 = study["arms"][0]["accuracy_quartiles"]
    assert page.inner_text("#accuracy-a") == \
        f"{100 * median:.1f} % [{100 * q1:.1f}, {100 * q3:.1f}]"
