"""Published claims as data, checked by the lab: `looplab claims`, `looplab claims check`.

One YAML file per claim in `entries/` (shipped in the wheel), loaded by `model`; each says
how the lab tests it (`evidence`: re-timing a shipped workload's draws or the corpus, or an
honest "not testable yet"); `knobs` and `shapley` take a slow-vs-fast difference apart into
its factors. See README.md.
"""
