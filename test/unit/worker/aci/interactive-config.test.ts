/** Interactive commands are recognised before they run; the ACI config has valid defaults and names bad keys. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { interactiveCommandProblem } from "../../../../worker/aci/interactive.js";
import { aciConfigSchema } from "../../../../worker/config/aci.js";

describe("interactive commands", () => {
  it.each([
    "vim a.py",
    "nano x",
    "cd src && vi a.py",
    "sudo nano x",
    "less README.md",
    "python",
    "python3 -i",
    "node",
    "FOO=1 ipython",
    "top",
    "bash",
  ])("refuses %s", (command) => {
    expect(interactiveCommandProblem(command)).toMatch(/cannot be used here/);
  });

  it.each([
    "python3 script.py",
    "python -c 'print(1)'",
    "echo 1 | python3",
    "python3 <<EOF\nprint(1)\nEOF",
    "git log | less",
    "node -e 1",
    "bash run.sh",
    "ls -la",
    "cat a | grep vim",
  ])("lets %s run", (command) => {
    expect(interactiveCommandProblem(command)).toBeNull();
  });
});

describe("aci config", () => {
  it("has defaults for everything", () => {
    expect(aciConfigSchema.parse({})).toEqual({
      bundle: "aci",
      window: 100,
      scrollOverlap: 2,
      searchCap: 50,
      outputMaxLines: 400,
      outputMaxChars: 20_000,
      lineMaxChars: 2000,
      commandTimeoutMs: 120_000,
      toolTimeoutMs: 60_000,
      maxFileBytes: 2_000_000,
      lint: true,
    });
  });

  it("accepts the aci section of config/default.yaml as it is", () => {
    const file = parse(readFileSync(new URL("../../../../config/default.yaml", import.meta.url), "utf8"));
    expect(aciConfigSchema.parse(file.aci)).toEqual(aciConfigSchema.parse({}));
  });

  it("names an unknown key and a wrong value", () => {
    const unknown = aciConfigSchema.safeParse({ windw: 50 });
    expect(unknown.success).toBe(false);
    expect(JSON.stringify(unknown.error?.issues)).toContain("windw");
    const wrong = aciConfigSchema.safeParse({ bundle: "vim" });
    expect(wrong.error?.issues[0]?.path).toEqual(["bundle"]);
  });
});
