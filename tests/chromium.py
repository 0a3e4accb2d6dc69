"""A headless Chromium driven over the Chrome DevTools Protocol, standard library only.

The browser is started with ``--remote-debugging-pipe``: it reads commands from its fd 3 and
writes replies and events to its fd 4, each a JSON object followed by a NUL byte. A one-line
Python trampoline moves our two pipe ends (passed with ``pass_fds``) onto fds 3 and 4 and
execs the browser, so no ``preexec_fn`` runs in a forked copy of a threaded interpreter.

    with Chromium.launch(profile_dir) as browser:
        page = browser.open(Path("report.html").as_uri(), width=1280)
        page.evaluate("document.title")
        page.screenshot("desktop.png")
        page.console_errors, page.requests, page.dialogs

Used by ``tests/corpus/test_report.py``; ``find()`` returns ``None`` where no Chromium is installed.
"""

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCREENS = Path(os.environ.get("GRADEKIT_SCREENS") or Path(tempfile.gettempdir()) / "gradekit-report-screens")
"""Where the browser tests leave their screenshots, to look at: ``$GRADEKIT_SCREENS``, else a folder in the temporary
folder (never the repository)."""

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
# Runs in the child: our pipe ends (argv 1, 2; both above fd 9) become fds 3 and 4, then the browser.
TRAMPOLINE = (
    "import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); os.dup2(w, 4); "
    "os.close(r); os.close(w); os.execv(sys.argv[3], sys.argv[3:])"
)


class CDPError(RuntimeError):
    """The browser answered a command with an error, closed the pipe, or did not answer in time."""


def find():
    """The path of a Chromium executable, or ``None``."""
    override = os.environ.get("GRADEKIT_CHROMIUM")
    if override:
        return override if shutil.which(override) else None
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """One browser process and its protocol pipe."""

    def __init__(self, process, to_browser, from_browser, timeout):
        self.process = process
        self._out = to_browser
        self._in = from_browser
        self._buffer = b""
        self._next_id = 0
        self.timeout = timeout
        self.events = []
        """Every event received, as ``(sessionId, method, params)``."""

    @classmethod
    def launch(cls, user_data_dir, *, executable=None, timeout=60.0):
        executable = executable or find()
        if executable is None:
            raise FileNotFoundError("no Chromium executable found (looked for: " + ", ".join(NAMES) + ")")
        cmd_r, cmd_w = os.pipe()  # we write commands; the browser reads them on its fd 3
        evt_r, evt_w = os.pipe()  # the browser writes replies on its fd 4; we read them
        # Lift the browser's ends above fd 9 so that moving them onto fds 3 and 4 cannot clobber one.
        child_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(evt_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(evt_w)
        args = [executable, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"]
        process = subprocess.Popen(
            [sys.executable, "-c", TRAMPOLINE, str(child_r), str(child_w), *args],
            pass_fds=(child_r, child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(child_r)
        os.close(child_w)
        return cls(process, cmd_w, evt_r, timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the protocol ------------------------------------------------------------------------------
    def send(self, method, params=None, *, session=None):
        """Send one command and wait for its reply; events that arrive meanwhile go to ``events``."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode("utf-8") + b"\0"
        while data:
            written = os.write(self._out, data)
            data = data[written:]
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))

    def wait_for(self, method, *, session=None, timeout=None):
        """Wait until event ``method`` (for ``session``) has arrived; return its params."""
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = 0
        while True:
            for sid, name, params in self.events[seen:]:
                if name == method and (session is None or sid == session):
                    return params
            seen = len(self.events)
            reply = self._receive(deadline)
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))

    def pump(self, seconds):
        """Collect events for ``seconds`` (late console messages, requests)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                reply = self._receive(deadline)
            except CDPError:
                return
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))

    def _receive(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for the browser")
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise CDPError(f"the browser closed the pipe (exit status {self.process.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    # -- pages -------------------------------------------------------------------------------------
    def open(self, url, *, width=1280, height=900, mobile=False, scale=1):
        """A new tab showing ``url`` (loaded), with console, log, network and dialogs recorded."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        page.resize(width, height, mobile=mobile, scale=scale)
        page.navigate(url)
        return page

    def close(self):
        if self.process.poll() is None:
            try:
                self.send("Browser.close")
            except (CDPError, OSError):
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self._out, self._in):
            try:
                os.close(fd)
            except OSError:
                pass


class Page:
    """One tab: navigation, evaluation, screenshots, and what it logged or requested."""

    def __init__(self, browser, target, session):
        self.browser, self.target, self.session = browser, target, session

    def _events(self, method):
        return [p for sid, name, p in self.browser.events if sid == self.session and name == method]

    def send(self, method, params=None):
        return self.browser.send(method, params, session=self.session)

    def navigate(self, url):
        before = len(self._events("Page.loadEventFired"))
        reply = self.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise CDPError(f"navigating to {url}: {reply['errorText']}")
        deadline = time.monotonic() + self.browser.timeout
        handled = 0
        while True:
            # A dialog blocks the page until answered: dismiss it (it stays listed in ``dialogs``).
            for _ in self.dialogs[handled:]:
                self.send("Page.handleJavaScriptDialog", {"accept": False})
                handled += 1
            if len(self._events("Page.loadEventFired")) > before:
                break
            if time.monotonic() > deadline:
                raise CDPError(f"{url} did not finish loading")
            self.browser.pump(0.05)
        self.browser.pump(0.3)  # late console messages

    def resize(self, width, height, *, mobile=False, scale=1):
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": int(width), "height": int(height), "deviceScaleFactor": scale, "mobile": mobile},
        )

    def evaluate(self, expression):
        """The value of a JavaScript expression (JSON-serialisable results only)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise CDPError(f"evaluating {expression[:80]!r}: {reply['exceptionDetails'].get('text')}")
        return reply["result"].get("value")

    def screenshot(self, path, *, full_page=True):
        """Save a PNG of the page (the whole scroll height when ``full_page``)."""
        if full_page:
            metrics = self.send("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            width = self.evaluate("window.innerWidth")
            height = max(1, min(int(size["height"]) + 1, 16000))
            clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
            data = self.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True})[
                "data"
            ]
        else:
            data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))
        return path

    @property
    def console_errors(self):
        """Console errors, uncaught exceptions and error log entries (CSP violations among them)."""
        out = []
        for p in self._events("Runtime.consoleAPICalled"):
            if p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        for p in self._events("Runtime.exceptionThrown"):
            details = p.get("exceptionDetails", {})
            out.append("exception: " + str(details.get("exception", {}).get("description") or details.get("text")))
        for p in self._events("Log.entryAdded"):
            entry = p.get("entry", {})
            if entry.get("level") == "error":
                out.append(f"log ({entry.get('source')}): {entry.get('text')}")
        return out

    @property
    def requests(self):
        """The URL of every request the page made (the document itself included)."""
        return [p["request"]["url"] for p in self._events("Network.requestWillBeSent")]

    @property
    def dialogs(self):
        """Every alert/confirm/prompt the page opened."""
        return [p.get("message", "") for p in self._events("Page.javascriptDialogOpening")]
