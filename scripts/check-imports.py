#!/usr/bin/env python3
"""The import graph of each crate: no circles, no arrow that runs back up.

Reads every module of a crate's `src/` (tests, `tests.rs` files and
binaries aside) and the modules it names through `crate::` and `super::`.
Two faults are reported:

- a circle: at any level of the module tree, sibling modules that import
  one another, directly or through others (module `a` of a folder uses `b`
  and `b`, through anything, uses `a`);
- an arrow back up: a module using a module of a higher floor than its
  own. Each crate's floors are listed below, lowest first; a module's floor
  is its top-level module's. A child using its own parent (`super::Log` in
  an `impl Log` split over files) is neither.

docs/design.md describes the floors. Exits 1 naming every fault; run by
scripts/test. `--graph` also prints every module's arrows.
"""

import os
import re
import sys
from collections import defaultdict

# Each crate's floors, lowest first. A module may use modules of its own
# floor or lower ones (and siblings without a circle).
FLOORS = {
    "tlog/src": [
        ["json", "canonical", "merkle", "strategies"],
        ["note", "tiles", "subtree"],
        ["checkpoint", "cosignature", "proof"],
        ["policy", "witness"],
    ],
    "shared/src": [
        ["clock", "errors"],
        ["record", "analytics", "tlog", "scan"],
        ["config"],
        ["ports"],
        ["service"],
        ["adapters"],
        ["web"],
        ["lambda"],
    ],
    "functions/fund/src": [
        ["state", "paths"],
        ["routes"],
        ["contract"],
        ["page"],
        ["router"],
        ["compose"],
        ["lambda"],
    ],
    "functions/scanner/src": [
        ["state"],
        ["router", "compose"],
        ["lambda"],
    ],
    "local/src": None,
    "verify/src": None,
    "witness/src": [
        ["state"],
        ["lib"],
    ],
    "testkit/src": None,
}


def module_of(src, path):
    """The module path of a source file, as a tuple of names."""
    parts = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def modules(src):
    """Every module of the crate with its source (inline test modules cut)."""
    found = {}
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            module = module_of(src, path)
            if "bin" in module[:1] or "tests" in module or "test_support" in module:
                continue
            with open(path, encoding="utf-8") as file:
                text = file.read()
            cut = text.find("#[cfg(test)]\nmod tests")
            found[module] = text if cut < 0 else text[:cut]
    return found


IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def named(text, here):
    """The paths `text` names through `crate::` and `super::`."""
    text = re.sub(r"//[^\n]*", "", text)
    paths = set()
    for match in re.finditer(rf"\b(crate|super)((?:::{IDENT})+)", text):
        parts = match.group(2).split("::")[1:]
        base = [] if match.group(1) == "crate" else list(here[:-1])
        paths.add(tuple(base + parts))
    for match in re.finditer(r"\buse (crate|super)::\{([^;]*)\};", text, re.S):
        base = [] if match.group(1) == "crate" else list(here[:-1])
        for item in match.group(2).split(","):
            name = re.match(IDENT, item.strip())
            if name:
                paths.add(tuple(base + [name.group(0)]))
    return paths


def reexported(found):
    """Names the crate root re-exports from another crate (`pub use
    other_crate::{a, b}` or `pub use other_crate::a`, or the same
    `pub(crate)`): modules of that crate, outside this one's graph."""
    root = found.get((), "")
    names = set()
    for match in re.finditer(rf"\bpub(?:\(crate\))? use ({IDENT})::\{{([^}}]*)\}};", root):
        if match.group(1) not in ("crate", "self", "super"):
            names.update(n.strip() for n in match.group(2).split(",") if n.strip())
    for match in re.finditer(rf"\bpub(?:\(crate\))? use ({IDENT})::({IDENT});", root):
        if match.group(1) not in ("crate", "self", "super"):
            names.add(match.group(2))
    return names


def arrows(found):
    """Module → the modules it uses (the longest known prefix of each path);
    paths into another crate's modules the root re-exports are left out."""
    graph = defaultdict(set)
    external = reexported(found)
    for here, text in found.items():
        for path in named(text, here):
            target = next(
                (path[:n] for n in range(len(path), 0, -1) if path[:n] in found), ()
            )
            if target == () and path[:1] and path[0] in external:
                continue
            if target != here:
                graph[here].add(target)
    return graph


def circles(found, graph):
    """Sibling modules that use one another, at every level of the tree."""
    faults = []
    for parent in sorted({m[:-1] for m in found if m}):
        depth = len(parent)
        siblings = defaultdict(set)
        for source, targets in graph.items():
            if len(source) <= depth or source[:depth] != parent:
                continue
            for target in targets:
                if len(target) > depth and target[:depth] == parent:
                    if source[depth] != target[depth]:
                        siblings[source[depth]].add(target[depth])
        for component in strongly_connected(siblings):
            faults.append(
                f"circle under {'::'.join(parent) or 'the crate root'}: "
                + ", ".join(
                    f"{name} → {sorted(siblings[name] & set(component))}"
                    for name in sorted(component)
                )
            )
    return faults


def strongly_connected(graph):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(set(graph) | {t for ts in graph.values() for t in ts}):
        if node not in index:
            visit(node)
    return found


def back_up(graph, floors):
    """Arrows from a module to a higher floor, and to the crate root's items."""
    floor_of = {name: level for level, names in enumerate(floors) for name in names}
    faults = []
    for source, targets in sorted(graph.items()):
        if not source:
            continue
        for target in sorted(targets):
            if not target:
                faults.append(f"arrow up: {'::'.join(source)} uses the crate root")
                continue
            low, high = source[0], target[0]
            if low not in floor_of or high not in floor_of:
                faults.append(f"no floor for {low if low not in floor_of else high}")
            elif floor_of[high] > floor_of[low]:
                faults.append(
                    f"arrow up: {'::'.join(source)} uses {'::'.join(target)}"
                )
    return sorted(set(faults))


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    show_graph = "--graph" in sys.argv
    faults = 0
    for src, floors in FLOORS.items():
        found = modules(src)
        graph = arrows(found)
        problems = circles(found, graph)
        if floors is not None:
            problems += back_up(graph, floors)
        for problem in problems:
            print(f"check-imports: {src}: {problem}", file=sys.stderr)
        faults += len(problems)
        if show_graph:
            for source, targets in sorted(graph.items()):
                print(
                    f"{src}: {'::'.join(source) or 'crate'} → "
                    + ", ".join(sorted("::".join(t) or "crate" for t in targets))
                )
        modules_count = len(found)
        arrows_count = sum(len(t) for t in graph.values())
        print(f"{src}: {modules_count} modules, {arrows_count} arrows, {len(problems)} faults")
    sys.exit(1 if faults else 0)


if __name__ == "__main__":
    main()
