"""Tidies an mdoc page swift-argument-parser's generate-manual writes, so
that `mandoc -T lint` and `groff -ww -man` have nothing to say about it
(pages.py runs it on every page: tidy(lines, version)):

- the header says "General Commands Manual" and the footer names cog-cred
  and its version where man(1) renders with groff (Debian's man-db): groff's
  mdoc otherwise says "BSD General Commands Manual" and "BSD"; `.Os` itself
  stays empty, since mandoc's lint objects to an explicit one;
- the root command's --help text carries EXIT STATUS and ENVIRONMENT lists,
  which the hand-written sections (sections.mdoc) give in full: they are
  left out of DESCRIPTION, so each section appears once;
- blocks indented by two spaces (examples, tables in the help text) become
  literal displays, so their lines stay as written;
- blank lines become paragraph breaks (or go, before a list);
- text lines are broken after each sentence and at 80 bytes, as mdoc wants
  (a line must never start with a dot or a quote: those are escaped).
"""
import re

WIDTH = 80
DROPPED_BLOCKS = {"EXIT STATUS", "ENVIRONMENT"}  # given by sections.mdoc
SENTENCE_END = re.compile(r"(?<=[A-Za-z0-9)\]'\"][.?!])\s+(?=[A-Z$(\"'`-])")


def text_lines(line):
    """A text line, one sentence per line, each at most WIDTH bytes where words allow."""
    out = []
    for sentence in SENTENCE_END.split(line.strip()):
        current = ""
        for word in sentence.split():
            if current and len((current + " " + word).encode()) > WIDTH:
                out.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        if current:
            out.append(current)
    return [("\\&" + l) if l[:1] in (".", "'") else l for l in out]


def tidy(lines, version):
    out, literal, dropping, section, display = [], False, False, "", False
    for index, line in enumerate(lines):
        # A display the input opened itself is left exactly as written.
        if display or line.startswith(".Bd"):
            display = not line.startswith(".Ed")
            out.append(line.rstrip())
            continue
        if line.startswith(".Dt"):
            # Before .Dt, which sets up the page header.
            out += [f".ds doc-default-operating-system cog-cred {version}", ".ds doc-volume-operating-system"]
        if line.startswith(".Nd "):
            # A one-line description, not a sentence: no trailing full stop.
            out.append(re.sub(r'\.("?)$', r"\1", line.rstrip()))
            continue
        if line.startswith(".Sh "):
            section = line[4:].strip().strip('"')
        is_macro = line.startswith(".")
        if section == "DESCRIPTION" and line.strip() in DROPPED_BLOCKS:
            dropping = True
            continue
        if dropping:
            if line.startswith("  ") and not is_macro:
                continue
            dropping = False
            if not line.strip():
                continue
        indented = line.startswith("  ") and not is_macro
        if indented and not literal:
            if out and out[-1] == ".Pp":
                out.pop()
            out.append(".Bd -literal -offset indent")
            literal = True
        if literal and not indented:
            out.append(".Ed")
            literal = False
        if literal:
            out.append(line[2:].rstrip())
        elif not line.strip():
            following = next((l for l in lines[index + 1:] if l.strip()), "")
            if out and out[-1] not in (".Pp", ".Ed") and not following.startswith((".Bl", ".It", ".El", ".Sh", ".Ss")) \
                    and not following.startswith("  "):
                out.append(".Pp")
        elif is_macro:
            # A paragraph break right before a list or item says nothing.
            if line.startswith((".Bl", ".It", ".El", ".Sh", ".Ss")) and out and out[-1] == ".Pp":
                out.pop()
            out.append(line.rstrip())
        else:
            out.extend(text_lines(line))
    if literal:
        out.append(".Ed")
    return out

