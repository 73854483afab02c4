"""Screenshots of a real campaign's HTML coverage report in headless Chromium.

Runs ``secant fuzz`` on a contract, opens ``coverage/index.html`` and the first source page
with a just-missed branch in headless Chromium driven through chromedriver (the W3C
WebDriver protocol, spoken over HTTP on the loopback interface with the standard library),
hovers the just-missed mark so its tooltip (the closest input, the remaining distance)
shows, and saves both screenshots with the campaign's coverage plot into ``--images``. It
prints the top of the frontier, which docs/reports.md quotes with the images.

Needs Debian's ``chromium`` and ``chromium-driver``::

    .venv/bin/python bench/report_screenshot.py examples/contracts/StatefulMaze.sol \
        --execs 20000 --seed 0 --images docs/img
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class WebDriver:
    """The few WebDriver commands this script needs, over HTTP to a local chromedriver."""

    def __init__(self, binary: str, width: int, height: int) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen([binary, f"--port={self.port}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                self._call("GET", "/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("chromedriver did not start within 20 s") from None
                time.sleep(0.1)
        options = {"args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                            f"--window-size={width},{height}"]}
        chromium = shutil.which("chromium")
        if chromium is not None:
            options["binary"] = chromium
        session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})
        self.session = f"/session/{session['sessionId']}"

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as error:
            detail = json.loads(error.read() or b"{}").get("value", {})
            raise SystemExit(f"WebDriver {method} {path}: {detail.get('message', error)}"
                             ) from None

    def open(self, url: str) -> None:
        self._call("POST", f"{self.session}/url", {"url": url})

    def script(self, code: str, *args: Any) -> Any:
        return self._call("POST", f"{self.session}/execute/sync",
                          {"script": code, "args": list(args)})

    def hover(self, element: dict[str, str]) -> None:
        origin = element
        self._call("POST", f"{self.session}/actions", {"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": origin,
                         "x": 0, "y": 0}]}]})

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self._call("GET", f"{self.session}/screenshot")))

    def close(self) -> None:
        try:
            self._call("DELETE", self.session)
        finally:
            self.process.terminate()
            self.process.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("contract", help="a .sol file or project secant fuzz takes")
    parser.add_argument("--execs", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--images", type=Path, required=True,
                        help="folder for coverage-index.png, coverage-source.png, "
                             "coverage-plot.png")
    parser.add_argument("--out", type=Path, default=None,
                        help="the campaign's output folder (default: a temporary one)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=860)
    args = parser.parse_args()
    driver_binary = shutil.which("chromedriver")
    if driver_binary is None:
        raise SystemExit("chromedriver not found: apt-get install chromium chromium-driver")
    out = args.out or Path(tempfile.mkdtemp(prefix="secant-report-")) / "out"
    command = [sys.executable, "-c", "from secant.cli.main import app; app(prog_name='secant')",
               "fuzz", args.contract, "--execs", str(args.execs), "--seed", str(args.seed),
               "--out", str(out), "--force", "--quiet"]
    print("$", "bin/secant", *command[3:])
    subprocess.run(command, check=True, cwd=ROOT)
    index = (out / "coverage" / "index.html").resolve()
    args.images.mkdir(parents=True, exist_ok=True)
    driver = WebDriver(driver_binary, args.width, args.height)
    try:
        driver.open(index.as_uri())
        driver.screenshot(args.images / "coverage-index.png")
        page = next((p for p in sorted((out / "coverage").glob("*.html"))
                     if p.name != "index.html" and 'class="side jm"' in p.read_text()), None)
        if page is None:
            print("no source page has a just-missed branch: no hover screenshot")
        else:
            driver.open(page.resolve().as_uri())
            # The frontier's first entry when it is on this page, else a just-missed side in
            # the user's code rather than a check the compiler inserted.
            frontier = json.loads((out / "frontier.json").read_text())
            line = frontier[0]["line"] if frontier else 0
            mark = driver.script(
                "const top = document.querySelector('#L' + arguments[0] + ' span.side.jm');"
                "const marks = Array.from(document.querySelectorAll('span.side.jm'));"
                "return top || marks.find(m => !m.textContent.includes(\"compiler's\")) "
                "|| marks[0];", line)
            # The mark a third of the way down the window, the tooltip below it in view.
            # Room below the last line, so that a mark near the end can be scrolled up.
            driver.script("document.body.style.paddingBottom = window.innerHeight + 'px';"
                          "const r = arguments[0].getBoundingClientRect();"
                          "window.scrollBy(0, r.top - window.innerHeight / 3);", mark)
            driver.hover(mark)
            driver.screenshot(args.images / "coverage-source.png")
    finally:
        driver.close()
    shutil.copyfile(out / "coverage.png", args.images / "coverage-plot.png")
    print(f"images in {args.images}: coverage-index.png, coverage-source.png, "
          "coverage-plot.png")
    frontier = json.loads((out / "frontier.json").read_text())
    print(f"frontier: {len(frontier)} just-missed branch sides; the first:")
    print(json.dumps(frontier[:1], indent=1))


if __name__ == "__main__":
    main()
