"""Where the judge verdict cache lives: one resolver (`judge_cache_folder`) for the run that
caches verdicts, `ragate plan`, which counts the hits it would get, and `ragate rejudge`,
which caches the candidate's.

`ragate_judge_cache_dir` under the rootdir, when set; else the
folder `d/ragate-judge` of pytest's own cache, wherever pytest's `cache_dir` ini option puts
it (default `.pytest_cache`; `~` and environment variables expanded and a relative path taken
from the rootdir, as pytest resolves it: a tox setup's `cache_dir = {envtmpdir}`-style path
included); else, in a run with pytest's cache plugin off (`-p no:cacheprovider`),
`.ragate-judge-cache` under the rootdir.
"""

from __future__ import annotations

import os
from pathlib import Path

JUDGE_CACHE_NAME = "ragate-judge"  # its folder in pytest's cache (`config.cache.mkdir`)
PYTEST_CACHE_DIR = ".pytest_cache"  # pytest's `cache_dir` by default
WITHOUT_PYTEST_CACHE = ".ragate-judge-cache"


def judge_cache_folder(rootdir: Path, *, ragate_dir: str | None,
                       pytest_cache_dir: str | None = None, cache_plugin: bool = True) -> Path:
    """The judge cache folder of a project whose rootdir is `rootdir`: `ragate_dir`
    (`ragate_judge_cache_dir`) there; else pytest's cache (`pytest_cache_dir`, its `cache_dir`
    ini value) `d/ragate-judge`; else, without pytest's cache plugin, `.ragate-judge-cache`."""
    if ragate_dir:
        return rootdir / ragate_dir
    if not cache_plugin:
        return rootdir / WITHOUT_PYTEST_CACHE
    # as pytest's cacheprovider resolves `cache_dir` (resolve_from_str): ~ then $VARS, and a
    # relative path from the rootdir (an absolute one stays as it is)
    cache = os.path.expandvars(os.path.expanduser(pytest_cache_dir or PYTEST_CACHE_DIR))
    return rootdir / cache / "d" / JUDGE_CACHE_NAME
