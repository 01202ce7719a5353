/**
 * Issue 24, "the ACI speaks the repository's language": golden observations of the searches and
 * edit on the fixture repository, over the local sandbox driver (the same tools over Docker are covered
 * by aci/golden.test.ts; these texts do not depend on the driver).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, startSession } from "./aci-support.js";

const local = drivers.find((driver) => driver.name === "local")!;

describe("the ACI's searches and edit say what they do (issue 24)", async () => {
  const provider = await local.provider();
  let s: AciSession;

  beforeAll(async () => {
    s = await startSession(provider!, { window: 10, searchCap: 3 });
  });
  afterAll(async () => {
    await s?.sandbox.dispose();
  });

  it("search_dir with no case-sensitive match names the files that match ignoring case", async () => {
    expect(await s.run("search_dir", { search_term: "HELLO" })).toBe(
      'No matches found for "HELLO" in ./; 2 files match ignoring case: docs/guide.md, src/greet.py. Matching is case-sensitive: search again with the case the code uses.',
    );
    expect(await s.run("search_dir", { search_term: "DEF GREET", dir: "src" })).toBe(
      'No matches found for "DEF GREET" in src; 1 file matches ignoring case: src/greet.py. Matching is case-sensitive: search again with the case the code uses.',
    );
    // Nothing under any case: the plain answer.
    expect(await s.run("search_dir", { search_term: "zzz_nothing" })).toBe(
      'No matches found for "zzz_nothing" in ./',
    );
  });

  it("search_dir given a file searches that file as search_file does", async () => {
    expect(await s.run("search_dir", { search_term: "greet", dir: "src/greet.py" })).toBe(
      [
        'Found 2 matches for "greet" in src/greet.py:',
        "Line 1:def greet(name):",
        'Line 5:print(greet("world"))',
        'End of matches for "greet" in src/greet.py',
      ].join("\n"),
    );
  });

  it("search_file takes a regular expression in ripgrep's syntax, and says when it is invalid", async () => {
    expect(
      await s.run("search_file", { search_term: "def add_4[67]\\(", regex: true, file: "src/calc.py" }),
    ).toBe(
      [
        'Found 2 matches for "def add_4[67]\\(" in src/calc.py:',
        "Line 141:def add_46(value):",
        "Line 144:def add_47(value):",
        'End of matches for "def add_4[67]\\(" in src/calc.py',
      ].join("\n"),
    );
    // Without regex the same term is literal and matches nothing.
    expect(await s.run("search_file", { search_term: "def add_4[67]\\(", file: "src/calc.py" })).toBe(
      'No matches found for "def add_4[67]\\(" in src/calc.py',
    );
    const invalid = (
      await s.run("search_file", { search_term: "greet(", regex: true, file: "src/greet.py" })
    ).split("\n");
    expect(invalid[0]).toBe(
      "Error: search_term is not a valid regular expression (ripgrep's syntax); nothing was searched.",
    );
  });

  it("edit: a final newline in replacement_text only ends the last line, as its description says", async () => {
    const spec = s.env.functionSpecs().find((tool) => tool.name === "edit")!;
    expect(spec.description).toContain(
      "Its final newline is optional (to add an empty last line, end with an empty line).",
    );
    const original = "a = 1\nb = 2\nc = 3\n";
    const answers: string[] = [];
    for (const replacement of ["b = 20\n", "b = 20"]) {
      await s.sandbox.writeFile("src/lines.py", original);
      await s.run("open", { path: "src/lines.py" });
      answers.push(await s.run("edit", { start_line: 2, end_line: 2, replacement_text: replacement }));
      expect((await s.sandbox.readFile("src/lines.py")).toString()).toBe("a = 1\nb = 20\nc = 3\n");
    }
    expect(answers[1]).toBe(answers[0]);
    expect(answers[0]).toBe(
      [
        "[File: src/lines.py (3 lines total)]",
        "1:a = 1",
        "2:b = 20",
        "3:c = 3",
        "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
        "-2:b = 2",
        "+2:b = 20",
        "File updated: the edited line is now line 2. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
      ].join("\n"),
    );
    // An empty line at the end is one more line.
    await s.sandbox.writeFile("src/lines.py", original);
    await s.run("edit", { start_line: 2, end_line: 2, replacement_text: "b = 20\n\n" });
    expect((await s.sandbox.readFile("src/lines.py")).toString()).toBe("a = 1\nb = 20\n\nc = 3\n");
  });
});
