"""Why no goldset ran: a run that selected no ragate item, in a project that has goldsets
under its rootdir, says where they are and the command that runs them.

Light on purpose (the standard library only), and asked only at the end of a run that
selected no ragate item: the search is bounded (hidden folders, virtual environments and
`node_modules` skipped; a few goldsets found, or a few thousand folders seen, end it), so a
plain run in a project without goldsets costs a directory walk of its own tree at most.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from pytest_ragate.goldsets import CONFIG_NAME

SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env"})
MAX_FOUND = 3  # goldsets named in the hint; the search stops at the first this many
MAX_FOLDERS = 2000  # folders looked into at most, breadth first (shallow goldsets first)


def find_goldsets(root: Path, *, limit: int = MAX_FOUND,
                  folders: int = MAX_FOLDERS) -> list[Path]:
    """The first `limit` ragate.toml files under `root`, breadth first, relative to it."""
    found: list[Path] = []
    queue: deque[Path] = deque([root])
    while queue and folders > 0 and len(found) < limit:
        folder = queue.popleft()
        folders -= 1
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == CONFIG_NAME and entry.is_file():
                found.append(Path(entry.path).relative_to(root))
            elif _searched(entry):
                queue.append(Path(entry.path))
    return found[:limit]


def _searched(entry: os.DirEntry[str]) -> bool:
    return (not entry.name.startswith(".") and entry.name not in SKIPPED
            and entry.is_dir(follow_symlinks=False))


def nothing_ran_hint(found: list[Path]) -> str:
    """The run's one line: the goldsets found, and the command that runs them."""
    targets = " ".join(_target(path) for path in found)
    more = f" (the first {len(found)} found)" if len(found) >= MAX_FOUND else ""
    return (f"ragate: no goldset ran: this run selected no ragate item, and the rootdir has "
            f"goldsets at {', '.join(p.as_posix() for p in found)}{more}. Run them with "
            f"`pytest {targets} -m rag_gate`, or add their folders to `testpaths`")


def _target(path: Path) -> str:
    parent = path.parent.as_posix()
    return path.as_posix() if parent == "." else f"{parent}/"
