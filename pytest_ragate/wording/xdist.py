"""What a run under xdist (`-n N`) says about how ragate's items are dealt to workers: that
conversation turns are kept together, and the one-line refusals of a run that would split a
conversation or leave collected goldsets ungated (`modes/choosing.py`)."""

from __future__ import annotations

GROUPED = ("ragate: conversation turns kept together: each conversation runs on one worker "
           "(xdist's loadgroup, chosen because a collected goldset has conversations)")

KEEP_TOGETHER = ("loadgroup", "loadfile", "loadscope")  # keep a ragate.toml's items together


def splits_conversations(dist: str, goldset: str) -> str:
    """An explicit `--dist` that would deal one conversation's turns to several workers."""
    return (f"pytest-ragate: --dist {dist} would split the conversations of goldset "
            f"{goldset!r} across workers (a turn is asked only after its earlier turns, in "
            f"one process): drop --dist (ragate then keeps each conversation on one worker), "
            f"or use --dist {', '.join(KEEP_TOGETHER[:-1])} or {KEEP_TOGETHER[-1]}")


def not_gated(route: str) -> str:
    """A run under `-n` whose controller did not start a gate (the run asked for no goldset,
    and its paths hold no ragate.toml) but whose workers collected one: refused, never run
    ungated."""
    return (f"pytest-ragate: this -n run collected goldset items ({route}) but did not ask "
            "for goldsets, so no floor would be decided: ask for them (-m rag_gate, a "
            "goldset's folder or a --ragate-* flag on the command line), or run without -n")
