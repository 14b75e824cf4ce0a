"""The built-in pipeline (the `[embed]` extra): the example system the shipped goldsets run
against, and the default retriever."""

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"  # here, so naming it imports no Chroma
