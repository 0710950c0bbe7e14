#!/usr/bin/env python3
"""scripts/check_docs.py's named excerpts on a small tree of its own: a README that quotes a marked region of a
source passes; the same README after one line of its excerpt drifted, with the region's closing marker deleted,
with a link to a name the source does not mark, with a link to lines by number, each fails and is named."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import check_docs  # noqa: E402


def marker(name, close=False, lead="// "):
    # Spelled out in pieces, so that this file holds no marker line of its own.
    return f"{lead}[{'/' if close else ''}doc:{name}]"


SOURCE = "\n".join([
    "#pragma once",
    "",
    marker("scale_kernel"),
    "__global__ void scale_kernel(float* x, float a, int n) {",
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "  if (i >= n) return;",
    marker("scale_store", lead="  // "),
    "  x[i] = a * x[i];",
    marker("scale_store", close=True, lead="  // "),
    "}",
    marker("scale_kernel", close=True),
    "",
])

README = """# Scaling

Each thread scales one element
([`scale.cuh` › `scale_kernel`](src/scale.cuh#doc:scale_kernel)):

```cuda
__global__ void scale_kernel(float* x, float a, int n) {
  // ... which element, and whether it is in range
  x[i] = a * x[i];
}
```

The store alone ([`scale.cuh` › `scale_store`](src/scale.cuh#doc:scale_store)):

```cpp
    x[i] = a * x[i];
```

Try next: change `a * x[i]` in [the store](src/scale.cuh#doc:scale_store).
"""


def check(source, readme):
    """What the marker checks say of a tree with this source and this README."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, "src", "scale.cuh"), "w") as f:
            f.write(source)
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(readme)
        return check_docs.check_markers(root, check_docs.tracked_sources(root)) + \
            check_docs.check_excerpts(root, check_docs.tracked_markdown(root))


# A block against the region ["if (i < n) {", "  x[i] = 0;", "}"]: whether it shows it.
BLOCKS = [
    (["if (i < n) {", "  x[i] = 0;", "}"], True),
    (["    if (i < n) {", "      x[i] = 0;   ", "    }"], True),  # at another depth, with trailing blanks
    (["if (i < n) {", "x[i] = 0;", "}"], False),  # one line's indentation changed
    (["if (i < n) {", "  …", "}"], True),
    (["// ... the test", "  x[i] = 0;", "}"], True),
    (["if (i < n) {", "}"], False),  # a line left out without an elision
    (["if (i < n) {", "...", "  x[i] = 0;", "}"], False),  # an elision that stands for no line
    (["if (i < n) {", "  x[i] = 0;"], False),  # the region goes on
]


def expect_report(failures, what, got, expected):
    """Prints what a case reported; a failure unless one report holds every text of `expected`."""
    print(f"{what}:", *(f"  {g}" for g in got) or ["  (nothing reported)"], sep="\n")
    if not got or not any(all(e in g for e in expected) for g in got):
        failures.append(f"{what}: expected a report with {expected}, got {got}")


def finish(failures):
    for f in failures:
        print(f"FAIL: {f}")
    print("ok" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


def main():
    failures = [f"excerpt_matches({block}) is {not want}" for block, want in BLOCKS
                if check_docs.excerpt_matches(block, ["if (i < n) {", "  x[i] = 0;", "}"]) != want]
    got = check(SOURCE, README)
    if got:
        failures.append(f"a README that quotes its regions fails: {got}")
    # Each case: the tree, and a text that each of its reports must hold (one report at least).
    cases = {
        "an excerpt line drifted": (SOURCE, README.replace("  x[i] = a * x[i];\n}", "  x[i] = a + x[i];\n}"),
                                    ["README.md:6: the excerpt is not the region src/scale.cuh#doc:scale_kernel",
                                     "`x[i] = a + x[i];`"]),
        "the source drifted under its excerpt": (SOURCE.replace("a * x[i]", "x[i] * a"), README,
                                                 ["the excerpt is not the region", "scale_store"]),
        "a line left out without an elision": (SOURCE, README.replace("  // ... which element, and whether it is "
                                                                      "in range\n", ""),
                                               ["README.md:6: the excerpt is not the region", "left out"]),
        "an elision that stands for no line": (SOURCE, README.replace("  x[i] = a * x[i];\n}",
                                                                      "  x[i] = a * x[i];\n  // ...\n}"),
                                               ["README.md:6: the excerpt is not the region"]),
        "a closing marker deleted": (SOURCE.replace(marker("scale_kernel", close=True) + "\n", ""), README,
                                     ["scale_kernel is opened on line 3 and never closed"]),
        "a region marked twice": (SOURCE + marker("scale_store") + "\nx\n" + marker("scale_store", close=True) + "\n",
                                  README, ["scale_store is marked 2 times"]),
        "a marker in a macro continuation": (SOURCE + "#define SCALE(x) \\\n" + marker("macro") + "\n  (x)\n" +
                                             marker("macro", close=True) + "\n", README,
                                             ["src/scale.cuh: the marker of macro on line 13 is inside a macro "
                                              "continuation"]),
        "a marker with code on its line": (SOURCE + marker("tail") + " int y;\n", README,
                                           ["src/scale.cuh: line 12 is not a marker"]),
        "a link to a name the source does not mark": (SOURCE, README.replace("#doc:scale_store)", "#doc:scale_load)"),
                                                      ["src/scale.cuh#doc:scale_load: src/scale.cuh has no region "
                                                       "scale_load"]),
        "a link to lines by number": (SOURCE, README + "\nSee [line 12](src/scale.cuh#L12).\n",
                                      ["README.md:21: line-number link (src/scale.cuh#L12): use a #doc: marker"]),
        "a quote the region does not show": (SOURCE, README.replace("change `a * x[i]`", "change `i >= n`"),
                                             ["src/scale.cuh#doc:scale_store does not show `i >= n`"]),
    }
    for what, (source, readme, expected) in cases.items():
        expect_report(failures, what, check(source, readme), expected)
    # Chapters carry no commit hash or date outside code blocks (the reference set's REPORT.md keeps those).
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "01_topic"))
        chapter = os.path.join(root, "01_topic", "README.md")
        clean = "# 01\n\nThe copy runs at `0.99x` of `cudaMemcpy` (`vec4_reaches_memcpy`).\n```\nabc1234 2026-01-01\n```\n"
        for what, text, want in [("clean prose", clean, 0),
                                 ("a commit hash", clean + "Measured at `e11c540`.\n", 1),
                                 ("a dirty describe", clean + "Code `7ab4223-dirty`.\n", 1),
                                 ("a date", clean + "_Reference: H200, 2026-12-01._\n", 1)]:
            with open(chapter, "w") as f:
                f.write(text)
            got = check_docs.check_no_history(root)
            print(f"{what}:", got or "(nothing reported)")
            if len(got) != want:
                failures.append(f"no-history check, {what}: expected {want} report(s), got {got}")
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
