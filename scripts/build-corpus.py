#!/usr/bin/env python3
"""Regenerate `corpus/` (traces, index.json, PROVENANCE.md) from the raw original files.

Usage: `.venv/bin/python scripts/build-corpus.py SRC_DIR [-o OUT]`

SRC_DIR holds the raw originals as collected for this project: `corpus/{mini-swe-agent,
swe-agent,openhands,inspect,tracelab}/` and `external-traces/{mini-swe-agent,openhands,
inspect,tracelab}/` (file names flattened with `--`). Each file is imported with
`looplab import auto`'s code, compacted (`looplab.traces.corpus.compact_run`) and written
to OUT/<harness>/<run_id>.jsonl.gz. A build-time tool: tests never run it, and nothing in the
project reads SRC_DIR.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from looplab.traces.corpus import CorpusRun, compact_run, compress, corpus_entry, write_index
from looplab.traces.importers import import_runs, write_runs

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Source:
    """A group of raw files from one repository."""

    pattern: str
    """Glob under SRC_DIR."""
    repository: str
    commit: str
    licence: str
    path: Callable[[str], str]
    """The original path in the repository, from the (flattened) file name."""


def _mini(name: str, run_dir: str | None = None) -> str:
    folder, _, file = name.rpartition("--") if run_dir is None else (run_dir, "", name)
    instance = file.removesuffix(".traj.json")
    return f"output/{folder}/{instance}/{file}"


def _inspect(name: str) -> str:
    folder = "tests/analysis/test_logs" if name[:1].isdigit() else "tests/log/test_eval_log"
    return f"{folder}/{name}"


MINI = ("SWE-agent/mini-swe-agent", "41a1e33b", "MIT")
OPENHANDS = ("All-Hands-AI/OpenHands", "156d0686", "MIT")
INSPECT = ("UKGovernmentBEIS/inspect_ai", "499e6152", "MIT")
TRACELAB = ("uw-syfi/TraceLab", "0b8a262b", "CC BY 4.0 (dataset)")

SOURCES = [
    Source("corpus/mini-swe-agent/*.traj.json", *MINI, _mini),
    Source(
        "external-traces/mini-swe-agent/*.traj.json",
        *MINI,
        lambda n: _mini(n, run_dir="deepseek_lite_dev"),
    ),
    Source(
        "corpus/swe-agent/*.traj",
        "SWE-agent/SWE-agent",
        "3ea751c0",
        "MIT",
        lambda n: "trajectories/demonstrations/" + n.replace("--", "/"),
    ),
    Source("corpus/openhands/*.json", *OPENHANDS, lambda n: f"tests/runtime/trajs/{n}"),
    Source(
        "external-traces/openhands/multi_swe_bench_output.jsonl",
        *OPENHANDS,
        lambda n: "evaluation/benchmarks/multi_swe_bench/examples/output.jsonl",
    ),
    Source("corpus/inspect/*", *INSPECT, _inspect),
    Source(
        "external-traces/inspect/browser.json",
        *INSPECT,
        lambda n: "tests/analysis/test_logs/2025-05-12T20-27-36-04-00_browser.json",
    ),
    Source(
        "corpus/tracelab/*-session.trace.json",
        *TRACELAB,
        lambda n: f"example_sessions/{n.split('-')[0]}/trace.json",
    ),
]

LEFT_OUT = {
    "corpus/tracelab/sanitized-round_trace.expanded.json": "the same two sessions as "
    "claude-/codex-session.trace.json, sanitized (importing both would count them twice)",
    "external-traces/tracelab/round_trace.jsonl": "the same rows as the expanded file above",
    "corpus/tracelab/paper_macros.tex": "statistics over TraceLab's full dataset, not runs",
}


@dataclass
class Row:
    """One PROVENANCE.md row: a source file and what became of it."""

    file: str
    source: str
    licence: str
    harness: str
    models: str
    runs: int


def build(src: Path, out: Path) -> tuple[list[CorpusRun], list[Row]]:
    """Import every source file into `out`; return the index entries and provenance rows."""
    for old in [*out.glob("*/*.jsonl"), *out.glob("*/*.jsonl.gz")]:
        old.unlink()
    entries: list[CorpusRun] = []
    rows: list[Row] = []
    for group in SOURCES:
        files = sorted(src.glob(group.pattern))
        if not files:
            sys.exit(f"build-corpus: nothing matches {group.pattern} under {src}")
        for file in files:
            origin = f"{group.repository}@{group.commit}:{group.path(file.name)}"
            fmt, runs = import_runs("auto", file)
            kept = [
                compact_run(r, source=origin, licence=group.licence)
                for r in runs
                if r.report.steps > 0
            ]
            for run, written in zip(kept, write_runs(kept, out / fmt), strict=True):
                file_name = str(compress(written).relative_to(out))
                entries.append(corpus_entry(run, file_name, source=origin, licence=group.licence))
            models = sorted({r.header.model or "unknown" for r in kept})
            relative = str(file.relative_to(src))
            rows.append(Row(relative, origin, group.licence, fmt, ", ".join(models), len(kept)))
    return entries, rows


def provenance(entries: list[CorpusRun], rows: list[Row]) -> str:
    """The text of PROVENANCE.md."""
    lines = [
        "# Corpus provenance (generated by scripts/build-corpus.py; do not edit)",
        "",
        "Compact looplab traces of real public agent runs: timings, token counts, tool names,",
        "exit codes and sizes as imported; message and tool content dropped unless short.",
        "Written by other projects (their licences below); converted, never edited.",
        "",
        "## Runs per harness and model",
        "",
        "| harness | model | runs | with model and tool times |",
        "|---|---|---|---|",
    ]
    groups = Counter((e.harness, e.model or "unknown") for e in entries)
    timed = Counter((e.harness, e.model or "unknown") for e in entries if e.timed)
    for (harness, model), count in sorted(groups.items()):
        lines.append(f"| {harness} | {model} | {count} | {timed[(harness, model)]} |")
    lines += [
        "",
        "## Source files",
        "",
        "| raw file | source (repository @ commit : path) | licence | harness | model | runs |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        repo, _, path = row.source.partition(":")
        source = f"{repo.replace('@', ' @ ')} : {path}"
        lines.append(
            f"| {row.file} | {source} | {row.licence} | {row.harness} | {row.models} | {row.runs} |"
        )
    lines += ["", "Left out:", ""]
    lines += [f"- {file}: {why}" for file, why in LEFT_OUT.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse the arguments, build, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, metavar="SRC_DIR", help="the raw originals")
    parser.add_argument("-o", "--output", type=Path, default=REPO / "corpus", help="corpus dir")
    args = parser.parse_args()
    out: Path = args.output
    out.mkdir(parents=True, exist_ok=True)
    entries, rows = build(args.src, out)
    write_index(out, entries)
    (out / "PROVENANCE.md").write_text(provenance(entries, rows), encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{len(entries)} runs from {len(rows)} files -> {out} ({size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
