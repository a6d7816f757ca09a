"""The computer-use tools in real Chromium: snapshots with stable refs, actions, and their
failures as results (browser tier), plus how the browser binary is found."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from looplab.agents.computer_use.agent import computer_use_toolbox
from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.chromium import require_chromium
from looplab.errors import PrerequisiteError
from looplab.latency.presets import resolve_profile
from looplab.sandboxes.browser import BrowserConfig, BrowserSession
from looplab.sandboxes.local import LocalSandbox
from looplab.tasks import load_task
from looplab.tools.base import ToolContext

PAGE = b"""<!doctype html><title>Form</title><h1>Order</h1>
<label>Name <input name="n"></label>
<label>Size <select name="s"><option>Small</option><option>Large</option></select></label>
<button onclick="document.body.insertAdjacentHTML('afterbegin', '<p>Added</p>')">Add</button>
"""


FETCHING = b"""<!doctype html><title>Inbox</title><main id=m><p>Loading</p></main>
<button id=more>More</button>
<script>
function show(url) {
  fetch(url).then(function (r) { return r.json(); }).then(function (data) {
    if (data.next) { show(data.next); return; }
    document.getElementById('m').innerHTML = '<h1>' + data.title + '</h1>';
  });
}
show('/api/slow?title=Fetched');
document.getElementById('more').onclick = function () { show('/api/chain'); };
</script>
"""
SLOW_API_S = 0.4
"""Delay of the fetching page's data endpoints."""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/api/"):
            time.sleep(SLOW_API_S)
            chained = self.path == "/api/chain"
            body = (
                {"next": "/api/slow?title=Chained"}
                if chained
                else {"title": self.path.partition("=")[2]}
            )
            self._send(200, "application/json", json.dumps(body).encode())
            return
        pages = {"/": PAGE, "/fetching": FETCHING}
        page = pages.get(self.path)
        self._send(200 if page else 404, "text/html", page or b"<h1>Not found</h1>")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """A one-page site on the host's loopback."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
async def context() -> AsyncIterator[ToolContext]:
    """A browser session and an (unused) sandbox."""
    browser = await BrowserSession.start()
    try:
        async with await LocalSandbox.create() as sandbox:
            yield ToolContext(sandbox=sandbox, browser=browser)
    finally:
        await browser.close()


async def _call(context: ToolContext, name: str, **arguments: object) -> tuple[bool, str]:
    result = await computer_use_toolbox(screenshots=True).call(name, json.dumps(arguments), context)
    return result.ok, result.content


def _ref(snapshot: str, head: str) -> str:
    line = next(line for line in snapshot.splitlines() if line.strip().startswith(head))
    return line.split("[ref=")[1].split("]")[0]


@pytest.mark.browser
async def test_snapshot_refs_are_stable_and_actions_use_them(
    context: ToolContext, site: str
) -> None:
    """Refs survive a DOM change; type/select/click act through them and say so."""
    ok, first = await _call(context, "goto", url=f"{site}/")
    assert ok and first.startswith("HTTP 200\nPage: Form (")
    name, size, add = (_ref(first, h) for h in ('- textbox "Name"', "- combobox", '- button "Add"'))
    ok, text = await _call(context, "type", ref=name, text="Ada")
    assert ok and text == f"Typed 3 characters into {name}."
    ok, text = await _call(context, "select", ref=size, value="Large")
    assert ok and text.startswith(f"Selected Large in {size}.")
    ok, text = await _call(context, "click", ref=add)
    assert ok and "Added" in text
    assert _ref(text, '- textbox "Name"') == name and _ref(text, '- button "Add"') == add


@pytest.mark.browser
async def test_snapshots_wait_for_the_pages_own_data_requests(
    context: ToolContext, site: str
) -> None:
    """A page built from a slow fetch after `load` is described once it is built, also when
    a click starts a chain of fetches (each started by the previous one's callback)."""
    ok, page = await _call(context, "goto", url=f"{site}/fetching")
    assert ok and '- heading "Fetched"' in page and "Loading" not in page
    ok, text = await _call(context, "click", ref=_ref(page, '- button "More"'))
    assert ok and '- heading "Chained"' in text


@pytest.mark.browser
async def test_bad_refs_and_browser_errors_are_results(context: ToolContext, site: str) -> None:
    """An unknown ref answers at once; a Playwright error and an HTTP 404 are ok=False."""
    ok, page = await _call(context, "goto", url=f"{site}/")
    ok, text = await _call(context, "click", ref="e999")
    assert not ok and "take a new snapshot" in text
    ok, text = await _call(context, "type", ref=_ref(page, '- button "Add"'), text="x")
    assert not ok and text.startswith("browser error:")
    ok, text = await _call(context, "goto", url=f"{site}/missing")
    assert not ok and text.startswith("HTTP 404")


@pytest.mark.browser
async def test_screenshot_returns_a_png(context: ToolContext, site: str) -> None:
    """screenshot gives the model an image (PNG bytes) besides a line of text."""
    await _call(context, "goto", url=f"{site}/")
    result = await computer_use_toolbox(screenshots=True).call("screenshot", "{}", context)
    assert result.ok and result.image is not None and result.image.startswith(b"\x89PNG")


@pytest.mark.browser
async def test_coding_agent_can_browse_docs_in_the_browser() -> None:
    """browse_via: browser opens the docs in Chromium through the published port."""
    fast = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]
    with SimulatorServer(resolve_profile("fast-750", fast)) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
        async with InstrumentedClient(endpoint) as client:
            run = await run_task(
                load_task("coding/fix-discount"),
                client,
                agent_config=AgentConfig(browse_via="browser"),
            )
    assert run.solved and run.result.end_reason == "finish"
    assert run.browser_start_s > 0


def test_missing_explicit_chromium_names_the_fix() -> None:
    """An executable that is not there is a PrerequisiteError that says how to install one."""
    with pytest.raises(PrerequisiteError, match="apt-get install -y chromium"):
        require_chromium(BrowserConfig(executable="/nonexistent/chromium").executable)


@pytest.mark.browser
async def test_trace_screenshots_are_opt_in(context: ToolContext, site: str) -> None:
    """Only with trace_screenshots does an action keep a JPEG; a snapshot never does."""
    plain = await computer_use_toolbox().call("goto", json.dumps({"url": f"{site}/"}), context)
    kept = computer_use_toolbox(trace_screenshots=True)
    goto = await kept.call("goto", json.dumps({"url": f"{site}/"}), context)
    snap = await kept.call("snapshot", "{}", context)
    assert plain.ok and plain.trace_image is None
    assert goto.ok and (goto.trace_image or b"").startswith(b"\xff\xd8") and goto.image is None
    assert snap.ok and snap.trace_image is None


@pytest.mark.browser
def test_bench_browser_times_each_capture() -> None:
    """`looplab bench browser` measures the snapshot, the trace JPEG and the PNG for real."""
    from looplab.bench.browser import run_browser_bench

    rows = run_browser_bench(3)
    assert [r.name.split(",")[0] for r in rows] == [
        "aria snapshot (every action)",
        "trace screenshot",
        "screenshot tool",
        "observation aria",
        "observation screenshot",
        "observation marks",
        "observation dom",
    ]
    assert all(0 < r.p50_ms <= r.p95_ms and r.bytes_p50 > 1000 for r in rows)
