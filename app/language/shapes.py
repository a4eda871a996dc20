"""The fast path of `app.language.parse.parse`: Python parses each distinct line *shape* once.

Nearly every line of a real program is a short statement that differs from many others
only in its names and numbers: `v12 = v3 * v7` and `h = w * x` are both the shape
`n0 = n2 * n4`. Python's parser and the lab's whitelist need to read a shape only once;
every line of that shape reuses the translation with its own names, numbers and columns.
Two tables make most lines cost little more than building their statement:

- A line's *mask* is its text with every digit written as 1. Lines with the same mask
  have the same tokens at the same columns (`v12 = v3 * 0.52`, `v40 = v8 * 1.07`), so one
  dict lookup finds the recipe (app/recipes.py) that builds the line's statement. (The
  one thing a digit changes is an integer with a leading 0: such a line is not taken.)
- Only a new mask is split into tokens (one regex), and only a new shape is parsed and
  translated, by the whitelist that `app.language.parse` passes in: there is no second whitelist.

It is a shortcut and nothing more. It takes only plain programs (ASCII, one statement per
line, no indentation, the tokens of `_TOKEN`) and whenever it is not certain (a shape the
whitelist rejects, a name used before it is defined, a huge integer) it returns None:
`app.language.parse` then parses the whole program the ordinary way, which words every error.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from typing import Final, TypeVar

from app.language.program import Program, Statement
from app.language.recipes import NOTHING, Recipe, Shape, Token, Unsure, recipe_for
from app.limits import Limits

Translate = Callable[[str, bool], tuple[Statement, ...] | None]
"""The whitelist for one line, from `app.language.parse`: (shape text, still in the opening block of
leaf definitions?) -> its statements (none for `import torch`), or None if it is rejected."""

# The tokens Python reads exactly the same way (ASCII, verbose). A number must not run into
# a name, a dot or more digits (`1if`, `1.5.real`, `01`): Python reads those otherwise.
_TOKEN: Final = r"""(?ax)
      (?P<space>\ +)
    | (?P<name>[A-Za-z_]\w*)
    | (?P<float>(?:(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w.]))
    | (?P<int>(?:0+|[1-9]\d*)(?![\w.]))
    | (?P<op>\*\*|[-+*/()\[\],.=])
    | (?P<comment>\#.*)
"""
_KEPT: Final = frozenset(keyword.kwlist) | {"torch"}   # names the whitelist reads by their spelling
_MASK: Final = str.maketrans("0123456789", "1111111111")
_LINE_BREAKS: Final = "\r\v\f\x1c\x1d\x1e"   # end a line for str.splitlines, not for Python
_LONGEST_NUMBER: Final = 100                  # characters; int() refuses over 4300 digits
_MAX_ENTRIES = 2048                    # per table (a recipe is ~2 KB); a full one is emptied
_MAX_LIMITS = 4                        # distinct Limits remembered


class _Tables:
    """What has been learned for one `Limits` (the whitelist's answers depend on them).
    The opening block reads `a = 1.0` as a leaf, the rest as a number: separate recipes."""

    def __init__(self) -> None:
        self.opening: dict[str, Recipe | None] = {}      # mask -> recipe, None: rejected
        self.body: dict[str, Recipe | None] = {}
        self.shapes: dict[tuple[bool, str], Shape | None] = {}


_TABLES: dict[Limits, _Tables] = {}
_K = TypeVar("_K")
_V = TypeVar("_V")


def clear_cache() -> None:
    """Forget every recipe and shape (for tests that count what gets parsed)."""
    _TABLES.clear()


def _remember(table: dict[_K, _V], key: _K, value: _V) -> None:
    """Bounded, and safe enough for threads: each dict operation is atomic, and two
    threads that learn the same key learn equal values."""
    if len(table) >= _MAX_ENTRIES:
        table.clear()
    table[key] = value


def parse_by_shapes(source: str, limits: Limits, translate: Translate) -> Program | None:
    """The Program `app.language.parse` would make of this source, or None when not certain."""
    if not source.isascii() or any(c in source for c in _LINE_BREAKS):
        return None
    lines = source.splitlines()
    masks = source.translate(_MASK).splitlines()
    tables = _TABLES.get(limits)
    if tables is None:
        if len(_TABLES) >= _MAX_LIMITS:
            _TABLES.clear()
        tables = _TABLES[limits] = _Tables()
    recipes, opening = tables.opening, True
    statements: list[Statement] = []
    defined: set[str] = set()
    has_backward, last_assigned = False, None
    max_bits = limits.max_number_bits
    for number, (line, mask) in enumerate(zip(lines, masks, strict=True), start=1):
        recipe = recipes.get(mask)
        if recipe is None:
            if mask in recipes:
                return None
            recipe = _learn(tables, line, opening, translate)
            _remember(recipes, mask, recipe)
            if recipe is None:
                return None
        for start, end in recipe.uses:
            if line[start:end] not in defined:
                return None
        for start, end in recipe.ints:
            if int(line[start:end]).bit_length() > max_bits:
                return None
        for start, end in recipe.long_ints:
            if line[start] == "0" and line[start:end].strip("0"):     # `01`; `00` is 0
                return None
        if recipe.make is None:
            continue
        statements.append(recipe.make(line, number))
        if recipe.target is not None:
            last_assigned = line[recipe.target[0]:recipe.target[1]]
            defined.add(last_assigned)
        if not recipe.keeps_opening:                 # as _Translator.program does
            has_backward = has_backward or recipe.backward
            if opening:
                recipes, opening = tables.body, False
    if not statements:
        return None
    imports = any(line.startswith("import") for line in lines)
    return Program(tuple(statements), None if has_backward else last_assigned, lines, imports)


def _learn(tables: _Tables, line: str, opening: bool, translate: Translate) -> Recipe | None:
    """The recipe for a new mask: split the line into tokens, translate its shape (once
    per shape) and fit the translation to the tokens' columns."""
    tokens = _tokens(line)
    if tokens is None:
        return None
    if not tokens:
        return NOTHING
    text = _shape_text(tokens)
    if text is None:
        return None
    key = (opening, text)
    if key in tables.shapes:
        shape = tables.shapes[key]
    else:
        shape = _translate_shape(text, opening, translate)
        _remember(tables.shapes, key, shape)
    if shape is None:
        return None
    try:
        return recipe_for(shape, tokens, opening)
    except Unsure:
        return None


def _tokens(line: str) -> list[Token] | None:
    """The line's tokens up to any comment, or None: a character or number outside
    `_TOKEN`, or an indented statement (Python would refuse the indentation)."""
    tokens: list[Token] = []
    pos = 0
    for match in re.finditer(_TOKEN, line):
        if match.start() != pos:           # skipped a character that starts no token
            return None
        if match.lastgroup == "comment":
            pos = len(line)
            break
        if match.lastgroup != "space":
            tokens.append(Token(str(match.lastgroup), match.group(), pos, match.end()))
        pos = match.end()
    if pos != len(line) or (tokens and tokens[0].start > 0):
        return None
    return tokens


def _shape_text(tokens: list[Token]) -> str | None:
    """The tokens joined by spaces, each variable name written `n<token index>`, each
    number 1 or 1.0. Keywords, `torch`, attribute names (after a dot) and keyword-argument
    names (before `=`, not first) keep their spelling: the whitelist decides by it."""
    words = []
    for i, token in enumerate(tokens):
        word = token.text
        if token.kind in ("int", "float"):
            if len(word) > _LONGEST_NUMBER:
                return None
            word = "1" if token.kind == "int" else "1.0"
        elif token.kind == "name":
            if word.startswith("__"):       # refused by the whitelist, whatever follows
                return None
            after_dot = i > 0 and tokens[i - 1].text == "."
            argument = 0 < i < len(tokens) - 1 and tokens[i + 1].text == "="
            if word in _KEPT or after_dot or argument:
                if any(c.isdigit() for c in word):    # masks hide which digits these are
                    return None
            else:
                word = f"n{i}"
        words.append(word)
    return " ".join(words)


def _translate_shape(text: str, opening: bool, translate: Translate) -> Shape | None:
    statements = translate(text, opening)
    if statements is None or len(statements) > 1:
        return None
    at_start, at_end, pos = {}, {}, 0
    for i, word in enumerate(text.split(" ")):
        at_start[pos], at_end[pos + len(word)] = i, i
        pos += len(word) + 1
    return Shape(statements, at_start, at_end)
