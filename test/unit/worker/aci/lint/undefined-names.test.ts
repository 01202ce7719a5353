/** The F821-style check behind the edit warning, on the real tree-sitter Python grammar. */
import { describe, expect, it } from "vitest";
import { newUndefinedNamesWarning, undefinedNames } from "../../../../../worker/aci/lint/undefined-names.js";

const source = `import os.path, j as k
from m import a as b, c
import unittest

class T(unittest.TestCase):
    attr = 1
    def test_a(self):
        import mock
        with mock.patch("x") as p, open(f) as (q, r):
            print(p, q, r)
    def test_b(self, *args, key=attr, **kw):
        mock.call(os, k, b, c, attr)
        try:
            pass
        except (ValueError, Err) as e:
            print(e, [x for x in range(3) if x], lambda y, *w: y + w + u)
        global G
        G = 1
        n: int = 2
        for i, (j2, l) in enumerate([]):
            print(i, j2, l, n, key, args, kw, __file__, f"{fmt}")
        if (w2 := 3):
            print(w2)

def g[V](v: V) -> V:
    return v

print(G, T, g, self)
`;

describe("undefined names (pyflakes F821)", () => {
  it("follows function, lambda and class scopes, imports, parameters and targets", async () => {
    expect(Object.fromEntries((await undefinedNames(source))!)).toEqual({
      f: [9],
      // imported in test_a only; a class attribute is not visible in a method
      mock: [12],
      attr: [12],
      Err: [15],
      u: [16],
      fmt: [21],
      self: [28],
    });
  });

  it("cannot tell with `from x import *`, and names only what an edit made undefined", async () => {
    expect(await undefinedNames("from os import *\nprint(getcwd())\n")).toBeNull();
    expect(await newUndefinedNamesWarning("a.py", "print(x)\n", "print(x, y)\n")).toBe(
      "Warning: after this edit, a.py uses undefined name(s): 'y' (line 1). Import or define them, or fix the spelling (pyflakes F821).",
    );
    expect(await newUndefinedNamesWarning("a.py", "print(x)\n", "print(x)\nprint(x)\n")).toBeNull();
    expect(await newUndefinedNamesWarning("a.js", "", "print(y)\n")).toBeNull();
  });
});
