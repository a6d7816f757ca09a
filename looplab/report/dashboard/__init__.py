"""`looplab dashboard`: the read-only local web app over a directory of experiments."""
