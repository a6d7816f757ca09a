"""The corpus: compact looplab traces of real public agent runs, shipped with looplab.

Layout (`corpus/` at the repository root, built by `scripts/build-corpus.py SRC_DIR` from
the raw originals, never by tests):

```
corpus/index.json              one entry per trace: file, harness, agent, model, task,
                               source (repository@commit:path), licence, steps, how its
                               model and tool times were obtained
corpus/PROVENANCE.md           one row per source file, and runs per harness and model
corpus/<harness>/<run_id>.jsonl.gz  looplab-1 traces, gzip-compressed (read_trace reads them,
                               so `looplab sweep corpus/<harness>` works)
```

A corpus trace keeps every timing, token count, tool name, exit code and size of the
import it came from; message and tool content is dropped unless small (`compact_run`), so
the folder stays small. `list_corpus()` reads the index, `select(...)` filters it ("all
mini-swe-agent DeepSeek runs": `select(runs, harness="mini-swe-agent", model="deepseek")`),
`load_corpus(runs)` reads the traces.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from looplab.bundled import bundled_corpus_dir
from looplab.errors import ConfigError, TraceError
from looplab.traces.importers import ImportedRun
from looplab.traces.io import Trace, read_trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    SandboxOpEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = [
    "CONTENT_LIMIT",
    "CorpusRun",
    "compact_run",
    "compress",
    "corpus_dir",
    "corpus_entry",
    "list_corpus",
    "load_corpus",
    "select",
    "write_index",
]

CONTENT_LIMIT = 200
"""Strings up to this many characters are kept (commands, short errors); longer ones go."""

_COMPACT_NOTE = (
    f"corpus: content dropped (prompt, model messages, tool outputs; strings over "
    f"{CONTENT_LIMIT} characters); timings, tokens, tool names, exit codes and sizes kept"
)


@dataclass(frozen=True)
class CorpusRun:
    """One corpus trace, as the index describes it."""

    file: str
    """Path relative to the corpus root (`mini-swe-agent/<run_id>.jsonl.gz`)."""
    run_id: str
    harness: str
    """The import format: `mini-swe-agent`, `swe-agent`, `openhands`, `inspect`, ..."""
    agent: str | None
    model: str | None
    task: str | None
    source: str
    """`repository@commit:path` of the original file."""
    licence: str
    steps: int
    model_time: str
    """How model times were obtained: `measured`, `estimated`, `absent` or `none` (no calls)."""
    tool_time: str
    """How tool times were obtained: `measured`, `estimated`, `absent` or `none` (no calls)."""

    @property
    def timed(self) -> bool:
        """True when no time is absent (model and tool times measured, estimated or none)."""
        return self.model_time != "absent" and self.tool_time != "absent"


def corpus_dir() -> Path:
    """The shipped corpus (`corpus/` at the repository root, or inside the wheel)."""
    return bundled_corpus_dir()


def compact_run(run: ImportedRun, *, source: str, licence: str) -> ImportedRun:
    """`run` without its bulky content, its header naming where it came from.

    Args:
        run: a freshly imported run.
        source: `repository@commit:path` of the original file (replaces `source_path`).
        licence: the original's licence.
    """
    header = run.header.model_copy(
        update={
            "source_path": source,
            "notes": [*run.header.notes, f"licence: {licence}", _COMPACT_NOTE],
        }
    )
    return ImportedRun(header=header, events=[_compact(e) for e in run.events], report=run.report)


def _small(text: str | None) -> str | None:
    return text if text is None or len(text) <= CONTENT_LIMIT else None


def _compact(event: TraceEvent) -> TraceEvent:
    if isinstance(event, ModelCallEvent):
        return event.model_copy(update={"message": None})
    if isinstance(event, ToolCallEvent):
        return event.model_copy(
            update={
                "arguments": _small(event.arguments) or "",
                "output": None,
                "error": _small(event.error),
            }
        )
    if isinstance(event, RunStartEvent):
        return event.model_copy(update={"prompt": None})
    if isinstance(event, RunEndEvent):
        return event.model_copy(
            update={"check_output": None, "prompt": None, "error": _small(event.error)}
        )
    if isinstance(event, SandboxOpEvent):
        return event.model_copy(update={"detail": _small(event.detail) or ""})
    return event


def corpus_entry(run: ImportedRun, file: str, *, source: str, licence: str) -> CorpusRun:
    """The index entry of a (compacted) run written to `file` (relative to the root)."""
    return CorpusRun(
        file=file,
        run_id=run.header.run_id,
        harness=run.report.fmt,
        agent=run.header.agent,
        model=run.header.model,
        task=run.header.task,
        source=source,
        licence=licence,
        steps=run.report.steps,
        model_time=_how(run.report.model_timing, run.report.model_s, run.report.model_calls),
        tool_time=_how(run.report.tool_timing, run.report.tool_s, run.report.tool_calls),
    )


def _how(timing: str, total: float | None, calls: int) -> str:
    if not calls:
        return "none"
    if total is None:
        return "absent"
    return "measured" if timing.startswith("measured") else "estimated"


def compress(path: Path) -> Path:
    """`path` gzip-compressed to `<path>.gz` and removed; reproducible (no timestamp or
    name in the gzip header), so rebuilding an unchanged corpus changes no byte."""
    target = path.with_name(path.name + ".gz")
    target.write_bytes(gzip.compress(path.read_bytes(), compresslevel=9, mtime=0))
    path.unlink()
    return target


def write_index(root: Path, runs: Iterable[CorpusRun]) -> Path:
    """Write `root/index.json` (sorted by file)."""
    entries = sorted((asdict(r) for r in runs), key=lambda e: str(e["file"]))
    path = root / "index.json"
    path.write_text(json.dumps({"runs": entries}, indent=1) + "\n", encoding="utf-8")
    return path


def list_corpus(root: Path | None = None) -> list[CorpusRun]:
    """Every run of the corpus at `root` (default: the shipped one), from its index.

    Raises:
        ConfigError: no corpus there (no `index.json`).
        TraceError: an index that is not the corpus index format.
    """
    root = root or corpus_dir()
    index = root / "index.json"
    if not index.is_file():
        raise ConfigError(f"{root}: not a corpus (no index.json)", field="corpus")
    try:
        entries: Any = json.loads(index.read_text(encoding="utf-8"))["runs"]
        return [CorpusRun(**entry) for entry in entries]
    except (ValueError, KeyError, TypeError) as exc:
        raise TraceError(f"not a corpus index ({exc})", path=str(index)) from None


def select(
    runs: Iterable[CorpusRun],
    *,
    harness: str | None = None,
    model: str | None = None,
    task: str | None = None,
    timed: bool | None = None,
) -> list[CorpusRun]:
    """The runs matching every given filter.

    Args:
        runs: from `list_corpus`.
        harness: the import format, exactly (`mini-swe-agent`, `claude-code`, ...).
        model: a case-insensitive part of the model id (`deepseek`, `claude`).
        task: a case-insensitive part of the task id.
        timed: keep only runs with (True) or without (False) model and tool times.
    """

    def part(needle: str | None, value: str | None) -> bool:
        return needle is None or needle.lower() in (value or "").lower()

    return [
        r
        for r in runs
        if (harness is None or r.harness == harness)
        and part(model, r.model)
        and part(task, r.task)
        and (timed is None or r.timed == timed)
    ]


def load_corpus(runs: Iterable[CorpusRun], root: Path | None = None) -> list[Trace]:
    """The traces of `runs` (see `list_corpus`), in order."""
    root = root or corpus_dir()
    return [read_trace(root / r.file) for r in runs]
