"""The latency model: profiles, presets as data, the one call-timing formula, the token
track, vision token rules and the price book (see README.md)."""
