"""What a run leaves: the results file, the Markdown and HTML reports, the history and the
baseline it reads back."""
