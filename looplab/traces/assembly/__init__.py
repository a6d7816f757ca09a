"""The one trace-event builder: every producer of `looplab-1` events calls it.

`EventBuilder` (`builder.py`) owns the run axis (`axis.py`: origin, clock or epoch seconds
-> run seconds, wall times, placement of untimed items), constructs each event kind from
neutral items with clock times (`items.py`: `ModelDraft`, `ToolDraft`, `SandboxDraft`,
`StepDraft`, `RunEndDraft`), and computes each step's split (`split.py`) and the run-end
totals once. The live recorder (`experiments/record.py`), the proxy (`backends/proxy/
trace.py`) and the importers (`traces/importers/build.py`, hence `looplab collect`) emit
through it; `tests/traces/test_one_builder.py` pins that no other module constructs events.
"""
