"""What `ragate audit` says of each finding, one function a rule, from typed values: no
message quotes a gist or a fact (a sealed goldset's findings show none)."""

from __future__ import annotations

from pytest_ragate.wording.numbers import plural


def duplicate_question(first: str, line: int) -> str:
    return (f"the same question as {first} (line {line}) once folded: one question counted "
            "twice in every interval; delete one, or reword it to ask something else")


def near_duplicate(first: str, cosine: float) -> str:
    return (f"asks what {first} asks (cosine {cosine:.2f} through all-MiniLM-L6-v2, the same "
            "names and numbers): a paraphrase counts as a second, dependent observation; "
            "review and keep one")


def unsupported_evidence(lexical: float, cosine: float | None, missing_facts: int) -> str:
    said = [f"the gist's content words found in the evidence: {lexical:.0%} (idf-weighted)"]
    if cosine is not None:
        said.append(f"cosine of gist and evidence {cosine:.2f}")
    if missing_facts:
        said.append(f"{plural(missing_facts, 'fact')} not stated in the evidence")
    return ("the evidence does not seem to support the expected answer (" + "; ".join(said)
            + "): review the gist, the facts and the evidence span")


def facts_not_in_corpus(missing: list[int], facts: int) -> str:
    which = ", ".join(f"facts[{i}]" for i in missing)
    return (f"{which} ({len(missing)} of {facts}) appear nowhere in the corpus: no answer "
            "drawn from it can state them; fix the fact or the corpus")


def abstain_answerable(doc_id: str, first: int, last: int, unit: str, covered: float,
                       ) -> str:
    return (f"must be abstained from, but {doc_id} {unit}s {first}–{last} hold {covered:.0%} "
            "of its content words (idf-weighted): if the corpus answers it, give it evidence "
            "and a gist")


def wide_evidence(doc_id: str, units: int, of: int, unit: str, whole: bool) -> str:
    what = ("the whole document" if whole else
            f"{plural(units, unit)} of {of} ({units / of:.0%} of the document)")
    return (f"evidence in {doc_id} is {what}: almost any context from it counts as cited, "
            "so citation accuracy and evidence recall are easy; narrow it to the units "
            "that hold the answer")


def wide_evidence_sealed(whole: bool) -> str:
    """A sealed answer's wide evidence, without its document or its size."""
    what = "is a whole document" if whole else "covers most of its document"
    return (f"an evidence span {what} (the answers are sealed: unseal them to see which): "
            "almost any context from it counts as cited, so citation accuracy and evidence "
            "recall are easy; narrow it to the units that hold the answer")


def unasked_document(doc_id: str) -> str:
    return (f"document {doc_id!r} is the evidence of no question: no floor measures "
            "retrieval from it")


def unasked_sealed(count: int) -> str:
    """Documents no sealed answer points into, counted: naming them would tell which
    documents the sealed evidence is in."""
    are = "is" if count == 1 else "are"
    return (f"{plural(count, 'document')} {are} the evidence of no question (the answers are "
            "sealed: unseal them to see which): no floor measures retrieval from them")


def slice_too_small(label: str, n: int, needs: int | None, value: float | None) -> str:
    seen = ("if every answer were right" if value is None
            else f"at the value a saved run measured ({value:.2f})")
    if needs is None:
        return (f"floor {label} is over {plural(n, 'question')}: no n lets its 95% interval "
                f"clear the floor {seen}; it can never hold")
    return (f"floor {label} is over {plural(n, 'question')} but needs about {needs} to be "
            f"decided {seen} (scoring/slices.py's needs): it will stay insufficient; add "
            "questions to the slice or drop the floor")


def quantile_too_small(label: str, n: int, needs: int) -> str:
    return (f"floor {label} is over {plural(n, 'answer')}, fewer than the {needs} its 95% "
            "upper bound needs: it can never be decided; add questions or drop the floor")


def never_separates(outcome: str, runs: int) -> str:
    return (f"{outcome} in every one of {plural(runs, 'saved run')}: it separates no system "
            "from another; a harder or a different question would")


def contradicted_fact(negated: list[int], renumbered: list[int], gist_negated: int,
                      gist_renumbered: int, facts: int) -> str:
    """What the corpus says against an expected answer, by fact index and gist count: never
    the fact, the gist or where the corpus says it (a sealed goldset's findings show none)."""
    said = []
    if negated:
        said.append(f"{', '.join(f'facts[{i}]' for i in negated)} ({len(negated)} of {facts}) "
                    "stated only negated where the corpus states it (its evidence first)")
    if renumbered:
        said.append(f"{', '.join(f'facts[{i}]' for i in renumbered)} stated in its evidence "
                    "only with another number in its place")
    if gist_negated:
        said.append(f"{gist_negated} of the gist's numbers and names stated in its evidence "
                    "only negated")
    if gist_renumbered:
        said.append(f"{gist_renumbered} of the gist's numbers stated in its evidence only with "
                    "another number in its place")
    return ("the corpus says otherwise: " + "; ".join(said) + ": an answer drawn from it "
            "would not state the expected answer; fix the answer or the corpus")
