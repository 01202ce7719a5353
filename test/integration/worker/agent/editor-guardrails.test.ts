/**
 * The `editor` bundle's guardrails (issue 16), as replayed trajectories with golden observations, in
 * both action formats (test/fixtures/agent/replays/editor-*.jsonl and editor-*-text.jsonl) over
 * test/fixtures/agent/editor-repo. Each observation is compared whole, with the sandbox's root as ROOT.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../../../../sandbox/local.js";
import type { Sandbox, Trajectory } from "../../../../src/shared/contracts.js";
import { createEnvironment } from "../../../../worker/aci/index.js";
import { loadConfig } from "../../../../worker/agent/config-file.js";
import { functionSpecs, openingEntries } from "../../../../worker/agent/conversation.js";
import { validForm } from "../../../../worker/agent/parse.js";
import { type ActionFormat, editorRepo, replayEditorRun } from "./editor-harness.js";

const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.dispose()));
});

const formats: ActionFormat[] = ["function_calling", "thought_action"];

/** Every observation of a replayed run, with the sandbox's root shown as ROOT. */
async function observations(name: string, format: ActionFormat): Promise<string[]> {
  const { trajectory, root } = await replayEditorRun(name, format, sandboxes);
  return observationsOf(trajectory, root);
}

/** Every observation of the replays above, for the check that they name only the bundle's tools. */
const collected: string[] = [];

function observationsOf(trajectory: Trajectory, root: string): string[] {
  const seen = trajectory.trajectory.map((step) => step.observation.replaceAll(root, "ROOT"));
  collected.push(...seen);
  return seen;
}

const footer = (openFile = "n/a") => `(Open file: ${openFile})\n(Current directory: ROOT)`;

/** Lines from..to (1-based, inclusive) of a fixture file, numbered as `cat -n` numbers them. */
function catLines(path: string, from: number, to: number): string {
  const lines = readFileSync(join(editorRepo, path), "utf8").split("\n");
  return lines
    .slice(from - 1, to)
    .map((line, index) => `${String(from + index).padStart(6)}\t${line}`)
    .join("\n");
}

const catHeader = (path: string) => `Here's the result of running \`cat -n\` on ROOT/${path}:`;

/** The gate's own error lines belong to the syntax gate, not to this bundle: they are not pinned here. */
const withoutGateErrors = (text: string) => text.replace(/\nERRORS:\n(- .*\n)+/, "\nERRORS:\n<errors>\n");

describe.each(formats)("editor bundle guardrails, replayed (%s)", (format) => {
  it("speaks its own tools: search_file without a file, a rejected str_replace, an editor in bash; a failed edit leaves the open file", async () => {
    const seen = await observations("editor-messages", format);
    expect(seen).toHaveLength(6);
    expect(seen[0]).toBe(
      `Error: no file was given and none has been viewed or edited yet. Give the file to search in as file (or view it first).\n${footer()}`,
    );
    expect(withoutGateErrors(seen[1]!)).toBe(
      [
        "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.",
        "",
        "ERRORS:",
        "<errors>",
        "",
        "This is how your edit would have looked if applied",
        "-------------------------------------------------",
        "[File: app/tabbed.py (14 lines total)]",
        "(2 more lines above)",
        "3:",
        "4:def total(values):",
        "5:\tresult = 0",
        "6:\tfor value in values:",
        "7:\t\tresult += value",
        "8:\treturn (result",
        "9:",
        "10:",
        "11:def average(values):",
        "12:\tif not values:",
        "13:\t\treturn 0",
        "(1 more lines below)",
        "-------------------------------------------------",
        "",
        "This is the original code before your edit",
        "-------------------------------------------------",
        "[File: app/tabbed.py (14 lines total)]",
        "(2 more lines above)",
        "3:",
        "4:def total(values):",
        "5:\tresult = 0",
        "6:\tfor value in values:",
        "7:\t\tresult += value",
        "8:\treturn result",
        "9:",
        "10:",
        "11:def average(values):",
        "12:\tif not values:",
        "13:\t\treturn 0",
        "(1 more lines below)",
        "-------------------------------------------------",
        "Your changes have NOT been applied, and the file is as it was.",
        "Correct new_str (it replaces old_str; the lines around old_str stay as they are) and call str_replace again.",
        "DO NOT send the same edit again: it will be rejected the same way.",
        // The rejected edit did not make app/tabbed.py the open file.
        footer(),
      ].join("\n"),
    );
    expect(seen[2]).toBe(
      `vim is an interactive editor and cannot be used here (there is no terminal). Use str_replace, insert or create to change files, or a non-interactive command such as sed -i.\n${footer()}`,
    );
    expect(seen[3]).toBe(
      `${catHeader("app/tabbed.py")}\n${catLines("app/tabbed.py", 5, 8)}\n\n${footer("app/tabbed.py")}`,
    );
    expect(seen[4]).toBe(
      [
        'Found 3 matches for "result" in app/tabbed.py:',
        "Line 5:\tresult = 0",
        "Line 7:\t\tresult += value",
        "Line 8:\treturn result",
        'End of matches for "result" in app/tabbed.py',
        footer("app/tabbed.py"),
      ].join("\n"),
    );
    // The same rejected edit again: the loop's warning speaks of the file's lines, not of a window.
    expect(seen[5]).toBe(
      `${seen[1]!.replace(footer(), footer("app/tabbed.py"))}\nWARNING: you sent this exact edit before and it was rejected for the same reason. Resending it will not work: read the error above, check the current lines of the file and their indentation, and change the edit.`,
    );
  });

  it("str_replace that finds nothing says why: spaces where the file has tabs, or the closest lines", async () => {
    const seen = await observations("editor-str-replace-miss", format);
    expect(seen).toEqual([
      [
        "No replacement was performed, old_str `    result += value` did not appear verbatim in ROOT/app/tabbed.py.",
        "old_str is indented with spaces, but the file indents these lines with tabs: with its indentation in tabs, old_str matches line 7. Write old_str (and new_str) with tabs, as the file has them:",
        "     7\t\t\tresult += value",
        footer(),
      ].join("\n"),
      [
        "No replacement was performed, old_str `\tfor value in value:` did not appear verbatim in ROOT/app/tabbed.py.",
        "The closest text in the file is line 6 (95% alike); compare it with old_str character by character:",
        "     6\t\tfor value in values:",
        footer(),
      ].join("\n"),
      [
        "The file ROOT/app/tabbed.py has been edited. Here's the result of running `cat -n` on a snippet of ROOT/app/tabbed.py:",
        catLines("app/tabbed.py", 2, 6),
        "     7\t\t\tresult += value or 0",
        catLines("app/tabbed.py", 8, 10),
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
        "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
        "-7:\t\tresult += value",
        "+7:\t\tresult += value or 0",
        footer("app/tabbed.py"),
      ].join("\n"),
    ]);
  });

  it("undo_edit shows the lines it restored; a clipped view names the view_range of the next lines", async () => {
    const seen = await observations("editor-undo", format);
    expect(seen).toHaveLength(4);
    // old_str of two lines: in text mode a quoted argument goes on over the following lines.
    expect(seen[0]).toBe(
      [
        "The file ROOT/app/long.py has been edited. Here's the result of running `cat -n` on a snippet of ROOT/app/long.py:",
        catLines("app/long.py", 298, 303),
        "   304\t    return value * 100.0",
        catLines("app/long.py", 305, 307),
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
        "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
        "-304:    return value * 100",
        "+304:    return value * 100.0",
        footer("app/long.py"),
      ].join("\n"),
    );
    expect(seen[1]).toBe(
      [
        "Last edit to ROOT/app/long.py undone successfully: line 304 is as it was before it. Here's the result of running `cat -n` on a snippet of ROOT/app/long.py:",
        catLines("app/long.py", 300, 308),
        "",
        footer("app/long.py"),
      ].join("\n"),
    );
    expect(seen[2]).toBe(
      [
        catHeader("app/big.py"),
        catLines("app/big.py", 1, 396),
        "<response clipped><NOTE>Only lines 1-396 of the 600 lines asked for fit in one answer. To see the next ones, call view on this file with view_range [397, 600]; to find a line first, use search_file.</NOTE>",
        "",
        footer("app/big.py"),
      ].join("\n"),
    );
    expect(seen[3]).toBe(
      [catHeader("app/big.py"), catLines("app/big.py", 397, 600), "", footer("app/big.py")].join("\n"),
    );
    for (const observation of seen)
      expect(observation).not.toMatch(/retry this tool|omitted from the middle/);
  });

  it("view shows a file that almost fits whole, and clamps a view_range past the end", async () => {
    const seen = await observations("editor-view", format);
    expect(seen).toEqual([
      // 410 lines under the 400-line cap: within 10%, so shown whole (the middle 12 were cut before).
      [catHeader("app/long.py"), catLines("app/long.py", 1, 410), "", footer("app/long.py")].join("\n"),
      [
        "Note: the file has 410 lines; view_range [405, 420] was clamped to [405, 410].",
        catHeader("app/long.py"),
        catLines("app/long.py", 405, 410),
        "",
        footer("app/long.py"),
      ].join("\n"),
      [
        "Note: the file has 410 lines; view_range [500, 510] was clamped to [400, 410].",
        catHeader("app/long.py"),
        catLines("app/long.py", 400, 410),
        "",
        footer("app/long.py"),
      ].join("\n"),
    ]);
  });

  it("search_dir given a file searches that file, as search_file does (issue 24)", async () => {
    const seen = await observations("editor-search-dir-file", format);
    const searched = [
      'Found 2 matches for "total" in app/tabbed.py:',
      "Line 4:def total(values):",
      "Line 14:\treturn total(values) / len(values)",
      'End of matches for "total" in app/tabbed.py',
      footer(),
    ].join("\n");
    expect(seen).toEqual([searched, searched]);
  });
});

/**
 * Where a text names a tool. Names with an underscore (and goto) are found anywhere; names that are
 * also English words (open, edit, view, insert) only where used as a tool: quoted, as "the X command",
 * "use X", "call X", "X <arg>", "X(" or at the start of a command line.
 */
function toolMentions(text: string, name: string): boolean {
  if (name.includes("_") || name === "goto") return new RegExp(`\\b${name}\\b`).test(text);
  const forms = [
    `\`${name}\``,
    `\\b${name} command\\b`,
    `\\buse (the )?${name}\\b`,
    `\\bcall ${name}\\b`,
    `\\b${name} <`,
    `\\b${name}\\(`,
    `^${name} \\S`,
  ];
  return forms.some((form) => new RegExp(form, "im").test(text));
}

describe("each bundle's texts name only its own tools", () => {
  it("the prompts, tool docs, format errors and every observation above", async () => {
    const sandbox = await new LocalSandboxProvider({ warn: () => {} }).create({
      sourceDir: editorRepo,
      jobId: "editor-wording",
    });
    sandboxes.push(sandbox);
    const bundles = ["aci", "editor"] as const;
    const environments = await Promise.all(
      bundles.map(async (bundle) => {
        const config = await loadConfig({ overrides: { aci: { bundle } } });
        return createEnvironment({ sandbox, config: config.aci });
      }),
    );
    const allNames = new Set(environments.flatMap((env) => env.tools.map((tool) => tool.name)));
    for (const [index, env] of environments.entries()) {
      const own = new Set(env.tools.map((tool) => tool.name));
      const foreign = [...allNames].filter((name) => !own.has(name));
      const texts: string[] = [env.docs()];
      for (const format of formats) {
        const config = (await loadConfig({ overrides: { agent: { actionFormat: format } } })).agent;
        const issue = { title: "t", body: "b" };
        texts.push(
          ...openingEntries(config, env, issue, "acme/editor").map((entry) => entry.message.content ?? ""),
        );
        texts.push(...functionSpecs(env, config).map((spec) => spec.description));
        texts.push(
          validForm(format, env.tools),
          ...env.tools.map((tool) => validForm(format, env.tools, tool.name)),
        );
      }
      for (const [name, args] of [
        ["search_file", { search_term: "total" }],
        ["search_dir", { search_term: "total", dir: "app/tabbed.py" }],
        ["bash", { command: "vim app/tabbed.py" }],
      ] as const) {
        texts.push((await env.execute(name, args)).observation);
      }
      if (bundles[index] === "editor") {
        texts.push(...collected);
        expect(collected.length).toBeGreaterThanOrEqual(2 * 18);
        expect(texts.join("\n")).toContain("view_range instead of reading long files whole");
      } else {
        expect(texts.join("\n")).toContain("open files at the line you need\n   and use goto");
      }
      const offending = texts.flatMap((text) =>
        foreign.filter((name) => toolMentions(text, name)).map((name) => `${name} in: ${text.slice(0, 300)}`),
      );
      expect(offending, `${bundles[index]} bundle`).toEqual([]);
    }
  });
});
