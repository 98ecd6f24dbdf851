"""Post-game strategy: the exact classic value tables (solver), the calibrated estimates of the
other variants (estimates), the luck-and-skill reviews built on them (reviews) and the hints
(hints). Nothing here writes the log; it reads finished games and answers questions about play.
"""
