/**
 * The prompt matches the action format (issue 12): with function calling the system prompt lists the
 * calls and the tool schemas carry the descriptions, never the text syntax; text mode keeps the
 * paper's `edit START:END ... end_of_edit`. submit's description says the first call only reviews.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment, Sandbox } from "../../../../src/shared/contracts.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { functionSpecs, openingEntries } from "../../../../worker/agent/conversation.js";
import { startEnvironment } from "./harness.js";

let sandbox: Sandbox;
let environment: Environment;
beforeAll(async () => {
  ({ sandbox, environment } = await startEnvironment());
});
afterAll(async () => {
  await sandbox?.dispose();
});

const issue = { title: "mean() crashes", body: "mean([]) raises ZeroDivisionError." };

describe("prompts per action format", () => {
  it("function calling: the system prompt leaves the tools to their definitions, without the text syntax", async () => {
    const config = (await loadConfig()).agent;
    const [system] = openingEntries(config, environment, issue, "acme/calc", {
      command: "python3 -m unittest discover -s tests -t .",
      from: "repository",
    });
    const text = system!.message.content!;
    // The definitions go with every request: a list of the calls in the prompt would say them twice (issue 27).
    expect(text).not.toContain("COMMANDS:");
    expect(text).not.toContain("edit(start_line");
    expect(text).toContain("special interface. The interface has a file viewer");
    expect(text).toContain("shell.\n\nRESPONSE FORMAT:\nThink about what to do next");
    expect(text).not.toContain("end_of_edit");
    expect(text).not.toContain("<start_line>");
    // Where scratch scripts go and how their imports resolve (issue 12).
    expect(text).toContain(
      "Put scratch scripts at the repository root (e.g. reproduce.py) and run them from\n   there (python3 reproduce.py)",
    );
    // The descriptions are sent once, in the schemas, not again in the prompt.
    const edit = functionSpecs(environment, config).find((spec) => spec.name === "edit")!;
    expect(text).not.toContain(edit.description);
    for (const spec of functionSpecs(environment, config)) {
      expect(spec.description).not.toContain("end_of_edit");
      expect(JSON.stringify(spec.parameters)).not.toContain("end_of_edit");
    }
  });

  it("the tip on reproducing follows the repository's language, from its test command (issue 24)", async () => {
    const config = (await loadConfig()).agent;
    const tip = (command: string | null) => {
      const tests = command === null ? null : { command, from: "repository" as const };
      const text = openingEntries(config, environment, issue, "acme/calc", tests)[0]!.message.content!;
      return text.slice(text.indexOf("Tips:\n") + 6, text.indexOf("\n2. "));
    };
    const intro =
      "1. Reproduce the bug first: write a short script or test that shows it, run it, and run it again\n   after your fix to confirm.";
    const remove =
      "Remove such scripts before you submit (a regression test that belongs\n   in the test suite stays).";
    expect(tip("go test ./...")).toBe(
      `${intro} In Go, write it as a test in the package's directory (e.g. reproduce_test.go with\n   func TestReproduce) and run it with go test -run TestReproduce ./path/to/package/. ${remove}`,
    );
    expect(tip("npm test")).toBe(
      `${intro} In Node, put a scratch script at the repository root (e.g. reproduce.mjs, importing\n   the package as its tests do) and run it with node reproduce.mjs. ${remove}`,
    );
    expect(tip("make test")).toBe(
      `${intro} Write it in the repository's language and put it at the repository root. Run it the way the repository's tests run (make test).\n   ${remove}`,
    );
    expect(tip(null)).toBe(
      `${intro} Write it in the repository's language and put it at the repository root.\n   ${remove}`,
    );
    for (const command of ["go test ./...", "npm test", "make test", null])
      expect(tip(command)).not.toMatch(/reproduce\.py|python3|PYTHONPATH/);
  });

  it("submit's description says the first call shows the diff and the second submits", async () => {
    const config = (await loadConfig()).agent;
    const submit = functionSpecs(environment, config).find((spec) => spec.name === "submit")!;
    expect(submit.description).toContain(
      "The first call only shows you the diff and a checklist to review; the second submits and ends the session",
    );
    const noReview = (await loadConfig({ overrides: { agent: { reviewOnSubmit: false } } })).agent;
    const direct = functionSpecs(environment, noReview).find((spec) => spec.name === "submit")!;
    expect(direct.description).not.toContain("The first call only shows you the diff");
  });

  it("text mode keeps the paper's syntax: edit START:END, the text, end_of_edit", async () => {
    const config = (await loadConfig({ overrides: { agent: { actionFormat: "thought_action" } } })).agent;
    const [system] = openingEntries(config, environment, issue, "acme/calc");
    const text = system!.message.content!;
    expect(text).toContain(
      "edit <start_line>:<end_line> [<expected_text>]\n<replacement_text>\nend_of_edit\n    Replaces lines",
    );
    expect(text).toContain("is terminated by a line with only end_of_edit on it.");
    expect(text).not.toContain("- edit(start_line");
    // Text mode has no schemas: each argument is said in the prompt, an optional one's default too.
    expect(text).toContain("COMMANDS:\nfind_file <file_name> [<dir>]\n");
    expect(text).toContain(
      "    - line_number (integer) [optional]: a line for the window to include (default: the top of the file)",
    );
    expect(text).toContain("    - lines (integer) [optional]: also show up to this many matching lines");
    expect(text).toMatch(/with its line number\.[^\n]*\n(?: {4}- [^\n]*\n)+open <path>/);
    expect(text).toMatch(/shows you the diff[^\n]*\n\nRESPONSE FORMAT:/);
  });
});
