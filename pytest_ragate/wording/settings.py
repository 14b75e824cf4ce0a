"""What ragate says about where its settings came from: a knob that holds for one run given
where every run reads it, a flag for a knob that is configuration only, a key set in the
environment but empty, and saved runs read without the key a project that declares its
results signed needs.
"""

from __future__ import annotations


def standing_knob(name: str, where: str) -> str:
    """A one-run knob as it was given where every run reads it (`settings.standing`):
    `ragate_<name> in the ini file`, `--ragate-<name> in addopts`."""
    if where == "the ini file":
        return f"ragate_{name} in the ini file"
    return f"--ragate-{name.replace('_', '-')} in {where}"


def configuration_only_flags(given: list[tuple[str, str]]) -> str:
    """The usage error for flags of knobs set in configuration only (`settings.
    configuration_flags_given`): one line per flag, naming the ini option to set instead."""
    lines = [f"  {flag}: set ragate_{name} in the ini file ([pytest], or "
             f"[tool.pytest.ini_options] in pyproject.toml), or for one run "
             f"-o ragate_{name}=VALUE" for flag, name in given]
    return ("these pytest-ragate knobs are configuration, not flags:\n" + "\n".join(lines))


def key_empty(name: str) -> str:
    """A key variable set to nothing (a CI secret this job cannot see, as a fork's)."""
    return (f"{name} is set but empty: set it or unset it (an empty {name} is what a CI secret "
            "this job cannot see gives, and read as no key it would go unsaid)")


def seal_key_empty(skip: bool) -> str:
    """The run header's and the summary's line for an empty RAGATE_SEAL_KEY (a fork's job):
    said, not refused, since running without the key is the documented fork route."""
    floors = ("skipped (ragate_sealed_without_key = \"skip\"), never passed" if skip
              else "failed (ragate_sealed_without_key = \"skip\" skips them)")
    return ("ragate: RAGATE_SEAL_KEY is set but empty (a secret this job cannot see): sealed "
            f"goldsets run without their key, their scored questions skipped and floors {floors}")


def results_unsigned_reads(reads: str) -> str:
    """A run that reads saved runs without the key in a project whose results are signed."""
    return (f"ragate_results_signed = true, and this run reads saved runs ({reads}) without "
            "RAGATE_RESULTS_KEY: a saved run is taken only with its signature checked; set the "
            "key (the CI secret the saved runs were written with)")
