"""The report: one self-contained HTML file (and its JSON) comparing recorded runs, the claim
panel, and the read-only dashboard over experiments.

`data/` pairs and measures runs, `views/` builds what a page shows, `render/` draws it. See
README.md in this folder.
"""
