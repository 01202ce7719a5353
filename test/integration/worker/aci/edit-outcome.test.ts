/**
 * Whether an edit wrote its change is a field of the tool result (`edited`), set by the edit tools
 * themselves, in both bundles: the agent loop's watcher reads it, never the observation's wording.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, startSession } from "./aci-support.js";

describe.each(["aci", "editor"] as const)("edit outcome (%s bundle, local sandbox)", (bundle) => {
  let s: AciSession;
  beforeAll(async () => {
    const provider = await drivers.find((driver) => driver.name === "local")!.provider();
    s = await startSession(provider!, { bundle });
  });
  afterAll(async () => {
    await s?.sandbox.dispose();
  });

  const create = (path: string) =>
    bundle === "aci"
      ? s.env.execute("create", { filename: path })
      : s.env.execute("create", { path, file_text: "x = 1\n" });
  const breakIt = (path: string) =>
    bundle === "aci"
      ? s.env.execute("edit", { start_line: 1, end_line: 1, replacement_text: "x = (1" })
      : s.env.execute("str_replace", { path, old_str: "x = 1", new_str: "x = (1" });
  const fixIt = (path: string) =>
    bundle === "aci"
      ? s.env.execute("edit", { start_line: 1, end_line: 1, replacement_text: "x = 2" })
      : s.env.execute("str_replace", { path, old_str: "x = 1", new_str: "x = 2" });

  it("is true for a written edit, false for a refused one and for a rejected one; other tools leave it unset", async () => {
    const path = `outcome_${bundle}.py`;
    expect((await create(path)).edited).toBe(true);
    if (bundle === "aci")
      await s.env.execute("edit", { start_line: 1, end_line: 1, replacement_text: "x = 1" });
    expect((await breakIt(path)).edited).toBe(false); // the syntax gate rejects it
    expect((await fixIt(path)).edited).toBe(true);
    expect((await create(path)).edited).toBe(false); // exists already
    expect((await s.env.execute("bash", { command: "true" })).edited).toBeUndefined();
  });
});
