"""`answer_match` against hand labels, beside the mechanical peers a user could gate on instead.

    .venv/bin/python benchmarks/answer_match.py          # --json PATH, --similar 0.70

The data (`benchmarks/data/answer_match_labels.jsonl`) is 335 answers to 33 questions of the
shipped goldsets (21 of tiron-demo, 12 of qmsum-val), each written and labelled by hand: the
gist itself, paraphrases, other number formats, verbose answers in the manner of a language
model, partial answers, negations, wrong numbers next to right units, wrong entities, lists of
candidate values, answers in German and French, the question echoed, quotes of the transcript
and whole-document dumps (a `dump` row names the document, or its units, and the benchmark
reads the text from the goldset's corpus). Label 1 means right: the answer states all that the
question asks, as the gist has it, commits to it, and says nothing that contradicts it (extra
true detail is fine; an answer in another language is right when its content is). Everything
else is 0: a partial answer, a hedge between candidates, a dump, a quote that does not answer.
The facts are the goldsets' own (`expected.jsonl`), written before these answers were.

Reported side by side, in one run, as agreement with the labels (accuracy and Cohen's kappa):

- `answer_match` (scoring/answer_match.py) on the answers it decides, with the share it leaves
  unsure (counted apart); and, for reference, with unsure counted wrong;
- plain exact match of answer and gist (SQuAD's normalisation: case, punctuation, articles,
  spaces; Rajpurkar et al., EMNLP 2016);
- SQuAD token F1 of answer and gist, and RAGAS 0.4.3's `ExactMatch`, `StringPresence` and
  `NonLLMStringSimilarity` (Levenshtein), run through RAGAS's own code: the string metrics with
  the gist as reference, `StringPresence` also over the facts (the share of facts one of whose
  written alternatives is in the answer, as RAGAS compares strings: case-sensitive). Each
  score is cut at the threshold that best agrees with these very labels (an oracle cut, in
  their favour: a user would have to choose it without the labels).

The adversarial sets (issue 45; `--sets` picks which run, the held-out one only on request)
are self-contained rows, each with its question, gist, facts, forbid, answer, hand label and
class (negation, refusal, hedge, bound, sign, unit, version, possessive or compound,
candidates across sentences, pseudo-negation hiding a forbidden statement, zero-width and
look-alike letters, typed tokens, and the classes found on the way: stale values, conditional
or attributed statements). The development set was written before the rule was changed and
the rule revised against it; the held-out set was written apart and run once the rule was
frozen. Per set and per class: rows, the share labelled right, `answer_match`'s precision of
"right" (the share of its right calls a person labels right: a wrong answer counted right is
the failure a gate cannot have; the count of those in brackets), its agreement on the
answers it decides, its unsure share; beside it, each RAGAS string metric's precision of
"right" at its oracle cut. Targets: precision of right >= 0.99 on the development set, 1.0 per
class on the held-out set.

The second held-out set (`"adversarial (held out, second)"`, written by another hand after the
rule's revision on the first) was run once as held out (precision of right 0.794: 14 wrong
answers counted right); the plain-statement check (answer_match's `Expectation.plain`)
was then designed on its misses, so it is a development set since, like the other two. The
third held-out set (193 paraphrastic answers) found 27 wrong answers counted right by the
rule without that check and 17 with it; the plain-statement check was then made the shipped
rule and turned into an allow-list (answer_match's `PLAIN`: right only where every word is the
fact's, the gist's, the question's or on the list), so the four adversarial sets were
development sets then. The fourth held-out set (422 answers) found 3 wrong answers counted
right, all two facts in each other's roles; answer_match's `_swapped` was designed on them,
so all five were development sets then. The fifth (268 answers) found 74 wrong answers
counted right, a fact in another clause's place (answer_match's `_unbound` was designed on
them); the sixth (290 answers, measured once on the frozen b033323) found 32 (precision of
right 0.686: a fact said of another subject, a reversing verb, a contradicting second
clause, word order), and the clause rule was revised on them (names after `;`, relative
clauses, clauses read with the one before, `_reordered`, `_voiced`, `_fronted`,
`_listed_denial`, roles by clause, a forbidden statement with words between), so all seven
were development sets then: precision of right 1.000 on each and on the labelled sets, unsure
41.5% and 49.3% on the labelled sets (benchmarks/README.md has the table). `--unsure-right`
lists each right answer left unsure with its reason. `--not-plain` measures the rule
without the check; `--adversarial PATH` runs a further self-contained set (an unseen
held-out set) against the rule as it is. The seventh (385 answers, written unseen while
the sixth's revision was made) was held out: measured once on the frozen c823622, precision
of right 0.976 (1 wrong answer of 232 counted right, a subject and object swapped around one
named fact), unsure 59.7%. answer_match's `_crossed` was designed on that miss (a name and a
word of the gist each on the other side of the gist's verb, in the same voice), and the
unsure share was then cut on the labelled set and the adversarial sets, class by class
(`_unframed`: citation numbers, greetings and politeness formulas, an attribution to a
document; `_worded`: a bound or approximation in another wording of the gist's; `_offered`:
candidates joined by `or` are wrong, not unsure; words that affirm a statement on `PLAIN`;
an unsure answer in another language says so, whichever check found it), so all eight
adversarial sets are development sets now; the held-out labelled set
(`answer_match_heldout.jsonl`) was only measured, though its unsure answers were read once
in a listing beside the labelled set's (benchmarks/README.md has the table). The eighth
(561 answers, `"adversarial (held out, eighth)"`, written by another hand while that revision
was made, without reading the rule) is held out: measured once on the frozen 26101dc,
precision of right 0.936 (5 wrong answers counted right: a gist's preposition swapped, `from
Tallinn` for `to Tallinn`; another number in the fact's clause, `after six years` for `after
five`; an identity for a relation, `the new support analyst is Marisol Fuentes`; a rate or
unit around the fact, `8 puffs per hour` for `in 24 hours`, `2 mg/kg` for `2 mg`), unsure
54.4%; on 39b6fe7, before the revision, 0.922 (6) and 54.5%.

The judged `answer_correctness` through the fixture judge is not reported: the fixture judge
(`judges/fixture.py`) asks no model, it returns the statements and verdicts a person wrote
for each answer into its file, and computes RAGAS's formula over them. On a set whose every
answer is already labelled by hand, writing those verdicts would be labelling each answer a
second time, and the figure would measure the writer, not a judge. A model judge is what
would need measuring here, and that needs a model this benchmark does not call.

The goal (issue 34): on the answers it decides, `answer_match` agrees with the labels at 0.95
or more, above every mechanical peer; unsure at most 15% of answers; no dump or candidate
list ever counted right. Cohen's kappa: Cohen, Educ. Psychol. Meas. 1960 (`agreement.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import string
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from pytest_ragate.goldsets.loader import Goldset, load_goldset  # noqa: E402
from pytest_ragate.scoring.agreement import cohen_kappa  # noqa: E402
from pytest_ragate.scoring.answer_match import SIMILAR, Expectation, check_answer  # noqa: E402
from pytest_ragate.scoring.answer_text import is_pattern  # noqa: E402

DATA = HERE / "data" / "answer_match_labels.jsonl"
# written after answer_match's last revision, and labelled before it was run on them: the rule
# was revised twice against DATA (see README), so DATA's figures are optimistic; these are not
HELD_OUT = HERE / "data" / "answer_match_heldout.jsonl"
# hand-written adversarial answers (issue 45), self-contained rows (question, gist, facts,
# forbid, answer, label, class): the development set the rule was revised against, the
# held-out set written apart and run once the rule was frozen (the rule was then revised on
# what it missed, so it is held out no more), and a second held-out set written by another
# hand after that revision, without reading the rule's code or the other sets; since the
# plain-statement check (`Expectation.plain`) was designed on its misses, it is a
# development set
ADVERSARIAL = HERE / "data" / "answer_match_adversarial.jsonl"
ADVERSARIAL_HELD_OUT = HERE / "data" / "answer_match_adversarial_heldout.jsonl"
ADVERSARIAL_HELD_OUT_2 = HERE / "data" / "answer_match_adversarial_heldout2.jsonl"
# a third, written by a third hand while no rule change was pending, without reading the rule
ADVERSARIAL_HELD_OUT_3 = HERE / "data" / "answer_match_adversarial_heldout3.jsonl"
ADVERSARIAL_HELD_OUT_4 = HERE / "data" / "answer_match_adversarial_heldout4.jsonl"
ADVERSARIAL_HELD_OUT_5 = HERE / "data" / "answer_match_adversarial_heldout5.jsonl"
ADVERSARIAL_HELD_OUT_6 = HERE / "data" / "answer_match_adversarial_heldout6.jsonl"
ADVERSARIAL_HELD_OUT_7 = HERE / "data" / "answer_match_adversarial_heldout7.jsonl"
ADVERSARIAL_HELD_OUT_8 = HERE / "data" / "answer_match_adversarial_heldout8.jsonl"
OUT = HERE / "out" / "answer_match.json"
GOLDSETS = {"tiron-demo": ROOT / "goldsets" / "tiron-demo",
            "qmsum-val": ROOT / "goldsets" / "qmsum-val"}
NEVER_RIGHT = ("dump", "candidate list")  # types the goal says are never counted right


@dataclass(frozen=True)
class Case:
    """One labelled answer with what it is held to."""

    qid: str
    kind: str
    label: int
    text: str
    question: str
    gist: str
    facts: list
    forbid: list


def load_cases(data: Path) -> list[Case]:
    """A set's rows: self-contained adversarial rows (each with its gist), or labelled
    answers to the shipped goldsets' questions."""
    first = next((line for line in data.read_text(encoding="utf-8").splitlines()
                  if line.strip()), "{}")
    if "goldset" not in json.loads(first):
        return load_adversarial(data)
    goldsets: dict[str, Goldset] = {name: load_goldset(path) for name, path in GOLDSETS.items()}
    cases = []
    for line in data.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        goldset = goldsets[row["goldset"]]
        case = next(c for c in goldset.cases if c.question.question_id == row["question_id"])
        assert case.expected is not None and case.expected.gist
        text = row.get("answer") or dumped(goldset, row["dump"])
        cases.append(Case(qid=row["question_id"], kind=row["type"], label=row["label"],
                          text=text, question=case.question.question,
                          gist=case.expected.gist, facts=case.expected.facts,
                          forbid=case.expected.forbid))
    return cases


def load_adversarial(data: Path) -> list[Case]:
    """An adversarial set's rows: each holds its own question, gist, facts and forbid."""
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [Case(qid=r["id"], kind=r["class"], label=r["label"], text=r["answer"],
                 question=r["question"], gist=r["gist"], facts=r["facts"],
                 forbid=r.get("forbid") or []) for r in rows]


def dumped(goldset: Goldset, spec: dict) -> str:
    """A document's text (or units first..last of it), as a system that pastes it answers."""
    turns = goldset.corpus[spec["doc_id"]].turns
    first, last = spec.get("first_unit", 0), spec.get("last_unit", len(turns) - 1)
    return " ".join(t.text for t in turns[first:last + 1])


# --- SQuAD's exact match and token F1 (the official evaluation script's normalisation) -----


def squad_normal(text: str) -> str:
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_f1(answer: str, gist: str) -> float:
    pred, gold = squad_normal(answer).split(), squad_normal(gist).split()
    common = sum((Counter(pred) & Counter(gold)).values())
    if not common:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --- RAGAS's string metrics, its own code --------------------------------------------------


def ragas_scores(cases: Sequence[Case]) -> dict[str, list[float]]:
    from ragas.metrics.collections import ExactMatch, NonLLMStringSimilarity, StringPresence

    exact, presence, similar = ExactMatch(), StringPresence(), NonLLMStringSimilarity()

    async def score(metric: object, reference: str, response: str) -> float:
        return float((await metric.ascore(reference=reference, response=response)).value)

    async def all_of() -> dict[str, list[float]]:
        found: dict[str, list[float]] = {"ragas ExactMatch (gist)": [],
                                         "ragas StringPresence (gist)": [],
                                         "ragas StringPresence (facts)": [],
                                         "ragas NonLLMStringSimilarity (gist)": []}
        for c in cases:
            found["ragas ExactMatch (gist)"].append(await score(exact, c.gist, c.text))
            found["ragas StringPresence (gist)"].append(await score(presence, c.gist, c.text))
            found["ragas NonLLMStringSimilarity (gist)"].append(
                await score(similar, c.gist, c.text))
            shares = []
            for fact in c.facts:
                written = [t for t in ([fact] if isinstance(fact, str) else fact)
                           if not is_pattern(t)]
                if written:  # a fact with regular expressions only is left out: in its favour
                    shares.append(max([await score(presence, t, c.text) for t in written]))
            found["ragas StringPresence (facts)"].append(sum(shares) / len(shares)
                                                         if shares else 0.0)
        return found

    return asyncio.run(all_of())


# --- agreement --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    method: str
    n: int
    accuracy: float
    kappa: float | None
    cut: float | None = None
    unsure: int = 0


def agreement(method: str, calls: Sequence[int], labels: Sequence[int], cut: float | None = None,
              unsure: int = 0) -> Row:
    pairs = list(zip(calls, labels, strict=True))
    return Row(method=method, n=len(pairs), accuracy=sum(a == b for a, b in pairs) / len(pairs),
               kappa=cohen_kappa(pairs), cut=cut, unsure=unsure)


def best_cut(method: str, scores: Sequence[float], labels: Sequence[int]) -> Row:
    """The score's cut (right when score ≥ cut) that agrees best with the labels (accuracy;
    kappa breaks ties): an oracle cut, in the peer's favour."""
    rows = [agreement(method, [int(s >= cut) for s in scores], labels, cut)
            for cut in sorted({*scores, max(scores) + 1e-9})]
    return max(rows, key=lambda r: (r.accuracy, r.kappa if r.kappa is not None else -2))


class Cosines:
    """The cosine of two texts through the embedded all-MiniLM-L6-v2, each text embedded
    alone (as a run embeds it), each once."""

    def __init__(self) -> None:
        from pytest_ragate.builtin_system.retrieval import Embedder

        self.embedder = Embedder(cache_dir=Path(tempfile.gettempdir()) / "ragate-bench-enc")
        self.vectors: dict[str, object] = {}

    def __call__(self, a: str, b: str) -> float:
        for text in (a, b):
            if text not in self.vectors:
                self.vectors[text] = self.embedder.encode([text])[0]
        return round(float(self.vectors[a] @ self.vectors[b]), 4)


def run(similar: float, data: Path, cosine: Cosines, plain: bool = True,
        ) -> dict[str, object]:
    cases = load_cases(data)
    labels = [c.label for c in cases]
    cosines = [cosine(c.text, c.gist) for c in cases]
    checks = [check_answer(c.text, Expectation(facts=c.facts, forbid=c.forbid, gist=c.gist,
                                               question=c.question, similar=similar,
                                               plain=plain),
                           similarity=s, near=lambda t, c=c: cosine(c.text, t))
              for c, s in zip(cases, cosines, strict=True)]
    decided = [(int(k.outcome == "right"), c.label) for k, c in zip(checks, cases, strict=True)
               if k.outcome != "unsure"]
    unsure = sum(k.outcome == "unsure" for k in checks)
    rows = [agreement("answer_match (decided answers)", [a for a, _ in decided],
                      [b for _, b in decided], unsure=unsure),
            agreement("answer_match (unsure counted wrong)",
                      [int(k.outcome == "right") for k in checks], labels, unsure=unsure),
            agreement("exact match (SQuAD normalised, gist)",
                      [int(squad_normal(c.text) == squad_normal(c.gist)) for c in cases], labels),
            best_cut("SQuAD token F1 (gist)", [squad_f1(c.text, c.gist) for c in cases], labels),
            best_cut("answer_similarity (MiniLM cosine, gist)", cosines, labels)]
    peers = ragas_scores(cases)
    rows += [best_cut(name, scores, labels) for name, scores in peers.items()]
    calls = {"answer_match": [k.outcome for k in checks]}
    calls |= {name: ["right" if s >= row.cut else "wrong" for s in peers[name]]
              for name in peers for row in rows if row.method == name and row.cut is not None}
    by_type = {}
    for kind in sorted({c.kind for c in cases}):
        mine = [(k, c) for k, c in zip(checks, cases, strict=True) if c.kind == kind]
        by_type[kind] = {"answers": len(mine), "right by label": sum(c.label for _, c in mine),
                         **Counter(k.outcome for k, _ in mine)}
    wrong_calls = [{"question": c.qid, "type": c.kind, "label": c.label, "call": k.outcome,
                    "why": k.why, "answer": c.text[:160]}
                   for k, c in zip(checks, cases, strict=True)
                   if k.outcome != "unsure" and int(k.outcome == "right") != c.label]
    unsure_right = [{"question": c.qid, "type": c.kind, "why": k.why, "answer": c.text[:160]}
                    for k, c in zip(checks, cases, strict=True)
                    if k.outcome == "unsure" and c.label == 1]
    never = [c.kind for k, c in zip(checks, cases, strict=True)
             if c.kind in NEVER_RIGHT and k.outcome == "right"]
    classes = {kind: {method: class_figures([(o, c) for o, c in zip(outcomes, cases, strict=True)
                                             if kind in ("all", c.kind)])
                      for method, outcomes in calls.items()}
               for kind in ["all", *sorted({c.kind for c in cases})]}
    return {"answers": len(cases), "right by label": sum(labels), "similar": similar,
            "rows": [r.__dict__ for r in rows], "by type": by_type, "by class": classes,
            "dumps or candidate lists counted right": len(never),
            "disagreements": wrong_calls, "unsure right answers": unsure_right}


def class_figures(pairs: Sequence[tuple[str, Case]]) -> dict[str, object]:
    """One class's figures for one method's calls (right, wrong, unsure): rows, the share
    labelled right, the precision of "right" (the share of its right calls labelled right: a
    wrong answer counted right is the failure a gate cannot have), agreement on the answers
    it decides, the unsure share."""
    n = len(pairs)
    called_right = [c.label for o, c in pairs if o == "right"]
    decided = [(o == "right") == bool(c.label) for o, c in pairs if o != "unsure"]
    return {"rows": n, "right share": sum(c.label for _, c in pairs) / n,
            "called right": len(called_right),
            "wrong counted right": len(called_right) - sum(called_right),
            "precision of right": (sum(called_right) / len(called_right)
                                   if called_right else None),
            "agreement (decided)": sum(decided) / len(decided) if decided else None,
            "unsure share": sum(o == "unsure" for o, _ in pairs) / n}


def table(rows: Sequence[dict], total: int) -> str:
    from tabulate import tabulate

    def fmt(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    return tabulate([[r["method"], r["n"], fmt(r["accuracy"]), fmt(r["kappa"]),
                      fmt(r["cut"]), f"{r['unsure']} ({r['unsure'] / total:.1%})"
                      if r["unsure"] else ""] for r in rows],
                    headers=["method", "n", "accuracy", "kappa", "best cut", "unsure"],
                    disable_numparse=True)


def class_table(classes: dict[str, dict[str, dict]]) -> str:
    """Per class: rows, right share, and for answer_match and each RAGAS metric (at its
    oracle cut) the precision of right (wrong counted right), agreement on decided answers
    and (answer_match's) unsure share."""
    from tabulate import tabulate

    def fmt(x: float | None) -> str:
        return "—" if x is None else f"{x:.3f}"

    methods = list(next(iter(classes.values())))
    short = {m: m.removeprefix("ragas ").replace("NonLLMStringSimilarity", "Levenshtein")
             for m in methods}
    body = []
    for kind, by in classes.items():
        mine = by["answer_match"]
        body.append([kind, mine["rows"], fmt(mine["right share"]),
                     f"{fmt(mine['precision of right'])} ({mine['wrong counted right']})",
                     fmt(mine["agreement (decided)"]), f"{mine['unsure share']:.1%}",
                     *(f"{fmt(by[m]['precision of right'])} ({by[m]['wrong counted right']})"
                       for m in methods[1:])])
    return tabulate(body, headers=["class", "rows", "right", "answer_match precision of right "
                                   "(wrong counted right)", "agreement (decided)", "unsure",
                                   *(f"{short[m]} precision" for m in methods[1:])],
                    disable_numparse=True)


def main(argv: Sequence[str] | None = None,
         echo: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=OUT)
    parser.add_argument("--similar", type=float, default=SIMILAR,
                        help="answer_match's cosine cut for unsure (default: the shipped one)")
    parser.add_argument("--sets", nargs="+", default=["benchmark", "held out",
                                                       "adversarial (development)"],
                        help="which sets to run (the adversarial held-out sets: "
                             "\"adversarial (held out)\" and \"adversarial (held out, "
                             "second)\", each run once its rule is frozen)")
    parser.add_argument("--not-plain", action="store_true",
                        help="the rule without its plain-statement check (answer_match's "
                             "`Expectation.plain` off; on in the shipped rule)")
    parser.add_argument("--adversarial", nargs="+", type=Path, default=[],
                        help="further self-contained adversarial sets (JSONL rows as in "
                             "benchmarks/data/answer_match_adversarial*.jsonl), each run and "
                             "reported under its file name")
    parser.add_argument("--unsure-right", action="store_true",
                        help="list each answer labelled right that answer_match leaves unsure, "
                             "with its reason (what a person would have to label)")
    args = parser.parse_args(argv)
    cosine = Cosines()
    parser_sets = [("benchmark", DATA), ("held out", HELD_OUT),
                   ("adversarial (development)", ADVERSARIAL),
                   ("adversarial (held out)", ADVERSARIAL_HELD_OUT),
                   ("adversarial (held out, second)", ADVERSARIAL_HELD_OUT_2),
                   ("adversarial (held out, third)", ADVERSARIAL_HELD_OUT_3),
                   ("adversarial (held out, fourth)", ADVERSARIAL_HELD_OUT_4),
                   ("adversarial (held out, fifth)", ADVERSARIAL_HELD_OUT_5),
                   ("adversarial (held out, sixth)", ADVERSARIAL_HELD_OUT_6),
                   ("adversarial (held out, seventh)", ADVERSARIAL_HELD_OUT_7),
                   ("adversarial (held out, eighth)", ADVERSARIAL_HELD_OUT_8)]
    parser_sets = [(name, data) for name, data in parser_sets if name in args.sets]
    parser_sets += [(f"adversarial ({path.name})", path) for path in args.adversarial]
    found = {name: run(args.similar, data, cosine, not args.not_plain)
             for name, data in parser_sets if data.exists()}
    for name, figures in found.items():
        report(name, figures, args.similar, echo, args.unsure_right)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(found, indent=2, ensure_ascii=False) + "\n",
                         encoding="utf-8")
    return 0


def report(name: str, found: dict, similar: float, echo: Callable[[str], None],
           unsure_right: bool = False) -> None:
    echo(f"\n{name}: {found['answers']} hand-labelled answers ({found['right by label']} "
         f"right), answer_match with similar = {similar:.2f}")
    echo(table(found["rows"], found["answers"]))
    echo("answer_match by type of answer:")
    for kind, counts in found["by type"].items():
        echo(f"  {kind}: {counts}")
    if name.startswith("adversarial"):
        echo(class_table(found["by class"]))
    never = found["dumps or candidate lists counted right"]
    echo(f"dumps or candidate lists counted right: {never}")
    echo(f"answer_match's decided answers that disagree with the labels: "
         f"{len(found['disagreements'])}")
    for d in found["disagreements"]:
        echo(f"  {d['question']} [{d['type']}] label {d['label']}, called {d['call']}: {d['why']}")
    if unsure_right:
        echo(f"answers labelled right that answer_match leaves unsure: "
             f"{len(found['unsure right answers'])}")
        for d in found["unsure right answers"]:
            echo(f"  {d['question']} [{d['type']}]: {d['why']} · {d['answer']!r}")


if __name__ == "__main__":
    sys.exit(main())
