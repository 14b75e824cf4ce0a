"""The built-in pipeline (the `[embed]` extra): the example system the shipped goldsets run
against, and the default retriever."""
