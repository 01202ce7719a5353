/**
 * The syntax gate on the host: every grammar loads, and for every checked language a good edit passes,
 * a breaking edit is caught with its position, and an edit to an already-broken file passes when it
 * adds no error of its own.
 */
import { describe, expect, it } from "vitest";
import { checkEdit } from "../../../../../worker/aci/lint/gate.js";
import { loadGrammar, parserFor, treeSitterGrammars } from "../../../../../worker/aci/lint/grammars.js";
import { checkersFor } from "../../../../../worker/aci/lint/languages.js";
import { parseCached, textEdit } from "../../../../../worker/aci/lint/tree-cache.js";
import { parseTextFile, replaceLines, textOf } from "../../../../../worker/aci/text-file.js";
import { lintSamples } from "../../../../support/lint-samples.js";

function edit(source: string, line: number, replacement: string) {
  const file = parseTextFile(Buffer.from(source));
  return textOf(replaceLines(file, line, line, [replacement]));
}

const span = (line: number) => ({ start: line, end: line, newLineCount: 1 });

describe("grammars", () => {
  it.each(treeSitterGrammars)("the %s grammar loads into the bundled runtime and parses", async (name) => {
    const language = await loadGrammar(name);
    expect(language.abiVersion).toBeGreaterThanOrEqual(13);
    const parser = await parserFor(name);
    const tree = parser.parse("x");
    expect(tree?.rootNode).toBeDefined();
    tree?.delete();
  });

  it("every language the issue names has a checker", () => {
    const files = [
      "a.py",
      "a.js",
      "a.ts",
      "a.tsx",
      "a.go",
      "a.rs",
      "A.java",
      "a.rb",
      "a.c",
      "a.cpp",
      "A.cs",
      "a.php",
      "a.sh",
      "a.json",
      "a.yaml",
      "a.yml",
    ];
    for (const file of files) expect(checkersFor(file).length, file).toBeGreaterThan(0);
    expect(checkersFor("README.md")).toEqual([]);
    expect(checkersFor("tsconfig.json")).toEqual([]);
  });
});

describe.each(lintSamples)("syntax gate: $file", (sample) => {
  it("accepts the unchanged sample and a good edit", async () => {
    const after = edit(sample.source, sample.line, sample.good);
    const verdict = await checkEdit(sample.file, sample.source, after, span(sample.line));
    expect(verdict).toMatchObject({ checked: true, newErrors: [] });
  });

  it("rejects an edit that breaks the syntax, pointing at the edited line or after it", async () => {
    const after = edit(sample.source, sample.line, sample.bad);
    const verdict = await checkEdit(sample.file, sample.source, after, span(sample.line));
    expect(verdict.checked).toBe(true);
    if (!verdict.checked) return;
    expect(verdict.newErrors.length).toBeGreaterThan(0);
    expect(verdict.newErrors[0]!.line).toBeGreaterThanOrEqual(sample.line);
    expect(verdict.newErrors[0]!.message).not.toBe("");
  });

  it("accepts a good edit to a file that was already broken", async () => {
    const broken = sample.source + sample.broken;
    const after = edit(broken, sample.line, sample.good);
    const before = await checkEdit(sample.file, sample.source, broken, {
      start: 99,
      end: 98,
      newLineCount: 1,
    });
    expect(
      before.checked && before.newErrors.length,
      "the appended line must break the file",
    ).toBeGreaterThan(0);
    const verdict = await checkEdit(sample.file, broken, after, span(sample.line));
    expect(verdict).toMatchObject({ checked: true, newErrors: [] });
  });

  it("still rejects a new error in a file that was already broken", async () => {
    const broken = sample.source + sample.broken;
    const after = edit(broken, sample.line, sample.bad);
    const verdict = await checkEdit(sample.file, broken, after, span(sample.line));
    expect(verdict.checked && verdict.newErrors.length).toBeGreaterThan(0);
  });
});

describe("syntax gate: special cases", () => {
  it("a .h file passes when it is valid C++ even though C rejects it", async () => {
    const source = "int f(int x);\n";
    const after = "class A { public: int f(); };\n";
    expect(await checkEdit("a.h", source, after, span(1))).toMatchObject({ checked: true, newErrors: [] });
    expect((await checkEdit("a.h", source, "int f(int x;\n", span(1))).checked).toBe(true);
  });

  it("a templated YAML file (Helm, Jinja) is not checked as YAML", async () => {
    const before = "name: {{ .Values.name }}\nreplicas: 1\n";
    const after = "name: {{ .Values.name }}\nreplicas: {{ .Values.replicas }}\n";
    expect(await checkEdit("templates/deploy.yaml", before, after, span(2))).toEqual({ checked: false });
    expect((await checkEdit("deploy.yaml", "replicas: 1\n", "replicas: [1\n", span(1))).checked).toBe(true);
  });

  it("a file in another language is not checked", async () => {
    expect(await checkEdit("notes.md", "# a\n", "# a ((((\n", span(1))).toEqual({ checked: false });
  });

  it("an unclosed Python parenthesis is an error (hasError)", async () => {
    const verdict = await checkEdit("x.py", "", "print((1)\n", { start: 1, end: 0, newLineCount: 1 });
    expect(verdict.checked && verdict.newErrors.length).toBeGreaterThan(0);
  });
});

describe("incremental parsing", () => {
  it("describes the changed span of two texts as a tree-sitter edit", () => {
    expect(textEdit("ab\ncd\nef\n", "ab\ncXd\nef\n")).toEqual({
      startIndex: 4,
      oldEndIndex: 4,
      newEndIndex: 5,
      startPosition: { row: 1, column: 1 },
      oldEndPosition: { row: 1, column: 1 },
      newEndPosition: { row: 1, column: 2 },
    });
  });

  it("parses an edited text from the cached tree to the same tree as a full parse", async () => {
    const before = Array.from({ length: 300 }, (_, i) => `export const v${i}: number = ${i};`).join("\n");
    const after = before.replace("v150: number = 150;", "v150: number = (150;\nlet extra = 1;");
    const full = (await parserFor("typescript")).parse(after)!;
    const expected = full.rootNode.toString();
    full.delete();
    await parseCached("typescript", before);
    const incremental = await parseCached("typescript", after, before);
    expect(incremental.rootNode.toString()).toBe(expected);
    expect(incremental.rootNode.hasError).toBe(true);
  });
});
