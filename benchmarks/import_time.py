"""Benchmark: what pytest-ragate adds to pytest's start-up in a project with no goldsets,
against a 20 ms goal.

Why: pytest imports the plugin (its `pytest11` entry point) in every run of every project
where it is installed, goldsets or not, so each millisecond of its import is paid by every
test run, every `-k` and every IDE collect.

What it does, each measure over several repetitions after one untimed warm-up, the two sides
of each pair alternating so a busy spell on a shared machine hits both alike:
1. `-X importtime`: `python -X importtime -c "import pytest; import pytest_ragate.plugin"`,
   summing the cumulative time of every top-level import after `pytest`'s: the plugin's own
   share, free of interpreter start-up noise. The goal is judged on its median. The modules it
   pulls in that `import pytest` alone does not are listed (by name; the stdlib ones are the
   ones to watch).
2. Import, wall: `python -c "import pytest"` against `python -c "import pytest,
   pytest_ragate.plugin"`, as subprocesses.
3. pytest start-up, wall: `python -m pytest --collect-only -q -p no:cacheprovider <empty dir>`
   with `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1` (no other installed plugin loads), without and with
   `-p pytest_ragate.plugin`: bare pytest against pytest with the plugin, hooks included
   (`pytest_addoption` declares every option, `pytest_configure` reads the settings).

The directory sits under a folder with an empty `pytest.ini`, so no project configuration
leaks in; `PYTEST_ADDOPTS` is dropped and, unless `--env-as-is`, so is
`PYTHONDONTWRITEBYTECODE` (the warm-up writes the `.pyc` caches a developer machine has).

Run: `.venv/bin/python benchmarks/import_time.py` (see `--help`); figures are printed and
written to `benchmarks/out/import_time.json`. Being over the goal prints FAIL and still exits 0
(timings on a shared machine are noisy); a subprocess that fails exits 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL_MS = 20.0
PLUGIN = "pytest_ragate.plugin"
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "import_time.json"
IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)$", re.MULTILINE)


def _env(as_is: bool) -> dict[str, str]:
    dropped = {"PYTEST_ADDOPTS"} if as_is else {"PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE"}
    return {k: v for k, v in os.environ.items() if k not in dropped}


def _run(argv: list[str], env: dict[str, str], cwd: Path, ok: tuple[int, ...] = (0,),
         ) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode not in ok:
        sys.stdout.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"`{' '.join(argv)}` exited {proc.returncode}")
    return wall, proc


def plugin_share(stderr: str) -> tuple[float, list[str]]:
    """Milliseconds of the top-level imports after `pytest`'s, and the modules they loaded."""
    seen_pytest = False
    total_us = 0
    modules: list[str] = []
    for _self_us, cumulative_us, indent, name in IMPORTTIME.findall(stderr):
        if not seen_pytest:
            seen_pytest = not indent and name == "pytest"
            continue
        modules.append(name)
        if not indent:  # a top-level import: its cumulative time covers its nested ones
            total_us += int(cumulative_us)
    if not seen_pytest:
        raise SystemExit("-X importtime output has no top-level `pytest` import")
    return total_us / 1000, modules


def _summary(values: list[float], digits: int = 4) -> dict[str, Any]:
    return {"min": round(min(values), digits), "median": round(statistics.median(values), digits),
            "runs": [round(v, digits) for v in values]}


def run(out: Path, repeat: int, json_path: Path, env_as_is: bool) -> int:
    load_at_start = os.getloadavg()[0]
    empty = out / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    (out / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = _env(env_as_is)
    bare_env = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    py = sys.executable
    importtime = [py, "-X", "importtime", "-c", f"import pytest; import {PLUGIN}"]
    import_bare = [py, "-c", "import pytest"]
    import_plugin = [py, "-c", f"import pytest, {PLUGIN}"]
    collect = [py, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "empty"]
    startup_bare, startup_plugin = collect, [*collect[:3], "-p", PLUGIN, *collect[3:]]

    shares: list[float] = []
    walls: dict[str, list[float]] = {k: [] for k in ("import_bare", "import_plugin",
                                                      "startup_bare", "startup_plugin")}
    modules: list[str] = []
    for i in range(repeat + 1):  # the first round is a warm-up
        _, proc = _run(importtime, env, out)
        share, modules = plugin_share(proc.stderr)
        timed = {"import_bare": _run(import_bare, env, out)[0],
                 "import_plugin": _run(import_plugin, env, out)[0],
                 "startup_bare": _run(startup_bare, bare_env, out, (0, 5))[0],
                 "startup_plugin": _run(startup_plugin, bare_env, out, (0, 5))[0]}
        if i:
            shares.append(share)
            for key, wall in timed.items():
                walls[key].append(wall * 1000)
    _, bare_proc = _run([py, "-X", "importtime", "-c", "import pytest"], env, out)
    bare_modules = {m for *_, m in IMPORTTIME.findall(bare_proc.stderr)}
    added = [m for m in modules if m not in bare_modules]
    stdlib = sorted({m.split(".")[0] for m in added} & set(sys.stdlib_module_names))

    import_net = [p - b for p, b in zip(walls["import_plugin"], walls["import_bare"], strict=True)]
    startup_net = [p - b for p, b in zip(walls["startup_plugin"], walls["startup_bare"],
                                          strict=True)]
    share_median = statistics.median(shares)
    verdict = "PASS" if share_median < GOAL_MS else "FAIL"
    figures: dict[str, Any] = {
        "benchmark": "import_time",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "load_average_1m": [round(load_at_start, 2), round(os.getloadavg()[0], 2)]},
        "repeat": repeat,
        "unit": "ms",
        "importtime_plugin_share": _summary(shares, 2),
        "modules_added": added,
        "stdlib_packages_added": stdlib,
        **{f"wall_{k}": _summary(v, 1) for k, v in walls.items()},
        "wall_import_net": _summary(import_net, 1),
        "wall_startup_net": _summary(startup_net, 1),
        "goal_ms": GOAL_MS,
        "goal_measure": "importtime_plugin_share median",
        "verdict": verdict,
    }

    print(f"import_time: {repeat} runs each after a warm-up; {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; load {load_at_start:.2f}")
    print(f"{'measure (ms)':<46}{'min':>9}{'median':>9}")
    rows = [("-X importtime, plugin's share", shares),
            ("import pytest (wall)", walls["import_bare"]),
            ("import pytest + plugin (wall)", walls["import_plugin"]),
            ("  difference", import_net),
            ("pytest start-up, bare (wall)", walls["startup_bare"]),
            ("pytest start-up, -p pytest_ragate.plugin (wall)", walls["startup_plugin"]),
            ("  difference", startup_net)]
    for label, values in rows:
        print(f"{label:<46}{min(values):>9.1f}{statistics.median(values):>9.1f}")
    print(f"modules the plugin adds to `import pytest` ({len(added)}): {', '.join(added)}")
    print(f"of which stdlib packages: {', '.join(stdlib) or 'none'}")
    print(f"{verdict}: plugin's import share median {share_median:.1f} ms vs goal {GOAL_MS:.0f} ms")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {json_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per measure (15)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, dest="json_path",
                        help=f"where to write the figures ({DEFAULT_JSON})")
    parser.add_argument("--env-as-is", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE if set")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    with tempfile.TemporaryDirectory(prefix="ragate-import-time-") as tmp:
        return run(Path(tmp), args.repeat, args.json_path, args.env_as_is)


if __name__ == "__main__":
    sys.exit(main())
