/**
 * Golden observations of the `editor` bundle (str_replace style, texts of SWE-agent's
 * str_replace_editor) on the fixture repository, once per sandbox driver.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, startSession } from "./aci-support.js";

const catGreet = (root: string, hello = "Hello") =>
  [
    `Here's the result of running \`cat -n\` on ${root}/src/greet.py:`,
    "     1\tdef greet(name):",
    `     2\t    return "${hello}, " + name`,
    "     3\t",
    "     4\t",
    '     5\tprint(greet("world"))',
    "",
  ].join("\n");

for (const driver of drivers) {
  describe(`editor bundle golden observations (${driver.name} sandbox)`, async () => {
    const provider = await driver.provider();
    let s: AciSession;
    beforeAll(async () => {
      s = await startSession(provider!, { bundle: "editor" });
    });
    afterAll(async () => {
      await s?.sandbox.dispose();
    });

    it.runIf(provider)("offers the str_replace tools plus search, bash and submit", () => {
      expect(s.env.bundle).toBe("editor");
      expect(s.env.tools.map((tool) => tool.name)).toEqual([
        "view",
        "create",
        "str_replace",
        "insert",
        "undo_edit",
        "find_file",
        "search_dir",
        "search_file",
        "bash",
        "submit",
      ]);
      expect(s.env.functionSpecs().find((spec) => spec.name === "view")?.parameters).toEqual({
        type: "object",
        properties: {
          path: {
            type: "string",
            description: "path of the file or directory, absolute or relative to the current directory",
          },
          view_range: {
            type: "array",
            items: { type: "integer", description: "line number" },
            description:
              "[start_line, end_line]: show only these lines; end_line -1 means to the end of the file",
          },
        },
        required: ["path"],
      });
    });

    it.runIf(provider)(
      "view shows a file like cat -n, a range, a directory, and explains bad ranges",
      async () => {
        expect(await s.run("view", { path: "src/greet.py" })).toBe(catGreet(s.root));
        expect(await s.run("view", { path: `${s.root}/src/greet.py`, view_range: [2, 3] })).toBe(
          `Here's the result of running \`cat -n\` on ${s.root}/src/greet.py:\n     2\t    return "Hello, " + name\n     3\t\n`,
        );
        // A range past either end is clamped to the file, and says so (issue 16).
        expect(await s.run("view", { path: "src/greet.py", view_range: [0, 3] })).toBe(
          `Note: the file has 5 lines; view_range [0, 3] was clamped to [1, 3].\n${catGreet(s.root).split("\n").slice(0, 4).join("\n")}\n`,
        );
        expect(await s.run("view", { path: "src/greet.py", view_range: [2, 9] })).toBe(
          `Note: the file has 5 lines; view_range [2, 9] was clamped to [2, 5].\nHere's the result of running \`cat -n\` on ${s.root}/src/greet.py:\n${catGreet(s.root).split("\n").slice(2).join("\n")}`,
        );
        expect(await s.run("view", { path: "src/greet.py", view_range: [3, 2] })).toBe(
          "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`",
        );
        expect(await s.run("view", { path: "docs" })).toBe(
          `Here's the files and directories up to 2 levels deep in ${s.root}/docs, excluding hidden items:\n${s.root}/docs\n${s.root}/docs/guide.md\n`,
        );
        expect(await s.run("view", { path: "nope.py" })).toBe(
          "The path nope.py does not exist. Please provide a valid path.",
        );
      },
    );

    it.runIf(provider)("str_replace needs exactly one match and says where the matches are", async () => {
      expect(await s.run("str_replace", { path: "src/greet.py", old_str: "greet", new_str: "x" })).toBe(
        "No replacement was performed. Multiple occurrences of old_str `greet` in lines [1, 5]. Please ensure it is unique",
      );
      expect(await s.run("str_replace", { path: "src/greet.py", old_str: "Howdy", new_str: "x" })).toBe(
        `No replacement was performed, old_str \`Howdy\` did not appear verbatim in ${s.root}/src/greet.py.\nNothing in the file is close to it. View the file to copy the text exactly as it is there.`,
      );
      expect(await s.run("str_replace", { path: "src", old_str: "a", new_str: "b" })).toBe(
        "The path src is a directory and only the `view` command can be used on directories",
      );
      expect(
        await s.run("str_replace", { path: "src/greet.py", old_str: '"Hello, "', new_str: '"Hi, "' }),
      ).toBe(
        `The file ${s.root}/src/greet.py has been edited. ${catGreet(s.root, "Hi").replace("on ", "on a snippet of ")}` +
          "Review the changes and make sure they are as expected. Edit the file again if necessary.\n" +
          "Lines removed (-, old numbers) and added (+, new numbers) by this edit:\n" +
          '-2:    return "Hello, " + name\n' +
          '+2:    return "Hi, " + name',
      );
    });

    it.runIf(provider)(
      "a str_replace that breaks the syntax goes through the same gate and changes nothing",
      async () => {
        const before = await s.sandbox.readFile("src/greet.py");
        const rejected = await s.run("str_replace", {
          path: "src/greet.py",
          old_str: '"Hi, "',
          new_str: '("Hi, "',
        });
        expect(rejected.split("\n").slice(0, 4)).toEqual([
          "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.",
          "",
          "ERRORS:",
          "- 2:12: SyntaxError: '(' was never closed",
        ]);
        expect(rejected.split("\n").slice(-3)).toEqual([
          "Your changes have NOT been applied, and the file is as it was.",
          "Correct new_str (it replaces old_str; the lines around old_str stay as they are) and call str_replace again.",
          "DO NOT send the same edit again: it will be rejected the same way.",
        ]);
        expect((await s.sandbox.readFile("src/greet.py")).equals(before)).toBe(true);
      },
    );

    it.runIf(provider)(
      "insert adds lines after a line number; undo_edit walks back through the edits",
      async () => {
        expect(await s.run("insert", { path: "src/greet.py", insert_line: 0, new_str: "import sys" })).toBe(
          [
            `The file ${s.root}/src/greet.py has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:`,
            "     1\timport sys",
            "     2\tdef greet(name):",
            '     3\t    return "Hi, " + name',
            "     4\t",
            "     5\t",
            "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
          ].join("\n"),
        );
        expect(await s.run("insert", { path: "src/greet.py", insert_line: 9, new_str: "x" })).toBe(
          "Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 6]",
        );
        // undo_edit shows the lines it restored with 4 lines around them, not the whole file (issue 16).
        expect(await s.run("undo_edit", { path: "src/greet.py" })).toBe(
          `Last edit to ${s.root}/src/greet.py undone successfully: the lines it had added before line 1 are removed. ${catGreet(s.root, "Hi").replace("on ", "on a snippet of ").split("\n").slice(0, 5).join("\n")}\n`,
        );
        expect(await s.run("undo_edit", { path: "src/greet.py" })).toBe(
          `Last edit to ${s.root}/src/greet.py undone successfully: line 2 is as it was before it. ${catGreet(s.root).replace("on ", "on a snippet of ")}`,
        );
        expect(await s.run("undo_edit", { path: "src/greet.py" })).toBe(
          `No edit history found for ${s.root}/src/greet.py.`,
        );
        expect((await s.sandbox.readFile("src/greet.py")).toString()).toBe(
          'def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("world"))\n',
        );
      },
    );

    it.runIf(provider)(
      "str_replace lists only the changed lines, not the ones kept between them",
      async () => {
        const before = await s.sandbox.readFile("src/calc.py");
        const old = "def add_32(value):\n    return value + 32\n\ndef add_33(value):\n    return value + 33";
        const observation = await s.run("str_replace", {
          path: "src/calc.py",
          old_str: old,
          new_str: old.replaceAll("value", "number"),
        });
        const lines = observation.split("\n");
        expect(
          lines.slice(
            lines.indexOf("Lines removed (-, old numbers) and added (+, new numbers) by this edit:"),
          ),
        ).toEqual([
          "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
          "-99:def add_32(value):",
          "-100:    return value + 32",
          "+99:def add_32(number):",
          "+100:    return number + 32",
          "-102:def add_33(value):",
          "-103:    return value + 33",
          "+102:def add_33(number):",
          "+103:    return number + 33",
        ]);
        await s.sandbox.writeFile("src/calc.py", before);
      },
    );

    it.runIf(provider)(
      "create refuses an existing path, checks the syntax of the new text and writes it exactly",
      async () => {
        expect(await s.run("create", { path: "src/greet.py", file_text: "x" })).toBe(
          `File already exists at: ${s.root}/src/greet.py. Cannot overwrite files using command \`create\`.`,
        );
        const rejected = await s.run("create", { path: "src/new.py", file_text: "def f(:\n" });
        expect(rejected.split("\n").slice(2, 4)).toEqual(["ERRORS:", "- 1:7: SyntaxError: invalid syntax"]);
        expect(await s.run("view", { path: "src/new.py" })).toBe(
          "The path src/new.py does not exist. Please provide a valid path.",
        );
        expect(await s.run("create", { path: "src/new.py", file_text: "def f():\n    pass" })).toBe(
          `File created successfully at: ${s.root}/src/new.py`,
        );
        expect((await s.sandbox.readFile("src/new.py")).toString()).toBe("def f():\n    pass");
        await s.sandbox.exec("rm src/new.py");
        // Beyond syntax (issue 12): a name the new text never defines is named.
        expect(await s.run("create", { path: "src/uses.py", file_text: "print(missing_name)\n" })).toBe(
          `File created successfully at: ${s.root}/src/uses.py\nWarning: after this edit, src/uses.py uses undefined name(s): 'missing_name' (line 1). Import or define them, or fix the spelling (pyflakes F821).`,
        );
        await s.sandbox.exec("rm src/uses.py");
      },
    );
  });
}
