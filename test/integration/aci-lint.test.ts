/**
 * The syntax gate through the `edit` tool, for every checked language, over a real sandbox: a good edit
 * is written, a breaking edit is rejected with the file byte-for-byte unchanged, and a good edit to an
 * already-broken file is accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lintSamples } from "../unit/aci/lint-samples.js";
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
  });
}
