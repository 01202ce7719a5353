/**
 * One small program per checked language, with a line to edit: a good replacement, one that breaks
 * the syntax, and a broken line appended to make the file already broken before the edit.
 */
interface LintSample {
  file: string;
  source: string;
  line: number;
  good: string;
  bad: string;
  /** Appended to `source` to make a file that is broken before any edit. */
  broken: string;
}

export const lintSamples: LintSample[] = [
  {
    file: "a.py",
    source: "def f(x):\n    return x + 1\n",
    line: 2,
    good: "    return x + 2",
    bad: "    return (x + 2",
    broken: "def g(:\n",
  },
  {
    file: "a.js",
    source: "function f(x) {\n  return x + 1;\n}\n",
    line: 2,
    good: "  return x + 2;",
    bad: "  return (x + 2;",
    broken: "function g( {\n",
  },
  {
    file: "a.ts",
    source: "function f(x: number): number {\n  return x + 1;\n}\n",
    line: 2,
    good: "  return x + 2;",
    bad: "  return x +;",
    broken: "let y: = 3;\n",
  },
  {
    file: "a.tsx",
    source: "export const A = () => <div>hi</div>;\nexport const n: number = 1;\n",
    line: 2,
    good: "export const n: number = 2;",
    bad: "export const n: number = ;",
    broken: "const B = (;\n",
  },
  {
    file: "a.go",
    source: "package main\n\nfunc f(x int) int {\n\treturn x + 1\n}\n",
    line: 4,
    good: "\treturn x + 2",
    bad: "\treturn x + (2",
    broken: "func g( {\n",
  },
  {
    file: "a.rs",
    source: "fn f(x: i32) -> i32 {\n    x + 1\n}\n",
    line: 2,
    good: "    x + 2",
    bad: "    x + (2",
    broken: "fn g( {\n",
  },
  {
    file: "A.java",
    source: "class A {\n  int f(int x) { return x + 1; }\n}\n",
    line: 2,
    good: "  int f(int x) { return x + 2; }",
    bad: "  int f(int x) { return x + ; }",
    broken: "class B {\n",
  },
  {
    file: "a.rb",
    source: "def f(x)\n  x + 1\nend\n",
    line: 2,
    good: "  x + 2",
    bad: "  x + (2",
    broken: "def g(\n",
  },
  {
    file: "a.c",
    source: "int f(int x) {\n  return x + 1;\n}\n",
    line: 2,
    good: "  return x + 2;",
    bad: "  return x + ;",
    broken: "int g( {\n",
  },
  {
    file: "a.cpp",
    source: "namespace a {\nint f(int x) { return x + 1; }\n}\n",
    line: 2,
    good: "int f(int x) { return x + 2; }",
    bad: "int f(int x) { return x + ; }",
    broken: "class B {\n",
  },
  {
    file: "A.cs",
    source: "class A {\n  int F(int x) { return x + 1; }\n}\n",
    line: 2,
    good: "  int F(int x) { return x + 2; }",
    bad: "  int F(int x) { return x + ; }",
    broken: "class B {\n",
  },
  {
    file: "a.php",
    source: "<?php\nfunction f($x) {\n  return $x + 1;\n}\n",
    line: 3,
    good: "  return $x + 2;",
    bad: "  return $x + ;",
    broken: "function g( {\n",
  },
  {
    file: "a.sh",
    source: "f() {\n  echo $((1 + 1))\n}\n",
    line: 2,
    good: "  echo hello",
    bad: "  echo $((1 +",
    broken: "g() { ( \n",
  },
  {
    file: "a.css",
    source: "a {\n  color: red;\n}\n",
    line: 2,
    good: "  color: blue;",
    bad: "  color: red; }}",
    broken: "b {\n",
  },
  {
    file: "a.json",
    source: '{\n  "a": 1,\n  "b": 2\n}\n',
    line: 2,
    good: '  "a": 3,',
    bad: '  "a": 3',
    broken: "x\n",
  },
  { file: "a.yaml", source: "a: 1\nb:\n  - x\n", line: 1, good: "a: 2", bad: "a: [1", broken: "c: [1,\n" },
];
