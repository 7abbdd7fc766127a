"""How the `stitcher` command tree parses global options and shows its help.

Two things typer does not do by itself, done once here for every command:

- Global options anywhere. The root callback's options (`-q`, `--verbose`, `--profile`,
  `-V`) are the global ones; given after the command (`stitcher ingest DIR -q`) they are moved
  in front of it before click parses, and `--json` given before a command that has it is moved
  after it. Nothing after `--` moves, nor an option value (`--doc -q` searches a document
  named "-q").
- Help without Python types. typer ≥ 0.26 renders each parameter's annotation in the rich help's
  type column: `<bool>` for every flag (even `--help`), `<list[str]>`, `<int range>`, and its
  parameters offer no hook to choose another class. Here flags show nothing, a value shows its
  metavar (PATH, N, NAME) and an argument only its name.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

HELP_OPTION_NAMES = ["-h", "--help"]

#: Options that belong to a command but may be written before it (`stitcher --json stats`).
COMMAND_OPTIONS_ALSO_FIRST = ("--json",)


class _Option(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        return self.metavar or _metavar_of(self, ctx)

    def _get_number_range_help_str(self) -> str | None:
        return None  # "[x>=1]" is for mathematicians: the help text says what is allowed


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: Any) -> str | None:
        return None  # the name column already shows its metavar

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        if self.nargs != 1 and not name.endswith("..."):
            name += "..."
        return name if self.required else f"[{name}]"


def _metavar_of(option: TyperOption, ctx: Any) -> str:
    """A metavar for an option declared without one, from typer's type label (`<int range>`)."""
    label = str(option.display_type(ctx)).strip("<>")
    label = label.removeprefix("list[").removesuffix("]")
    names = {
        "int": "N",
        "int range": "N",
        "float": "NUMBER",
        "float range": "NUMBER",
        "str": "TEXT",
    }
    return names.get(label, label.upper())


class StitcherGroup(TyperGroup):
    """The root group: tidies the whole tree's help once built, and lets global options come
    after the command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # Here, not in __init__: typer adds the completion options after building the group,
        # and the root parses first, before any command's help is shown.
        for command in walk(self):
            _tidy(command)
        return super().parse_args(ctx, reorder_global_options(self, list(args)))


def walk(command: Any) -> Iterator[Any]:
    """`command` and every command and group under it."""
    yield command
    for sub in (getattr(command, "commands", None) or {}).values():
        yield from walk(sub)


def _tidy(command: Any) -> None:
    help_option = command.get_help_option(
        typer.Context(command, help_option_names=HELP_OPTION_NAMES)
    )
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if type(param) is TyperOption:
            param.__class__ = _Option
        elif type(param) is TyperArgument:
            param.__class__ = _Argument


def _takes_value(command: Any) -> set[str]:
    """The option names of `command` whose next argument is their value."""
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, TyperOption) and not (param.is_flag or param.count):
            names.update(param.opts)
    return names


def _option_names(command: Any) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, TyperOption):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def reorder_global_options(root: Any, args: list[str]) -> list[str]:
    """`args` with the root's options that follow the command moved before it, and the
    command's `--json` that precedes it moved after it."""
    root_values = _takes_value(root)
    global_names = _option_names(root)
    # the root's own options, up to the command
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        index += 1 + (args[index] in root_values)
    leading, rest = args[:index], args[index:]
    command = root
    moved_first: list[str] = []
    kept: list[str] = []
    position = 0
    while position < len(rest):
        token = rest[position]
        if token == "--":
            kept.extend(rest[position:])
            break
        subcommands = getattr(command, "commands", None) or {}
        if token in subcommands:  # `server status`, `tenants -c X activate NAME`
            command = subcommands[token]
            kept.append(token)
            position += 1
            continue
        name = token.split("=", 1)[0]
        if command is not root and name in global_names and name not in _option_names(command):
            width = 2 if token in root_values else 1
            moved_first.extend(rest[position : position + width])
            position += width
            continue
        kept.append(token)
        if token in _takes_value(command) and position + 1 < len(rest):
            kept.append(rest[position + 1])  # a value, whatever it looks like
            position += 1
        position += 1
    command_options = _option_names(command)
    moved_after = [o for o in leading if o in COMMAND_OPTIONS_ALSO_FIRST and o in command_options]
    leading = [o for o in leading if o not in moved_after]
    if not moved_after:
        return [*leading, *moved_first, *kept]
    # after the command's own name(s): before its first argument or option
    names = 0
    while names < len(kept) and not kept[names].startswith("-") and names < _depth(root, kept):
        names += 1
    return [*leading, *moved_first, *kept[:names], *moved_after, *kept[names:]]


def _depth(root: Any, args: list[str]) -> int:
    """How many leading `args` are command names (`server status` → 2)."""
    command, depth = root, 0
    for token in args:
        subcommands = getattr(command, "commands", None) or {}
        if token not in subcommands:
            break
        command, depth = subcommands[token], depth + 1
    return depth


@lru_cache(maxsize=1)
def setting_flags(root: Any) -> dict[str, str]:
    """Each command-line option's long flag by its parameter name (`chunk_size` → `--chunk-size`),
    over every command under `root`: the library names settings by those names
    (stitcher.errors.setting)."""
    flags: dict[str, str] = {}
    for command in walk(root):
        for parameter in command.params:
            long_flags = [opt for opt in getattr(parameter, "opts", []) if opt.startswith("--")]
            if parameter.param_type_name == "option" and long_flags and parameter.name:
                flags.setdefault(parameter.name, long_flags[0])
    return flags
