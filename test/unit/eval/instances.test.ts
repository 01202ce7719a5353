/** The inputs of `agent-fix eval`: instance lines, test command templates and variants. */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testCommandFor } from "../../../worker/eval/grade.js";
import { readInstances } from "../../../worker/eval/instances.js";
import { loadVariants } from "../../../worker/eval/variants.js";

const valid = {
  instance_id: "octo__calc-1",
  repo: "/tmp/calc",
  base_commit: "abc123",
  problem_statement: "mean fails\nOn an empty list.",
  test_patch: "",
  FAIL_TO_PASS: '["tests/test_ops.py::test_empty"]',
  PASS_TO_PASS: [],
};

async function file(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "eval-unit-"));
  await writeFile(join(dir, name), text);
  return join(dir, name);
}

const lines = (...values: unknown[]) => values.map((value) => JSON.stringify(value)).join("\n");

describe("readInstances", () => {
  it("reads SWE-bench's fields, test lists given as JSON text, and the defaults", async () => {
    const [instance] = await readInstances(await file("i.jsonl", `${lines(valid)}\n\n`));
    expect(instance).toMatchObject({
      instance_id: "octo__calc-1",
      FAIL_TO_PASS: ["tests/test_ops.py::test_empty"],
      PASS_TO_PASS: [],
    });
    // Left to detection on the instance's checkout (worker/eval/test-runner.ts).
    expect(instance!.setup).toBeUndefined();
    expect(instance!.test_command).toBeUndefined();
    expect(instance!.image).toBeUndefined();
  });

  it("names the line and the field that is wrong", async () => {
    const path = await file("bad.jsonl", lines(valid, { ...valid, instance_id: "two", FAIL_TO_PASS: "x" }));
    await expect(readInstances(path)).rejects.toThrow(`${path} line 2: FAIL_TO_PASS: `);
    const noTests = await file("t.jsonl", lines({ ...valid, test_command: "pytest" }));
    await expect(readInstances(noTests)).rejects.toThrow("line 1: test_command: must contain {tests}");
    const missing = await file("m.jsonl", lines({ ...valid, base_commit: undefined }));
    await expect(readInstances(missing)).rejects.toThrow("line 1: base_commit: ");
    const twice = await file("d.jsonl", lines(valid, valid));
    await expect(readInstances(twice)).rejects.toThrow('line 2: instance_id "octo__calc-1" appears twice');
    const broken = await file("j.jsonl", `${lines(valid)}\n{not json`);
    await expect(readInstances(broken)).rejects.toThrow("line 2 is not valid JSON");
  });
});

describe("testCommandFor", () => {
  it("puts the ids where {tests} is, quoted for the shell only when needed", () => {
    expect(
      testCommandFor("python3 -m pytest {tests}", ["tests/a.py::test_x", "tests/a.py::test_y[1 2]"]),
    ).toBe("python3 -m pytest tests/a.py::test_x 'tests/a.py::test_y[1 2]'");
    expect(testCommandFor("run {tests}", ["it's"])).toBe(`run 'it'\\''s'`);
    expect(testCommandFor("python3 -m unittest {tests}", [])).toBe("python3 -m unittest");
    // `$'` and `$&` in an id are text, not replaceAll's patterns.
    expect(testCommandFor("go test -run {tests} ./...", ["^TestX$"])).toBe("go test -run '^TestX$' ./...");
    expect(testCommandFor("run {tests} end", ["a$&b"])).toBe("run 'a$&b' end");
  });
});

describe("loadVariants", () => {
  it("runs default first, then each NAME=FILE laid over the configuration", async () => {
    const shell = await file(
      "shell.yaml",
      "aci:\n  bundle: shell\nagent:\n  history:\n    processor: full\n",
    );
    const variants = await loadVariants([`shell=${shell}`]);
    expect(variants.map((variant) => variant.name)).toEqual(["default", "shell"]);
    expect(variants[0]!.config.aci.bundle).toBe("aci");
    expect(variants[1]!.config.aci.bundle).toBe("shell");
    expect(variants[1]!.config.agent.history.processor).toBe("full");
  });

  it("refuses a malformed or repeated variant, and a wrong key in its file", async () => {
    await expect(loadVariants(["shell"])).rejects.toThrow("expected NAME=OVERRIDES.yaml");
    await expect(loadVariants(["default=x.yaml"])).rejects.toThrow('a NAME other than "default"');
    const ok = await file("ok.yaml", "aci:\n  window: 50\n");
    await expect(loadVariants([`a=${ok}`, `a=${ok}`])).rejects.toThrow("--variant a is given twice");
    const wrong = await file("wrong.yaml", "aci:\n  bundle: gui\n");
    await expect(loadVariants([`w=${wrong}`])).rejects.toThrow("aci.bundle");
  });
});
