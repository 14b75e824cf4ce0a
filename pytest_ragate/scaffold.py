"""`ragate init`: a new goldset beside a corpus, ready for its first questions.

It writes `ragate.toml` (the corpus, commented floors), empty questions and expected-answers
files and a `conftest.py` stub for `ragate_system` (in the project's folder, so that both the
goldset's items and a `@ragate.goldset` test under tests/ see it: `system_home`), then loads
what it wrote with the same validation as collection: the only problem left is the one it
cannot solve, no questions yet.
It writes nothing unless it succeeds: a corpus it cannot read is reported before anything is
written, and what a failed load finds takes back what was written, so a retry after the fix
is not refused as "exists already".
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.corpus import READERS, Corpus, load_corpus
from pytest_ragate.problems import Problem

TOML = """\
# A goldset: questions about the documents below, their expected evidence, and the floors the
# system under test must hold. Every file format: pytest-ragate's docs/goldsets.md.
name = "{name}"
eval_version = "1"   # bump when the questions or the scoring change: history compares within one

[corpus]
paths = ["{paths}"]   # globs, relative to this file
format = "{format}"{units}

[questions]
file = "questions.jsonl"     # {{"question_id", "kind", "question"}}, one per line
expected = "expected.jsonl"  # {{"question_id", "gist", "evidence": [...]}}, one per line
# a question may be a turn of a conversation: "conversation": "ebike-prices", "turn": 2 (turns
# 1, 2, … in order; each later turn is asked with the earlier turns and their answers)
# an expected answer may list the facts a right answer states, and what makes one wrong:
# "facts": ["25 euros", ["EUR 12.50", "12,50 €"]], "forbid": ["30 euros"] (answer_match)
# kinds: single_doc (evidence in one document), multi_doc (2+), unanswerable (no evidence:
# the system must abstain). Declare any other kind here:
# kinds = ["procedural"]

# Floors: uncomment once a first run shows where your system stands (see its report), a little
# under the measured value. A floor is decided over every question of the goldset.
# [floors]
# citation_accuracy = 0.8
# abstention_accuracy = 0.9
# "evidence_recall@5" = 0.8
# answer_match = 0.8           # is the answer right: needs "facts" on every answerable question
# [floors.kind.unanswerable]
# abstention_accuracy = {{ min = 1.0, xfail = "a known miss, until the fix lands" }}
"""

CONFTEST = '''\
"""The system under test: question text in, `pytest_ragate.Answer` out. Replace the body of
`answer` with a call to your RAG system. pytest-ragate's docs/your-system.md describes the
contract and the adapters for LangChain, LlamaIndex and Haystack results
(`pytest_ragate.adapters`).

pytest applies a conftest.py to the tests in its folder and below:
{scope}."""

import pytest

from pytest_ragate import Answer, Citation, Context


@pytest.fixture(scope="session")
def ragate_system():
    def answer(question: str) -> Answer:
        # hits = my_rag.retrieve(question)
        # contexts = [Context(context_id=h.id, doc_id=h.doc_id, first_unit=h.first_unit,
        #                     last_unit=h.last_unit, text=h.text, distance=h.distance)
        #             for h in hits]
        # reply = my_rag.generate(question, hits)
        # return Answer(text=reply.text, contexts=contexts,
        #               citations=[Citation(context_id=c) for c in reply.cited_ids])
        raise NotImplementedError("connect your RAG system in {conftest}")

    return answer
'''


class InitError(Exception):
    """Nothing was written: the message says why."""


@dataclass(frozen=True)
class Scaffold:
    written: list[Path]  # empty when there are problems: nothing was written
    corpus: Corpus
    problems: list[Problem]  # the empty question set aside
    system: str = ""  # where `ragate_system` is, and who sees it


def system_home(goldset: Path, root: Path) -> tuple[Path | None, str]:
    """Where the `ragate_system` stub goes (None: nowhere, one exists) and what to say of
    it. The project's conftest.py (`root`, where `ragate init` runs), so that the goldset's
    own items and a `@ragate.goldset` test under tests/ both see it; the goldset's folder
    when that file exists without one (it is never edited), or the goldset is not under
    `root`."""
    shared = root / "conftest.py"
    inside = goldset.resolve().is_relative_to(root.resolve())
    if inside and not shared.exists():
        return shared, ("ragate_system in conftest.py, seen by the goldset's items and by "
                        "every test under this folder (a @ragate.goldset test in tests/ too)")
    from pytest_ragate.items.provenance import defines_fixture

    if inside and (line := defines_fixture(shared)) is not None:
        return None, f"conftest.py:{line} defines ragate_system already: the goldset uses it"
    local = goldset / "conftest.py"
    why = "conftest.py exists here and is not edited" if inside else \
        f"{goldset} is not under {root}"
    return local, (f"ragate_system in {local}, seen by the goldset's items only ({why}); for "
                   "a @ragate.goldset test elsewhere to see it, move it to a conftest.py in a "
                   "folder above both")


def guess_format(files: list[Path]) -> str:
    if files and all(f.name.endswith(".speakers.json") for f in files):
        return "tiron"
    if files and all(f.suffix == ".jsonl" for f in files):
        return "documents-jsonl"
    return "documents"


def init(goldset: Path, corpus_glob: str, fmt: str | None = None, units: str = "paragraph",
         name: str | None = None) -> Scaffold:
    """Write a goldset folder at `goldset` over the files `corpus_glob` matches (absolute, or
    relative to the current folder)."""
    if (goldset / CONFIG_NAME).exists():
        raise InitError(f"{goldset / CONFIG_NAME} exists already: nothing written")
    pattern = Path(corpus_glob)
    absolute = pattern if pattern.is_absolute() else Path.cwd() / pattern
    files = sorted(Path(p) for p in glob.glob(str(absolute), recursive=True)
                   if Path(p).is_file())
    if not files:
        raise InitError(f"{corpus_glob!r} matches no file: nothing written")
    fmt = fmt or guess_format(files)
    if fmt not in READERS:
        raise InitError(f"unknown format {fmt!r} (known: {', '.join(READERS)})")
    relative = Path(os.path.relpath(str(absolute), str(goldset.resolve())))
    units_line = f'\nunits = "{units}"     # paragraph or line' if fmt.startswith("documents") \
        else ""
    texts = {
        goldset / CONFIG_NAME: TOML.format(name=name or goldset.resolve().name,
                                           paths=relative.as_posix(), format=fmt,
                                           units=units_line),
        goldset / "questions.jsonl": "",
        goldset / "expected.jsonl": "",
    }
    conftest, system = system_home(goldset, Path.cwd())
    if conftest is not None and not conftest.exists():
        scope = ("the goldset's items, and every test below this folder, see ragate_system"
                 if conftest.parent != goldset else "the goldset's items see ragate_system")
        texts[conftest] = CONFTEST.format(conftest=conftest, scope=scope)
    corpus, problems = load_corpus(Path.cwd(), [str(absolute)], fmt, goldset / CONFIG_NAME,
                                   units)  # type: ignore[arg-type]
    if problems:
        return Scaffold([], corpus, problems)
    problems = _write_checked(goldset, texts)
    return Scaffold([] if problems else list(texts), corpus, problems, system)


def _write_checked(goldset: Path, texts: dict[Path, str]) -> list[Problem]:
    """Write the files and load them as collection does; on a problem (the empty questions
    aside), remove what was written, the folder too when it was made here."""
    from pytest_ragate.files import write_atomic
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.problems import GoldsetError

    made = not goldset.exists()
    written: list[Path] = []
    problems: list[Problem] = []
    try:
        for path, text in texts.items():
            write_atomic(path, text)
            written.append(path)
        load_goldset(goldset)
    except GoldsetError as error:
        problems = [p for p in error.problems if p.field != "questions.file"]
    finally:
        if problems or len(written) < len(texts):
            for path in written:
                path.unlink(missing_ok=True)
            if made and goldset.is_dir() and not any(goldset.iterdir()):
                goldset.rmdir()
    return problems
