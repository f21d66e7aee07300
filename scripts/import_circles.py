#!/usr/bin/env python3
"""Lists import circles between the source files of the workspace's crates.

A file imports another when one of its `use` paths, or a qualified path in its code, names an
item that the other defines: a path through a module's re-exports (`pub use`) is followed to the
file that defines the name, and a path that names a module, or a glob of one, imports that
module's own file. A re-export itself is an alias, not a use, so a `mod.rs` that only declares
and re-exports its children imports nothing. Test-only
modules (`#[cfg(test)]`) are left out. Exits with status 1, listing each circle with the names
that tie it, if any crate has one.

Usage: scripts/import_circles.py [CRATE_SRC_DIR...]   (default: every crate of the workspace)
       scripts/import_circles.py --self-test            (checks the checker on small crates)
"""

import os
import re
import sys

ITEM = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern(?:\s+\"[^\"]*\")?)\s+)*"
    r"(fn|struct|enum|trait|type|const|static|union)\s+([A-Za-z_][A-Za-z0-9_]*)"
)
MACRO_RULES = re.compile(r"^macro_rules!\s*([A-Za-z_][A-Za-z0-9_]*)")
MOD = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*([;{])")
USE = re.compile(r"^(pub(?:\([^)]*\))?\s+)?use\s+")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip(text):
    """Blanks comments, strings and char literals, keeping every newline and brace outside them."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif re.match(r'b?r#*"', text[i:i + 258]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(text, start):
    """The index just past the bracket group that opens at `start`."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack, i = [], start
    while i < len(text):
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return len(text)


def use_paths(tree, prefix=()):
    """Flattens a use tree into (path, is_glob) pairs; `self` names the prefix itself."""
    tree = tree.strip()
    out = []
    depth, start, parts = 0, 0, []
    for i, c in enumerate(tree):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(tree[start:i])
            start = i + 1
    parts.append(tree[start:])
    if len(parts) > 1:
        for part in parts:
            if part.strip():
                out += use_paths(part, prefix)
        return out
    brace = tree.find("{")
    if brace >= 0:
        head = [s for s in tree[:brace].replace(" ", "").split("::") if s]
        return use_paths(tree[brace + 1:tree.rfind("}")], prefix + tuple(head))
    path = re.sub(r"\s+as\s+\w+$", "", tree).replace(" ", "").split("::")
    path = tuple(s for s in path if s)
    if path == ("*",):
        return [(prefix, True)]
    if path and path[-1] == "*":
        return [(prefix + path[:-1], True)]
    if path == ("self",):
        return [(prefix, False)]
    return [(prefix + path, False)]


class Module:
    def __init__(self, path, file):
        self.path, self.file = path, file
        self.children = {}  # name -> Module
        self.items = set()
        self.uses = []  # (path, is_glob, is_pub)


def parse_body(text, module, modules, crate_root):
    """Reads one module body (already stripped): its items, uses and submodules."""
    i, n = 0, len(text)
    cfg_test = False
    while i < n:
        while i < n and text[i] in " \t\r\n;":
            i += 1
        if i >= n:
            break
        rest = text[i:i + 300]
        if rest.startswith("#"):
            j = text.find("[", i)
            end = block_end(text, j)
            if re.match(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]", text[i:end]):
                cfg_test = True
            i = end
            continue
        m = MOD.match(rest)
        if m:
            name = m.group(1)
            if m.group(2) == "{":
                start = i + m.end() - 1
                end = block_end(text, start)
                if not cfg_test:
                    child = Module(module.path + (name,), module.file)
                    module.children[name] = child
                    parse_body(text[start + 1:end - 1], child, modules, crate_root)
                i = end
            else:
                if not cfg_test:
                    child_file = module_file(module, name, crate_root)
                    if child_file:
                        child = Module(module.path + (name,), child_file)
                        module.children[name] = child
                        modules.append(child)
                        with open(child_file) as f:
                            parse_body(strip(f.read()), child, modules, crate_root)
                i += m.end()
            cfg_test = False
            continue
        m = USE.match(rest)
        if m:
            end = text.find(";", i)
            if not cfg_test:
                for path, glob in use_paths(text[i + m.end():end]):
                    module.uses.append((path, glob, bool(m.group(1))))
            i = end + 1
            cfg_test = False
            continue
        m = ITEM.match(rest) or MACRO_RULES.match(rest)
        if m and not cfg_test:
            module.items.add(m.group(m.lastindex))
        # Skips the item: to its `;` or its body's closing brace, whichever comes first.
        j = i
        while j < n and text[j] not in ";{":
            if text[j] in "([":
                j = block_end(text, j)
            else:
                j += 1
        if j < n and text[j] == "{":
            end = block_end(text, j)
            if not cfg_test:
                collect_inner_uses(text[i:end], module)
            i = end
        else:
            if not cfg_test:
                collect_inner_uses(text[i:j], module)
            i = j + 1
        cfg_test = False


def collect_inner_uses(text, module):
    """Uses and qualified paths (`crate::…`, `super::…`, `child::…`) inside an item count as imports."""
    i = 0
    pattern = re.compile(
        r"(?<![A-Za-z0-9_:])(?:[A-Za-z_][A-Za-z0-9_]*!\s*[({\[]|use\s+|[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
    while True:
        m = pattern.search(text, i)
        if not m:
            return
        token = m.group(0)
        if token.startswith("use") and token[3:4].isspace():
            end = text.find(";", m.start())
            for path, glob in use_paths(text[m.end():end]):
                module.uses.append((path, glob, False))
            i = end + 1
        elif token.endswith(("(", "{", "[")):
            # A macro invocation's body (quoted code, format strings) is not this module's code.
            i = block_end(text, m.end() - 1)
        else:
            module.uses.append((tuple(token.split("::")), False, False))
            i = m.end()


def module_file(parent, name, crate_root):
    base = os.path.dirname(parent.file)
    stem = os.path.splitext(os.path.basename(parent.file))[0]
    if parent.file != crate_root and stem != "mod":
        base = os.path.join(base, stem)
    for candidate in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
        if os.path.exists(candidate):
            return candidate
    return None


class Crate:
    def __init__(self, root_file):
        self.root = Module((), root_file)
        self.modules = [self.root]
        with open(root_file) as f:
            parse_body(strip(f.read()), self.root, self.modules, root_file)
        self.all = {}
        self.index(self.root)

    def index(self, module):
        self.all[module.path] = module
        for child in module.children.values():
            self.index(child)

    def start(self, module, path):
        """The module a relative path starts from, and the rest of the path."""
        if not path:
            return None, path
        head = path[0]
        if head == "crate":
            return self.root, path[1:]
        if head == "self":
            return module, path[1:]
        if head == "super":
            at = module
            while path and path[0] == "super":
                at = self.all.get(at.path[:-1], self.root)
                path = path[1:]
            return at, path
        return module, path

    def resolve(self, module, path, seen=None):
        """The (file, name) a path ends at within this crate, or None for another crate's."""
        seen = seen or set()
        if (module.path, path) in seen:
            return None
        seen.add((module.path, path))
        at, rest = self.start(module, path)
        if at is None:
            return None
        if not rest:
            return (at.file, at.path[-1] if at.path else "crate")
        name = rest[0]
        if name in at.children:
            return self.resolve(at.children[name], ("self",) + rest[1:], seen)
        if name in at.items:
            return (at.file, name)
        for upath, glob, _ in at.uses:
            if not glob and upath and upath[-1] == name:
                target = self.resolve(at, upath, seen)
                if target is None:
                    return None
                if len(rest) == 1:
                    return target
                tmod = self.module_at(target)
                return self.resolve(tmod, ("self",) + rest[1:], seen) if tmod else target
        for upath, glob, _ in at.uses:
            if glob:
                target = self.resolve(at, upath, seen)
                tmod = self.module_at(target) if target else None
                if tmod and (name in tmod.items or name in tmod.children
                             or any(u[-1:] == (name,) for u, g, _ in tmod.uses if not g)):
                    return self.resolve(tmod, ("self",) + rest, seen)
        return None

    def module_at(self, target):
        for module in self.all.values():
            if module.file == target[0] and (module.path[-1:] == (target[1],) or (not module.path and target[1] == "crate")):
                return module
        return None

    def edges(self):
        out = {}
        for module in self.all.values():
            for path, glob, reexport in module.uses:
                if reexport:
                    continue
                target = self.resolve(module, path)
                if target and target[0] != module.file:
                    out.setdefault(module.file, {}).setdefault(target[0], set()).add(
                        "*" if glob else target[1])
        return out


def circles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def workspace_roots(top):
    roots = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("target", "tests", "examples")]
        if "Cargo.toml" in filenames:
            lib = os.path.join(dirpath, "src", "lib.rs")
            if os.path.exists(lib):
                roots.append(lib)
    return sorted(roots)


SELF_TESTS = [
    # (files, expected circles as sorted file lists)
    ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::b::B;\npub struct A;\n",
      "b.rs": "pub struct B(crate::a::A);\n"}, [["a.rs", "b.rs"]]),
    # A parent that only declares and re-exports its children imports nothing.
    ({"lib.rs": "mod m;\n", "m/mod.rs": "mod x;\nmod y;\npub use x::X;\npub use y::Y;\n",
      "m/x.rs": "use super::Y;\npub struct X(Y);\n", "m/y.rs": "pub struct Y;\n"}, []),
    # A parent whose own item a child uses, while it calls the child, is a circle.
    ({"lib.rs": "mod m;\n", "m/mod.rs": "mod x;\npub fn helper() {}\nfn run() { x::go() }\n",
      "m/x.rs": "use super::helper;\npub fn go() { helper() }\n"}, [["m/mod.rs", "m/x.rs"]]),
    # Test modules, comments, strings and macro bodies are not imports.
    ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "pub struct A;\n#[cfg(test)]\nmod tests { use crate::b::B; }\n",
      "b.rs": "// crate::a::A\nfn f() { let _ = \"crate::a::A\"; quote!(crate::a::A); }\nuse crate::a::A;\n"}, []),
]


def self_test():
    import tempfile
    for number, (files, expected) in enumerate(SELF_TESTS):
        with tempfile.TemporaryDirectory() as top:
            for name, text in files.items():
                path = os.path.join(top, name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            found = [sorted(os.path.relpath(p, top) for p in c)
                     for c in circles(Crate(os.path.join(top, "lib.rs")).edges())]
            if sorted(found) != sorted(expected):
                sys.exit(f"import_circles self-test {number}: found {found}, expected {expected}")
    print(f"import_circles: {len(SELF_TESTS)} self-tests passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = [os.path.join(d, "lib.rs") for d in sys.argv[1:]] or workspace_roots(top)
    found = 0
    for root in roots:
        crate = Crate(root)
        edges = crate.edges()
        for circle in circles(edges):
            found += 1
            rel = lambda p: os.path.relpath(p, top)
            print(f"import circle in {rel(os.path.dirname(os.path.dirname(root)))}: {len(circle)} files")
            members = set(circle)
            for a in circle:
                for b, names in sorted(edges.get(a, {}).items()):
                    if b in members:
                        print(f"  {rel(a)} -> {rel(b)}: {', '.join(sorted(names))}")
    if found:
        sys.exit(1)
    print(f"no import circles in {len(roots)} crates")


if __name__ == "__main__":
    main()
