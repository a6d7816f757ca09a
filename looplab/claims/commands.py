"""`looplab claims` (list the shipped claims) and `looplab claims check [NAME]`.

Commands of the claims package; `looplab.cli.app` registers the group (`claims_app`).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from looplab.claims.check import check_claim, check_json
from looplab.claims.model import claim_entries, get_claim
from looplab.claims.render import check_text, listing_text

__all__ = ["check_command", "claims_app"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _list(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Published claims as data, tested by the lab. Without a sub-command: list them."""
    if ctx.invoked_subcommand is not None:
        return
    entries = claim_entries()
    if as_json:
        typer.echo(json.dumps([e.model_dump(mode="json") for e in entries.values()], indent=2))
    else:
        typer.echo(listing_text(entries))


def check_command(
    name: Annotated[
        str | None,
        typer.Argument(help="A claim's name (`looplab claims` lists them); all when omitted."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compute each claim (analytic re-timing, seconds): the lab's prediction with a 95% CI
    where n allows, the verdict, the evidence and its n, the assumptions, and for the
    decomposed ones the speedup taken apart into its factors."""
    entries = [get_claim(name)] if name else list(claim_entries().values())
    checks = [check_claim(entry) for entry in entries]
    if as_json:
        typer.echo(json.dumps([check_json(c) for c in checks], indent=2))
        return
    typer.echo("\n\n".join(check_text(c) for c in checks))


def claims_app() -> typer.Typer:
    """The `looplab claims` group: lists without a sub-command, `check` computes."""
    app = typer.Typer(
        help="Published claims as data, tested by the lab.", invoke_without_command=True
    )
    app.callback()(_list)
    app.command("check")(check_command)
    return app
