"""A small static completion script, for an install without shtab (the ``completion`` extra).

It offers what the parser holds: the commands, each command's options (and
those of its own subcommands), the choices of a positional or an option, and
paths after an option that takes a file. shtab's scripts do more (options
placed anywhere, descriptions in every shell); this one needs nothing installed.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Command:
    """One command's words, read from its parser."""

    name: str
    help: str = ""
    words: list[str] = field(default_factory=list)  # options, choices, nested commands
    choices: dict[str, list[str]] = field(default_factory=dict)  # option -> its values
    takes_value: list[str] = field(default_factory=list)  # options followed by a value
    paths: list[str] = field(default_factory=list)  # options followed by a path


def _read(parser: argparse.ArgumentParser, command: Command, path_dests: Iterable[str]) -> None:
    path_dests = frozenset(path_dests)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                command.words.append(name)
                _read(sub, command, path_dests)
            continue
        if not action.option_strings:
            command.words += [str(choice) for choice in action.choices or ()]
            continue
        command.words += [o for o in action.option_strings if o.startswith("--")]
        if action.nargs == 0:
            continue
        command.takes_value += action.option_strings
        for option in action.option_strings:
            if action.choices is not None:
                command.choices[option] = [str(choice) for choice in action.choices]
            elif action.dest in path_dests:
                command.paths.append(option)


def commands(
    parser: argparse.ArgumentParser, path_dests: Iterable[str]
) -> tuple[Command, list[Command]]:
    """The top level (its options and the command names) and each command."""
    top = Command("")
    subs: list[Command] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                command = Command(name, helps.get(name, ""))
                _read(sub, command, path_dests)
                subs.append(command)
                top.words.append(name)
        elif action.option_strings:
            top.words += [o for o in action.option_strings if o.startswith("--")]
            if action.nargs != 0:
                top.takes_value += action.option_strings
                if action.dest in path_dests:
                    top.paths += action.option_strings
    return top, subs


def _unique(words: Iterable[str]) -> str:
    return " ".join(dict.fromkeys(words))


def bash(parser: argparse.ArgumentParser, path_dests: Iterable[str]) -> str:
    top, subs = commands(parser, path_dests)
    every = [top, *subs]
    paths = _unique(o for c in every for o in c.paths)
    takes_value = _unique(o for c in every for o in c.takes_value)
    cases = "\n".join(f'    {c.name}) words="{_unique(c.words)}" ;;' for c in subs)
    choices: dict[str, list[str]] = {}
    for c in subs:
        for option, values in c.choices.items():
            choices.setdefault(option, values)
    values = "\n".join(
        f'    {option}) COMPREPLY=($(compgen -W "{" ".join(words)}" -- "$cur")); return ;;'
        for option, words in choices.items()
    )
    return f"""\
# bash completion for toolreg (static; regenerate with: toolreg completion bash)
_toolreg() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} cmd="" words i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case " {takes_value} " in
      *" ${{COMP_WORDS[i]}} "*) ((i++)); continue ;;
    esac
    case ${{COMP_WORDS[i]}} in
      -*) ;;
      *) cmd=${{COMP_WORDS[i]}}; break ;;
    esac
  done
  case " {paths} " in
    *" $prev "*) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  case $prev in
{values}
  esac
  case $cmd in
    "") words="{_unique(top.words)}" ;;
{cases}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _toolreg toolreg
"""


def zsh(parser: argparse.ArgumentParser, path_dests: Iterable[str]) -> str:
    # zsh runs the bash script through its bashcompinit layer.
    return "#compdef toolreg\nautoload -U +X bashcompinit && bashcompinit\n" + bash(
        parser, path_dests
    )


def fish(parser: argparse.ArgumentParser, path_dests: Iterable[str]) -> str:
    top, subs = commands(parser, path_dests)
    names = " ".join(c.name for c in subs)
    lines = [
        "# fish completion for toolreg (static; regenerate with: toolreg completion fish)",
        "complete -c toolreg -f",
    ]
    for option in top.words:
        if option.startswith("--"):
            flag = " -rF" if option in top.paths else ""
            lines.append(f"complete -c toolreg -l {option[2:]}{flag}")
    for c in subs:
        desc = f" -d {shlex.quote(c.help)}" if c.help else ""
        lines.append(
            f"complete -c toolreg -n 'not __fish_seen_subcommand_from {names}' -a {c.name}{desc}"
        )
        seen = f"-n '__fish_seen_subcommand_from {c.name}'"
        for word in dict.fromkeys(c.words):
            if not word.startswith("--"):
                lines.append(f"complete -c toolreg {seen} -a {shlex.quote(word)}")
            elif word in c.choices:
                values = shlex.quote(" ".join(c.choices[word]))
                lines.append(f"complete -c toolreg {seen} -l {word[2:]} -xa {values}")
            elif word in c.paths:
                lines.append(f"complete -c toolreg {seen} -l {word[2:]} -rF")
            else:
                lines.append(f"complete -c toolreg {seen} -l {word[2:]}")
    return "\n".join(lines) + "\n"


SCRIPTS = {"bash": bash, "zsh": zsh, "fish": fish}
