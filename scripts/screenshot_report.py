"""Full-page PNG of a `--ragate-html` report, taken by headless Chromium (for docs/report.png).

    python scripts/screenshot_report.py out/report.html docs/report.png [--width 1280]

Uses the system's Chromium through playwright (no browser download): `RAGATE_CHROMIUM` names
it, else /usr/bin/chromium. Every request other than the file itself is aborted and reported,
so the picture is of the page as it looks offline, which is how the report must look.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
# quiet, offline, sandbox-free (containers): no update checks, sync or QUIC probes
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]


def chromium_path() -> Path:
    return Path(os.environ.get("RAGATE_CHROMIUM") or CHROMIUM)


def screenshot(html: Path, png: Path, width: int = 1280, height: int = 900) -> list[str]:
    """Write a full-page PNG of `html`; returns the URLs of requests other than the file."""
    from playwright.sync_api import Route, sync_playwright

    url = html.resolve().as_uri()
    foreign: list[str] = []

    def guard(route: Route) -> None:
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    png.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium_path()), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("request", lambda r: foreign.append(r.url) if r.url != url else None)
            page.route("**/*", guard)
            page.goto(url, wait_until="load")
            page.screenshot(path=str(png), full_page=True)
        finally:
            browser.close()
    return foreign


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1280, help="viewport width in CSS px")
    args = parser.parse_args()
    if not args.html.is_file():
        parser.error(f"{args.html}: no such file")
    if not chromium_path().exists():
        parser.error(f"no Chromium at {chromium_path()} (set RAGATE_CHROMIUM)")
    foreign = screenshot(args.html, args.png, args.width)
    for request in foreign:
        print(f"warning: the page requested {request} (aborted)", file=sys.stderr)
    print(f"{args.png}: {args.png.stat().st_size} bytes")
    return 1 if foreign else 0


if __name__ == "__main__":
    sys.exit(main())
