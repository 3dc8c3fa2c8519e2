#!/usr/bin/env python3
"""cog-cred's man pages, one per command as git has them, from the pages
swift-argument-parser's `generate-manual --multi-page` writes:

    pages.py VERSION GENERATED_DIR CLI OUT_DIR [HELPER...]

GENERATED_DIR holds the plugin's pages (cog-cred.1, cog-cred.sign-in.1,
cog-cred.devices.list.1, ...); CLI is the cog-cred-cli they were generated
from; OUT_DIR gets cog-cred.1, cog-cred-sign-in.1, cog-cred-devices-list.1,
... (git's names: `man cog-cred-sign-in`), each made lint-clean by tidy.py.
A HELPER (git-credential) is a command also installed as HELPER-cog-cred:
its page carries that name too, since `man git-credential-cog-cred` opens it.

What the plugin cannot know is added here:
- each page's EXAMPLES, the lines of the command's own --help (HelpExamples:
  the plugin reads the command definitions, not what the help appends);
- the root page's COMMANDS, grouped as `cog-cred --help` groups them, each
  with its page and abstract, and the hand-written sections (sections.mdoc,
  next to this file) in place of the plugin's generic EXIT STATUS;
- a command page's EXIT STATUS points at the root's list, and its SEE ALSO
  at the pages above it (the pages below are under COMMANDS);
- NAME gives the page's own name (an alias such as login is no page name:
  apropos would list it beside login(1)); the aliases go in DESCRIPTION.
The plugin's `help` page describes no command of its own and is left out.
"""
import re
import subprocess
import sys
from pathlib import Path

import tidy

ROOT = "cog-cred"
LEFT_OUT = {("help",)}
SECTIONS = Path(__file__).with_name("sections.mdoc")


def page_name(words):
    """git's convention: the command's words joined by dashes."""
    return "-".join((ROOT,) + words)


def help_text(cli, words):
    return subprocess.run([cli, *words, "--help"], check=True, stdout=subprocess.PIPE, text=True).stdout


def help_block(text, heading):
    """The indented lines under a help heading (`EXAMPLES:`), up to a blank line."""
    lines = text.splitlines()
    if heading not in lines:
        sys.exit(f"pages.py: no {heading} in this help:\n{text}")
    start = lines.index(heading) + 1
    block = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        block.append(line[2:])
    return block


def command_groups(text):
    """[(title or None, [command name, ...]), ...] from the SUBCOMMANDS lists of
    a help text: `SIGN IN AND OUT SUBCOMMANDS:` is the group "Sign in and out"."""
    groups, inside = [], False
    for line in text.splitlines():
        if line.endswith("SUBCOMMANDS:"):
            groups.append((line[: -len("SUBCOMMANDS:")].strip().capitalize() or None, []))
            inside = True
        elif not line.startswith("  "):
            inside = False
        elif inside and not line.startswith("   "):
            groups[-1][1].append(line.split()[0].rstrip(","))
    return groups


def escaped(line):
    """A line of a literal display, as roff reads it."""
    line = line.replace("\\", "\\e")
    return "\\&" + line if line[:1] in (".", "'") else line


def display(lines):
    return [".Bd -literal -offset indent", *map(escaped, lines), ".Ed"]


def xrefs(pages):
    """References to section 1 pages, comma-separated (in the order given:
    mdoc wants them by name, which the callers' orders are)."""
    return [f".Xr {page} 1" + (" ," if index < len(pages) - 1 else "") for index, page in enumerate(pages)]


def sections(lines):
    """{title: lines of the section, its .Sh line first}, in page order; the
    lines before the first .Sh under ""."""
    out, title = {"": []}, ""
    for line in lines:
        if line.startswith(".Sh "):
            title = line[4:].strip().strip('"')
            out[title] = []
        out[title].append(line)
    return out


def command_page(words, generated, abstracts, cli, helpers):
    """The page of the command `cog-cred WORDS...`, as mdoc lines."""
    parts = sections(generated)
    name = page_name(words)
    text = help_text(cli, words)
    # NAME: the page's name, and the helper name a command is installed under.
    names = [line.split(None, 1)[1].strip('" ,') for line in parts["NAME"] if line.startswith(".Nm ")]
    aliases = names[1:]
    nd = next(line for line in parts["NAME"] if line.startswith(".Nd "))
    own_names = [name] + ([f"{words[0]}-{ROOT}"] if len(words) == 1 and words[0] in helpers else [])
    head = [re.sub(r"^\.Dt \S+", ".Dt " + name.upper(), line) for line in parts[""]]
    page = head + [".Sh NAME"] + [f".Nm {own}" + (" ," if own != own_names[-1] else "") for own in own_names] + [nd]
    # SYNOPSIS: the command as it is typed.
    page += [f".Nm {' '.join((ROOT,) + words)}" if line == ".Nm" else line for line in parts["SYNOPSIS"]]
    description = parts["DESCRIPTION"]
    if aliases:
        also = ", ".join(" ".join((ROOT,) + words[:-1] + (alias,)) for alias in aliases)
        description = description[:1] + [f"Also run as {also}.", ""] + description[1:]
    page += description
    children = command_groups(text)
    if children:
        page += commands_section(words, children, abstracts)
    page += [".Sh EXIT STATUS", "0 on success; the other statuses, the same for every command, are listed in",
             f".Xr {ROOT} 1 ."]
    page += [".Sh EXAMPLES", *display(help_block(text, "EXAMPLES:"))]
    page += [".Sh SEE ALSO", *xrefs([page_name(words[:depth]) for depth in range(len(words))])]
    return page


def commands_section(words, groups, abstracts):
    """COMMANDS: each subcommand's page and abstract, under its group's title."""
    out = [".Sh COMMANDS"]
    for title, names in groups:
        if title:
            out.append(f".Ss {title}")
        out.append(".Bl -tag -width 6n")
        for command in names:
            sub = words + (command,)
            if sub in LEFT_OUT:
                continue
            out += [f".It Xr {page_name(sub)} 1", abstracts[sub]]
        out.append(".El")
    return out


def root_page(generated, abstracts, cli):
    """The root's page: what the plugin wrote up to its generic EXIT STATUS,
    the commands, then the hand-written sections, whose EXAMPLES the help's
    examples open."""
    parts = sections(generated)
    text = help_text(cli, ())
    page = [line for title, lines in parts.items() if title not in ("EXIT STATUS", "SEE ALSO") for line in lines]
    page += commands_section((), command_groups(text), abstracts)
    for line in SECTIONS.read_text().splitlines():
        page.append(line)
        if line == ".Sh EXAMPLES":
            page += display(help_block(text, "EXAMPLES:"))
    return page


def main(version, generated_dir, cli, out_dir, *helpers):
    generated = {}
    for path in sorted(Path(generated_dir).glob(f"{ROOT}*.1")):
        words = tuple(path.name[: -len(".1")].split(".")[1:])
        if words not in LEFT_OUT:
            generated[words] = path.read_text().splitlines()
    abstracts = {words: next(line[4:].strip('"') for line in lines if line.startswith(".Nd "))
                 for words, lines in generated.items()}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for words, lines in generated.items():
        page = root_page(lines, abstracts, cli) if not words else command_page(words, lines, abstracts, cli, helpers)
        (out / f"{page_name(words)}.1").write_text("\n".join(tidy.tidy(page, version)) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
