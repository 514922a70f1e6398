#!/usr/bin/env python3
"""How fast `polybook explore` answers: the API for one position, at the server and through
loopback, and how soon the page is usable in headless Chromium.

Starts `polybook explore BOOK --port 0`, then
- sends N `GET /api/probe?fen=FEN` requests one after the other, over one kept-alive connection
  and over a new connection each, and reports the median and p99 of the round trip (from writing
  the request to having read the whole answer) and of the server's own time, which it sends in its
  `Server-Timing: app;dur=MS` header (routing, the probe of each book, the JSON);
- loads the page L times in headless Chromium (selenium, the system chromedriver) and reports
  the median of the page's Performance mark `explore-usable` (board drawn and the book moves of
  the start position shown, in ms from the start of navigation);
- with `--tally T.parquet`, the same for `GET /api/tally?fen=FEN` over the positions of a line
  (each a lookup in the tally's file: its row groups' key ranges, one row group decoded).

    cargo build --release
    python3 bench/explore_latency.py                            # gnuchess.bin, after 1. e4
    python3 bench/explore_latency.py --requests 5000 --loads 20 --book books/bundled.bin
    python3 bench/explore_latency.py --tally gnuchess.parquet --loads 0   # polybook tally GAMES -o …
"""

import argparse
import http.client
import statistics
import subprocess
import time
import urllib.parse


def quantiles(values):
    values = sorted(values)
    return statistics.median(values), values[min(len(values) - 1, int(len(values) * 0.99))]


def server_ms(response):
    timing = response.getheader("Server-Timing") or ""
    return float(timing.split("dur=")[1])


def api(host, port, target, requests, keep_alive):
    round_trips, at_server = [], []
    conn = http.client.HTTPConnection(host, port)
    for _ in range(requests):
        if not keep_alive:
            conn = http.client.HTTPConnection(host, port)
        start = time.perf_counter()
        conn.request("GET", target)
        response = conn.getresponse()
        body = response.read()
        round_trips.append((time.perf_counter() - start) * 1000)
        assert response.status == 200 and body[:1] in (b"[", b"{"), body[:200]
        at_server.append(server_ms(response))
        if not keep_alive:
            conn.close()
    return round_trips, at_server


def page(url, loads):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    usable = []
    try:
        for _ in range(loads):
            driver.get(url)
            end = time.time() + 10
            mark = None
            while mark is None and time.time() < end:
                mark = driver.execute_script(
                    "const m = performance.getEntriesByName('explore-usable'); return m.length ? m[0].startTime : null")
                time.sleep(0.01)
            assert mark is not None, "the page never became usable"
            usable.append(mark)
    finally:
        driver.quit()
    return usable


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="target/release/polybook")
    parser.add_argument("--book", default="tests/data/books/gnuchess.bin")
    parser.add_argument("--fen", default="rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--tally", help="a tally (.parquet) to measure /api/tally on as well")
    parser.add_argument("--line", default="e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6",
                        help="the moves whose positions /api/tally is asked for, in turn")
    args = parser.parse_args()

    tally = ["--tally", args.tally] if args.tally else []
    server = subprocess.Popen([args.binary, "explore", args.book, *tally, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        parts = urllib.parse.urlsplit(url)
        target = "/api/probe?fen=" + urllib.parse.quote(args.fen)
        print(f"{args.book}, {args.fen}, {args.requests} requests each")
        for keep_alive in (True, False):
            api(parts.hostname, parts.port, target, 100, keep_alive)  # warm-up
            trips, at_server = api(parts.hostname, parts.port, target, args.requests, keep_alive)
            (t50, t99), (s50, s99) = quantiles(trips), quantiles(at_server)
            how = "one kept-alive connection" if keep_alive else "a new connection each"
            print(f"{how}: at the server median {s50 * 1000:.0f} µs (p99 {s99 * 1000:.0f} µs); "
                  f"through loopback median {t50 * 1000:.0f} µs (p99 {t99 * 1000:.0f} µs)")
        if args.tally:
            moves = args.line.split()
            targets = ["/api/tally?moves=" + urllib.parse.quote(" ".join(moves[:n])) for n in range(len(moves) + 1)]
            print(f"/api/tally on {args.tally}, the {len(targets)} positions of {args.line!r}, "
                  f"{args.requests} requests each over one kept-alive connection:")
            for target in targets:
                api(parts.hostname, parts.port, target, 10, True)  # warm-up
                trips, at_server = api(parts.hostname, parts.port, target, args.requests, True)
                (t50, t99), (s50, s99) = quantiles(trips), quantiles(at_server)
                print(f"  {urllib.parse.unquote(target.split('=', 1)[1]) or 'start':<40} at the server median "
                      f"{s50 * 1000:.0f} µs (p99 {s99 * 1000:.0f} µs); through loopback median {t50 * 1000:.0f} µs")
        if args.loads:
            usable = page(url, args.loads)
            print(f"page usable (board and book moves shown), {args.loads} loads: median "
                  f"{statistics.median(usable):.0f} ms, max {max(usable):.0f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
