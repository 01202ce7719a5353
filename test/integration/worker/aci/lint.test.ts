/**
 * The syntax gate through the `edit` tool, for every checked language, over a real sandbox: a good edit
 * is written, a breaking edit is rejected with the file byte-for-byte unchanged, and a good edit to an
 * already-broken file is accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lintSamples } from "../../../support/lint-samples.js";
import { type AciSession, drivers, startSession } from "./aci-support.js";

const accepted = (line: number) =>
  `File updated: the edited line is now line ${line}. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`;
const rejected =
  "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.";

for (const driver of drivers) {
  describe(`syntax-gated edits (${driver.name} sandbox)`, async () => {
    const provider = await driver.provider();
    let s: AciSession;
    beforeAll(async () => {
      s = await startSession(provider!);
    });
    afterAll(async () => {
      await s?.sandbox.dispose();
    });

    it.runIf(provider).each(lintSamples)(
      "$file: good edit written, breaking edit refused, broken file still editable",
      async (sample) => {
        const file = `lint/${sample.file}`;
        await s.sandbox.writeFile(file, sample.source);
        await s.env.execute("open", { path: file });

        const bad = await s.run("edit", {
          start_line: sample.line,
          end_line: sample.line,
          replacement_text: sample.bad,
        });
        expect(bad.split("\n")[0]).toBe(rejected);
        expect((await s.sandbox.readFile(file)).toString()).toBe(sample.source);

        const good = await s.run("edit", {
          start_line: sample.line,
          end_line: sample.line,
          replacement_text: sample.good,
        });
        expect(good.split("\n")).toContain(accepted(sample.line));
        const lines = sample.source.split("\n");
        lines[sample.line - 1] = sample.good;
        expect((await s.sandbox.readFile(file)).toString()).toBe(lines.join("\n"));

        const broken = sample.source + sample.broken;
        await s.sandbox.writeFile(file, broken);
        const onBroken = await s.run("edit", {
          start_line: sample.line,
          end_line: sample.line,
          replacement_text: sample.good,
        });
        expect(onBroken.split("\n")).toContain(accepted(sample.line));
      },
    );

    it.runIf(provider)(
      "Python: a python3 the agent replaced or removed leaves the decision to tree-sitter",
      async () => {
        const file = "lint/shadowed.py";
        // Texts the gate has not judged before (verdicts are cached per sandbox and text).
        const source = "def shadowed(y):\n    return y + 1\n";
        await s.sandbox.writeFile(file, source);
        await s.sandbox.exec("export SAVED_PATH=$PATH");
        // An answer in the right frame but of the wrong shape, then no python3 at all.
        await s.sandbox.writeFile("lint/bin/python3", `#!/bin/sh\necho 'AGENT_FIX_PARSE [["x"]]'\n`);
        for (const shadow of [
          `chmod +x ${s.root}/lint/bin/python3 && export PATH=${s.root}/lint/bin:$PATH`,
          `export PATH=${s.root}/lint/empty-bin`,
        ]) {
          await s.sandbox.exec(shadow);
          await s.env.execute("open", { path: file });
          const bad = await s.run("edit", {
            start_line: 2,
            end_line: 2,
            replacement_text: "    return (y + 2",
          });
          expect(bad.split("\n").slice(0, 4)).toEqual([
            rejected,
            "",
            "ERRORS:",
            "- 2:5: unexpected `return (y + 2` (a `(` is not closed)",
          ]);
          const good = await s.run("edit", {
            start_line: 2,
            end_line: 2,
            replacement_text: "    return y + 2",
          });
          expect(good.split("\n")).toContain(accepted(2));
          await s.sandbox.writeFile(file, source);
        }
        await s.sandbox.exec("export PATH=$SAVED_PATH");
      },
    );
  });
}
