"""Importers: other harnesses' recorded runs -> looplab traces (see ../README.md).

`REGISTRY` maps a format name to its `Importer` (`sniff(path)`, `load(path)`);
`detect_format(path)` names the format of a file for `looplab import auto`;
`import_runs(fmt, path)` does either and turns any malformed input into a `TraceError`;
`write_runs(runs, dir)` writes them, named by source identity, never overwriting.
"""

from __future__ import annotations

from looplab.traces.importers.imported import ImportedRun, ImportReport
from looplab.traces.importers.output import write_runs
from looplab.traces.importers.registry import (
    FORMATS,
    REGISTRY,
    Importer,
    describe_formats,
    detect_format,
    get_importer,
    import_runs,
)

__all__ = [
    "FORMATS",
    "REGISTRY",
    "ImportReport",
    "ImportedRun",
    "Importer",
    "describe_formats",
    "detect_format",
    "get_importer",
    "import_runs",
    "write_runs",
]
