#!/usr/bin/env python3
"""Open a `wss report --html` page in headless Chromium and say what it shows
(tests/integration/html.sh, bench/html.sh).  The DevTools protocol over
--remote-debugging-pipe (JSON messages ended by NUL on fds 3 and 4), so
nothing beyond the standard library is needed.

  browser.py PAGE.html [--click-peak N] [--screenshot PNG] [--width W]
                       [--height H] [--timeout S] [--select-proc N]
                       [--sort-alloc COLUMN]
      prints "key value" lines: errors (console errors and exceptions, each
      also as an "error ..." line), rendered_ms (the page's own clock, from
      navigation to drawn), load_ms (this driver's, from navigate to drawn),
      peaks, threads, procs, proc_labels (the session tree's, "|" between
      them), diagnosis (the first paragraph's text), flame_nodes, hot,
      hot_gone, heatmap, hint,
      heatmap_y, heatmap_x, heatmap_key (the heat map's axis labels, "|"
      between them, and its key's values),
      zoom_ms (one wheel step on the timeline to the second frame after it),
      then for --click-peak the text of the peak's details ("detail ..."
      lines) after a real mouse click on its marker; for --sort-alloc
      the first allocation site after a click on that column's header
      (alloc_first_sorted) and the leaf of the widest stack of the flame
      graph by idle pages (flame_alloc_top); with --screenshot
      the viewport as PNG, and its size and number of colours
  browser.py png PNG    prints "width W", "height H", "colors N"

Exit status: 0 when the page rendered, 1 when it did not (or Chromium
failed), 77 when there is no Chromium.
"""
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, timeout):
        exe = chromium()
        if not exe:
            raise SystemExit(77)
        self.profile_dir = tempfile.mkdtemp(prefix="wss-chromium.")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Without the background-networking flags it stalls on a closed
        # network; --no-sandbox because the tests run as root.
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
                 "--user-data-dir=" + self.profile_dir, "--remote-debugging-pipe", "about:blank"]
        cmd = 'exec "$0" "$@" 3<&%d 4>&%d' % (to_chrome_r, from_chrome_w)
        self.log = open(os.path.join(self.profile_dir, "stderr.log"), "wb")
        self.proc = subprocess.Popen(["sh", "-c", cmd, exe] + flags, pass_fds=(to_chrome_r, from_chrome_w),
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.timeout = timeout
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False, wait=False)
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)
        self.log.close()
        shutil.rmtree(self.profile_dir, ignore_errors=True)

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            r, _, _ = select.select([self.from_chrome], [], [], left)
            if r:
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, wait=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        """Collect events for a while."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read(deadline))
        except TimeoutError:
            pass

    def wait_event(self, method, seconds):
        deadline = time.monotonic() + seconds
        for m in self.events:
            if m.get("method") == method:
                return m
        while True:
            m = self._read(deadline)
            if "method" in m:
                self.events.append(m)
                if m["method"] == method:
                    return m

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %r: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def errors(self):
        out = []
        for m in self.events:
            p = m.get("params", {})
            if m.get("method") == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s %s" % (d.get("text", ""), d.get("exception", {}).get("description", "")))
            elif m.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
            elif m.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s" % p["entry"].get("text", ""))
        return out

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left" if kind != "mouseMoved" else "none",
                                                   "clickCount": 1 if kind != "mouseMoved" else 0})


def png_info(path):
    """Width, height and the number of distinct colours of an 8-bit RGB(A)
    PNG, unfiltered here with zlib alone."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
    if depth != 8 or ctype not in (2, 6):
        raise SystemExit("%s: colour type %d depth %d not handled" % (path, ctype, depth))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    colors = set()
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        # Every 4th pixel of the row is enough to count colours.
        for x in range(0, stride, bpp * 4):
            colors.add(bytes(line[x:x + 3]))
        prev = line
    return w, h, len(colors)


def main(argv):
    if len(argv) >= 2 and argv[0] == "png":
        w, h, n = png_info(argv[1])
        print("width %d\nheight %d\ncolors %d" % (w, h, n))
        return 0
    opts = {"--click-peak": None, "--sort-alloc": None, "--screenshot": None, "--width": "1280", "--height": "900", "--timeout": "60",
            "--select-proc": None}
    page = None
    it = iter(argv)
    for a in it:
        if a in opts:
            opts[a] = next(it)
        elif page is None:
            page = a
        else:
            raise SystemExit("usage: browser.py PAGE.html [options]")
    if not page:
        raise SystemExit("usage: browser.py PAGE.html [options]")
    timeout = float(opts["--timeout"])
    b = Browser(timeout)
    status = 1
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        b.session = b.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            b.send(m)
        b.send("Emulation.setDeviceMetricsOverride", {"width": int(opts["--width"]), "height": int(opts["--height"]),
                                                       "deviceScaleFactor": 1, "mobile": False})
        t0 = time.monotonic()
        b.send("Page.navigate", {"url": "file://" + os.path.abspath(page)})
        b.wait_event("Page.loadEventFired", timeout)
        rendered = None
        deadline = time.monotonic() + timeout
        while rendered is None and time.monotonic() < deadline:
            rendered = b.eval("document.documentElement.getAttribute('data-wss-rendered')")
            if rendered is None:
                time.sleep(0.05)
        load_ms = (time.monotonic() - t0) * 1000
        if opts["--select-proc"] is not None:
            b.eval("document.querySelector('.wss-proc[data-proc=\"%s\"]').click()" % opts["--select-proc"])
        b.pump(0.3)
        probes = {
            "peaks": "document.querySelectorAll('.wss-peak').length",
            "threads": "document.querySelectorAll('.wss-thread-series').length",
            "thread_strip_rows": "(function(){var c=document.querySelector('.wss-thread-strip');return c?+c.getAttribute('height'):0})()",
            "procs": "document.querySelectorAll('.wss-proc').length",
            "procs_with_profile": "document.querySelectorAll('.wss-proc:not(.none)').length",
            "proc_labels": "Array.from(document.querySelectorAll('.wss-proc')).map(function(e){return e.textContent}).join('|')",
            "diagnosis": "(function(){var e=document.querySelector('p.diagnosis');return e?e.textContent.replace(/\\u00a0/g,' '):''})()",
            "flame_nodes": "document.querySelectorAll('.wss-flame-node').length",
            "hot": "document.querySelectorAll('tr.wss-hot').length",
            "hot_gone": "document.querySelectorAll('tr.wss-hot.gone').length",
            "heatmap": "document.querySelectorAll('#heatmap').length",
            "heatmap_y": "Array.from(document.querySelectorAll('.wss-heat-y')).map(function(e){return e.textContent}).join('|')",
            "heatmap_x": "Array.from(document.querySelectorAll('.wss-heat-x')).map(function(e){"
                         "return Array.from(e.children).map(function(s){return s.textContent}).join(' ')}).join('|')",
            "heatmap_key": "Array.from(document.querySelectorAll('.wss-heat-key [data-touches]')).map(function(e){"
                           "return e.getAttribute('data-touches')}).join(',')",
            "curves": "document.querySelectorAll('svg.curve').length",
            "hint": "document.querySelectorAll('#analyses .hint').length",
            "settings": "document.querySelectorAll('#settings tr').length",
            "summary_rows": "document.querySelectorAll('#summary tr[data-series]').length",
            "alloc_rows": "document.querySelectorAll('tr.wss-alloc').length",
            "alloc_first": "(function(){var e=document.querySelector('tr.wss-alloc summary');return e?e.textContent:''})()",
        }
        print("rendered_ms %s" % (rendered if rendered is not None else "none"))
        print("load_ms %d" % load_ms)
        for k, expr in probes.items():
            print("%s %s" % (k, b.eval(expr)))
        print("summary_text %s" % b.eval("(document.getElementById('summary')||{}).innerText||''").replace("\n", " | ").replace("\t", " "))
        if opts["--click-peak"]:
            n = opts["--click-peak"]
            # A different peak's details are shown first, so the click must
            # change them; the centre of its marker's flag.
            b.eval("document.getElementById('timeline').scrollIntoView()")
            rect = b.eval("(function(){var e=document.querySelector('.wss-peak[data-peak=\"%s\"] path');"
                          "if(!e)return null;var r=e.getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2]})()" % n)
            if rect:
                b.eval("document.getElementById('peak-detail').textContent=''")
                b.click(rect[0], rect[1])
                b.pump(0.3)
                text = b.eval("document.getElementById('peak-detail').innerText")
                for line in text.splitlines():
                    print("detail %s" % line)
                print("flame_selected %s" % b.eval("document.getElementById('flame-select').value"))
            else:
                print("detail (no marker for peak %s)" % n)
        if opts["--sort-alloc"]:
            # A click on a column's header sorts the sites by it, largest
            # first; then the flame graph by idle pages.
            b.eval("document.querySelector('#alloc-sites th[data-sort=\"%s\"]').click()" % opts["--sort-alloc"])
            b.pump(0.2)
            print("alloc_first_sorted %s" % b.eval("(function(){var e=document.querySelector('tr.wss-alloc summary');return e?e.textContent:''})()"))
            b.eval("(function(){var s=document.getElementById('flame-select');s.value='alloc:idle';s.dispatchEvent(new Event('change'))})()")
            b.pump(0.2)
            # The deepest frame of the widest stack: its leaf (the frame
            # that called the allocator).
            print("flame_alloc_top %s" % b.eval("(function(){var v=[];document.querySelectorAll('.wss-flame-node:not(.root)').forEach("
                                                 "function(d){v.push([parseFloat(d.style.top),parseFloat(d.style.width.replace('calc(','')),d.textContent])});"
                                                 "v.sort(function(a,c){return c[0]-a[0]||c[1]-a[1]});return v.length?v[0][2]:''})()"))
        if opts["--screenshot"]:
            b.eval("window.scrollTo(0,0)")
            shot = b.send("Page.captureScreenshot", {"format": "png"})
            import base64
            with open(opts["--screenshot"], "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            w, h, n = png_info(opts["--screenshot"])
            print("screenshot %dx%d colors %d" % (w, h, n))
        # One wheel step on the timeline: from the event to the next frame
        # drawn after it (every time chart and the thread strip redraw).
        print("zoom_ms %s" % b.eval("""new Promise(function (done) {
            var c = document.querySelector('#timeline canvas');
            if (!c) return done(-1);
            var r = c.getBoundingClientRect(), t0 = performance.now();
            c.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: r.left + r.width / 2, clientY: r.top + 50, bubbles: true, cancelable: true}));
            requestAnimationFrame(function () { requestAnimationFrame(function () { done(Math.round(performance.now() - t0)); }); });
        })"""))
        b.pump(0.2)
        errs = b.errors()
        print("errors %d" % len(errs))
        for e in errs:
            print("error %s" % e.replace("\n", " "))
        status = 0 if rendered is not None else 1
    except (TimeoutError, EOFError, RuntimeError) as e:
        print("failure %s" % e)
        try:
            with open(os.path.join(b.profile_dir, "stderr.log"), "rb") as f:
                for line in f.read().decode(errors="replace").splitlines()[-15:]:
                    print("chromium %s" % line)
        except OSError:
            pass
    finally:
        b.close()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
