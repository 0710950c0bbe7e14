#!/usr/bin/env python3
"""scripts/check_docs.py's rules for lessons at lesson size, on a small tree of its own: a chapter with one demo
that draws a figure and one that does not, a glossary, a word list, two reference sets and a root README. The
tree as written passes every rule; each case makes one edit and must fail with a line that names the file and
the section (or line): a section over the word limit, too many exercises, a long excerpt, a jargon term without
a glossary entry, a link to no glossary entry, a figure from another GPU's set, a long root README, the old
command, no "reference GPU" beside the figure, no figure, no table where no figure is drawn. Words in code,
generated blocks and HTML comments do not count, nor numbered lines in code blocks. The generated footnote of
every run of the quoted reference set is one line with at most three claims and no hash or date, and the root
README's main-job duration comes from the set's provenance.json."""
import contextlib
import io
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
import check_docs  # noqa: E402
import plots  # noqa: E402
import report  # noqa: E402
from test_check_docs import expect_report, finish  # noqa: E402

# A demo the report draws a figure for (its spec names exactly one run), and one it draws none for.
FIG = next(s["run"] for s in plots.SPECS if re.fullmatch(r"[a-z0-9_]+", s["run"]))
TAB = "fixture_fact_demo"
assert not plots.specs_for(TAB)


def marker(name, close=False):
    # Spelled out in pieces, so that this file holds no marker line of its own.
    return f"// [{'/' if close else ''}doc:{name}]"


SOURCE = "\n".join([marker("kern"), "__global__ void kern(float* x) {", "  x[threadIdx.x] = 0.0f;", "}",
                    marker("kern", close=True), ""])

SECTION = """## {demo} — does the fixture pass?

The source's [section](https://example.com/post/#section).

**The model.** Each warp touches four sectors; predict 1× the copy ceiling.

Each thread stores one element ([`kernels.cuh` › `kern`](kernels.cuh#doc:kern)):

```cuda
__global__ void kern(float* x) {{
  x[threadIdx.x] = 0.0f;
}}
```

```sh
scripts/run_demo.sh {demo}
```

{shown}

- `stores_reach_ceiling`: the store runs at least 0.9× the copy ceiling.

**Try next.**
1. Store two elements per thread. <details><summary>Hint</summary> The same sectors.</details>
2. Store every other element.

<!-- results:{demo} -->
_Reference: generated; these words do not count, nor do those of a comment._
<!-- /results:{demo} -->
"""
FIGURE = """![The store reaches the copy ceiling](../results/ref-gpu/plots/{demo}.png)

The figure is the reference GPU's; the command above draws the same figure for yours."""
TABLE = """| variant | value |
|---|---|
| a | 1 |"""

CHAPTER = "# 01 — A fixture chapter\n\nA learner counts sectors and wavefronts.\n\n" + \
    SECTION.format(demo=FIG, shown=FIGURE.format(demo=FIG)) + "\n" + SECTION.format(demo=TAB, shown=TABLE)

GLOSSARY = """# Glossary

### sector

32 aligned bytes.

### wavefront

One pass of the shared-memory pipeline; the **conflict degree** counts them.
"""
TERMS = "# the word list\nsector\nwavefront\nconflict degree\n"
ROOT_README = "# fixture\n\nRead [01](01_topic/README.md) and the [glossary](GLOSSARY.md#sector).\n"


def write(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def tree(**edits):
    files = {"01_topic/README.md": CHAPTER, "01_topic/kernels.cuh": SOURCE, "GLOSSARY.md": GLOSSARY,
             "scripts/glossary_terms.txt": TERMS, "README.md": ROOT_README,
             "results/readme_source.txt": "ref-gpu\n", f"results/ref-gpu/plots/{FIG}.png": "",
             f"results/other-gpu/plots/{FIG}.png": "", "build/demos.txt": f"01_topic/{FIG}\n01_topic/{TAB}\n"}
    files.update(edits)
    return files


def check(files):
    """What the new rules (and the section parts) say of a tree with these files."""
    with tempfile.TemporaryDirectory() as root:
        write(root, files)
        build = os.path.join(root, "build")
        md = check_docs.tracked_markdown(root)
        return (check_docs.check_demo_sections(root, build) + check_docs.check_lesson_size(root, build, md) +
                check_docs.check_images(root) + check_docs.check_glossary(root) + check_docs.check_links(root, md))


def section_of(demo, text):
    return text.split(f"## {demo} ")[1].split("\n## ")[0]


def edit_section(demo, old, new, count=1):
    """The chapter with `old` replaced by `new` in `demo`'s section only."""
    sec = section_of(demo, CHAPTER)
    assert old in sec, (demo, old)
    return CHAPTER.replace(sec, sec.replace(old, new, count))


WORDS = " ".join(["word"] * 950)
LONG_EXCERPT = "\n".join([marker("long"), *[f"int v{i} = {i};" for i in range(21)], marker("long", close=True), ""])


def main():
    failures = []
    got = check(tree())
    print("the fixture as written:", *(f"  {g}" for g in got) or ["  (nothing reported)"], sep="\n")
    if got:
        failures.append(f"the good fixture fails: {got}")
    # Words and numbered lines that a reader does not read as prose or exercises do not count.
    hidden = (f"<!-- {WORDS} -->\n\n```text\n{WORDS}\n3. a\n4. b\n```\n\n<!-- results:x -->\n{WORDS}\n"
              "<!-- /results:x -->\n")
    passing = {
        "950 words in a comment, a code block and a generated block":
            tree(**{"01_topic/README.md": edit_section(FIG, "**Try next.**", hidden + "**Try next.**")}),
        "a term defined by a bold word in an entry, used in the plural":
            tree(**{"01_topic/README.md": CHAPTER.replace("counts sectors", "counts conflict degrees")}),
        "a term used only in code": tree(**{"scripts/glossary_terms.txt": TERMS + "TLB\n",
                                            "01_topic/README.md": CHAPTER.replace("```sh\n", "```sh\n# TLB\n")}),
        "exactly 3 exercises and 180 root lines":
            tree(**{"01_topic/README.md": edit_section(FIG, "2. Store every other element.",
                                                       "2. Store every other element.\n3. Store none."),
                    "README.md": ROOT_README + "\n" * 176 + "end\n"}),
    }
    for what, files in passing.items():
        got = check(files)
        print(f"{what}:", *(f"  {g}" for g in got) or ["  (nothing reported)"], sep="\n")
        if got:
            failures.append(f"{what}: expected no report, got {got}")
    # Each case: the tree, and the texts one of its reports must hold.
    failing = {
        "a section over 900 words":
            (tree(**{"01_topic/README.md": edit_section(FIG, "**Try next.**", WORDS + "\n\n**Try next.**")}),
             ["01_topic/README.md: the section of " + FIG, "words of prose (at most 900"]),
        "four exercises":
            (tree(**{"01_topic/README.md": edit_section(TAB, "2. Store every other element.",
                                                        "2. Store every other element.\n3. c\n4. d")}),
             [f"01_topic/README.md: the section of {TAB} has 4 exercises under Try next (at most 3)"]),
        "an excerpt of 21 lines":
            (tree(**{"01_topic/kernels.cuh": SOURCE + LONG_EXCERPT,
                     "01_topic/README.md": CHAPTER + "\nThe long one "
                     "([`kernels.cuh` › `long`](kernels.cuh#doc:long)):\n\n```cpp\n" +
                     "\n".join(f"int v{i} = {i};" for i in range(21)) + "\n```\n"}),
             ["01_topic/README.md:", "an excerpt of 21 lines (at most 20"]),
        "a listed term without an entry":
            (tree(**{"scripts/glossary_terms.txt": TERMS + "bank conflict\n",
                     "01_topic/README.md": CHAPTER.replace("counts sectors", "counts Bank Conflicts")}),
             ["01_topic/README.md: uses 'bank conflict', which GLOSSARY.md does not define"]),
        "a term in the root README without an entry":
            (tree(**{"scripts/glossary_terms.txt": TERMS + "model_* | model columns\n",
                     "README.md": ROOT_README + "\nRead the model_efficiency column.\n"}),
             ["README.md: uses 'model_*'", "'### model columns'"]),
        "a glossary entry out of alphabetical order":
            (tree(**{"GLOSSARY.md": GLOSSARY + "\n### bank\n\nOne of 32.\n"}),
             ["GLOSSARY.md: the entry 'bank' comes after 'wavefront'"]),
        "a link to no glossary entry":
            (tree(**{"README.md": ROOT_README.replace("GLOSSARY.md#sector", "GLOSSARY.md#sectors")}),
             ["README.md: link to GLOSSARY.md#sectors names no entry"]),
        "a figure from another GPU's set":
            (tree(**{"01_topic/README.md": CHAPTER.replace("results/ref-gpu/plots", "results/other-gpu/plots")}),
             ["01_topic/README.md:", "is not from results/ref-gpu/"]),
        "a root README of 181 lines":
            (tree(**{"README.md": ROOT_README + "\n" * 177 + "end\n"}),
             ["README.md: 181 lines (at most 180"]),
        "the old command":
            (tree(**{"01_topic/README.md": edit_section(FIG, "scripts/run_demo.sh", "build/bin/")}),
             [f"01_topic/README.md: the section of {FIG} lacks a command that runs it (scripts/run_demo.sh"]),
        "a figure without the reference GPU beside it":
            (tree(**{"01_topic/README.md": CHAPTER.replace("the reference GPU's", "an H200's")}),
             [f"01_topic/README.md: the section of {FIG} lacks a note beside its figure"]),
        "the note far from the figure":
            (tree(**{"01_topic/README.md": edit_section(FIG, "\n\nThe figure is the reference GPU's",
                                                        "\n" * 9 + "The figure is the reference GPU's")}),
             [f"01_topic/README.md: the section of {FIG} lacks a note beside its figure"]),
        "a drawn demo without its figure":
            (tree(**{"01_topic/README.md": edit_section(FIG, FIGURE.format(demo=FIG), TABLE)}),
             [f"01_topic/README.md: the section of {FIG} lacks a figure"]),
        "a demo without a figure and without a table":
            (tree(**{"01_topic/README.md": edit_section(TAB, TABLE, "")}),
             [f"01_topic/README.md: the section of {TAB} lacks a table"]),
    }
    for what, (files, expected) in failing.items():
        expect_report(failures, what, check(files), expected)
    # The generated footnote of every run of the reference set the chapters quote: one line, the reference GPU,
    # "N of M claims held", at most three claims with value and bound, the CSV and report links, no hash or date.
    results = report.readme_source(ROOT)
    runs, _ = report.load(results)
    d = report.device_header(runs) or {}
    for label, entry in runs.items():
        line = report.footnote(ROOT, results, label, entry, d)
        quoted = re.findall(r"`([a-z0-9_]+)` \S+ \((?:host, )?bound ", line)
        wrong = [why for why, bad in [
            ("more than one line", "\n" in line), ("no reference GPU", f"Reference GPU ({d.get('name')})" not in line),
            ("no count", not re.search(r" \d+ of \d+ claims held", line)), ("more than three claims", len(quoted) > 3),
            ("a hash or a date", check_docs.HASH_OR_DATE.search(line)),
            ("no CSV link", f"[CSV](../{os.path.relpath(results, ROOT)}/{label}.csv)" not in line),
            ("no report link", "/REPORT.md)" not in line)] if bad]
        if wrong:
            failures.append(f"footnote of {label}: {', '.join(wrong)}: {line}")
    claims = [{"claim": f"c{i}", "kind": k, "status": s, "value": "1", "bound": ">= 1"}
              for i, (k, s) in enumerate([("host", "held"), ("device", "held"), ("device", "n/a"), ("device", "held"),
                                          ("device", "held"), ("device", "not_held")])]
    picked = [c["claim"] for c in report.footnote_claims(claims)]
    if picked != ["c1", "c3", "c5"]:
        failures.append(f"footnote_claims: the first device claims in order, a claim not held last: got {picked}")
    # The section's bullets choose the order: the claims they name first, as they name them, then the rest.
    picked = [c["claim"] for c in report.footnote_claims(claims[:5], ["c4", "c0", "c1"])]
    if picked != ["c4", "c1", "c3"]:
        failures.append(f"footnote_claims: the claims the bullets name first, in their order: got {picked}")
    section = ("## demo\n\n- `b_claim`, `a_claim` (*host*): text that names `not_a_bullet_name`.\n"
               "  more text, `nor_this`\n- `c_claim` and `d_claim`: text\n- plain bullet with `no_name_first`\n")
    names = report.bullet_claim_names(section)
    if names != ["b_claim", "a_claim", "c_claim", "d_claim"]:
        failures.append(f"bullet_claim_names: the names that open each bullet, in order: got {names}")
    # The root README's main-job duration is a generated block, from the quoted set's provenance.json (wall_s),
    # and docs.check fails once it drifts from that.
    with tempfile.TemporaryDirectory() as root:
        write(root, {"results/readme_source.txt": "ref-gpu\n",
                     "results/ref-gpu/provenance.json": '{"wall_s": 335.0, "gpus": [{"name": "NVIDIA H200"}]}',
                     "README.md": "# x\n\n<!-- results:main_job -->\n<!-- /results:main_job -->\n"})
        readme = os.path.join(root, "README.md")
        fresh = report.render_chapter_readmes(root)[readme]
        if "(NVIDIA H200) the main job ran for **5 min 35 s**" not in fresh or \
                "results/ref-gpu/provenance.json" not in fresh:
            failures.append(f"main_job block: {fresh!r}")
        write(root, {"README.md": fresh})
        if check_docs.check_generated(root):
            failures.append(f"main_job block: a fresh block fails: {check_docs.check_generated(root)}")
        write(root, {"README.md": fresh.replace("5 min 35 s", "4 min 35 s")})
        expect_report(failures, "a main-job duration edited by hand", check_docs.check_generated(root),
                      ["README.md: a generated block differs from the reference data"])
        # A run whose build was made beforehand says that its wall time leaves the build out.
        write(root, {"results/ref-gpu/provenance.json": '{"wall_s": 335.0, "gpus": [{"name": "NVIDIA H200"}], '
                                                        '"command": "scripts/run_all.sh --strict --skip-build"}'})
        fresh = report.render_chapter_readmes(root)[readme]
        if "from its first demo to its last, built beforehand" not in fresh or "build step" in fresh:
            failures.append(f"main_job block of a --skip-build run: {fresh!r}")
    # --stats reads the same tree: words per section and lines per chapter.
    with tempfile.TemporaryDirectory() as root:
        write(root, tree())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            check_docs.stats(root, os.path.join(root, "build"))
        print(out.getvalue())
        if not re.search(r"^01_topic\s+\d+\s+2\s+\d+", out.getvalue(), re.M) or "root README.md: 3 lines" not in \
                out.getvalue():
            failures.append(f"--stats on the fixture: {out.getvalue()!r}")
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
