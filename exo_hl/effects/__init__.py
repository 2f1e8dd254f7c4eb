"""Effect analysis (paper §3.5–3.6, §3.10–3.14); rewrites use ``api``."""
