/**
 * The warm-start key (worker/run/prepare/environment-key.ts): what must prepare a new environment does, what
 * must not does not, and the setup secrets reach the key (an image label) only through scrypt.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { environmentKey } from "../../../../../worker/run/prepare/environment-key.js";
import type { BaseCommit } from "../../../../../worker/run/prepare/workspace-tree.js";

function base(files: Record<string, string>): BaseCommit {
  const tracked = new Map(Object.entries(files).map(([path, oid]) => [path, { mode: "100644", oid }]));
  return { gitDir: "/x", commit: "c", tree: "t", tracked, rules: [], excludesFile: "/x/e", scratch: "/x/s" };
}

const input = {
  repository: { id: 4242, installationId: 7 },
  image: undefined,
  commands: ["npm ci"],
  user: "agent" as const,
  network: true,
  base: base({ "package-lock.json": "aaa", "src/index.js": "111" }),
  secrets: { NPM_TOKEN: "npm_0123456789" },
};

describe("environmentKey", () => {
  it("is stable, ignores source files, and follows the repository's id and installation, lockfiles, commands and secrets", () => {
    const key = environmentKey(input);
    expect(environmentKey({ ...input })).toBe(key);
    expect(
      environmentKey({ ...input, base: base({ "package-lock.json": "aaa", "src/index.js": "222" }) }),
    ).toBe(key);
    const changed = [
      // Another repository under the same name (deleted and re-created), or this one transferred.
      environmentKey({ ...input, repository: { id: 4243, installationId: 7 } }),
      environmentKey({ ...input, repository: { id: 4242, installationId: 8 } }),
      environmentKey({ ...input, base: base({ "package-lock.json": "bbb", "src/index.js": "111" }) }),
      environmentKey({ ...input, commands: ["npm install"] }),
      environmentKey({ ...input, user: "root" }),
      environmentKey({ ...input, secrets: { NPM_TOKEN: "npm_0123456780" } }),
      environmentKey({ ...input, secrets: { OTHER_TOKEN: "npm_0123456789" } }),
      environmentKey({ ...input, secrets: {} }),
      // The toolchain variables setup ran with: another cache, or a provided Node on PATH.
      environmentKey({ ...input, env: { vars: {}, path: [".agent-fix-cache/node/node_modules/.bin"] } }),
      environmentKey({
        ...input,
        env: { vars: { GOMODCACHE: { path: ".agent-fix-cache/go/mod" } }, path: [] },
      }),
    ];
    expect(new Set([key, ...changed]).size).toBe(changed.length + 1);
    // No variables: the key of a run before they existed, so its kept environment is still found.
    expect(environmentKey({ ...input, env: undefined })).toBe(key);
  });

  it("does not carry a one-SHA-256 digest of the secrets, which a guesser could test cheaply", () => {
    const entries = JSON.stringify(Object.entries(input.secrets));
    const cheap = createHash("sha256")
      .update(
        JSON.stringify({
          repository: "octo/app",
          image: null,
          commands: input.commands,
          user: input.user,
          network: input.network,
          manifests: [["package-lock.json", "aaa"]],
          skippedDirs: [],
          secrets: JSON.parse(entries),
        }),
      )
      .digest("hex");
    expect(environmentKey(input)).not.toBe(cheap);
  });
});

describe("environmentKey and the requirements files detection installs", () => {
  it("follows dev-requirements.txt and requirements-dev.txt, not a source file named like one", () => {
    const python = { ...input, commands: ["python3 -m venv .venv"] };
    const files = {
      "requirements-dev.txt": "a",
      "dev-requirements.txt": "b",
      "docs/my_requirements.py": "c",
    };
    const key = environmentKey({ ...python, base: base(files) });
    expect(environmentKey({ ...python, base: base({ ...files, "requirements-dev.txt": "a2" }) })).not.toBe(
      key,
    );
    expect(environmentKey({ ...python, base: base({ ...files, "dev-requirements.txt": "b2" }) })).not.toBe(
      key,
    );
    expect(environmentKey({ ...python, base: base({ ...files, "docs/my_requirements.py": "c2" }) })).toBe(
      key,
    );
  });
});
