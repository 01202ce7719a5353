import { describe, expect, it } from "vitest";
import { fallbackNote, type SetupFallback } from "../../../../../worker/run/prepare/setup.js";

const PIP = ".venv/bin/python -m pip install";
const failed: SetupFallback = {
  step: 3,
  steps: 4,
  install: `${PIP} -r requirements-dev.txt`,
  what: "requirements-dev.txt",
  why: "exited 1",
  tail: "ERROR: No matching distribution found for flake8==0.0.0",
  instead: [],
  installed: ["pytest"],
  skipped: ["flake8==0.0.0"],
};

describe("the status comment's note on an optional install that failed", () => {
  it("a requirements file: its lines one at a time, what installed and what did not", () => {
    expect(fallbackNote(failed).split("\n")).toEqual([
      `⚠️ Setup step 3 of 4, the optional install of requirements-dev.txt (\`${PIP} -r requirements-dev.txt\`), exited 1; the run went on with what the tests need instead:`,
      "- then the requirements of requirements-dev.txt, one at a time: installed `pytest`; not installed `flake8==0.0.0`",
      "",
      "The optional install's last lines:",
      "```",
      "ERROR: No matching distribution found for flake8==0.0.0",
      "```",
    ]);
  });
  it("one it could not read: nothing in its place, said so", () => {
    const note = fallbackNote({ ...failed, installed: [], skipped: [] });
    expect(note.split("\n")[0]).toBe(
      `⚠️ Setup step 3 of 4, the optional install of requirements-dev.txt (\`${PIP} -r requirements-dev.txt\`), exited 1; the run went on without it.`,
    );
    expect(note).not.toContain("one at a time");
  });
  it("output holding backticks stays inside its fence; a requirement's backticks cannot open code", () => {
    const note = fallbackNote({ ...failed, tail: "```\n@someone <img src=x>", skipped: ["a`b"] });
    expect(note).toContain("````\n```\n@someone <img src=x>\n````");
    expect(note).toContain("not installed `a'b`");
  });
});
