"""Harvey's policy and its parts.

The round (``policy``), input prediction (``prediction``), demand-driven sequences
(``demand``, ``sequences``, ``dataflow``) and sFuzz's adaptive seeds (``adaptive``).
"""
