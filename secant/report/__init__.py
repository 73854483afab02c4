"""Reports of a campaign: coverage (LCOV, HTML, plots), the frontier, SARIF, reproducers.

The layer sits between the oracles and the campaign: a campaign writes its reports when it
finishes, from plain data (coverage sets, cases, source maps); nothing here imports the
campaign.
"""
