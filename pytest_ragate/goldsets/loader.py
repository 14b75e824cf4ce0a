"""A goldset directory: `ragate.toml`, its questions, expected answers and corpus, validated.

Every validation rule (docs/goldsets.md) lives here, once, for collection and `ragate validate`.
Loading gathers all problems before raising, so one run lists them all.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from pydantic import TypeAdapter

from pytest_ragate.decision.population import question_name
from pytest_ragate.files import read_jsonl
from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.anchors import AnchorEntry, load_anchors
from pytest_ragate.goldsets.config import (
    RENAMED_KINDS,
    Expected,
    ExpectedRow,
    GoldsetConfig,
    Question,
    read_config,
    read_expected,
)
from pytest_ragate.goldsets.corpus import Corpus, load_corpus
from pytest_ragate.goldsets.floors_table import (
    NAMED_UNTAGGED,
    floor_at,
    parse_floors,
    slice_floors,
    with_judge_coverage,
)
from pytest_ragate.goldsets.labels import Label, answer_verdicts, read_labels
from pytest_ragate.goldsets.pinned import Held, hold
from pytest_ragate.goldsets.pins import CorpusText
from pytest_ragate.goldsets.sealed import (
    KEY_ENV,
    SealError,
    locate_sealed,
    open_sealed_keyed,
    sealed_index,
)
from pytest_ragate.problems import GoldsetError, Problem, renamed_once
from pytest_ragate.scoring.agreement import AGREEMENT
from pytest_ragate.scoring.answer_match import ANSWER_MATCH, AnswerLabel
from pytest_ragate.scoring.answer_text import is_pattern, same_statement
from pytest_ragate.scoring.flips import anchor_digest
from pytest_ragate.scoring.floor import Floor, counts_in
from pytest_ragate.scoring.records import ContextRef, Evidence, WholeDocument
from pytest_ragate.scoring.registry import METRICS, requested_metrics
from pytest_ragate.scoring.rubrics import Rubric
from pytest_ragate.scoring.rubrics import declare as declare_rubrics

SINGLE_DOC_KINDS = frozenset({"single_doc"})
MULTI_DOC_KINDS = frozenset({"multi_doc"})
ANSWERABLE_KINDS = SINGLE_DOC_KINDS | MULTI_DOC_KINDS
UNANSWERABLE_KIND = "unanswerable"
KNOWN_KINDS = ("single_doc", "multi_doc", UNANSWERABLE_KIND)


# --- the loaded goldset -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Case:
    """One question with its expected answer (None while the answers are sealed)."""

    goldset: Goldset
    index: int
    line: int
    question: Question
    expected: Expected | None
    sealed_has_evidence: bool | None = None  # what the sealed index says, without the key
    expected_line: int | None = None  # its answer's line in the expected (or sealed) file
    repeat: int = 1  # which of the question's repeats this item asks (1-based)
    repeats: int = 1  # how many times the question is asked in this run
    # its pinned evidence held to the corpus (goldsets/pinned.py): moved spans, stale ones
    pins: Held | None = None

    @property
    def item_name(self) -> str:
        """`q07`, or `q07[r2]` when the question is asked more than once."""
        return question_name(self.question.question_id, self.repeat, self.repeats)

    def repeated(self, repeats: int) -> list[Case]:
        """This question asked `repeats` times, one case per repeat (itself when once)."""
        if repeats == 1:
            return [self]
        return [replace(self, repeat=r, repeats=repeats) for r in range(1, repeats + 1)]

    @property
    def must_abstain(self) -> bool:
        if self.expected is not None:
            return self.expected.must_abstain
        return not self.sealed_has_evidence

    @cached_property
    def expected_labels(self) -> list[str] | None:
        """The expected spans as people read them; None while the answers are sealed (a
        sealed goldset never shows them, even to someone holding the key)."""
        if self.goldset.sealed:
            return None
        corpus = self.goldset.corpus
        return [evidence_label(corpus, item)
                for item in (self.expected.spans if self.expected else [])]


@dataclass(eq=False)
class Goldset:
    name: str
    root: Path
    config_path: Path
    config: GoldsetConfig
    corpus: Corpus
    cases: list[Case] = field(default_factory=list)
    floors: list[Floor] = field(default_factory=list)
    anchors: list[AnchorEntry] = field(default_factory=list)
    sealed: bool = False  # answers stored sealed: reports never show expected spans
    labels: list[Label] = field(default_factory=list)  # human labels of judged metrics
    # answer_match labels (goldsets/labels.py): per question, each labelled answer's sha256
    # → the person's verdict and the expected answer it was judged against
    answer_labels: dict[str, dict[str, AnswerLabel]] = field(default_factory=dict)
    # a sealed goldset opened with its key: what its answer digests are keyed with
    # (goldsets/sealed.py `digest_key`), so no digest kept confirms a guess of a sealed text
    digest_key: bytes | None = field(default=None, repr=False)

    @cached_property
    def sealed_texts(self) -> tuple[str, ...]:
        """The gists, notes, facts and forbidden statements (each written alternative; a
        `/…/` one is never shown, so not a text to find) of a sealed goldset opened with its
        key: what no output may show (redaction.py masks them in every text kept from a judge
        or a system)."""
        if not self.sealed:
            return ()
        found = (text for case in self.cases if case.expected is not None
                 for text in (case.expected.gist, case.expected.notes,
                              *statement_texts(case.expected)))
        return tuple(dict.fromkeys(text for text in found if text and text.strip()))

    @cached_property
    def scores_answers(self) -> bool:
        """Whether its answers are held to their expected answers (answer_match,
        answer_similarity): some expected answer lists facts, or a floor names either."""
        return (any(c.expected is not None and c.expected.facts for c in self.cases)
                or any(METRICS[f.metric].correctness for f in self.floors))

    @cached_property
    def requested_verdicts(self) -> tuple[str, ...]:
        """The judged metrics asked for on request (answer_correctness, factual_correctness)
        this goldset wants: those `[answers] judged` lists and those its floors name; and
        the rubrics its floors gate (a rubric is asked only where gated)."""
        return (*requested_metrics([*self.config.answers.judged,
                                    *(f.metric for f in self.floors)]),
                *gated_rubrics(self.rubrics, self.floors))

    @cached_property
    def rubrics(self) -> dict[str, Rubric]:
        """The rubrics its `[rubrics]` table declares, by name."""
        return rubrics_of(self.config)

    @property
    def estimate(self) -> str:
        """What judged floors are decided on: "judge" (its mean) or "ppi"."""
        return self.config.judge.estimate

    @property
    def eval_version(self) -> str:
        return self.config.eval_version

    @property
    def kinds(self) -> list[str]:
        return sorted({c.question.kind for c in self.cases})

    @property
    def corpus_digests(self) -> dict[str, str]:
        """Each corpus document's digest, by id: what a run's results, history and
        baseline keep of the corpus, to say when it changed."""
        return self.corpus.document_digests

    @cached_property
    def content_sha256(self) -> str:
        """What the goldset asks and expects, as a digest on every results row: shards run on
        other machines are decided together only when it matches (`ragate decide`). Floors
        and xfail reasons are left out, so re-deciding after a floor changes (or an anchor is
        promoted) stays possible, and so are `system` (who answers is not what is asked),
        `sequential` (nor is the order it is asked in), `[judge] optional` (which judged
        floors may go unjudged is a rule of the decision, as a floor is), `[regression]`
        (nor is a margin against the baseline) and `[audit]` (what
        `ragate audit` reports is not what is asked);
        sealed answers count by their sealed file, so a run with
        the key and one without agree."""
        digest = hashlib.sha256()

        def add(*parts: object) -> None:
            digest.update(json.dumps(parts, ensure_ascii=False, sort_keys=True,
                                     default=str).encode() + b"\n")

        add("config", self.config.model_dump(mode="json", exclude={
            "floors": True, "system": True, "sequential": True, "judge": {"optional"},
            "audit": True, "regression": True}))
        add("corpus", self.corpus.content_hash)
        if self.sealed:
            add("sealed", hashlib.sha256(locate_sealed(
                self.root, self.config.questions.expected).read_bytes()).hexdigest())
        # one serialisation of each list in pydantic-core: 10,000 questions in a few ms
        digest.update(_QUESTIONS.dump_json([case.question for case in self.cases]))
        if not self.sealed:
            digest.update(_ANSWERS.dump_json([case.expected for case in self.cases]))
        for entry in self.anchors:
            a = entry.anchor
            add("anchor", a.anchor_id, anchor_digest(
                a.kind, a.claim, a.evidence.model_dump() if a.evidence is not None else None))
        for label in self.labels:
            add("label", label.question_id, label.metric, label.value, label.answer_sha256)
        for qid, verdicts in self.answer_labels.items():
            add("answer labels", qid, {answer: [x.verdict, x.expected_sha256]
                                       for answer, x in verdicts.items()})
        return digest.hexdigest()


def statement_texts(expected: Expected) -> list[str]:
    """Every written alternative of an expected answer's facts and forbidden statements."""
    return [text for fact in (*expected.facts, *expected.forbid)
            for text in ([fact] if isinstance(fact, str) else fact) if not is_pattern(text)]


_QUESTIONS = TypeAdapter(list[Question])
_ANSWERS = TypeAdapter(list[Expected | None])


def evidence_label(corpus: Corpus, item: Evidence) -> str:
    """`[ES2004a · units 20–34 · A, B · 01:02–01:40]`, `[handbook · whole document]` or
    `[context c12]`: expected evidence as a person reads it."""
    if isinstance(item, ContextRef):
        return f"[context {item.context_id}]"
    if isinstance(item, WholeDocument):
        return f"[{item.doc_id} · whole document]"
    if item.doc_id in corpus:
        return corpus[item.doc_id].label(item.first_unit, item.last_unit, numbered=True,
                                         unit=corpus.unit)
    return f"[{item.doc_id} · {corpus.unit}s {item.first_unit}–{item.last_unit}]"


SEALED_FIELD = "<sealed>"


@dataclass(frozen=True, kw_only=True)
class _Answers:
    """The expected answers read: plain rows, or sealed ones opened with the key; without
    the key, only the sealed file's index (question id → has evidence)."""

    rows: list[ExpectedRow]
    index: tuple[Path, dict[str, bool]] | None = None
    opened: bool = False  # sealed and opened: their problems never quote the evidence
    digest_key: bytes | None = None  # sealed and opened: the answer digests' key
    problems: list[Problem] = field(default_factory=list)

    @property
    def rejected(self) -> set[str]:
        return {p.question_id for p in self.problems if p.question_id}

    @property
    def unreadable(self) -> bool:
        """The sealed file could not be read: its answers are unknown, not missing."""
        return any(p.field == SEALED_FIELD for p in self.problems)


def _read_answers(root: Path, config: GoldsetConfig, config_path: Path) -> _Answers:
    """Plain expected answers; or sealed ones, opened with RAGATE_SEAL_KEY when it is set,
    else only their index (question id → has evidence)."""
    sealed_file = locate_sealed(root, config.questions.expected)
    if not sealed_file.is_file():
        rows, found = read_expected(root / config.questions.expected, config_path)
        return _Answers(rows=rows, problems=found)
    key = os.environ.get(KEY_ENV, "")
    try:
        if key:
            rows, found, digests = open_sealed_keyed(root, key)
            return _Answers(rows=rows, opened=True, problems=found, digest_key=digests)
        return _Answers(rows=[], index=(sealed_file, sealed_index(root)))
    except SealError as error:
        return _Answers(rows=[], index=(sealed_file, {}),
                        problems=[Problem(sealed_file, SEALED_FIELD, error.message)])


def _check_sealed(kind: str, has_evidence: bool, path: Path, qid: str) -> list[Problem]:
    if kind in ANSWERABLE_KINDS and not has_evidence:
        return [Problem(path, "evidence", f"{_a(kind)} question needs evidence",
                        question_id=qid)]
    if kind == UNANSWERABLE_KIND and has_evidence:
        return [Problem(path, "evidence", "an unanswerable question has no evidence",
                        question_id=qid)]
    return []


def _a(word: str) -> str:
    return f"an {word}" if word[:1].lower() in "aeiou" else f"a {word}"


def _check_answer(kind: str, expected: Expected, corpus: Corpus, path: Path,
                  line: int | None) -> list[Problem]:
    """The rules tying one expected answer to its question's kind and to the corpus."""
    return [Problem(path, fld, message, line=line, question_id=expected.question_id)
            for fld, message in [*_kind_rules(kind, expected), *_fact_rules(expected),
                                 *_corpus_rules(expected, corpus)]]


def _fact_rules(expected: Expected) -> list[tuple[str, str]]:
    """(field, message) for facts where nothing can be right (a question that must be
    abstained from), and each `forbid` that is also a fact; never quoting either."""
    found: list[tuple[str, str]] = []
    if expected.must_abstain and (expected.facts or expected.forbid):
        found.append(("facts" if expected.facts else "forbid", "a question that must be "
                      "abstained from has no facts: any answer to it is wrong (its evidence is "
                      "empty)"))
    for i, statement in enumerate(expected.forbid):
        same = [k for k, fact in enumerate(expected.facts) if same_statement(statement, fact)]
        if same:
            found.append((f"forbid[{i}]", f"is also facts[{same[0]}] once folded: an answer "
                          "cannot have to state it and be wrong for stating it"))
    return found


def _kind_rules(kind: str, expected: Expected) -> list[tuple[str, str]]:
    """(field, message) for each rule of its kind the answer breaks: evidence and a gist
    exactly when it is answerable, and how many documents its evidence spans."""
    found: list[tuple[str, str]] = []
    has_gist = bool(expected.gist and expected.gist.strip())
    if kind in ANSWERABLE_KINDS:
        if not expected.evidence:
            found.append(("evidence", f"{_a(kind)} question needs evidence"))
        if not has_gist:
            found.append(("gist", f"{_a(kind)} question needs a gist"))
    elif kind == UNANSWERABLE_KIND:
        if expected.evidence:
            found.append(("evidence", "an unanswerable question has no evidence (a question "
                          "must abstain exactly when its evidence is empty)"))
        if has_gist:
            found.append(("gist", "an unanswerable question has no gist"))
    elif expected.evidence and not has_gist:
        found.append(("gist", f"{_a(kind)} question with evidence needs a gist"))
    elif has_gist and not expected.evidence:
        found.append(("evidence", f"{_a(kind)} question has a gist but no evidence: add "
                      "evidence, or drop the gist to make it a must-abstain question"))
    docs = sorted({e.doc_id for e in expected.evidence if e.doc_id is not None})
    if kind in MULTI_DOC_KINDS and expected.evidence and len(docs) < 2:
        found.append(("evidence", f"{_a(kind)} question spans 2+ documents, this one only "
                      f"{docs}"))
    if kind in SINGLE_DOC_KINDS and len(docs) > 1:
        found.append(("evidence", f"{_a(kind)} question spans one document, this one {docs}"))
    return found


def _corpus_rules(expected: Expected, corpus: Corpus) -> list[tuple[str, str]]:
    """(field, message) for each piece of evidence the corpus does not have. A pinned span is
    held by its pin instead (goldsets/pinned.py): moved, it is scored where its text is now;
    gone, its question fails as stale evidence, and the rest of the goldset still runs."""
    found: list[tuple[str, str]] = []
    for i, ev in enumerate(expected.evidence):
        if ev.doc_id is None or not corpus.knows(ev.doc_id) or ev.pin is not None:
            continue  # a document whose corpus problem is reported already, or a pinned span
        if ev.doc_id not in corpus:
            found.append((f"evidence[{i}].doc_id", f"document {ev.doc_id!r} is not in the corpus"))
            continue
        n = len(corpus[ev.doc_id].turns)
        if ev.last_unit is not None and ev.last_unit >= n:
            unit = corpus.unit
            found.append((f"evidence[{i}].last_unit", f"{unit} {ev.last_unit} does not exist "
                          f"({ev.doc_id} has {unit}s 0..{n - 1})"))
    return found


SEALED_EVIDENCE = ("the sealed evidence does not fit the goldset any more (the corpus or the "
                   "question's kind changed since sealing); not shown, as it is sealed: unseal "
                   "with the key (`ragate seal --unseal`), fix it and seal again")


def _sealed_answer_problems(found: list[Problem]) -> list[Problem]:
    """A sealed answer's problems, its evidence unquoted: one line per question for all that
    is wrong with its evidence (documents and turns are as sealed as the gist)."""
    kept = [p for p in found if not p.field.startswith("evidence")]
    evidence = next((p for p in found if p.field.startswith("evidence")), None)
    if evidence is not None:
        kept.append(Problem(evidence.path, "evidence", SEALED_EVIDENCE,
                            question_id=evidence.question_id))
    return kept


def _check_mix(mix: dict[str, int], kinds: Counter[str], config_path: Path) -> list[Problem]:
    found = []
    for kind in sorted(set(kinds) | set(mix)):
        want, got = mix.get(kind), kinds.get(kind, 0)
        if want is None:
            found.append(Problem(config_path, f"questions.mix.{kind}",
                                 f"{got} {kind} questions but the mix declares none"))
        elif want != got:
            found.append(Problem(config_path, f"questions.mix.{kind}",
                                 f"declares {want}, found {got}"))
    return found


def _check_kinds(config: GoldsetConfig, config_path: Path, questions_path: Path,
                 questions: list[tuple[int, Question]], floors: list[Floor],
                 rejected: bool) -> list[Problem]:
    """A kind is known, or declared (`mix` or `kinds`): a typo would otherwise move questions
    out of their kind's floors unnoticed. A kind floor needs questions of that kind."""
    declared = set(KNOWN_KINDS) | set(config.questions.mix or {}) | set(config.questions.kinds
                                                                          or [])
    found: list[Problem] = []
    first: dict[str, tuple[int, int]] = {}  # kind -> (first line, count)
    for line, q in questions:
        at, count = first.get(q.kind, (line, 0))
        first[q.kind] = (at, count + 1)
    for kind, (line, count) in first.items():
        if kind in RENAMED_KINDS:
            found.append(Problem(questions_path, "kind", f"{kind!r} ({count} question"
                                 f"{'s' * (count != 1)}) was renamed {RENAMED_KINDS[kind]!r}",
                                 line=line))
        elif kind not in declared:
            found.append(Problem(questions_path, "kind", f"{kind!r} ({count} question"
                                 f"{'s' * (count != 1)}) is not a known kind "
                                 f"({', '.join(KNOWN_KINDS)}) and not declared in "
                                 "[questions] mix or kinds: declare it, or fix the typo",
                                 line=line))
    if not questions and not rejected:
        found.append(Problem(questions_path, "questions.file", "has no questions: a goldset "
                             "with nothing to ask can pass nothing"))
    for f in floors:
        if f.kind in RENAMED_KINDS and not f.anchors:
            problem = Problem(config_path, f"floors.kind.{f.kind}",
                              f"kind {f.kind!r} was renamed {RENAMED_KINDS[f.kind]!r}")
            found += [problem] if problem not in found else []
        elif f.kind is not None and not f.anchors and f.kind not in first and first \
                and not rejected:
            section = f"floors.kind.{f.kind}.{f.metric}"
            found.append(Problem(config_path, section, f"no question has kind {f.kind!r} "
                                 f"(kinds here: {', '.join(sorted(first))}): this floor "
                                 "could never be decided"))
    return found




def _check_labelled(config: GoldsetConfig, config_path: Path, floors: list[Floor],
                    labels: list[Label]) -> list[Problem]:
    """`judge_agreement` and `[judge] estimate = "ppi"` need labels, for every judged metric
    a floor gates on: a floor whose judge is held to nothing would pass unchecked."""
    found: list[Problem] = []
    agreement = [f for f in floors if f.metric == AGREEMENT]
    for f in agreement:
        if f.kind is not None:
            found.append(Problem(config_path, f"floors.kind.{f.kind}.{AGREEMENT}",
                                 "judge_agreement is a floor of the whole goldset (over its "
                                 "labelled questions), not of a kind"))
    ppi = config.judge.estimate == "ppi"
    found.extend(Problem(config_path, f"floors.slices.{key}.{metric}", "a slice floor of a "
                         "judged metric is decided on the judge's own scores, and with [judge] "
                         "estimate = \"ppi\" the goldset's are corrected by its labels: "
                         "refused rather than decided on uncorrected scores")
                 for key, metric in dict.fromkeys((f.slice[0], f.metric) for f in floors
                                                  if ppi and f.slice and METRICS[f.metric].asked))
    needs = ([f"floors.{AGREEMENT}"] if agreement else []) + (["judge.estimate"] if ppi else [])
    if not needs:
        return found
    if config.judge.labels is None:
        return [*found, *(Problem(config_path, at, "needs human labels: add [judge] labels = "
                                  "\"labels.jsonl\" (docs/judges.md)") for at in needs)]
    labelled = {label.metric for label in labels}
    for f in floors:  # a rubric's floor without labels is not decided (agreement_floor.on_rubric)
        if (METRICS[f.metric].asked and f.metric not in labelled and not f.anchors
                and not METRICS[f.metric].rubric):
            at = f"floors.kind.{f.kind}.{f.metric}" if f.kind else f"floors.{f.metric}"
            found.append(Problem(config_path, at, f"{' and '.join(needs)} need labels of "
                                 f"{f.metric} in {config.judge.labels}, which has none"))
    return found


@dataclass(frozen=True, kw_only=True)
class _Listed:
    """The questions file read: its questions in file order (duplicates too), the ids whose
    lines were rejected, and whether it could be read at all."""

    path: Path
    questions: list[tuple[int, Question]]
    rejected: set[str]
    unread: bool  # no file, or one that cannot be read: one problem, not one per answer
    problems: list[Problem]


def _read_questions(root: Path, config: GoldsetConfig, config_path: Path,
                    floors: list[Floor]) -> _Listed:
    """The questions, and the problems of their lines and of their kinds."""
    path = root / config.questions.file
    if not path.is_file():
        return _Listed(path=path, questions=[], rejected=set(), unread=True,
                       problems=[Problem(config_path, "questions.file", f"{path} not found")])
    questions, found = read_jsonl(path, Question, id_field="question_id")
    kinds = _check_kinds(config, config_path, path, questions, floors, rejected=bool(found))
    return _Listed(path=path, questions=questions,
                   rejected={p.question_id for p in found if p.question_id},
                   unread=any(p.field == "<file>" for p in found), problems=[*found, *kinds])


def _check_conversations(listed: _Listed) -> list[Problem]:
    """One problem per cause in each conversation's turns: a turn twice, a gap (turns are
    numbered from 1 without gaps), turns out of order in the file (they are asked in the
    file's order), and a question id that is a turn of two conversations."""
    turns: dict[str, list[tuple[int, int, str]]] = {}  # conversation -> (line, turn, id)
    first: dict[str, tuple[int, str]] = {}  # question id -> (line, its conversation)
    found: list[Problem] = []
    for line, q in listed.questions:
        if q.conversation is None or q.turn is None:
            continue
        seen = first.setdefault(q.question_id, (line, q.conversation))
        if seen[1] != q.conversation:
            found.append(Problem(listed.path, "conversation", f"is a turn of conversation "
                                 f"{seen[1]!r} (line {seen[0]}) and of {q.conversation!r}: a "
                                 "question belongs to one conversation", line=line,
                                 question_id=q.question_id))
            continue
        turns.setdefault(q.conversation, []).append((line, q.turn, q.question_id))
    for conversation, listed_turns in turns.items():
        found.extend(_turn_problems(listed.path, conversation, listed_turns))
    return found


def _turn_problems(path: Path, conversation: str, turns: list[tuple[int, int, str]],
                   ) -> list[Problem]:
    """The problems of one conversation's turns, (line, turn, question id) in file order."""
    found: list[Problem] = []
    lines: dict[int, int] = {}
    for line, turn, qid in turns:
        if turn in lines:
            found.append(Problem(path, "turn", f"conversation {conversation!r} has turn {turn} "
                                 f"twice (first on line {lines[turn]})", line=line,
                                 question_id=qid))
        lines.setdefault(turn, line)
    missing = [t for t in range(1, max(lines) + 1) if t not in lines]
    if missing:
        shown, listed = ", ".join(map(str, missing)), ", ".join(map(str, sorted(lines)))
        found.append(Problem(path, "turn", f"conversation {conversation!r} has turns "
                             f"{listed}: turn{'s' * (len(missing) > 1)} {shown} missing "
                             "(a conversation's turns are numbered 1, 2, … without gaps)",
                             line=turns[0][0], question_id=turns[0][2]))
    order = [turn for _, turn, _ in turns]
    late = next((i for i in range(1, len(order)) if order[i] < order[i - 1]), None)
    if late is not None and not found:
        line, turn, qid = turns[late]
        found.append(Problem(path, "turn", f"turn {turn} of conversation {conversation!r} "
                             f"comes after turn {order[late - 1]} (line {turns[late - 1][0]}): "
                             "list a conversation's turns in order, they are asked in it",
                             line=line, question_id=qid))
    return found


def _by_id(listed: _Listed) -> tuple[dict[str, tuple[int, Question]], list[Problem]]:
    """Each question by its id (the first of a duplicated id), and a problem per duplicate."""
    by_id: dict[str, tuple[int, Question]] = {}
    problems: list[Problem] = []
    for line, q in listed.questions:
        if q.question_id in by_id:
            if q.conversation != by_id[q.question_id][1].conversation and q.conversation:
                continue  # a turn of two conversations: `_check_conversations` says so
            problems.append(Problem(listed.path, "question_id", f"duplicate id (first on line "
                                    f"{by_id[q.question_id][0]})", line=line,
                                    question_id=q.question_id))
        else:
            by_id[q.question_id] = (line, q)
    return by_id, problems


@dataclass(kw_only=True)
class _Matching:
    """Expected answers matched to their questions, one source after the other: the answer
    of each question (None while sealed), whether each sealed one has evidence, and what did
    not match. An answer without a question is named unless its line was rejected or the
    questions file could not be read: that problem is reported already."""

    by_id: dict[str, tuple[int, Question]]
    listed: _Listed
    rejected: set[str]  # ids whose question or answer line was rejected
    answers: dict[str, Expected | None] = field(default_factory=dict)
    has_evidence: dict[str, bool] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)  # each answer's line in its file
    problems: list[Problem] = field(default_factory=list)

    def orphan(self, file: Path, qid: str, line: int | None = None) -> None:
        if qid not in self.rejected and not self.listed.unread:
            self.problems.append(Problem(file, "question_id", f"no question {qid!r} in "
                                         f"{self.listed.path.name}", line=line, question_id=qid))

    def sealed(self, sealed_file: Path, index: dict[str, bool]) -> None:
        """No key: ids and whether each must abstain, nothing more."""
        for qid, evidence in index.items():
            self.answers[qid] = None
            self.has_evidence[qid] = evidence
            if qid in self.by_id:
                self.problems.extend(_check_sealed(self.by_id[qid][1].kind, evidence,
                                                   sealed_file, qid))
            else:
                self.orphan(sealed_file, qid)

    def rows(self, rows: list[ExpectedRow], corpus: Corpus, opened: bool) -> None:
        """Each answer against its question's kind and the corpus; an opened sealed one's
        problems never quote its evidence."""
        for file, at, exp in rows:
            qid = exp.question_id
            if qid in self.answers:
                self.problems.append(Problem(file, "question_id", "duplicate expected answer",
                                             line=at, question_id=qid))
                continue
            self.answers[qid] = exp
            self.lines[qid] = at
            if qid in self.by_id:
                found = _check_answer(self.by_id[qid][1].kind, exp, corpus, file, at)
                self.problems.extend(_sealed_answer_problems(found) if opened else found)
            else:
                self.orphan(file, qid, at)

    def unanswered(self, unreadable: bool) -> None:
        """Questions without an answer (unknown, not missing, when the sealed file is
        unreadable)."""
        self.problems.extend(
            Problem(self.listed.path, "question_id", "has no expected answer", line=line,
                    question_id=qid)
            for qid, (line, _q) in self.by_id.items()
            if qid not in self.answers and qid not in self.rejected and not unreadable)


def _match_answers(by_id: dict[str, tuple[int, Question]], answers: _Answers, corpus: Corpus,
                   listed: _Listed) -> _Matching:
    matching = _Matching(by_id=by_id, listed=listed,
                         rejected=listed.rejected | answers.rejected)
    if answers.index is not None:
        matching.sealed(*answers.index)
    matching.rows(answers.rows, corpus, opened=answers.opened)
    matching.unanswered(unreadable=answers.unreadable)
    return matching


def _read_labels(root: Path, config: GoldsetConfig, config_path: Path, floors: list[Floor],
                 question_ids: set[str], listed: _Listed) -> tuple[list[Label], list[Problem]]:
    """The human labels, and the problems of their lines; when those have none, the floors
    that need labels and have none (a metric whose bad lines were reported is not
    "without labels" too)."""
    labels: list[Label] = []
    found: list[Problem] = []
    if config.judge.labels is not None and not listed.unread:
        labels, found = read_labels(root / config.judge.labels, question_ids, config_path,
                                    sealed=locate_sealed(root, config.questions.expected
                                                         ).is_file(),
                                    rubrics=rubrics_of(config))
    return labels, found or _check_labelled(config, config_path, floors, labels)


def load_goldset(path: Path) -> Goldset:
    """Load and validate a goldset from its directory or its `ragate.toml`: each step reads
    one part and gathers its problems, and one GoldsetError lists them all, in this order."""
    config_path = path / CONFIG_NAME if path.is_dir() else path
    if not config_path.is_file():
        raise GoldsetError([Problem(config_path, "<file>", "no ragate.toml here")])
    root, config = config_path.parent, read_config(config_path)
    declare_rubrics(config.rubrics)  # before its floors: a rubric's name is a metric's
    floors, problems = _floors(config, config_path)
    corpus, unread_corpus = load_corpus(root, config.corpus.paths, config.corpus.format,
                                        config_path, config.corpus.units)
    listed = _read_questions(root, config, config_path, floors)
    answers = _read_answers(root, config, config_path)
    by_id, duplicates = _by_id(listed)
    duplicates = [*duplicates, *_check_conversations(listed)]
    floors, unsliced = slice_floors(floors, list(by_id.values()), config_path)
    matching = _match_answers(by_id, answers, corpus, listed)
    mix = (_check_mix(config.questions.mix, Counter(q.kind for _, q in by_id.values()),
                      config_path) if config.questions.mix is not None else [])
    labels, unlabelled = _read_labels(root, config, config_path, floors, set(by_id), listed)
    anchors, unanchored = (load_anchors(root / config.anchors.file, corpus)
                           if config.anchors is not None else ([], []))
    unfacted = [*_floors_without_facts(floors, by_id, matching.answers, config_path),
                *_conversation_floors(floors, by_id, config_path)]
    problems = [*problems, *unread_corpus, *listed.problems, *answers.problems, *duplicates,
                *unsliced, *matching.problems, *mix, *unlabelled, *unanchored, *unfacted]
    if problems:
        raise GoldsetError(renamed_once(problems))
    goldset = Goldset(name=config.name or root.name, root=root, config_path=config_path,
                      config=config, corpus=corpus, floors=with_judge_coverage(floors),
                      anchors=anchors, labels=[x for x in labels if x.metric != ANSWER_MATCH],
                      answer_labels=answer_verdicts(labels),
                      sealed=locate_sealed(root, config.questions.expected).is_file(),
                      digest_key=answers.digest_key)
    goldset.cases = _cases(goldset, by_id, matching)
    return goldset


def _floors_without_facts(floors: Sequence[Floor], by_id: dict[str, tuple[int, Question]],
                          answers: dict[str, Expected | None], config_path: Path,
                          ) -> list[Problem]:
    """A floor on answer_match needs facts on every answerable question of its population:
    one without would be left out of its figure, unseen. Sealed answers without the key
    are not known here (their questions are gaps of the run)."""
    found = []
    for floor in floors:
        if floor.metric != ANSWER_MATCH or floor.anchors:
            continue
        bare = [qid for qid, (_, q) in by_id.items()
                if counts_in(floor, q.kind, q.slices) and (exp := answers.get(qid)) is not None
                and not exp.must_abstain and not exp.facts]
        if bare:
            found.append(Problem(config_path, floor_at(floor), f"{len(bare)} answerable "
                                 f"question{'s' * (len(bare) != 1)} of its population "
                                 f"{'have' if len(bare) != 1 else 'has'} no facts: "
                                 f"{', '.join(bare[:NAMED_UNTAGGED])}"
                                 f"{' and more' if len(bare) > NAMED_UNTAGGED else ''}; "
                                 "answer_match is decided over answers with facts: give "
                                 "them \"facts\" in the expected answers (docs/goldsets.md)"))
    return found


def _conversation_floors(floors: Sequence[Floor], by_id: dict[str, tuple[int, Question]],
                         config_path: Path) -> list[Problem]:
    """`conversation_success` is over a goldset's whole conversations: not of a kind (a
    conversation's turns may be of several), and never where there is no conversation (its
    floor could never be decided)."""
    found = []
    has = any(q.conversation for _, q in by_id.values())
    for floor in floors:
        if floor.metric != "conversation_success":
            continue
        if floor.kind is not None:
            found.append(Problem(config_path, floor_at(floor), "conversation_success is a "
                                 "floor over whole conversations: [floors], not of a kind"))
        elif not has and by_id:
            found.append(Problem(config_path, floor_at(floor), "no question is a turn of a "
                                 "conversation (\"conversation\", \"turn\" in the questions "
                                 "file): this floor could never be decided"))
    return found


def rubrics_of(config: GoldsetConfig) -> dict[str, Rubric]:
    """The rubrics a goldset's `[rubrics]` table declares, by name."""
    return {name: Rubric(name=name, criteria=r.criteria, scale=r.scale,
                         scores=tuple(r.scores or ()))
            for name, r in config.rubrics.items()}


def gated_rubrics(rubrics: Mapping[str, Rubric], floors: Iterable[Floor]) -> tuple[str, ...]:
    """The rubrics among `rubrics` some floor of `floors` (any kind or slice) gates."""
    gated = {f.metric for f in floors}
    return tuple(name for name in rubrics if name in gated)


def load_goldset_corpus(path: Path) -> Corpus:
    """The corpus of the goldset at `path` (its directory or its `ragate.toml`), read as
    collection reads it, whatever state its questions are in; GoldsetError when the corpus
    has a problem."""
    config_path = path / CONFIG_NAME if path.is_dir() else path
    if not config_path.is_file():
        raise GoldsetError([Problem(config_path, "<file>", "no ragate.toml here")])
    config = read_config(config_path)
    corpus, problems = load_corpus(config_path.parent, config.corpus.paths,
                                   config.corpus.format, config_path, config.corpus.units)
    if problems:
        raise GoldsetError(renamed_once(problems))
    return corpus


def _floors(config: GoldsetConfig, config_path: Path) -> tuple[list[Floor], list[Problem]]:
    try:
        return parse_floors(config.floors, config_path, rubrics=set(config.rubrics)), []
    except GoldsetError as error:
        return [], error.problems


def _cases(goldset: Goldset, by_id: dict[str, tuple[int, Question]], matching: _Matching,
           ) -> list[Case]:
    """Each question with its expected answer, in the questions file's order; its pinned
    evidence held to the corpus (a moved span is scored where its text is now)."""
    text = CorpusText(goldset.corpus)
    held = {qid: hold(exp, text, sealed=goldset.sealed)
            for qid, exp in matching.answers.items() if exp is not None and qid in by_id}
    return [Case(goldset=goldset, index=i, line=line, question=q,
                 expected=held[q.question_id].expected if q.question_id in held
                 else matching.answers[q.question_id],
                 sealed_has_evidence=matching.has_evidence.get(q.question_id),
                 expected_line=matching.lines.get(q.question_id),
                 pins=held.get(q.question_id))
            for i, (line, q) in enumerate(by_id.values())]
