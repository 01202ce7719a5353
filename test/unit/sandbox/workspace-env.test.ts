/**
 * The run's toolchain variables as a sandbox's shell gets them (sandbox/session-sandbox.ts withWorkspaceEnv):
 * workspace paths made absolute under the sandbox's workdir, PATH directories before the image's, a
 * fixed value as it is; a path leaving the workspace or a bad name is refused, saying so.
 */
import { describe, expect, it } from "vitest";
import { withWorkspaceEnv } from "../../../sandbox/session-sandbox.js";

const base = { PATH: "/usr/bin:/bin", HOME: "/home/agent" };

describe("withWorkspaceEnv", () => {
  it("makes each path absolute under the workdir, keeps a prefix and a fixed value, and puts PATH entries first", () => {
    const env = withWorkspaceEnv(
      base,
      {
        vars: {
          GOMODCACHE: { path: ".agent-fix-cache/go/mod" },
          MAVEN_OPTS: { path: ".agent-fix-cache/m2/repository", prefix: "-Dmaven.repo.local=" },
          GOTOOLCHAIN: { value: "auto" },
        },
        path: [".agent-fix-cache/node/node_modules/.bin"],
      },
      "/workspace",
    );
    expect(env).toEqual({
      HOME: "/home/agent",
      GOMODCACHE: "/workspace/.agent-fix-cache/go/mod",
      MAVEN_OPTS: "-Dmaven.repo.local=/workspace/.agent-fix-cache/m2/repository",
      GOTOOLCHAIN: "auto",
      PATH: "/workspace/.agent-fix-cache/node/node_modules/.bin:/usr/bin:/bin",
    });
    expect(withWorkspaceEnv(base, undefined, "/workspace")).toBe(base);
  });
  it("refuses a path outside the workspace and a name that is not a variable's", () => {
    for (const path of ["../etc", "/etc", "a/../../x", "."])
      expect(() => withWorkspaceEnv(base, { vars: { X: { path } }, path: [] }, "/workspace"), path).toThrow(
        /outside the workspace/,
      );
    expect(() => withWorkspaceEnv(base, { vars: {}, path: ["../bin"] }, "/workspace")).toThrow(
      /outside the workspace/,
    );
    expect(() => withWorkspaceEnv(base, { vars: { "A B": { path: "x" } }, path: [] }, "/workspace")).toThrow(
      /invalid environment variable name/,
    );
  });
});
