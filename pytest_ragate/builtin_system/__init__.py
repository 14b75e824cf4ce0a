"""The built-in pipeline (the `[embed]` extra): the example system the shipped goldsets run
against, and the default retriever."""

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"  # here, so naming it imports no Chroma


def follow_up_query(previous: str | None, question: str) -> str:
    """What the built-in pipeline retrieves for: a question, and for a later turn of a
    conversation the previous turn's question before it (a baseline that resolves "and for
    e-bikes?" by its context, never by the earlier answers)."""
    return question if previous is None else f"{previous} {question}"
