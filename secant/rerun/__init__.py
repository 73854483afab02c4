"""Running a campaign's recorded cases again, apart from running campaigns.

From a campaign's output folder: ``replay`` rebuilds its chain from the manifest and runs
its findings and corpus entries again; ``resume`` carries its corpus and findings into a
new run of the same campaign on today's code, through ``adapt``, which rewrites cases for
edited functions; ``reshrink`` shrinks its findings further; ``explain`` tells a case
transaction by transaction.
"""
