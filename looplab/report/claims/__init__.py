"""The claim check ("Is 750 tok/s worth it?", "Two minutes for a click?"): its views, rows,
panel and HTML.
"""
