"""The latency model as data: prices now (`prices.py`); the profiles move here later."""
