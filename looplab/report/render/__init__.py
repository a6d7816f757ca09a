"""HTML and SVG out: charts, tables, sections, the page, screenshots."""
