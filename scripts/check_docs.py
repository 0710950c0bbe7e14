#!/usr/bin/env python3
"""The docs test (ctest `docs.check`, CPU): every relative link and image in every tracked Markdown file
resolves, and a link to lines (file#L10-L20) names lines the file has; every kernel excerpt (a cpp/cuda
code block after a link to lines) is those lines, give or take indentation and elided lines ("..."); every
demo has a section in its chapter README with a figure, a link to source lines, a kernel excerpt, its run
command, its claims as bullets, exercises and a link to the source it accompanies; every generated block (between <!-- results:NAME --> markers)
matches what scripts/report.py makes of the committed reference data.

    python3 scripts/check_docs.py [--root DIR] [--build DIR]
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
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


def check_links(root, files):
    failures = []
    for path in files:
        text = open(path).read()
        # Code blocks are examples, not links.
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            file_part = target.split("#", 1)[0]
            if not file_part:
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(resolved):
                failures.append(f"{os.path.relpath(path, root)}: link to {target} does not resolve")
    return failures


LINE_LINK = re.compile(r"\]\(([^)\s#]+)#L(\d+)(?:-L(\d+))?\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
INLINE_CODE = re.compile(r"`([^`\n]{3,})`")


def _lines(path):
    with open(path, errors="replace") as f:
        return [line.strip() for line in f.read().split("\n")]


def _is_elision(line):
    return line in ("", "...", "…") or re.fullmatch(r"(//|/\*)?\s*(\.\.\.|…).*", line) is not None


def _in_order(excerpt, lines):
    at = 0
    for want in excerpt:
        while at < len(lines) and lines[at] != want:
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


def check_line_ranges(root, files):
    """Line links name lines that exist; an excerpt right after line links is one of those ranges."""
    failures = []
    for path in files:
        text = open(path).read()
        rel = os.path.relpath(path, root)
        prose_start = 0
        for block in FENCE.finditer(text):
            prose = text[prose_start:block.start()]
            prose_start = block.end()
            # Only the paragraph that introduces the block (after the last heading) speaks for it.
            prose = re.split(r"^#+ ", prose, flags=re.M)[-1]
            ranges = []
            for target, first, last in LINE_LINK.findall(prose):
                if re.match(r"^[a-z]+:", target):
                    continue
                src = os.path.normpath(os.path.join(os.path.dirname(path), target))
                if not os.path.isfile(src):
                    continue  # check_links reports it
                lines = _lines(src)
                lo, hi = int(first), int(last or first)
                if not 1 <= lo <= hi <= len(lines):
                    failures.append(f"{rel}: {target}#L{first}{'-L' + last if last else ''} is outside the file "
                                    f"({len(lines)} lines)")
                    continue
                ranges.append((target, lo, hi, lines[lo - 1:hi]))
            lang, body = block.group(1), block.group(2)
            if lang not in ("cpp", "cuda", "c++", "c") or not ranges:
                continue
            excerpt = [line.strip() for line in body.split("\n") if not _is_elision(line.strip())]
            if not any(_in_order(excerpt, lines) for _, _, _, lines in ranges):
                names = ", ".join(f"{t}#L{lo}-L{hi}" for t, lo, hi, _ in ranges)
                failures.append(f"{rel}: the excerpt at line {text.count(chr(10), 0, block.start()) + 1} is not "
                                f"in the lines it links to ({names})")
        # Every other line link (in lists, tables, exercises): the lines must exist, and where the same sentence
        # quotes code that the file has ("set `kTile` in [file, line 12]"), at least one such quote is on them.
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for sentence in (part for md_line in prose.split("\n") for part in re.split(r"[.;]\s", md_line)):
            for target, first, last in LINE_LINK.findall(sentence):
                src = os.path.normpath(os.path.join(os.path.dirname(path), target))
                if re.match(r"^[a-z]+:", target) or not os.path.isfile(src):
                    continue
                lines = _lines(src)
                lo, hi = int(first), int(last or first)
                link = f"{target}#L{first}{'-L' + last if last else ''}"
                if not 1 <= lo <= hi <= len(lines):
                    failures.append(f"{rel}: {link} is outside the file ({len(lines)} lines)")
                    continue
                quoted = [q for q in INLINE_CODE.findall(sentence) if any(q in line for line in lines)]
                if quoted and not any(q in line for q in quoted for line in lines[lo - 1:hi]):
                    failures.append(f"{rel}: {link} does not show {', '.join(f'`{q}`' for q in quoted)} "
                                    f"(the file has it elsewhere)")
    return sorted(set(failures))


def _demo_section(text, demo):
    """The body of the README section whose heading names `demo` (load_caching_dlcm_ca/_cg share one)."""
    base = re.sub(r"_dlcm_(ca|cg)$", "", demo)
    parts = re.split(r"^(## .*)$", text, flags=re.M)
    for i in range(1, len(parts), 2):
        if re.search(rf"(^## |\s){re.escape(base)}(\s|_dlcm)", parts[i].split("\u2014")[0] + " "):
            return base, parts[i + 1]
    return base, None


# What every demo's section carries, so a reader can follow it on their own GPU.
SECTION_PARTS = [
    ("figure", lambda base, sec: "![" in sec),
    ("link to source lines", lambda base, sec: re.search(r"#L\d+", sec)),
    ("kernel excerpt", lambda base, sec: re.search(r"^```(cpp|cuda)", sec, re.M)),
    ("command that runs it", lambda base, sec: re.search(r"build/bin/" + re.escape(base), sec)),
    ("claims as bullets", lambda base, sec: re.search(r"^- `", sec, re.M)),
    ("list of exercises (Try next)", lambda base, sec: "Try next" in sec),
    ("link to what it accompanies", lambda base, sec: re.search(r"https?://", sec)),
]


def check_demo_sections(root, build):
    failures = []
    demos_txt = os.path.join(build, "demos.txt")
    if not os.path.exists(demos_txt):
        return [f"{demos_txt} missing: build first"]
    for line in open(demos_txt):
        line = line.strip()
        if "/" not in line:
            continue
        chapter, demo = line.split("/", 1)
        readme = os.path.join(root, chapter, "README.md")
        if not os.path.exists(readme):
            failures.append(f"{chapter} has no README.md")
            continue
        base, sec = _demo_section(open(readme).read(), demo)
        if sec is None:
            failures.append(f"{chapter}/README.md has no section (heading) for {demo}")
            continue
        for what, present in SECTION_PARTS:
            if not present(base, sec):
                failures.append(f"{chapter}/README.md: the section of {demo} lacks a {what}")
    return failures


def check_generated(root):
    failures = []
    for path, expected in report.render_chapter_readmes(root).items():
        if open(path).read() != expected:
            failures.append(f"{os.path.relpath(path, root)}: a generated block differs from the reference data "
                            "(run scripts/promote_reference.sh, never edit between the markers by hand)")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(HERE))
    ap.add_argument("--build", default=None)
    a = ap.parse_args()
    build = a.build or os.path.join(a.root, "build")
    files = tracked_markdown(a.root)
    groups = [("links", check_links(a.root, files)), ("line ranges and excerpts", check_line_ranges(a.root, files)),
              ("demo sections", check_demo_sections(a.root, build)),
              ("generated blocks", check_generated(a.root))]
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
