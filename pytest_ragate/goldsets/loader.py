"""A goldset directory: `ragate.toml`, its questions, expected answers and corpus, validated.

Every validation rule (docs/goldsets.md) lives here, once, for collection and `ragate validate`.
Loading gathers all problems before raising, so one run lists them all.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import (
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from pytest_ragate.decision.population import question_name
from pytest_ragate.files import read_jsonl
from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.anchors import AnchorEntry, AnchorKind, load_anchors
from pytest_ragate.goldsets.config import (
    Expected,
    ExpectedRow,
    GoldsetConfig,
    Question,
    _Model,
    read_config,
    read_expected,
)
from pytest_ragate.goldsets.corpus import Corpus, load_corpus
from pytest_ragate.goldsets.labels import Label, read_labels
from pytest_ragate.goldsets.sealed import (
    KEY_ENV,
    SealError,
    locate_sealed,
    open_sealed,
    sealed_index,
)
from pytest_ragate.problems import GoldsetError, Problem, problems_from_validation
from pytest_ragate.scoring.agreement import AGREEMENT
from pytest_ragate.scoring.flips import anchor_digest
from pytest_ragate.scoring.gates import Floor
from pytest_ragate.scoring.records import ContextRef, Evidence, WholeDocument
from pytest_ragate.scoring.registry import METRICS, anchor_floor_metrics

# the generic kinds, and the transcript names kept as aliases (same rules, own figures)
SINGLE_DOC_KINDS = frozenset({"single_doc", "single_meeting"})
MULTI_DOC_KINDS = frozenset({"multi_doc", "cross_meeting"})
ANSWERABLE_KINDS = SINGLE_DOC_KINDS | MULTI_DOC_KINDS
UNANSWERABLE_KIND = "unanswerable"
KNOWN_KINDS = ("single_doc", "multi_doc", UNANSWERABLE_KIND, "single_meeting", "cross_meeting")

class FloorValue(_Model):
    """`{min = 0.8}` (the figure must reach it) or `{max = 0.05}` (must not exceed it, as a
    flaky rate must not): exactly one of them; `xfail` either way."""

    min: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    max: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    xfail: Annotated[str, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> FloorValue:
        if (self.min is None) == (self.max is None):
            raise ValueError("a floor is { min = … } or { max = … }: exactly one of them")
        return self


_UNIT = TypeAdapter(Annotated[float, Field(ge=0.0, le=1.0)])


DEFAULT_JUDGE_COVERAGE = 0.95
ANCHOR_KINDS = get_args(AnchorKind)


def with_judge_coverage(floors: list[Floor]) -> list[Floor]:
    """A goldset with judged floors also gates on how many verdicts the judge delivered."""
    if any(f.judged for f in floors) and not any(f.metric == "judge_coverage" for f in floors):
        return [*floors, Floor("judge_coverage", DEFAULT_JUDGE_COVERAGE)]
    return floors


def parse_floors(raw: dict[str, Any], path: Path, where: str = "floors") -> list[Floor]:
    """`{metric: min | {min, xfail}}` plus `kind.<kind>.<metric>`; names checked against METRICS."""
    floors: list[Floor] = []
    problems: list[Problem] = []

    def one(metric: str, value: object, kind: str | None, at: str,
            anchors: bool = False) -> None:
        if anchors and metric not in anchor_floor_metrics():
            problems.append(Problem(path, at, f"an anchor population floor is one of "
                                    f"{', '.join(anchor_floor_metrics())}, not {metric!r}"))
            return
        if metric not in METRICS:
            known = ", ".join(METRICS)
            problems.append(Problem(path, at, f"unknown metric {metric!r} (known: {known})"))
            return
        try:
            if isinstance(value, dict):
                spec = FloorValue.model_validate(value)
                upper = spec.max is not None
                if upper and metric == AGREEMENT:
                    problems.append(Problem(path, at, "judge_agreement is a lower bound: "
                                            "{ min = … }, not { max = … }"))
                    return
                bound = spec.max if spec.max is not None else spec.min
                assert bound is not None
                floors.append(Floor(metric, bound, kind, spec.xfail, anchors, upper))
            elif isinstance(value, int | float) and not isinstance(value, bool):
                floors.append(Floor(metric, _UNIT.validate_python(value), kind, None, anchors))
            else:
                problems.append(Problem(path, at, "must be a number in [0, 1], "
                                        "{ min = …, xfail = \"reason\" } or { max = … }"))
        except ValidationError as error:
            problems.extend(problems_from_validation(error, path, prefix=at))

    for key, value in raw.items():
        if key == "anchors":
            if not isinstance(value, dict):
                problems.append(Problem(path, f"{where}.anchors", "must be a table of anchor "
                                        "kinds"))
                continue
            for kind, table in value.items():
                if kind not in ANCHOR_KINDS or not isinstance(table, dict):
                    problems.append(Problem(path, f"{where}.anchors.{kind}", "must be a table "
                                            f"of floors for an anchor kind "
                                            f"({', '.join(ANCHOR_KINDS)})"))
                    continue
                for metric, spec in table.items():
                    one(metric, spec, kind, f"{where}.anchors.{kind}.{metric}", anchors=True)
        elif key == "kind":
            if not isinstance(value, dict):
                problems.append(Problem(path, f"{where}.kind", "must be a table of kinds"))
                continue
            for kind, table in value.items():
                if not isinstance(table, dict):
                    problems.append(
                        Problem(path, f"{where}.kind.{kind}", "must be a table of metric floors")
                    )
                    continue
                for metric, spec in table.items():
                    one(metric, spec, kind, f"{where}.kind.{kind}.{metric}")
        else:
            one(key, value, None, f"{where}.{key}")
    if problems:
        raise GoldsetError(problems)
    return floors


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
    repeat: int = 1  # which of the question's repeats this item asks (1-based)
    repeats: int = 1  # how many times the question is asked in this run

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

    @cached_property
    def sealed_texts(self) -> tuple[str, ...]:
        """The gists and notes of a sealed goldset opened with its key: what no output may
        show (redaction.py masks them in every text kept from a judge or a system)."""
        if not self.sealed:
            return ()
        found = (text for case in self.cases if case.expected is not None
                 for text in (case.expected.gist, case.expected.notes))
        return tuple(dict.fromkeys(text for text in found if text and text.strip()))

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

    @cached_property
    def content_sha256(self) -> str:
        """What the goldset asks and expects, as a digest on every results row: shards run on
        other machines are decided together only when it matches (`ragate decide`). Floors
        and xfail reasons are left out, so re-deciding after a floor changes (or an anchor is
        promoted) stays possible, and so is `system` (who answers is not what is asked);
        sealed answers count by their sealed file, so a run with
        the key and one without agree."""
        digest = hashlib.sha256()

        def add(*parts: object) -> None:
            digest.update(json.dumps(parts, ensure_ascii=False, sort_keys=True,
                                     default=str).encode() + b"\n")

        add("config", self.config.model_dump(mode="json", exclude={"floors", "system"}))
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
        return digest.hexdigest()


_QUESTIONS = TypeAdapter(list[Question])
_ANSWERS = TypeAdapter(list[Expected | None])


def evidence_label(corpus: Corpus, item: Evidence) -> str:
    """`[ES2004a · turns 20–34 · A, B · 01:02–01:40]`, `[handbook · whole document]` or
    `[context c12]`: expected evidence as a person reads it."""
    if isinstance(item, ContextRef):
        return f"[context {item.context_id}]"
    if isinstance(item, WholeDocument):
        return f"[{item.doc_id} · whole document]"
    if item.doc_id in corpus:
        return corpus[item.doc_id].label(item.first_turn, item.last_turn, numbered=True,
                                         unit=corpus.unit)
    return f"[{item.doc_id} · {corpus.unit}s {item.first_turn}–{item.last_turn}]"


SEALED_FIELD = "<sealed>"


def _read_answers(root: Path, config: GoldsetConfig, config_path: Path,
                  ) -> tuple[list[ExpectedRow], tuple[Path, dict[str, bool]] | None,
                             list[Problem]]:
    """Plain expected answers; or sealed ones, opened with RAGATE_SEAL_KEY when it is set,
    else only their index (question id → has evidence)."""
    sealed_file = locate_sealed(root, config.questions.expected)
    if not sealed_file.is_file():
        rows, found = read_expected(root / config.questions.expected, config_path)
        return rows, None, found
    key = os.environ.get(KEY_ENV, "")
    try:
        if key:
            rows, found = open_sealed(root, key)
            return rows, None, found
        return [], (sealed_file, sealed_index(root)), []
    except SealError as error:
        return [], (sealed_file, {}), [Problem(sealed_file, SEALED_FIELD, error.message)]


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
    qid = expected.question_id

    def problem(fld: str, message: str) -> Problem:
        return Problem(path, fld, message, line=line, question_id=qid)

    found: list[Problem] = []
    has_gist = bool(expected.gist and expected.gist.strip())
    if kind in ANSWERABLE_KINDS:
        if not expected.evidence:
            found.append(problem("evidence", f"{_a(kind)} question needs evidence"))
        if not has_gist:
            found.append(problem("gist", f"{_a(kind)} question needs a gist"))
    elif kind == UNANSWERABLE_KIND:
        if expected.evidence:
            found.append(problem("evidence", "an unanswerable question has no evidence "
                                 "(a question must abstain exactly when its evidence is empty)"))
        if has_gist:
            found.append(problem("gist", "an unanswerable question has no gist"))
    elif expected.evidence and not has_gist:
        found.append(problem("gist", f"{_a(kind)} question with evidence needs a gist"))
    elif has_gist and not expected.evidence:
        found.append(problem("evidence", f"{_a(kind)} question has a gist but no evidence: add "
                             "evidence, or drop the gist to make it a must-abstain question"))
    docs = sorted({e.doc_id for e in expected.evidence if e.doc_id is not None})
    if kind in MULTI_DOC_KINDS and expected.evidence and len(docs) < 2:
        found.append(problem("evidence", f"{_a(kind)} question spans 2+ documents, this "
                             f"one only {docs}"))
    if kind in SINGLE_DOC_KINDS and len(docs) > 1:
        found.append(problem("evidence", f"{_a(kind)} question spans one document, this "
                             f"one {docs}"))
    for i, ev in enumerate(expected.evidence):
        if ev.doc_id is None or not corpus.knows(ev.doc_id):
            continue  # a document whose corpus problem is reported already
        if ev.doc_id not in corpus:
            found.append(problem(f"evidence[{i}].doc_id",
                                 f"document {ev.doc_id!r} is not in the corpus"))
            continue
        n = len(corpus[ev.doc_id].turns)
        if ev.last_turn is not None and ev.last_turn >= n:
            unit = corpus.unit
            found.append(problem(f"evidence[{i}].last_{unit}", f"{unit} {ev.last_turn} does not "
                                 f"exist ({ev.doc_id} has {unit}s 0..{n - 1})"))
    return found


SEALED_EVIDENCE = ("the sealed evidence does not fit the goldset any more (the corpus or the "
                   "question's kind changed since sealing); not shown, as it is sealed: unseal "
                   "with the key (`ragate unseal`), fix it and seal again")


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
        if kind not in declared:
            found.append(Problem(questions_path, "kind", f"{kind!r} ({count} question"
                                 f"{'s' * (count != 1)}) is not a known kind "
                                 f"({', '.join(KNOWN_KINDS)}) and not declared in "
                                 "[questions] mix or kinds: declare it, or fix the typo",
                                 line=line))
    if not questions and not rejected:
        found.append(Problem(questions_path, "questions.file", "has no questions: a goldset "
                             "with nothing to ask can pass nothing"))
    for f in floors:
        if f.kind is not None and not f.anchors and f.kind not in first and first \
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
    needs = ([f"floors.{AGREEMENT}"] if agreement else []) + (["judge.estimate"] if ppi else [])
    if not needs:
        return found
    if config.judge.labels is None:
        return [*found, *(Problem(config_path, at, "needs human labels: add [judge] labels = "
                                  "\"labels.jsonl\" (docs/judges.md)") for at in needs)]
    labelled = {label.metric for label in labels}
    for f in floors:
        if METRICS[f.metric].asked and f.metric not in labelled and not f.anchors:
            at = f"floors.kind.{f.kind}.{f.metric}" if f.kind else f"floors.{f.metric}"
            found.append(Problem(config_path, at, f"{' and '.join(needs)} need labels of "
                                 f"{f.metric} in {config.judge.labels}, which has none"))
    return found


def load_goldset(path: Path) -> Goldset:
    """Load and validate a goldset from its directory or its `ragate.toml`."""
    config_path = path / CONFIG_NAME if path.is_dir() else path
    if not config_path.is_file():
        raise GoldsetError([Problem(config_path, "<file>", "no ragate.toml here")])
    root = config_path.parent
    config = read_config(config_path)
    problems: list[Problem] = []
    floors: list[Floor] = []
    try:
        floors = parse_floors(config.floors, config_path)
    except GoldsetError as error:
        problems.extend(error.problems)

    corpus, found = load_corpus(root, config.corpus.paths, config.corpus.format, config_path,
                                config.corpus.units)
    problems.extend(found)

    questions_path = root / config.questions.file
    questions: list[tuple[int, Question]] = []
    if questions_path.is_file():
        questions, found = read_jsonl(questions_path, Question, id_field="question_id")
        problems.extend(found)
    else:
        problems.append(Problem(config_path, "questions.file", f"{questions_path} not found"))
    rejected = {p.question_id for p in found if p.question_id}
    # a questions file that cannot be read at all is one problem, not one per answer
    unread = any(p.field == "<file>" for p in found) or not questions_path.is_file()
    if questions_path.is_file():
        problems.extend(_check_kinds(config, config_path, questions_path, questions, floors,
                                     rejected=bool(found)))

    expected_rows, sealed, found = _read_answers(root, config, config_path)
    opened = sealed is None and locate_sealed(root, config.questions.expected).is_file()
    problems.extend(found)
    rejected |= {p.question_id for p in found if p.question_id}
    unreadable = any(p.field == SEALED_FIELD for p in found)

    by_id: dict[str, tuple[int, Question]] = {}
    for line, q in questions:
        if q.question_id in by_id:
            problems.append(Problem(questions_path, "question_id", f"duplicate id (first on line "
                                    f"{by_id[q.question_id][0]})", line=line,
                                    question_id=q.question_id))
        else:
            by_id[q.question_id] = (line, q)

    answers: dict[str, Expected | None] = {}
    has_evidence: dict[str, bool] = {}
    if sealed is not None:  # no key: ids and whether each must abstain, nothing more
        sealed_file, index = sealed
        for qid, evidence in index.items():
            answers[qid] = None
            has_evidence[qid] = evidence
            if qid in by_id:
                problems.extend(_check_sealed(by_id[qid][1].kind, evidence, sealed_file, qid))
            elif qid not in rejected and not unread:
                problems.append(Problem(sealed_file, "question_id", f"no question {qid!r} in "
                                        f"{questions_path.name}", question_id=qid))
    for file, at, exp in expected_rows:
        qid = exp.question_id
        if qid in answers:
            problems.append(Problem(file, "question_id", "duplicate expected answer",
                                    line=at, question_id=qid))
            continue
        answers[qid] = exp
        if qid in by_id:
            found = _check_answer(by_id[qid][1].kind, exp, corpus, file, at)
            problems.extend(_sealed_answer_problems(found) if opened else found)
        elif qid not in rejected and not unread:
            problems.append(Problem(file, "question_id", f"no question {qid!r} in "
                                    f"{questions_path.name}", line=at, question_id=qid))

    for qid, (line, _q) in by_id.items():
        if qid not in answers and qid not in rejected and not unreadable:
            problems.append(Problem(questions_path, "question_id", "has no expected answer",
                                    line=line, question_id=qid))

    if config.questions.mix is not None:
        kinds = Counter(q.kind for _line, q in by_id.values())
        problems.extend(_check_mix(config.questions.mix, kinds, config_path))

    labels: list[Label] = []
    found = []
    if config.judge.labels is not None and not unread:
        labels, found = read_labels(root / config.judge.labels, set(by_id), config_path,
                                    sealed=locate_sealed(root, config.questions.expected
                                                         ).is_file())
        problems.extend(found)
    if not found:  # a metric whose bad lines were reported is not "without labels" too
        problems.extend(_check_labelled(config, config_path, floors, labels))

    anchors: list[AnchorEntry] = []
    if config.anchors is not None:
        anchors, found = load_anchors(root / config.anchors.file, corpus)
        problems.extend(found)

    if problems:
        raise GoldsetError(problems)
    goldset = Goldset(config.name or root.name, root, config_path, config, corpus, [],
                      with_judge_coverage(floors), anchors,
                      locate_sealed(root, config.questions.expected).is_file(), labels)
    goldset.cases = [Case(goldset, i, line, q, answers[q.question_id],
                          has_evidence.get(q.question_id))
                     for i, (line, q) in enumerate(by_id.values())]
    return goldset
