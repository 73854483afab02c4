"""The live progress display of a campaign (rich)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from secant.campaign.remote import RemoteWorker

if TYPE_CHECKING:
    from secant.campaign.campaign import Campaign


class ProgressView:
    """Renders a campaign's counters as a small table."""

    def __init__(self, campaign: Campaign) -> None:
        self.campaign = campaign

    def render(self) -> Table:
        """The current state as a rich table."""
        campaign = self.campaign
        stats = campaign.fuzzer.stats
        elapsed = max(stats.elapsed, 1e-9)
        execs, paths, corpus = campaign.totals()
        figures = campaign.coverage_figures()
        table = Table(title=f"secant: {campaign.chain.main.name if campaign.chain.main else ''}",
                      show_header=False, box=None)
        table.add_column(style="bold cyan")
        table.add_column()
        table.add_row("executions", f"{execs:,} ({execs / elapsed:,.0f}/s)")
        if len(campaign.workers) > 1:
            table.add_row("workers", "  ".join(
                f"{w.fuzzer.stats.execs:,}" + (" (restarted)" if isinstance(w, RemoteWorker)
                                               and w.restarts else "")
                for w in campaign.workers))
        table.add_row("elapsed", f"{elapsed:.1f} s")
        table.add_row("memory", "  ".join(f"{mb:,.0f} MB" for mb in campaign.resident_mb()))
        table.add_row("paths / corpus", f"{paths} / {corpus}")
        table.add_row("branches", f"{figures['branches_covered']} / {figures['branches_total']}")
        table.add_row("instructions",
                      f"{figures['instructions_covered']} / {figures['instructions_total']}")
        table.add_row("findings", str(len(campaign.findings)))
        if campaign.shrinking is not None:
            # The phase after fuzzing: the counters above stay still meanwhile.
            table.add_row("shrinking", campaign.shrinking.row())
        since = stats.execs - stats.last_new_path_exec
        table.add_row("last new path", f"{since:,} execs ago")
        for line in campaign.progress_rows():
            table.add_row(*line)
        return table
