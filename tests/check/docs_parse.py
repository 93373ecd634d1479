#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads what the docs and the programs' --help say, for tests/check/docs.sh.
Each command prints one item a line, fields separated by a tab:

    docs_parse.py help-opts HELP          the options of a --help text
    docs_parse.py help-defaults HELP      OPTION, DEFAULT: what --help says
                                          each option's default is
    docs_parse.py man-cmd-opts PAGE       COMMAND, OPTION: the option entries
                                          under each command of gdx-doctor.1
                                          (COMMAND "" for the global ones)
    docs_parse.py man-cmds PAGE           the commands gdx-doctor.1 describes
    docs_parse.py man-opts PAGE SECTION   the option entries of a section
    docs_parse.py man-entries PAGE SECTION
                                          COMMAND|OPTION|TEXT: each option
                                          entry's text, plain
    docs_parse.py man-synopsis PAGE CMDS  COMMAND, OPTION: the synopsis (CMDS:
                                          the program's commands, comma
                                          separated; "" for none)
    docs_parse.py man7-vars PAGE          NAME, TYPE, DEFAULT, TWIN of every
                                          NCCL_GDX_* entry of the page
    docs_parse.py param-rows CPP_OUTPUT   NAME, TYPE, DEFAULT, TWIN of the
                                          parameter table, preprocessed
    docs_parse.py mentions FILE           every NCCL_GDX_* name the file names
    docs_parse.py man-head PAGE           the .TH title and section, then the
                                          name NAME gives the page (its first
                                          word), one a line
    docs_parse.py man-see-also PAGE       NAME, SECTION: each page SEE ALSO names
    docs_parse.py page-refs FILE...       FILE, PAGE, HEADING: each page of the
                                          plugin's, libnccl-net-gdx(7) or
                                          libnccl-net-gdx-*(7), the files name,
                                          with the heading named with it
                                          ("PAGE(7), HEADING", "HEADING in
                                          PAGE(7)"), "" for none
    docs_parse.py readme-calls README     TOOL|COMMAND|OPTION: each option of
                                          a gdx-doctor or gdx-bench command
                                          line in the README's code (an option
                                          "" for a command with none; "|", as
                                          either may be empty)
    docs_parse.py readme-first README     the first commands of its first
                                          code block
    docs_parse.py readme-defaults README  NAME, DEFAULT: the rows of its
                                          tables that give an NCCL_GDX_*
                                          variable's default in backquotes
    docs_parse.py figure-intros PAGE      LINE, TEXT: each table of figures
                                          (a .nf block with a digit) and the
                                          paragraph before it, in words
"""
import re
import signal
import sys

OPT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[A-Za-z])(?![\w-])")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def plain(roff):
    """A roff line as the reader sees its words."""
    s = re.sub(r"^\.[A-Z]{1,2}\b ?", "", roff)
    s = re.sub(r"\\f(\[[^]]*\]|.)", "", s)
    s = s.replace("\\(dq", '"').replace("\\(aq", "'")
    s = re.sub(r"\\\(..", "", s)
    s = s.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")
    return s.replace('"', "")


def help_entries(path):
    """The option entries of a --help: (options, text), continuation lines
    joined. An entry starts on a line indented at most 6 spaces with a dash."""
    entries = []
    for line in read(path):
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if 1 <= indent <= 6 and body.startswith("-"):
            opts = []
            for w in re.split(r"[ ,]+", body):
                if OPT.fullmatch(w):
                    opts.append(w)
                else:
                    break
            entries.append([opts, body])
        elif indent > 6 and entries and body:
            entries[-1][1] += " " + body
        elif not body:
            continue
        elif entries and indent == 0:
            entries.append([[], ""])
    return [e for e in entries if e[0]]


def help_opts(path):
    for opts, _ in help_entries(path):
        for o in opts:
            print(o)


def help_defaults(path):
    """A default --help states: "default N", "default: N", "default: device
    N", or a number alone in parentheses ending the entry ("(1)")."""
    for opts, text in help_entries(path):
        m = re.search(r"\bdefault:? (device [0-9]+|[0-9][^ ,;)]*)", text)
        if not m:
            m = re.search(r"\(([0-9]+)\)$", text)
        if m:
            print(f"{opts[-1]}\t{m.group(1)}")


def sections(path):
    """(section, line) for every line of a man page."""
    sec = ""
    for line in read(path):
        if line.startswith(".SH"):
            sec = line[3:].strip().strip('"')
            continue
        yield sec, line


def man_entries(path, section):
    """(command, options, text) for every .TP entry of a section, the text
    plain. In gdx-doctor.1's COMMANDS an entry tagged ".B NAME" outside any
    .RS block starts a command: the entries within its .RS blocks are that
    command's options, and the other entries outside them global ("")."""
    depth, cmd, tag, cur, out = 0, "", False, None, []
    for sec, line in sections(path):
        if sec != section:
            continue
        if line.startswith(".RS"):
            depth += 1
        elif line.startswith(".RE"):
            depth -= 1
        elif line.startswith(".TP"):
            tag = True
        elif tag:
            tag = False
            m = re.fullmatch(r"\.B ([a-z]+)", line) if depth == 0 else None
            if m:
                cmd = m.group(1)
                out.append((cmd, [], []))
                cur = None
                continue
            if depth == 0:
                cmd = ""
            cur = (cmd, OPT.findall(plain(line)), [])
            out.append(cur)
        elif cur and not line.startswith(".\\\""):
            cur[2].append(plain(line))
    return [(c, o, " ".join(" ".join(t).split())) for c, o, t in out]


def man_cmd_opts(path):
    for cmd, opts, _ in man_entries(path, "COMMANDS"):
        for o in opts:
            print(f"{cmd}\t{o}")


def man_cmds(path):
    for cmd, opts, _ in man_entries(path, "COMMANDS"):
        if cmd and not opts:
            print(cmd)


def man_opts(path, section):
    for _, opts, _ in man_entries(path, section):
        for o in opts:
            print(o)


def man_entry_list(path, section):
    for c, opts, text in man_entries(path, section):
        for o in opts:
            print(f"{c}|{o}|{text}")


def man_synopsis(path, cmds):
    cmds = [c for c in cmds.split(",") if c]
    block = []

    def flush():
        text = " ".join(plain(b) for b in block)
        words = re.findall(r"[a-z]+", text)
        cmd = next((w for w in words if w in cmds), "")
        for o in OPT.findall(text):
            print(f"{cmd}\t{o}")

    for sec, line in sections(path):
        if sec != "SYNOPSIS":
            continue
        if line.startswith(".br"):
            flush()
            block = []
        else:
            block.append(line)
    flush()


def man7_vars(path):
    lines = read(path)
    tag = re.compile(r'\.BR (NCCL_GDX_\w+) " \((\w+), default (?:" (.+) \)|empty\)")')
    for i, line in enumerate(lines):
        m = tag.fullmatch(line)
        if not m or i == 0 or not lines[i - 1].startswith(".TP"):
            continue
        twin = ""
        for j in range(i + 1, len(lines)):
            if lines[j].startswith((".TP", ".SH", ".PP", ".\\\"")):
                break
            if lines[j] == "When unset, the plugin reads" and j + 1 < len(lines):
                t = re.fullmatch(r"\.BR (\S+) ,", lines[j + 1])
                twin = t.group(1) if t else "?"
        default = plain(m.group(3) or "")
        print(f"{m.group(1)}\t{m.group(2)}\t{default}\t{twin}")


def param_rows(path):
    text = open(path, encoding="utf-8").read()
    row = re.compile(r'@row (\w+) "(\w+)" "([^"]*)" (?:"(\w+)"|[^@]*?) @end')
    for m in row.finditer(text):
        print(f"NCCL_GDX_{m.group(2)}\t{m.group(1)}\t{m.group(3)}\t{m.group(4) or ''}")


def compat_rows(path):
    """The compatibility table through the preprocessor: name, NCCL's
    default, kind."""
    text = open(path, encoding="utf-8").read()
    row = re.compile(r'@crow "(NCCL_IB_\w+)" "([^"]*)" (\w+) @end')
    for m in row.finditer(text):
        print(f"{m.group(1)}\t{m.group(2)}\t{m.group(3)}")


def man7_compat(path):
    """The page's compatibility entries: name, NCCL's default, kind, and the
    NCCL_GDX_* variable a twin is read as."""
    lines = read(path)
    tag = re.compile(r'\.BR (NCCL_IB_\w+) " \(NCCL\'s default (?:" (.+) \)|empty\)")')
    for i, line in enumerate(lines):
        m = tag.fullmatch(line)
        if not m or i == 0 or not lines[i - 1].startswith(".TP"):
            continue
        kind, twin = "?", ""
        following = lines[i + 1:i + 3]
        if following[:1] == ["Read as"] and len(following) == 2:
            t = re.fullmatch(r"\.B (NCCL_GDX_\w+)", following[1])
            kind, twin = "twin", t.group(1) if t else "?"
        elif following and following[0].startswith("Not applied"):
            kind = "noted"
        elif following and following[0].startswith("NCCL's own"):
            kind = "nccl"
        print(f"{m.group(1)}\t{plain(m.group(2) or '')}\t{kind}\t{twin}")


def mentions(path):
    for name in sorted(set(re.findall(r"NCCL_GDX_[A-Z0-9_]*[A-Z0-9]", open(path).read()))):
        print(name)


def man_head(path):
    lines = read(path)
    th = next((ln for ln in lines[:5] if ln.startswith(".TH ")), ".TH")
    print("\t".join(th.split()[1:3]))
    names = [ln for sec, ln in sections(path) if sec == "NAME" and not ln.startswith(".")]
    print(plain(names[0]).split(" ")[0] if names else "")


def man_see_also(path):
    for sec, line in sections(path):
        if sec == "SEE ALSO":
            for m in re.finditer(r"(?:^\.BR |\\fB)([\w\\.-]+)(?: |\\fR)?\((\d)\)", line):
                print(f"{m.group(1).replace(chr(92) + '-', '-')}\t{m.group(2)}")


# A heading: capitals, blanks, hyphens, parentheses, not followed by a word
# character (NCCL_GDX_* is no heading), a quote (NCCL's) or a word in lower
# case (NCCL compatibility).
HEAD = r"[A-Z][A-Z -]*[A-Z](?: \([A-Z]+\))?(?![\w('])"
HEADING = HEAD + r"(?! [a-z])"
PAGE = r"libnccl-net-gdx(?:-[a-z]+)?(?:\(7\)| \(7\))"


def page_refs(*paths):
    after = re.compile(r"(" + PAGE + r")(?:'s|`?(?:,? (" + HEADING + r"))?)")
    before = re.compile(r"(?<![\w-])(" + HEAD + r") (?:of|in) `?(" + PAGE + r")")
    for path in paths:
        text = open(path, encoding="utf-8", errors="replace").read()
        text = re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-")
        text = re.sub(r"\n\.[A-Z]{1,2} ", " ", text)
        text = re.sub(r"[ \t]*\n[ \t]*(?:\*|#|//)?[ \t]*", " ", text)
        text = text.replace('"', "")
        seen = set()
        for m in after.finditer(text):
            seen.add((m.group(1).replace(" ", ""), m.group(2) or ""))
        for m in before.finditer(text):
            seen.add((m.group(2).replace(" ", ""), m.group(1)))
        for page, heading in sorted(seen):
            print(f"{path}\t{page[:-3]}\t{heading}")


def code_of(path):
    """The README's code: fenced blocks (continuation lines joined) and the
    backquoted spans of each paragraph (a span may go over a line end), one
    piece a line."""
    pieces, fenced, cont, para = [], False, "", []

    def flush():
        pieces.extend(re.findall(r"`([^`]+)`", " ".join(para)))
        para.clear()

    for line in read(path):
        if line.lstrip().startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced:
            if line.rstrip().endswith("\\"):
                cont += line.rstrip()[:-1] + " "
                continue
            pieces.append(cont + line)
            cont = ""
        elif line.strip():
            para.append(line.strip())
        else:
            flush()
    flush()
    return pieces


def readme_calls(path):
    call = re.compile(r"(?:^|(?<=[\s\"'(;|&]))(?:[\w./-]*/)?gdx-(doctor|bench)(?=\s|$)")
    for piece in code_of(path):
        for m in call.finditer(piece):
            tail = re.split(r"[;|&)<>'\"`]| #", piece[m.end():])[0].split()
            tool, cmd = "gdx-" + m.group(1), ""
            if tool == "gdx-doctor" and tail and re.fullmatch(r"[A-Za-z]+", tail[0]):
                cmd = tail.pop(0)
            opts = [w.split("=")[0] for w in tail if OPT.fullmatch(w.split("=")[0])]
            for o in opts or [""]:
                print(f"{tool}|{cmd}|{o}")


def readme_first(path):
    fenced, n = False, 0
    for line in read(path):
        if line.lstrip().startswith("```"):
            if fenced:
                return
            fenced = True
            continue
        if fenced:
            cmd = line.split("#")[0].strip()
            if cmd:
                print(cmd)


def readme_defaults(path):
    for line in read(path):
        m = re.match(r"\|\s*`(NCCL_GDX_\w+)`\s*\|\s*`([^`]*)`", line)
        if m:
            print(f"{m.group(1)}\t{m.group(2)}")


def figure_intros(path):
    """A table's paragraph is the one that opens it: the text between the
    .PP (or heading) before it and the .PP and .RS that open the table."""
    para, last, table, start = [], [], None, 0
    for n, line in enumerate(read(path), 1):
        if table is not None:
            if line.startswith(".fi"):
                if any(c.isdigit() for c in " ".join(table)):
                    print(f"{start}\t{' '.join(para or last)}")
                table, para, last = None, [], []
            else:
                table.append(line)
        elif line.startswith(".nf"):
            table, start = [], n
        elif re.match(r"\.(PP|SH)", line):
            if para:
                last = para
            para = []
        elif not re.match(r"\.(RS|RE|\\\")", line):
            para.append(plain(line))


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    cmd, args = sys.argv[1], sys.argv[2:]
    {
        "help-opts": help_opts,
        "help-defaults": help_defaults,
        "man-cmd-opts": man_cmd_opts,
        "man-cmds": man_cmds,
        "man-opts": man_opts,
        "man-entries": man_entry_list,
        "man-synopsis": man_synopsis,
        "man7-vars": man7_vars,
        "param-rows": param_rows,
        "compat-rows": compat_rows,
        "man7-compat": man7_compat,
        "mentions": mentions,
        "man-head": man_head,
        "man-see-also": man_see_also,
        "page-refs": page_refs,
        "readme-calls": readme_calls,
        "readme-first": readme_first,
        "readme-defaults": readme_defaults,
        "figure-intros": figure_intros,
    }[cmd](*args)


if __name__ == "__main__":
    main()
