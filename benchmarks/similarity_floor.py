"""Where an `answer_similarity` floor separates right answers from wrong ones (issue 45).

    .venv/bin/python benchmarks/similarity_floor.py      # --json PATH

Over the hand-labelled answers of benchmarks/data/answer_match_labels.jsonl and
answer_match_heldout.jsonl (their labels: benchmarks/answer_match.py), per shipped goldset:
each answer's answer_similarity as a run scores it (the cosine of answer and gist through the
embedded all-MiniLM-L6-v2, 0 for an answer that answers nothing, `scoring/non_answer.py`) and
as it was scored before that rule (the cosine alone); the mean over the answers labelled right
and over those labelled wrong, with a 95% interval (Wilson-free: the t interval of a mean);
and the best per-answer cut (accuracy, Cohen's kappa), an oracle cut in its favour.

A floor on a goldset's mean separates right from wrong when a system all of whose answers are
wrong falls below it and one all of whose answers are right clears it: between the wrong
answers' mean (its upper bound) and the right answers' (its lower bound). Beside them,
templated non-answers, three per question and labelled wrong: the question asked back, "I
don't know" followed by the question, and "The transcript does not say." (generated, not hand
written: they measure the rule's effect on the issue's own case, not a population of answers).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from answer_match import DATA, HELD_OUT, Case, Cosines, best_cut, load_cases  # noqa: E402

from pytest_ragate.scoring.non_answer import non_answer  # noqa: E402

OUT = HERE / "out" / "similarity_floor.json"


def templated(cases: Sequence[Case]) -> list[Case]:
    """Three non-answers per question of `cases`, labelled wrong."""
    found = []
    for case in {c.qid: c for c in cases}.values():
        asked = case.question.rstrip("?").strip()
        for text in (case.question, f"I don't know. {asked}?",
                     "The transcript does not say."):
            found.append(Case(qid=case.qid, kind="templated non-answer", label=0, text=text,
                              question=case.question, gist=case.gist, facts=case.facts,
                              forbid=case.forbid))
    return found


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95% t interval (normal quantile: n is large here)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def figures(cases: Sequence[Case], cosine: Cosines) -> dict[str, object]:
    """Each rule's (before: the cosine alone; now: 0 for a non-answer) means by label and
    best per-answer cut."""
    labels = [c.label for c in cases]
    raw = [cosine(c.text, c.gist) for c in cases]
    now = [0.0 if non_answer(c.text, c.question) else s for c, s in zip(cases, raw, strict=True)]
    found: dict[str, object] = {"answers": len(cases), "right": sum(labels),
                                "non-answers": sum(r != s for r, s in zip(raw, now, strict=True)),
                                "right called non-answers": sum(
                                    1 for c in cases if c.label and non_answer(c.text, c.question))}
    for name, scores in (("before", raw), ("now", now)):
        right = [s for s, y in zip(scores, labels, strict=True) if y]
        wrong = [s for s, y in zip(scores, labels, strict=True) if not y]
        cut = best_cut(name, scores, labels)
        found[name] = {"right mean": mean_interval(right) if right else None,
                       "wrong mean": mean_interval(wrong) if wrong else None,
                       "cut": cut.cut, "accuracy": cut.accuracy, "kappa": cut.kappa}
    return found


def main(argv: Sequence[str] | None = None, echo: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=OUT)
    args = parser.parse_args(argv)
    cosine = Cosines()
    cases = load_cases(DATA) + load_cases(HELD_OUT)
    goldsets = {"tiron-demo": [c for c in cases if c.qid.startswith("td-")],
                "qmsum-val": [c for c in cases if not c.qid.startswith("td-")]}
    found = {}
    for name, mine in goldsets.items():
        found[name] = figures(mine, cosine)
        found[f"{name} + templated non-answers"] = figures(mine + templated(mine), cosine)
    for name, f in found.items():
        echo(f"\n{name}: {f['answers']} answers ({f['right']} right), {f['non-answers']} "
             f"non-answers scored 0 ({f['right called non-answers']} of them labelled right)")
        for rule in ("before", "now"):
            r = f[rule]
            echo(f"  {rule:6}  right mean {fmt(r['right mean'])}  wrong mean "
                 f"{fmt(r['wrong mean'])}  best cut {r['cut']:.3f}: accuracy "
                 f"{r['accuracy']:.3f}, kappa {r['kappa']:.2f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
    return 0


def fmt(interval: tuple[float, float, float] | None) -> str:
    if interval is None:
        return "—"
    mean, low, high = interval
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


if __name__ == "__main__":
    raise SystemExit(main())
