/**
 * Golden observations of the `aci` bundle on the fixture repository, byte-exact, once per sandbox
 * driver: the viewer, the three searches with their caps, create, edit (accepted, rejected, bad
 * range), bash (no output, failures, interactive programs, timeout, long output) and the format errors.
 * A small window (10) and cap (3) keep the expected texts short; one test checks the default window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, startSession } from "./aci-support.js";

const calcTail = [
  "141:def add_46(value):",
  "142:    return value + 46",
  "143:",
  "144:def add_47(value):",
  "145:    return value + 47",
  "146:",
  "147:def add_48(value):",
  "148:    return value + 48",
  "149:",
  "150:TOTAL = add_0(1)",
].join("\n");

const greet = [
  "1:def greet(name):",
  '2:    return "Hello, " + name',
  "3:",
  "4:",
  '5:print(greet("world"))',
].join("\n");

for (const driver of drivers) {
  describe(`aci bundle golden observations (${driver.name} sandbox)`, async () => {
    const provider = await driver.provider();
    let s: AciSession;

    beforeAll(async () => {
      // The default command timeout: python3 alone takes several seconds on a loaded machine. The
      // timeout test has its own session with a short one.
      s = await startSession(provider!, { window: 10, searchCap: 3 });
    });
    afterAll(async () => {
      await s?.sandbox.dispose();
    });

    describe.runIf(provider)("viewer", () => {
      it("opens a file at the top with the header, lines and the count below", async () => {
        expect(await s.run("open", { path: "src/calc.py" })).toBe(
          [
            "[File: src/calc.py (150 lines total)]",
            '1:"""Arithmetic helpers used by the golden tests of the ACI (150 lines)."""',
            "2:",
            "3:def add_0(value):",
            "4:    return value + 0",
            "5:",
            "6:def add_1(value):",
            "7:    return value + 1",
            "8:",
            "9:def add_2(value):",
            "10:    return value + 2",
            "(140 more lines below)",
          ].join("\n"),
        );
        expect(s.env.state()).toEqual({ openFile: "src/calc.py", windowStart: 1, workingDir: s.root });
      });

      it("opens at a line a sixth of the way down the window, with the counts above and below", async () => {
        // window 10: a sixth is 1 line, so line 100 is the first shown
        expect(await s.run("open", { path: "src/calc.py", line_number: 100 })).toBe(
          [
            "[File: src/calc.py (150 lines total)]",
            "(99 more lines above)",
            "100:    return value + 32",
            "101:",
            "102:def add_33(value):",
            "103:    return value + 33",
            "104:",
            "105:def add_34(value):",
            "106:    return value + 34",
            "107:",
            "108:def add_35(value):",
            "109:    return value + 35",
            "(41 more lines below)",
          ].join("\n"),
        );
      });

      it("goto past the end of the window is kept inside the file; scrolling keeps 2 lines of overlap", async () => {
        expect(await s.run("goto", { line_number: 150 })).toBe(
          `[File: src/calc.py (150 lines total)]\n(140 more lines above)\n${calcTail}`,
        );
        expect(await s.run("scroll_up")).toBe(
          [
            "[File: src/calc.py (150 lines total)]",
            "(132 more lines above)",
            "133:    return value + 43",
            "134:",
            "135:def add_44(value):",
            "136:    return value + 44",
            "137:",
            "138:def add_45(value):",
            "139:    return value + 45",
            "140:",
            "141:def add_46(value):",
            "142:    return value + 46",
            "(8 more lines below)",
          ].join("\n"),
        );
        expect(await s.run("scroll_down")).toBe(
          `[File: src/calc.py (150 lines total)]\n(140 more lines above)\n${calcTail}`,
        );
        expect(await s.run("scroll_down")).toBe(
          `[File: src/calc.py (150 lines total)]\n(140 more lines above)\n${calcTail}`,
        );
      });

      it("goto outside the file says which lines exist", async () => {
        expect(await s.run("goto", { line_number: 151 })).toBe(
          "Error: <line> must be less than or equal to 150",
        );
        expect(await s.run("goto", { line_number: 0 })).toBe(
          "Error: <line> must be greater than or equal to 1",
        );
      });

      it("open with a line past the end warns and shows the end", async () => {
        expect(await s.run("open", { path: "src/calc.py", line_number: 500 })).toBe(
          [
            "Warning: <line_number> (500) is greater than the number of lines in the file (150)",
            "Warning: Setting <line_number> to 150",
            "[File: src/calc.py (150 lines total)]",
            "(140 more lines above)",
            calcTail,
          ].join("\n"),
        );
      });

      it("answers a missing file, a directory, a path outside the repository and a binary file", async () => {
        expect(await s.run("open", { path: "src/missing.py" })).toBe("File src/missing.py not found");
        expect(await s.run("open", { path: "src" })).toBe(
          "Error: src is a directory. You can only open files. Use cd or ls to navigate directories.",
        );
        expect(await s.run("open", { path: "../../etc/passwd" })).toBe(
          `Error: ../../etc/passwd is outside the repository. Only files under ${s.root} can be used; prefer paths relative to it.`,
        );
        await s.sandbox.writeFile("data.bin", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
        expect(await s.run("open", { path: "data.bin" })).toBe(
          "Error: data.bin is a binary file and cannot be shown or edited as text. Use bash (e.g. file data.bin, xxd data.bin | head) to inspect it.",
        );
        await s.sandbox.exec("rm data.bin");
        expect(s.env.state().openFile).toBe("src/calc.py");
      });
    });

    describe.runIf(provider)("search", () => {
      it("search_dir lists files with counts, sorted, never the lines", async () => {
        expect(await s.run("search_dir", { search_term: "greet" })).toBe(
          [
            'Found 3 matches for "greet" in ./:',
            "docs/guide.md (1 match)",
            "src/greet.py (2 matches)",
            'End of matches for "greet" in ./',
          ].join("\n"),
        );
        expect(await s.run("search_dir", { search_term: "greet", dir: "src" })).toBe(
          [
            'Found 2 matches for "greet" in src:',
            "src/greet.py (2 matches)",
            'End of matches for "greet" in src',
          ].join("\n"),
        );
      });

      it("search_dir matches literally, says when nothing matched and when to narrow", async () => {
        expect(await s.run("search_dir", { search_term: "greet(" })).toBe(
          [
            'Found 2 matches for "greet(" in ./:',
            "src/greet.py (2 matches)",
            'End of matches for "greet(" in ./',
          ].join("\n"),
        );
        expect(await s.run("search_dir", { search_term: "zzz_nothing" })).toBe(
          'No matches found for "zzz_nothing" in ./',
        );
        expect(await s.run("search_dir", { search_term: "e" })).toBe(
          'More than 3 files matched for "e" in ./. Please narrow your search.',
        );
        expect(await s.run("search_dir", { search_term: "x", dir: "nodir" })).toBe(
          "Directory nodir not found",
        );
        // A file given as dir is searched (issue 24; aci/language.test.ts has the observation).
        expect(await s.run("search_dir", { search_term: "greet", dir: "src/greet.py" })).toMatch(
          /^Found 2 matches for "greet" in src\/greet.py:/,
        );
        expect(await s.run("find_file", { file_name: "*.py", dir: "src/greet.py" })).toBe(
          "Error: src/greet.py is a file, not a directory: find_file looks for files by name inside dir. Give the directory to look in (or leave dir out to search the whole repository).",
        );
        expect(await s.run("search_dir", { search_term: "x", dir: "/etc" })).toBe(
          `Error: /etc is outside the repository. Only files under ${s.root} can be used; prefer paths relative to it.`,
        );
      });

      it("search terms with quotes, dashes and regex characters are matched literally", async () => {
        expect(await s.run("search_dir", { search_term: '"Hello, "' })).toBe(
          [
            'Found 1 match for ""Hello, "" in ./:',
            "src/greet.py (1 match)",
            'End of matches for ""Hello, "" in ./',
          ].join("\n"),
        );
        expect(await s.run("search_dir", { search_term: "-> i32" })).toBe(
          'No matches found for "-> i32" in ./',
        );
        expect(await s.run("search_dir", { search_term: "add_0(1)" })).toBe(
          [
            'Found 1 match for "add_0(1)" in ./:',
            "src/calc.py (1 match)",
            'End of matches for "add_0(1)" in ./',
          ].join("\n"),
        );
      });

      it("search_dir shows the matching lines when asked, capped, and takes a regular expression", async () => {
        expect(await s.run("search_dir", { search_term: "greet", lines: 5 })).toBe(
          [
            'Found 3 matches for "greet" in ./:',
            "docs/guide.md (1 match)",
            "  3:Call greet to say hello.",
            "src/greet.py (2 matches)",
            "  1:def greet(name):",
            '  5:print(greet("world"))',
            'End of matches for "greet" in ./',
          ].join("\n"),
        );
        expect(await s.run("search_dir", { search_term: "greet", lines: 2 })).toBe(
          [
            'Found 3 matches for "greet" in ./:',
            "docs/guide.md (1 match)",
            "  3:Call greet to say hello.",
            "src/greet.py (2 matches)",
            "  1:def greet(name):",
            'End of matches for "greet" in ./',
            "(2 of 3 matching lines shown)",
          ].join("\n"),
        );
        expect(await s.run("search_dir", { search_term: 'greet\\("w', regex: true, lines: 1 })).toBe(
          [
            'Found 1 match for "greet\\("w" in ./:',
            "src/greet.py (1 match)",
            '  5:print(greet("world"))',
            'End of matches for "greet\\("w" in ./',
          ].join("\n"),
        );
        expect(await s.run("search_dir", { search_term: "def add_\\d+", regex: true, dir: "src" })).toBe(
          [
            'Found 49 matches for "def add_\\d+" in src:',
            "src/calc.py (49 matches)",
            'End of matches for "def add_\\d+" in src',
          ].join("\n"),
        );
        const invalid = (await s.run("search_dir", { search_term: "greet(", regex: true })).split("\n");
        expect(invalid[0]).toBe(
          "Error: search_term is not a valid regular expression (ripgrep's syntax); nothing was searched.",
        );
        expect(invalid.at(-1)).toBe(
          "Escape special characters with \\, or leave regex out to match the term literally.",
        );
      });

      it("search_file shows lines with numbers, in the open file by default", async () => {
        expect(await s.run("search_file", { search_term: "add_47", file: "src/calc.py" })).toBe(
          [
            'Found 1 match for "add_47" in src/calc.py:',
            "Line 144:def add_47(value):",
            'End of matches for "add_47" in src/calc.py',
          ].join("\n"),
        );
        expect(await s.run("search_file", { search_term: "add_4" })).toBe(
          'More than 3 lines matched for "add_4" in src/calc.py. Please narrow your search.',
        );
        expect(await s.run("search_file", { search_term: "nothing here" })).toBe(
          'No matches found for "nothing here" in src/calc.py',
        );
        expect(await s.run("search_file", { search_term: "x", file: "nofile.py" })).toBe(
          "Usage: search_file <search_term> [<file>]\nError: File name nofile.py not found. Please provide a valid file name.",
        );
      });

      it("find_file lists matching paths with the same frame and cap", async () => {
        expect(await s.run("find_file", { file_name: "*.py" })).toBe(
          [
            'Found 2 matches for "*.py" in ./:',
            "src/calc.py",
            "src/greet.py",
            'End of matches for "*.py" in ./',
          ].join("\n"),
        );
        expect(await s.run("find_file", { file_name: "guide.md", dir: "docs" })).toBe(
          [
            'Found 1 match for "guide.md" in docs:',
            "docs/guide.md",
            'End of matches for "guide.md" in docs',
          ].join("\n"),
        );
        expect(await s.run("find_file", { file_name: "*" })).toBe(
          'More than 3 files matched for "*" in ./. Please narrow your search.',
        );
        expect(await s.run("find_file", { file_name: "nothing.rs" })).toBe(
          'No matches found for "nothing.rs" in ./',
        );
      });
    });

    describe.runIf(provider)("create and edit", () => {
      it("create makes an empty file and opens it, and refuses an existing one", async () => {
        expect(await s.run("create", { filename: "src/new_module.py" })).toBe(
          "[File: src/new_module.py (0 lines total)]",
        );
        expect((await s.sandbox.readFile("src/new_module.py")).length).toBe(0);
        expect(await s.run("create", { filename: "src/new_module.py" })).toBe(
          "Error: File 'src/new_module.py' already exists.\n[File: src/new_module.py (0 lines total)]",
        );
        expect(await s.run("edit", { start_line: 1, end_line: 1, replacement_text: "VALUE = 1\n" })).toBe(
          [
            "[File: src/new_module.py (1 lines total)]",
            "1:VALUE = 1",
            "File updated: the edited line is now line 1. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
          ].join("\n"),
        );
        await s.sandbox.exec("rm src/new_module.py");
      });

      it("an edit that introduces a syntax error is rejected, showing both versions, and the file is unchanged", async () => {
        expect(await s.run("open", { path: "src/greet.py" })).toBe(
          `[File: src/greet.py (5 lines total)]\n${greet}`,
        );
        const before = await s.sandbox.readFile("src/greet.py");
        expect(
          await s.run("edit", { start_line: 2, end_line: 2, replacement_text: "    return ('Hi, ' + name" }),
        ).toBe(
          [
            "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.",
            "",
            "ERRORS:",
            "- 2:12: SyntaxError: '(' was never closed",
            "",
            "This is how your edit would have looked if applied",
            "-------------------------------------------------",
            "[File: src/greet.py (5 lines total)]",
            "1:def greet(name):",
            "2:    return ('Hi, ' + name",
            "3:",
            "4:",
            '5:print(greet("world"))',
            "-------------------------------------------------",
            "",
            "This is the original code before your edit",
            "-------------------------------------------------",
            `[File: src/greet.py (5 lines total)]\n${greet}`,
            "-------------------------------------------------",
            "Your changes have NOT been applied. Please fix your edit command and try again.",
            "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.",
            "DO NOT re-run the same failed edit command. Running it again will lead to the same error.",
          ].join("\n"),
        );
        expect((await s.sandbox.readFile("src/greet.py")).equals(before)).toBe(true);
      });

      it("a good edit is written and answered with the changed lines and 3 lines of context", async () => {
        expect(
          await s.run("edit", { start_line: 2, end_line: 2, replacement_text: "    return 'Hi, ' + name\n" }),
        ).toBe(
          [
            "[File: src/greet.py (5 lines total)]",
            "1:def greet(name):",
            "2:    return 'Hi, ' + name",
            "3:",
            "4:",
            '5:print(greet("world"))',
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            '-2:    return "Hello, " + name',
            "+2:    return 'Hi, ' + name",
            "File updated: the edited line is now line 2. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
          ].join("\n"),
        );
        expect((await s.sandbox.readFile("src/greet.py")).toString()).toBe(
          "def greet(name):\n    return 'Hi, ' + name\n\n\nprint(greet(\"world\"))\n",
        );
      });

      it("an edit keeps CRLF line ends and a missing final newline outside the replaced lines", async () => {
        await s.sandbox.writeFile("src/crlf.py", "a = 1\r\n    b = 2\r\nc = 3");
        await s.run("open", { path: "src/crlf.py" });
        await s.run("edit", { start_line: 2, end_line: 2, replacement_text: "    b = 20\n    b += 1\n" });
        expect((await s.sandbox.readFile("src/crlf.py")).toString()).toBe(
          "a = 1\r\n    b = 20\r\n    b += 1\r\nc = 3",
        );
        await s.run("edit", { start_line: 4, end_line: 4, replacement_text: "c = 30" });
        expect((await s.sandbox.readFile("src/crlf.py")).toString()).toBe(
          "a = 1\r\n    b = 20\r\n    b += 1\r\nc = 30",
        );
        await s.sandbox.exec("rm src/crlf.py");
        await s.run("open", { path: "src/greet.py" });
      });

      it("a range outside the file changes nothing and says what fits", async () => {
        const before = await s.sandbox.readFile("src/greet.py");
        expect(await s.run("edit", { start_line: 7, end_line: 9, replacement_text: "x" })).toBe(
          "Error: the line range 7:9 does not fit src/greet.py, which has 5 lines. Use 1 <= start_line <= 6 and start_line - 1 <= end_line <= 5 (end_line = start_line - 1 inserts before start_line). The file was not changed.",
        );
        expect((await s.sandbox.readFile("src/greet.py")).equals(before)).toBe(true);
      });

      it("an edit deep in a long file shows only the changed lines with context, not a whole window", async () => {
        await s.run("open", { path: "src/calc.py" });
        expect(
          await s.run("edit", {
            start_line: 100,
            end_line: 100,
            replacement_text: "    result = value + 32\n    return result\n",
          }),
        ).toBe(
          [
            "[File: src/calc.py (151 lines total)]",
            "(96 more lines above)",
            "97:    return value + 31",
            "98:",
            "99:def add_32(value):",
            "100:    result = value + 32",
            "101:    return result",
            "102:",
            "103:def add_33(value):",
            "104:    return value + 33",
            "(47 more lines below)",
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            "-100:    return value + 32",
            "+100:    result = value + 32",
            "+101:    return result",
            "File updated: the edited lines are now 100-101. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
          ].join("\n"),
        );
        await s.run("edit", { start_line: 100, end_line: 101, replacement_text: "    return value + 32" });
      });

      it("an edit carrying the text it expects is refused, showing the current lines, when the lines moved", async () => {
        const before = await s.sandbox.readFile("src/calc.py");
        // The model read add_32 at line 99, but an edit above has shifted it to line 100.
        expect(
          await s.run("edit", {
            start_line: 99,
            end_line: 100,
            replacement_text: "def add_32(number):\n    return number + 32",
            expected_text: "def add_32(value):\n    return value + 32",
          }),
        ).not.toContain("Error");
        await s.run("edit", {
          start_line: 99,
          end_line: 100,
          replacement_text: "def add_32(value):\n    return value + 32",
        });
        await s.run("edit", { start_line: 1, end_line: 0, replacement_text: "# inserted above" });
        expect(
          await s.run("edit", {
            start_line: 99,
            end_line: 100,
            replacement_text: "def add_32(number):\n    return number + 32",
            expected_text: "def add_32(value):",
          }),
        ).toBe(
          [
            "Error: lines 99-100 of src/calc.py are not the text given in expected_text (the file has changed since you read those line numbers, e.g. by an earlier edit). The file was not changed. The lines there now:",
            "[File: src/calc.py (151 lines total)]",
            "(95 more lines above)",
            "96:",
            "97:def add_31(value):",
            "98:    return value + 31",
            "99:",
            "100:def add_32(value):",
            "101:    return value + 32",
            "102:",
            "103:def add_33(value):",
            "(48 more lines below)",
            "Use the current line numbers and run the edit again.",
          ].join("\n"),
        );
        await s.run("edit", { start_line: 1, end_line: 1, replacement_text: "" });
        expect((await s.sandbox.readFile("src/calc.py")).equals(before)).toBe(true);
      });

      it("lists only the changed lines of a range, not the lines kept between two changes", async () => {
        const before = await s.sandbox.readFile("src/calc.py");
        await s.run("open", { path: "src/calc.py" });
        expect(
          await s.run("edit", {
            start_line: 100,
            end_line: 103,
            replacement_text:
              "    return value + 32.0\n\ndef add_33(value):\n    return value + 33.0\n    # two lines\n",
          }),
        ).toBe(
          [
            "[File: src/calc.py (151 lines total)]",
            "(96 more lines above)",
            "97:    return value + 31",
            "98:",
            "99:def add_32(value):",
            "100:    return value + 32.0",
            "101:",
            "102:def add_33(value):",
            "103:    return value + 33.0",
            "104:    # two lines",
            "105:",
            "106:def add_34(value):",
            "107:    return value + 34",
            "(44 more lines below)",
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            "-100:    return value + 32",
            "+100:    return value + 32.0",
            "-103:    return value + 33",
            "+103:    return value + 33.0",
            "+104:    # two lines",
            "File updated: the edited lines are now 100-104. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
          ].join("\n"),
        );
        await s.sandbox.writeFile("src/calc.py", before);
        // Past 8 changed lines a side the rest are counted; the blank lines kept between are left out.
        const renamed = Array.from(
          { length: 5 },
          (_, k) => `def add_${32 + k}(v):\n    return v + ${32 + k}`,
        );
        const diff = (
          await s.run("edit", { start_line: 99, end_line: 112, replacement_text: renamed.join("\n\n") })
        ).split("\n");
        expect(diff.slice(diff.findIndex((line) => line.startsWith("Lines removed")) + 1, -1)).toEqual([
          "-99:def add_32(value):",
          "-100:    return value + 32",
          "+99:def add_32(v):",
          "+100:    return v + 32",
          "-102:def add_33(value):",
          "-103:    return value + 33",
          "+102:def add_33(v):",
          "+103:    return v + 33",
          "-105:def add_34(value):",
          "-106:    return value + 34",
          "+105:def add_34(v):",
          "+106:    return v + 34",
          "-108:def add_35(value):",
          "-109:    return value + 35",
          "+108:def add_35(v):",
          "+109:    return v + 35",
          "-(2 more lines)",
          "+(2 more lines)",
        ]);
        await s.sandbox.writeFile("src/calc.py", before);
        expect((await s.sandbox.readFile("src/calc.py")).equals(before)).toBe(true);
      });

      it("warns when an edit's indentation differs from the file's (tabs vs spaces)", async () => {
        await s.sandbox.writeFile("src/tabs.js", "function f(x) {\n\tconst y = x + 1;\n\treturn y;\n}\n");
        await s.run("open", { path: "src/tabs.js" });
        expect(
          await s.run("edit", { start_line: 3, end_line: 3, replacement_text: "        return y * 3;" }),
        ).toBe(
          [
            "[File: src/tabs.js (4 lines total)]",
            "1:function f(x) {",
            "2:\tconst y = x + 1;",
            "3:        return y * 3;",
            "4:}",
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            "-3:\treturn y;",
            "+3:        return y * 3;",
            "File updated: the edited line is now line 3. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            "Warning: this file is indented with tabs, but line(s) 3 of your edit are indented with spaces. Check the indentation and edit again if it is wrong.",
          ].join("\n"),
        );
        expect(
          await s.run("edit", { start_line: 3, end_line: 3, replacement_text: "\treturn y * 3;" }),
        ).not.toContain("Warning");
        await s.sandbox.exec("rm src/tabs.js");
      });

      it("refuses a Python edit Python itself rejects, in Python's words: a TabError", async () => {
        await s.sandbox.writeFile("src/tabs.py", "def f(x):\n\ty = x + 1\n\tz = y * 2\n\treturn z\n");
        await s.run("open", { path: "src/tabs.py" });
        const rejected = await s.run("edit", {
          start_line: 3,
          end_line: 3,
          replacement_text: "        z = y * 3",
        });
        expect(rejected.split("\n").slice(2, 4)).toEqual([
          "ERRORS:",
          "- 3:1: TabError: inconsistent use of tabs and spaces in indentation",
        ]);
        await s.sandbox.exec("rm src/tabs.py");
      });

      it("drops an end_of_edit line a function call copied into replacement_text, and says so", async () => {
        await s.run("open", { path: "src/greet.py" });
        expect(
          await s.run("edit", {
            start_line: 5,
            end_line: 5,
            replacement_text: 'print(greet("you"))\nend_of_edit\n',
          }),
        ).toBe(
          [
            "[File: src/greet.py (5 lines total)]",
            "(1 more lines above)",
            "2:    return 'Hi, ' + name",
            "3:",
            "4:",
            '5:print(greet("you"))',
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            '-5:print(greet("world"))',
            '+5:print(greet("you"))',
            "File updated: the edited line is now line 5. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            "(The last line of replacement_text was end_of_edit, the end marker of the text-mode syntax; it was left out of the file. With function calls, replacement_text holds only the new lines.)",
          ].join("\n"),
        );
        expect((await s.sandbox.readFile("src/greet.py")).toString()).toBe(
          "def greet(name):\n    return 'Hi, ' + name\n\n\nprint(greet(\"you\"))\n",
        );
        // Indented like the code, and with the closing fence copied after it: still the marker.
        const indented = await s.run("edit", {
          start_line: 2,
          end_line: 2,
          replacement_text: "    return 'Hi, ' + name\n    end_of_edit\n```\n",
        });
        expect(indented.split("\n").at(-1)).toBe(
          "(The last line of replacement_text was end_of_edit, the end marker of the text-mode syntax; it was left out of the file. With function calls, replacement_text holds only the new lines.)",
        );
        expect((await s.sandbox.readFile("src/greet.py")).toString()).toBe(
          "def greet(name):\n    return 'Hi, ' + name\n\n\nprint(greet(\"you\"))\n",
        );
      });

      it("warns about names an edit leaves undefined (pyflakes F821), only when they are new", async () => {
        await s.run("open", { path: "src/greet.py" });
        expect(
          await s.run("edit", {
            start_line: 2,
            end_line: 2,
            replacement_text: "    with mock.patch('os.getcwd'):\n        return 'Hi, ' + nmae",
          }),
        ).toBe(
          [
            "[File: src/greet.py (6 lines total)]",
            "1:def greet(name):",
            "2:    with mock.patch('os.getcwd'):",
            "3:        return 'Hi, ' + nmae",
            "4:",
            "5:",
            '6:print(greet("you"))',
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            "-2:    return 'Hi, ' + name",
            "+2:    with mock.patch('os.getcwd'):",
            "+3:        return 'Hi, ' + nmae",
            "File updated: the edited lines are now 2-3. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            "Warning: after this edit, src/greet.py uses undefined name(s): 'mock' (line 2), 'nmae' (line 3). Import or define them, or fix the spelling (pyflakes F821).",
          ].join("\n"),
        );
        // Names already undefined before the edit are not reported again; imports, parameters and builtins resolve.
        const next = await s.run("edit", {
          start_line: 3,
          end_line: 3,
          replacement_text: "        return str(len(name)) + nmae",
        });
        expect(next).not.toContain("Warning");
        expect(
          await s.run("edit", { start_line: 1, end_line: 0, replacement_text: "from unittest import mock" }),
        ).not.toContain("Warning");
        await s.sandbox.writeFile(
          "src/greet.py",
          "def greet(name):\n    return 'Hi, ' + name\n\n\nprint(greet(\"you\"))\n",
        );
      });

      it("an edit of a file type without a checker is written and says so", async () => {
        await s.run("open", { path: "docs/guide.md" });
        expect(
          await s.run("edit", {
            start_line: 3,
            end_line: 3,
            replacement_text: "Call greet((( to say hello.",
          }),
        ).toBe(
          [
            "[File: docs/guide.md (3 lines total)]",
            "1:# Guide",
            "2:",
            "3:Call greet((( to say hello.",
            "Lines removed (-, old numbers) and added (+, new numbers) by this edit:",
            "-3:Call greet to say hello.",
            "+3:Call greet((( to say hello.",
            "File updated: the edited line is now line 3. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            "(No syntax check is available for the language of docs/guide.md; the edit was written without one.)",
          ].join("\n"),
        );
      });
    });

    describe.runIf(provider)("bash", () => {
      it("says when a command succeeded without output, and when it failed without output", async () => {
        expect(await s.run("bash", { command: "true" })).toBe(
          "Your command ran successfully and did not produce any output.",
        );
        expect(await s.run("bash", { command: "false" })).toBe(
          "The command failed with exit status 1 and did not produce any output.",
        );
        expect(await s.run("bash", { command: "echo hello; echo world" })).toBe("hello\nworld");
      });

      it("keeps the directory between commands and reports it in the state lines", async () => {
        const result = await s.env.execute("bash", { command: "cd docs" });
        expect(result.observation).toBe(
          `Your command ran successfully and did not produce any output.\n(Open file: docs/guide.md)\n(Current directory: ${s.root}/docs)`,
        );
        expect(await s.run("bash", { command: "ls" })).toBe("guide.md");
        expect(await s.run("bash", { command: "cd .." })).toBe(
          "Your command ran successfully and did not produce any output.",
        );
        expect(s.env.state().workingDir).toBe(s.root);
      });

      it("refuses editors and REPLs before running them, with what to do instead", async () => {
        expect(await s.run("bash", { command: "vim src/greet.py" })).toBe(
          "vim is an interactive editor and cannot be used here (there is no terminal). Use the edit command to change files, or a non-interactive command such as sed -i.",
        );
        expect(await s.run("bash", { command: "python3" })).toBe(
          "python3 without a script or code starts an interactive session, which cannot be used here (stdin is closed). Write the code to a file and run it (e.g. python3 script_file), or pass it inline (e.g. python3 -c '...', node -e '...').",
        );
        expect(await s.run("bash", { command: "less README.md" })).toBe(
          "less is an interactive program and cannot be used here (there is no terminal). Use cat, head, tail, grep or sed -n 'START,ENDp' FILE to read files, and ps to list processes.",
        );
        expect(await s.run("bash", { command: "echo 'print(6*7)' | python3" })).toBe("42");
      });

      it("pagers are off and git does not wait for an editor", async () => {
        expect(await s.run("bash", { command: "git log --oneline | wc -l" })).toBe("1");
        const commit = await s.run("bash", {
          command:
            "git -c user.name=t -c user.email=t@example.com commit --allow-empty -q 2>&1; echo status=$?",
        });
        expect(commit).toContain("agent-fix: no interactive editor is available");
        expect(commit).toContain("status=1");
      });

      it("kills a command past its timeout and says what to do", async () => {
        const short = await startSession(provider!, { commandTimeoutMs: 2000 });
        try {
          const observation = await short.run("bash", { command: "sleep 30" });
          expect(observation.split("\n").at(-1)).toBe(
            "The command ran longer than 2 seconds and was killed. Run long commands in the background (e.g. `cmd > out.log 2>&1 &`, then read out.log), or with a smaller scope (fewer tests or files).",
          );
          expect(await short.run("bash", { command: "echo still alive" })).toBe("still alive");
        } finally {
          await short.sandbox.dispose();
        }
      });

      it("says when the shell had to restart and sets it up again", async () => {
        await s.run("bash", { command: "cd src && export FOO=1" });
        expect(await s.run("bash", { command: "exit 3" })).toBe(
          "The shell was restarted: the current directory and variables were reset.",
        );
        expect(s.env.state().workingDir).toBe(s.root);
        expect(await s.run("bash", { command: 'echo "foo=$FOO pager=$GIT_PAGER"; pwd' })).toBe(
          `foo= pager=cat\n${s.root}`,
        );
      });

      it("cuts long output in the middle and an over-long line too", async () => {
        const lines = (await s.run("bash", { command: "seq 1 1000" })).split("\n");
        expect(lines).toHaveLength(401);
        expect(lines.slice(0, 2)).toEqual(["1", "2"]);
        expect(lines[199]).toBe("200");
        expect(lines[200]).toBe(
          "[... 600 lines of output omitted from the middle; narrow the command (grep, head, tail, sed -n) to see them ...]",
        );
        expect(lines[201]).toBe("801");
        expect(lines.at(-1)).toBe("1000");
        const long = await s.run("bash", {
          command: "printf 'a%.0s' $(seq 1 1000); printf 'b%.0s' $(seq 1 2000); printf 'c%.0s' $(seq 1 1000)",
        });
        expect(long).toBe(
          `${"a".repeat(1000)} ... [2000 characters cut from this line] ... ${"c".repeat(1000)}`,
        );
      });
    });

    describe.runIf(provider)("documentation and function schemas from the same definitions", () => {
      it("function specs are OpenAI function schemas of every tool", () => {
        const specs = s.env.functionSpecs();
        expect(specs.map((spec) => spec.name)).toEqual(s.env.tools.map((tool) => tool.name));
        for (const spec of specs) {
          expect(spec.parameters.type).toBe("object");
          expect(spec.parameters).not.toHaveProperty("$schema");
          expect(spec.description.length).toBeGreaterThan(20);
        }
        expect(specs.find((spec) => spec.name === "edit")).toEqual({
          name: "edit",
          description: s.env.tools.find((tool) => tool.name === "edit")!.doc,
          parameters: {
            type: "object",
            properties: {
              start_line: { type: "integer", description: "the first line to replace" },
              end_line: { type: "integer", description: "the last line to replace" },
              replacement_text: { type: "string", description: "the new lines" },
              expected_text: {
                type: "string",
                description:
                  "those lines (or their first; for an insertion, line start_line) as you last saw them: if the file no longer has them there, the edit is refused and the current lines shown",
              },
            },
            required: ["start_line", "end_line", "replacement_text"],
          },
        });
        expect(specs.find((spec) => spec.name === "submit")?.parameters).toEqual({
          type: "object",
          properties: {},
        });
      });

      it("the text documentation gives each tool's signature, paragraph and arguments; the parameter order is positional", () => {
        const docs = s.env.docs();
        expect(docs).toContain(
          "open <path> [<line_number>]\n  Opens the file at the given path in the editor, showing 10 lines at a time with their line numbers.",
        );
        expect(docs).toContain(
          "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit\n  Replaces lines",
        );
        expect(docs).toContain(
          "    - line_number (integer) [optional]: a line for the window to include (default: the top of the file)",
        );
        for (const tool of s.env.tools) expect(docs).toContain(`${tool.name}`);
        const edit = s.env.tools.find((tool) => tool.name === "edit")!;
        expect(Object.keys(edit.parameters.shape)).toEqual([
          "start_line",
          "end_line",
          "replacement_text",
          "expected_text",
        ]);
        expect(edit.multilineArg).toBe("replacement_text");
      });
    });

    describe.runIf(provider)("bad input from the model", () => {
      it("an unknown tool is a format error naming the tools", async () => {
        const result = await s.env.execute("frobnicate", {});
        expect(result.formatError).toBe(true);
        expect(result.observation.split("\n")[0]).toBe(
          'Unknown tool "frobnicate". The available tools are: find_file, search_dir, search_file, open, goto, scroll_up, scroll_down, create, edit, bash, submit.',
        );
      });

      it("a missing or malformed argument is a format error with the valid form", async () => {
        const missing = await s.env.execute("open", {});
        expect(missing.formatError).toBe(true);
        expect(await s.run("open", {})).toBe(
          "Usage: open <path> [<line_number>]\nError: path is required but missing.",
        );
        const malformed = await s.env.execute("goto", { line_number: "ten" });
        expect(malformed.formatError).toBe(true);
        expect(await s.run("goto", { line_number: "ten" })).toBe(
          'Usage: goto <line_number>\nError: line_number: Invalid input: expected number, received string (got "ten").',
        );
        expect(await s.run("edit", "{not json")).toBe(
          "Usage: edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit\nError: the arguments are not valid JSON.",
        );
      });

      it("an empty search term is a format error; a file the sandbox cannot write is an answer, not a throw", async () => {
        const empty = await s.env.execute("search_dir", { search_term: "" });
        expect(empty.formatError).toBe(true);
        expect(await s.run("search_dir", { search_term: "" })).toBe(
          'Usage: search_dir <search_term> [<dir>] [<regex>] [<lines>]\nError: search_term: Too small: expected string to have >=1 characters (got "").',
        );
        const inside = await s.run("create", { filename: "README.md/x.py" });
        expect(inside).toMatch(
          /^Error: .*README\.md.*\. Nothing was changed; check the path and try again\.$/,
        );
        expect((await s.sandbox.readFile("README.md")).toString()).toBe(
          "# aci-repo\n\nA small repository for the ACI golden tests.\n",
        );
      });

      it("text-mode arguments arrive as strings and are accepted", async () => {
        expect(await s.run("goto", { line_number: "1" })).toBe(
          "[File: docs/guide.md (3 lines total)]\n1:# Guide\n2:\n3:Call greet((( to say hello.",
        );
      });

      it("every observation ends with the open file and the current directory", async () => {
        for (const [name, args] of [
          ["bash", { command: "true" }],
          ["nope", {}],
          ["open", {}],
          ["search_dir", { search_term: "x" }],
        ] as const) {
          const lines = (await s.env.execute(name, args)).observation.split("\n");
          expect(lines.slice(-2)).toEqual(["(Open file: docs/guide.md)", `(Current directory: ${s.root})`]);
        }
      });
    });
  });

  describe(`viewer defaults and limits (${driver.name} sandbox)`, async () => {
    const provider = await driver.provider();
    let small: AciSession;
    let standard: AciSession;
    beforeAll(async () => {
      [small, standard] = await Promise.all([
        startSession(provider!, { maxFileBytes: 1000 }),
        startSession(provider!),
      ]);
    });
    // Disposal of the local driver can take a while; hooks have the longer timeout.
    afterAll(async () => {
      await Promise.all([small?.sandbox.dispose(), standard?.sandbox.dispose()]);
    });

    it.runIf(provider)(
      "a fresh environment has no open file, and a file over the size limit is refused",
      async () => {
        const s = small;
        const none = await s.env.execute("goto", { line_number: 1 });
        expect(none.observation).toBe(
          `No file open. Use the open command first.\n(Open file: n/a)\n(Current directory: ${s.root})`,
        );
        expect(await s.run("search_file", { search_term: "x" })).toBe(
          "No file open. Use the open command first.",
        );
        expect(await s.run("edit", { start_line: 1, end_line: 1, replacement_text: "x" })).toBe(
          "No file open. Use the `open` command first.",
        );
        expect(await s.run("open", { path: "src/calc.py" })).toBe(
          "Error: src/calc.py is larger than 1000 bytes, too large to open. Use search_file to find lines in it, or bash (e.g. sed -n '100,200p' src/calc.py) to print a range.",
        );
        // search_file still works on a file too large to open: ripgrep in the sandbox
        expect(await s.run("search_file", { search_term: "add_47", file: "src/calc.py" })).toBe(
          [
            'Found 1 match for "add_47" in src/calc.py:',
            "Line 144:def add_47(value):",
            'End of matches for "add_47" in src/calc.py',
          ].join("\n"),
        );
        expect(await s.run("search_file", { search_term: "value", file: "src/calc.py" })).toBe(
          'More than 50 lines matched for "value" in src/calc.py. Please narrow your search.',
        );
        const shown = (await s.run("open", { path: "src/shapes.ts" })).split("\n");
        expect(shown[0]).toBe("[File: src/shapes.ts (10 lines total)]");
        expect(shown).toHaveLength(11);
      },
    );

    it.runIf(provider)(
      "the default window shows 100 lines with the target a sixth of the way down",
      async () => {
        const s = standard;
        const shown = (await s.run("open", { path: "src/calc.py", line_number: 100 })).split("\n");
        expect(shown[0]).toBe("[File: src/calc.py (150 lines total)]");
        expect(shown[1]).toBe("(50 more lines above)");
        expect(shown[2]).toBe("51:def add_16(value):");
        expect(shown.indexOf("100:    return value + 32")).toBe(2 + 49);
        expect(shown.at(-1)).toBe("150:TOTAL = add_0(1)");
        expect(shown).toHaveLength(102);
        const top = (await s.run("goto", { line_number: 21 })).split("\n");
        expect(top[1]).toBe("(5 more lines above)");
        expect(top[2]).toBe("6:def add_1(value):");
        expect(top[2 + 15]).toBe("21:def add_6(value):");
        expect(top.at(-1)).toBe("(45 more lines below)");
      },
    );
  });
}
