/**
 * Issue 24, "the ACI speaks the repository's language": golden observations of the searches and
 * edit on the fixture repository, over the local sandbox driver (the same tools over Docker are covered
 * by aci-golden.test.ts; these texts do not depend on the driver).
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
});
