/** The `shell` bundle (the SWE-agent paper's "no ACI" ablation): bash and submit, nothing else. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, startSession } from "./aci-support.js";

describe("shell bundle (local sandbox)", () => {
  let s: AciSession;
  beforeAll(async () => {
    const provider = await drivers.find((driver) => driver.name === "local")!.provider();
    s = await startSession(provider!, { bundle: "shell" });
  });
  afterAll(async () => {
    await s?.sandbox.dispose();
  });

  it("offers only bash and submit, and documents only them", async () => {
    expect(s.env.bundle).toBe("shell");
    expect(s.env.tools.map((tool) => tool.name)).toEqual(["bash", "submit"]);
    expect(s.env.functionSpecs().map((spec) => spec.name)).toEqual(["bash", "submit"]);
    expect((await s.env.execute("open", { path: "README.md" })).formatError).toBe(true);
    expect(await s.run("bash", { command: "head -1 README.md" })).not.toBe("");
  });
});
