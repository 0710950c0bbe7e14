#!/usr/bin/env python3
"""The docs test (ctest `docs.check`, CPU): every relative link and image in every tracked Markdown file
resolves. Code is quoted through named regions: in a source, the lines between a comment line `[doc:NAME]`
and a comment line `[/doc:NAME]` (`//` or `#`, as the language comments); in Markdown, a link
file#doc:NAME. Every marker is such a line and every region is opened and closed once; every #doc: link
names a region its file has; every excerpt (a code block whose introducing paragraph has #doc: links) is one
of those regions, give or take common indentation and elision lines ("...", "// ..."), each of which stands
for one or more left-out lines; no link names lines by number (file#L10-L20). Every demo has a section in its
chapter README with a figure, a link to a marked excerpt, a kernel excerpt, its run command, its claims as
bullets, exercises and a link to the source it accompanies; every generated block (between
<!-- results:NAME --> markers) matches what scripts/report.py makes of the committed reference data.

Lessons at lesson size: a demo section has at most MAX_SECTION_WORDS words of prose (fenced code, generated
blocks and HTML comments left out) and at most MAX_EXERCISES numbered exercises under its "Try next"; an
excerpt has at most MAX_EXCERPT_LINES lines; the root README at most MAX_ROOT_LINES lines. A section shows the
command `scripts/run_demo.sh <demo>` and, beside its figure, says that the figure is the reference GPU's; a demo
that draws no figure (scripts/plots.py has no spec for it) shows a table instead. Every embedded image of the
chapters and the root README comes from the reference set the chapters quote (results/readme_source.txt). Every
term of scripts/glossary_terms.txt that a chapter or the root README uses has an entry in GLOSSARY.md, and every
link to GLOSSARY.md#anchor names an entry.

    python3 scripts/check_docs.py [--root DIR] [--build-dir DIR]
    python3 scripts/check_docs.py --stats [--root DIR] [--build-dir DIR]   (sizes only: words per demo section,
                                                                            lines per chapter; checks nothing)
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plots  # noqa: E402
import report  # noqa: E402

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def tracked_markdown(root):
    try:
        out = subprocess.run(["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True, check=True).stdout
        return [os.path.join(root, p) for p in out.split()]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, _, files in os.walk(root):
            if "/build" in d or "/runs" in d or "/.git" in d:
                continue
            found += [os.path.join(d, f) for f in files if f.endswith(".md")]
        return found


def _without_code(text, spans=True):
    """The text with its code blocks (and code spans) blanked: line breaks stay, so offsets keep their lines."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group())  # noqa: E731
    text = re.sub(r"```.*?```", blank, text, flags=re.S)
    return re.sub(r"``[^\n]+?``|`[^`\n]+`", blank, text) if spans else text


def check_links(root, files):
    failures = []
    for path in files:
        text = open(path).read()
        # Code blocks and code spans are examples, not links.
        for target in LINK.findall(_without_code(text)):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            file_part = target.split("#", 1)[0]
            if not file_part:
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(resolved):
                failures.append(f"{os.path.relpath(path, root)}: link to {target} does not resolve")
    return failures


# A link to lines by number breaks with any edit above them: code is quoted through named markers instead.
LINE_LINK = re.compile(r"\]\((?![a-z]+:)([^)\s#]+)#L\d+(?:-L\d+)?\)")
DOC_LINK = re.compile(r"\]\((?![a-z]+:)([^)\s#]+)#doc:([^)\s]*)\)")
# A marker is a comment line of its own that opens ("[doc:" NAME "]") or closes ("[/doc:" NAME "]") a region.
MARKER_LINE = re.compile(r"^\s*(?://|#|/\*)\s*\[(/?)doc:([a-z0-9_]+)\]\s*(?:\*/)?\s*$")
MARKER_LIKE = re.compile(r"^\s*(?://|#|/\*)\s*\[/?doc:")
MARKER_NAME = re.compile(r"[a-z0-9_]+")
FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
EXCERPT_LANGS = ("cpp", "cuda", "c", "c++", "cmake", "python", "sh")
INLINE_CODE = re.compile(r"`([^`\n]+)`")
SOURCE_SUFFIXES = (".cu", ".cuh", ".hpp", ".h", ".cpp", ".cc", ".c", ".py", ".sh", ".cmake", "CMakeLists.txt")


def tracked_sources(root):
    """The files that may hold markers."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
        paths = [os.path.join(root, p) for p in out.split("\n") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = []
        for d, _, files in os.walk(root):
            if "/build" in d or "/runs" in d or "/.git" in d:
                continue
            paths += [os.path.join(d, f) for f in files]
    return [p for p in paths if p.endswith(SOURCE_SUFFIXES) and os.path.isfile(p)]


def read_regions(path):
    """The marked regions of a source file, {name: its lines}, and what is wrong with its markers, [(name or None,
    message)]. A region's lines leave out the marker lines of other regions inside it: they are not code."""
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    spans, problems = {}, []
    for i, line in enumerate(lines):
        m = MARKER_LINE.match(line)
        if not m:
            if MARKER_LIKE.match(line):
                problems.append((None, f"line {i + 1} is not a marker: a comment of its own that holds only "
                                       "[doc:name] or [/doc:name], the name of a-z, 0-9 and _"))
            continue
        closing, name = m.groups()
        # The preprocessor joins a continued line to the marker, which would change the macro.
        if i and lines[i - 1].rstrip().endswith("\\"):
            problems.append((name, f"the marker of {name} on line {i + 1} is inside a macro continuation"))
        if not closing:
            spans.setdefault(name, []).append([i, None])
        elif name in spans and spans[name][-1][1] is None:
            spans[name][-1][1] = i
        else:
            problems.append((name, f"{name} is closed on line {i + 1} but not open"))
    regions = {}
    for name, found in spans.items():
        if len(found) > 1:
            problems.append((name, f"{name} is marked {len(found)} times (lines "
                                   f"{', '.join(str(o + 1) for o, _ in found)})"))
        elif found[0][1] is None:
            problems.append((name, f"{name} is opened on line {found[0][0] + 1} and never closed"))
        else:
            first, last = found[0]
            regions[name] = [line for line in lines[first + 1:last] if not MARKER_LINE.match(line)]
            if not regions[name]:
                problems.append((name, f"{name} (line {first + 1}) is empty"))
    return regions, problems


def _is_elision(line):
    return re.fullmatch(r"(?://|/\*|#)?\s*(?:\.\.\.|…).*", line.strip()) is not None


def _indent(line):
    line = line.expandtabs(4)
    return len(line) - len(line.lstrip())


def excerpt_matches(excerpt, region):
    """Whether a code block's lines show a region: the region's lines in order and in runs of consecutive lines,
    where each elision line ("...", "// ... text") stands for one or more left-out lines. Trailing blanks do not
    count, nor does indentation common to a side: the block may sit at any depth, as long as its lines keep the
    region's indentation relative to one another."""
    wanted = []  # the block's lines, None for an elision
    for line in excerpt:
        if not _is_elision(line):
            wanted.append(line.rstrip())
        elif not wanted or wanted[-1] is not None:
            wanted.append(None)

    def match(k, at, pairs):
        if k == len(wanted):
            return at == len(region) and len({_indent(r) - _indent(w) for w, r in pairs if w.strip()}) <= 1
        if wanted[k] is None:
            return any(match(k + 1, nxt, pairs) for nxt in range(at + 1, len(region) + 1))
        return at < len(region) and region[at].strip() == wanted[k].strip() and \
            match(k + 1, at + 1, pairs + [(wanted[k], region[at])])

    return match(0, 0, [])


def excerpt_blocks(text):
    """The excerpts of a Markdown text, [(the fence's match, its body, the #doc: links that introduce it)]: code
    blocks in a source language whose introducing paragraph (after the last heading) has #doc: links."""
    out, prose_start = [], 0
    for block in FENCE.finditer(text):
        intro = re.split(r"^#+ ", text[prose_start:block.start()], flags=re.M)[-1]
        prose_start = block.end()
        lang, body = block.groups()
        links = DOC_LINK.findall(_without_code(intro))
        if lang in EXCERPT_LANGS and links:
            out.append((block, body, links))
    return out


def check_markers(root, sources):
    """Every marker in a source is a comment of its own, and every region is opened and closed once."""
    failures = []
    for src in sources:
        for _, message in read_regions(src)[1]:
            failures.append(f"{os.path.relpath(src, root)}: {message}")
    return failures


def check_excerpts(root, files):
    """No link names lines by number; a #doc: link names one well-formed region of its file; an excerpt (a code
    block whose introducing paragraph has #doc: links) shows one of those regions."""
    failures, read = [], {}

    def region(md, target, name):
        src = os.path.normpath(os.path.join(os.path.dirname(md), target))
        if not os.path.isfile(src):
            return None, None  # check_links reports it
        if src not in read:
            read[src] = read_regions(src)
        regions, problems = read[src]
        if not MARKER_NAME.fullmatch(name):
            return None, f"{name!r} is not a marker name (a-z, 0-9 and _)"
        said = [message for of, message in problems if of == name]
        if said:
            return None, "; ".join(said)
        if name not in regions:
            return None, f"{target} has no region {name}"
        return regions[name], None

    for path in files:
        text = open(path).read()
        rel = os.path.relpath(path, root)

        def line_of(pos):
            return text.count("\n", 0, pos) + 1

        prose = _without_code(text)
        for m in LINE_LINK.finditer(prose):
            failures.append(f"{rel}:{line_of(m.start())}: line-number link ({m.group(0)[2:-1]}): "
                            "use a #doc: marker")
        for m in DOC_LINK.finditer(prose):
            target, name = m.groups()
            _, why = region(path, target, name)
            if why:
                failures.append(f"{rel}:{line_of(m.start())}: {target}#doc:{name}: {why}")
        # Where the sentence of a link quotes code that the file has ("set `kTile` in [the tile]"), at least one
        # such quote is in the region. Link texts name files and regions, so their quotes do not count.
        for number, md_line in enumerate(_without_code(text, spans=False).split("\n"), 1):
            for sentence in re.split(r"[.;]\s", md_line):
                said = re.sub(r"\[[^\]]*\]\(", "(", sentence)
                for target, name in DOC_LINK.findall(_without_code(sentence)):
                    lines, _ = region(path, target, name)
                    if lines is None:
                        continue
                    src = os.path.normpath(os.path.join(os.path.dirname(path), target))
                    with open(src, errors="replace") as f:
                        code = [line for line in f.read().split("\n") if not MARKER_LINE.match(line)]
                    # Quotes of one or two characters (`c`, `r`) are in any file.
                    quoted = [q for q in INLINE_CODE.findall(said) if len(q) > 2 and any(q in line for line in code)]
                    if quoted and not any(q in line for q in quoted for line in lines):
                        failures.append(f"{rel}:{number}: {target}#doc:{name} does not show "
                                        f"{', '.join(f'`{q}`' for q in quoted)} (the file has it elsewhere)")
        for block, body, links in excerpt_blocks(text):
            shown = [region(path, target, name)[0] for target, name in links]
            if not any(shown):
                continue  # the links themselves are reported
            excerpt = body.split("\n")[:-1]  # the body ends with the line break before the closing fence
            if not any(lines and excerpt_matches(excerpt, lines) for lines in shown):
                stray = next((line.strip() for line in excerpt if not _is_elision(line)
                              and all(line.strip() != r.strip() for lines in shown if lines for r in lines)), None)
                why = f"`{stray}` is in none of them" if stray is not None else \
                    "a line left out without an elision, lines out of order or a line indented differently"
                failures.append(f"{rel}:{line_of(block.start())}: the excerpt is not the region "
                                f"{' or '.join(f'{t}#doc:{n}' for t, n in links)} ({why})")
    # In the order of the files' lines: README.md:42 before README.md:119.
    return sorted(set(failures), key=lambda f: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", f)])


def _demo_section(text, demo):
    """The body of the README section whose heading names `demo` (load_caching_dlcm_ca/_cg share one)."""
    base = re.sub(r"_dlcm_(ca|cg)$", "", demo)
    parts = re.split(r"^(## .*)$", text, flags=re.M)
    for i in range(1, len(parts), 2):
        if re.search(rf"(^## |\s){re.escape(base)}(\s|_dlcm)", parts[i].split("\u2014")[0] + " "):
            return base, parts[i + 1]
    return base, None


MAX_SECTION_WORDS = 900
MAX_EXERCISES = 3
MAX_EXCERPT_LINES = 20
MAX_ROOT_LINES = 180
# How far (in lines) from a figure the section must say whose figure it is.
FIGURE_NOTE_LINES = 6
FIGURE_NOTE = re.compile(r"reference\s+GPU", re.I)
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)(?:\s+\"[^\"]*\")?\)")
MD_TABLE = re.compile(r"^\|.*\|\s*\n\|[\s:|-]*-[\s:|-]*\|\s*$", re.M)
TEXT_LANGS = ("", "text", "console")


def draws_figure(demo):
    """Whether the report draws a figure for the demo's default run (scripts/plots.py has a spec for it)."""
    return bool(plots.specs_for(demo))


def _has_table(sec):
    return MD_TABLE.search(sec) is not None or any(m.group(1) in TEXT_LANGS for m in FENCE.finditer(sec))


def _figure_noted(sec):
    """Every figure of the section has the words "reference GPU" within FIGURE_NOTE_LINES lines of it."""
    lines = sec.split("\n")
    at = [i for i, line in enumerate(lines) if IMAGE.search(line)]
    near = lambda i: "\n".join(lines[max(0, i - FIGURE_NOTE_LINES):i + FIGURE_NOTE_LINES + 1])  # noqa: E731
    return bool(at) and all(FIGURE_NOTE.search(near(i)) for i in at)


# What every demo's section carries, so a reader can follow it on their own GPU: (what, applies, present).
SECTION_PARTS = [
    ("figure", lambda demo: draws_figure(demo), lambda base, sec: IMAGE.search(sec)),
    ("note beside its figure that the figure is the reference GPU's (the words \"reference GPU\" within "
     f"{FIGURE_NOTE_LINES} lines of it)",
     lambda demo: draws_figure(demo), lambda base, sec: _figure_noted(sec)),
    ("table (a Markdown table or a text block of its output: scripts/plots.py draws no figure for it)",
     lambda demo: not draws_figure(demo), lambda base, sec: _has_table(sec)),
    ("link to a marked excerpt", None, lambda base, sec: re.search(r"\]\([^)\s]+#doc:[a-z0-9_]+\)", sec)),
    ("kernel excerpt", None, lambda base, sec: re.search(r"^```(cpp|cuda)", sec, re.M)),
    ("command that runs it (scripts/run_demo.sh <demo>)", None,
     lambda base, sec: re.search(r"scripts/run_demo\.sh +" + re.escape(base), sec)),
    ("claims as bullets", None, lambda base, sec: re.search(r"^- `", sec, re.M)),
    ("list of exercises (Try next)", None, lambda base, sec: "Try next" in sec),
    ("link to what it accompanies", None, lambda base, sec: re.search(r"https?://", sec)),
]

HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def prose(text):
    """The text a reader reads as prose: fenced code, generated blocks (<!-- results:... -->, <!-- example:... -->)
    and HTML comments left out, HTML tags and link targets dropped (a link counts by its text)."""
    text = report.MARKER.sub("", text)
    text = report.EXAMPLE_MARKER.sub("", text)
    text = HTML_COMMENT.sub("", text)
    text = re.sub(r"^(`{3,}).*?^\1[ \t]*$", "", text, flags=re.M | re.S)
    text = re.sub(r"<[^>\n]+>", " ", text)
    return re.sub(r"\]\([^)\s]*\)", "]", text)


def prose_words(text):
    """Words of prose: whitespace-separated tokens with a letter or a digit (table rules and bullets are not)."""
    return sum(1 for w in prose(text).split() if re.search(r"\w", w))


def exercises(sec):
    """The numbered items (at the start of a line) after the section's "Try next"."""
    at = sec.find("Try next")
    if at < 0:
        return 0
    rest = report.MARKER.sub("", sec[at:])
    return len(re.findall(r"^\d+[.)] ", re.sub(r"^(`{3,}).*?^\1[ \t]*$", "", rest, flags=re.M | re.S), re.M))


def demo_sections(root, build):
    """[(chapter, demo, base, section body or None)] for every demo of build/demos.txt, one per section (the
    _dlcm_ca/_cg pair shares one), in the manifest's order."""
    out, seen = [], set()
    for line in open(os.path.join(build, "demos.txt")):
        line = line.strip()
        if "/" not in line:
            continue
        chapter, demo = line.split("/", 1)
        readme = os.path.join(root, chapter, "README.md")
        base, sec = _demo_section(open(readme).read(), demo) if os.path.exists(readme) else (demo, None)
        if (chapter, base) in seen:
            continue
        seen.add((chapter, base))
        out.append((chapter, demo, base, sec))
    return out


def check_demo_sections(root, build):
    failures = []
    demos_txt = os.path.join(build, "demos.txt")
    if not os.path.exists(demos_txt):
        return [f"{demos_txt} missing: build first"]
    for chapter, demo, base, sec in demo_sections(root, build):
        if not os.path.exists(os.path.join(root, chapter, "README.md")):
            failures.append(f"{chapter} has no README.md")
            continue
        if sec is None:
            failures.append(f"{chapter}/README.md has no section (heading) for {demo}")
            continue
        for what, applies, present in SECTION_PARTS:
            if (applies is None or applies(demo)) and not present(base, sec):
                failures.append(f"{chapter}/README.md: the section of {demo} lacks a {what}")
    return failures


def check_lesson_size(root, build, files):
    """Each demo section at most MAX_SECTION_WORDS words of prose and MAX_EXERCISES exercises; each excerpt at most
    MAX_EXCERPT_LINES lines; the root README at most MAX_ROOT_LINES lines."""
    failures = []
    if os.path.exists(os.path.join(build, "demos.txt")):
        for chapter, demo, base, sec in demo_sections(root, build):
            if sec is None:
                continue  # check_demo_sections reports it
            words, n = prose_words(sec), exercises(sec)
            if words > MAX_SECTION_WORDS:
                failures.append(f"{chapter}/README.md: the section of {base} has {words} words of prose "
                                f"(at most {MAX_SECTION_WORDS}: move variants and studies to a going-further page)")
            if n > MAX_EXERCISES:
                failures.append(f"{chapter}/README.md: the section of {base} has {n} exercises under Try next "
                                f"(at most {MAX_EXERCISES})")
    for path in files:
        text = open(path).read()
        rel = os.path.relpath(path, root)
        for block, body, _ in excerpt_blocks(text):
            n = len(body.rstrip("\n").split("\n"))
            if n > MAX_EXCERPT_LINES:
                failures.append(f"{rel}:{text.count(chr(10), 0, block.start()) + 1}: an excerpt of {n} lines "
                                f"(at most {MAX_EXCERPT_LINES}: elide with `// ...` what does not carry the lesson)")
    readme = os.path.join(root, "README.md")
    if os.path.exists(readme):
        n = len(open(readme).read().rstrip("\n").split("\n"))
        if n > MAX_ROOT_LINES:
            failures.append(f"README.md: {n} lines (at most {MAX_ROOT_LINES}: maintainers' material goes to "
                            "CONTRIBUTING.md)")
    return failures


def chapter_pages(root):
    """The chapters' Markdown pages (NN_*/*.md: the README and any going-further page) and the root README."""
    pages = []
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        if re.match(r"\d\d_", name) and os.path.isdir(folder):
            pages += [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".md")]
    readme = os.path.join(root, "README.md")
    return pages + ([readme] if os.path.isfile(readme) else [])


def check_images(root):
    """Every embedded PNG of the chapters and the root README comes from the reference set they quote."""
    failures = []
    ref = os.path.realpath(report.readme_source(root))
    for path in chapter_pages(root):
        rel = os.path.relpath(path, root)
        for number, line in enumerate(_without_code(open(path).read()).split("\n"), 1):
            for target in IMAGE.findall(line):
                if re.match(r"^[a-z]+:", target):
                    failures.append(f"{rel}:{number}: image {target} is not in the repository")
                    continue
                resolved = os.path.realpath(os.path.join(os.path.dirname(path), target.split("#", 1)[0]))
                if not resolved.startswith(ref + os.sep):
                    failures.append(f"{rel}:{number}: image {target} is not from "
                                    f"{os.path.relpath(ref, root)}/ (the reference set the chapters quote)")
    return failures


GLOSSARY = "GLOSSARY.md"
TERMS = os.path.join("scripts", "glossary_terms.txt")
GLOSSARY_LINK = re.compile(r"\]\((?:[^)\s]*/)?" + re.escape(GLOSSARY) + r"#([^)\s]+)\)")


def slug(heading):
    """The anchor GitHub gives a heading: lower case, spaces to hyphens, other punctuation dropped."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def glossary_key(heading):
    """Where an entry sorts: by its heading in lower case, letters, digits and spaces only."""
    return re.sub(r"[^a-z0-9 ]", "", heading.lower())


def glossary_entries(root):
    """{anchor: heading} and the set of names the glossary defines (headings and **bold** terms, lower case)."""
    path = os.path.join(root, GLOSSARY)
    if not os.path.exists(path):
        return {}, set()
    text = open(path).read()
    headings = re.findall(r"^###\s+(.+?)\s*$", text, re.M)
    names = {h.replace("`", "").strip().lower() for h in headings}
    names |= {b.replace("`", "").strip().lower() for b in re.findall(r"\*\*([^*\n]+)\*\*", _without_code(text, False))}
    return {slug(h): h for h in headings}, names


def read_terms(root):
    """[(term, entry)] from scripts/glossary_terms.txt: a term per line, or "term | entry" where the entry has
    another name; `*` in a term stands for the rest of a word; # starts a comment."""
    path = os.path.join(root, TERMS)
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            term, _, entry = (p.strip() for p in line.partition("|"))
            out.append((term, entry or term))
    return out


def term_pattern(term):
    """A whole-word, case-insensitive match of the term or its plural; `*` matches the rest of a word."""
    body = r"\w*".join(re.escape(p) for p in term.split("*"))
    return re.compile(rf"(?<![\w]){body}(?:s|es)?(?![\w])", re.I)


def check_glossary(root):
    """Every term of scripts/glossary_terms.txt that a chapter page or the root README uses has an entry in
    GLOSSARY.md; every link to GLOSSARY.md#anchor names an entry."""
    failures = []
    anchors, names = glossary_entries(root)
    terms = read_terms(root)
    if not os.path.exists(os.path.join(root, GLOSSARY)):
        failures.append(f"{GLOSSARY} is missing")
    if not terms:
        failures.append(f"{TERMS} is missing or empty")
    headings = list(anchors.values())
    for before, after in zip(headings, headings[1:]):
        if glossary_key(after) < glossary_key(before):
            failures.append(f"{GLOSSARY}: the entry '{after}' comes after '{before}': keep the entries in alphabetical "
                            "order")
    for path in chapter_pages(root):
        rel = os.path.relpath(path, root)
        text = prose(open(path).read())
        for term, entry in terms:
            if entry.lower() not in names and term_pattern(term).search(text):
                failures.append(f"{rel}: uses '{term}', which {GLOSSARY} does not define (add an entry "
                                f"'### {entry}')")
    for path in tracked_markdown(root):
        rel = os.path.relpath(path, root)
        for m in GLOSSARY_LINK.finditer(_without_code(open(path).read())):
            if os.path.realpath(os.path.join(os.path.dirname(path), m.group(0)[2:].split("#")[0])) != \
                    os.path.realpath(os.path.join(root, GLOSSARY)):
                continue
            if m.group(1) not in anchors:
                failures.append(f"{rel}: link to {GLOSSARY}#{m.group(1)} names no entry")
    return failures


def stats(root, build):
    """Sizes a reader meets: words of prose per demo section (median, max) and lines per chapter README."""
    by_chapter = {}
    for chapter, demo, base, sec in demo_sections(root, build):
        if sec is not None:
            by_chapter.setdefault(chapter, []).append((prose_words(sec), base, exercises(sec)))
    print(f"{'chapter':<20} {'lines':>6} {'sections':>9} {'median words':>13} {'max words':>10}  largest section")
    over = []
    for chapter in sorted(by_chapter):
        sizes = sorted(by_chapter[chapter])
        n = len(sizes)
        median = sizes[n // 2][0] if n % 2 else (sizes[n // 2 - 1][0] + sizes[n // 2][0]) / 2
        lines = len(open(os.path.join(root, chapter, "README.md")).read().rstrip("\n").split("\n"))
        print(f"{chapter:<20} {lines:>6} {n:>9} {median:>13g} {sizes[-1][0]:>10}  {sizes[-1][1]}")
        more = os.path.join(root, chapter, "GOING_FURTHER.md")
        if os.path.exists(more):
            print(f"{'  GOING_FURTHER.md':<20} {len(open(more).read().rstrip(chr(10)).split(chr(10))):>6}")
        over += [(w, chapter, b, x) for w, b, x in sizes if w > 600]
    readme = os.path.join(root, "README.md")
    print(f"root README.md: {len(open(readme).read().rstrip(chr(10)).split(chr(10)))} lines")
    print(f"demo sections over 600 words: {len(over)}")
    for w, chapter, b, x in sorted(over, reverse=True):
        print(f"  {chapter}/README.md {b}: {w} words, {x} exercises")


# A commit hash in backticks (7 to 40 hex digits with at least one letter and one digit) or an ISO date.
HASH_OR_DATE = re.compile(r"`(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?:-dirty)?`|\b20\d\d-[01]\d-[0-3]\d\b")


def check_no_history(root):
    """The chapters speak about CUDA and the reader's GPU, not about when or from which commit a figure was made:
    that provenance lives in the reference set's REPORT.md. Code blocks are left alone."""
    failures = []
    for name in sorted(os.listdir(root)):
        readme = os.path.join(root, name, "README.md")
        if not (re.match(r"\d\d_", name) and os.path.isfile(readme)):
            continue
        text = open(readme).read()
        for number, line in enumerate(re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text,
                                             flags=re.S).split("\n"), 1):
            for m in HASH_OR_DATE.finditer(line):
                failures.append(f"{name}/README.md:{number}: {m.group(0)} is a commit hash or a date: chapters "
                                "leave provenance to the reference set's REPORT.md")
    return failures


def check_generated(root):
    failures = []
    for path, expected in report.render_chapter_readmes(root).items():
        if open(path).read() != expected:
            failures.append(f"{os.path.relpath(path, root)}: a generated block differs from the reference data "
                            "(run python3 scripts/report.py --readmes-only; never edit between the markers by hand)")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--build-dir", default=None)
    ap.add_argument("--stats", action="store_true",
                    help="print words per demo section and lines per chapter; check nothing")
    a = ap.parse_args()
    build = a.build_dir or os.path.join(a.root, "build")
    if a.stats:
        if not os.path.exists(os.path.join(build, "demos.txt")):
            ap.error(f"{os.path.join(build, 'demos.txt')} missing: build first, or name a build with --build-dir")
        stats(a.root, build)
        return 0
    files = tracked_markdown(a.root)
    groups = [("links", check_links(a.root, files)),
              ("markers and excerpts", check_markers(a.root, tracked_sources(a.root)) + check_excerpts(a.root, files)),
              ("demo sections", check_demo_sections(a.root, build)),
              ("lesson size", check_lesson_size(a.root, build, files)),
              ("figures from the reference set", check_images(a.root)),
              ("glossary", check_glossary(a.root)),
              ("generated blocks", check_generated(a.root)),
              ("no commit hashes or dates in chapters", check_no_history(a.root))]
    failed = 0
    for name, fails in groups:
        for f in fails:
            print(f"FAIL ({name}): {f}")
        failed += bool(fails)
    print(f"checked {len(files)} Markdown files")
    print(f"{len(groups) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
