"""`autograd-lab questions export | answer-key | show | kinds`: the question bank for
instructors, the same variants and answers as /quiz and its downloads."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.questions import (
    MAX_COUNT,
    MAX_SEED,
    MAX_VARIANT_SEED,
    UnknownKind,
    kinds,
    practice_set,
    question,
)
from app.questions.export import FORMATS, render
from app.questions.text import answer_key, show


def add_parser(sub: Any) -> None:
    """The `questions` command and its subcommands, on the CLI's subparsers."""
    q = sub.add_parser("questions", help="self-check questions: export, answer key, show")
    qs = q.add_subparsers(dest="questions_command", required=True)
    e = qs.add_parser("export", help="a practice set in an LMS format (stdout or -o FILE)")
    _set_options(e)
    e.add_argument("--format", choices=FORMATS, default="moodle-xml")
    e.add_argument("-o", "--output", metavar="FILE",
                   help="write here (QTI: the zip Canvas imports) instead of stdout")
    e.set_defaults(run=export)
    a = qs.add_parser("answer-key", help="the model answers of a set, for a printed exam")
    _set_options(a)
    a.set_defaults(run=key)
    s = qs.add_parser("show", help="print one question")
    s.add_argument("--kind", required=True, help="a kind's id or number (see `kinds`)")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--answers", action="store_true", help="with the model answer")
    s.set_defaults(run=show_one)
    k = qs.add_parser("kinds", help="list the kinds of question and whether each is available")
    k.set_defaults(run=list_kinds)


def _set_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", nargs="+", action="extend", default=[], metavar="KIND",
                   help="kinds to mix (ids or numbers); default: every available kind")
    p.add_argument("--count", type=int, default=10, help=f"questions (1-{MAX_COUNT})")
    p.add_argument("--seed", type=int, required=True, help="the same seed gives the same set")


def _set(args: argparse.Namespace) -> list[Any]:
    if not 1 <= args.count <= MAX_COUNT:
        raise SystemExit(f"autograd-lab: --count takes 1 to {MAX_COUNT}")
    _check_seed(args.seed, MAX_SEED)
    try:
        return practice_set(args.seed, args.count, args.kind or None)
    except UnknownKind as e:
        raise SystemExit(f"autograd-lab: {e}") from None


def export(args: argparse.Namespace) -> int:
    name = f"autograd-lab-questions-{args.seed}"
    rendered = render(_set(args), args.format, name, packaged=bool(args.output))
    if args.output:
        with open(args.output, "wb") as f:
            f.write(rendered.body)
    else:
        sys.stdout.buffer.write(rendered.body)
    return 0


def key(args: argparse.Namespace) -> int:
    sys.stdout.write(answer_key(_set(args)))
    return 0


def _check_seed(seed: int, top: int) -> None:
    """The seeds /quiz and its API take, so that every printed set can be handed out as
    a link too."""
    if not 0 <= seed <= top:
        raise SystemExit(f"autograd-lab: --seed takes 0 to {top}")


def show_one(args: argparse.Namespace) -> int:
    _check_seed(args.seed, MAX_VARIANT_SEED)
    try:
        sys.stdout.write(show(question(args.kind, args.seed), answers=args.answers))
    except UnknownKind as e:
        raise SystemExit(f"autograd-lab: {e}") from None
    return 0


def list_kinds(args: argparse.Namespace) -> int:
    for k in kinds():
        state = "available" if k.available else f"unavailable: {k.reason}"
        sys.stdout.write(f"{k.number}  {k.id:<16} {k.title} ({state})\n")
    return 0
