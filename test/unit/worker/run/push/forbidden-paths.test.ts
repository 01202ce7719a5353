import { describe, expect, it } from "vitest";
import { DEFAULT_TEST_PATHS } from "../../../../../worker/config/repo.js";
import {
  type ChangedEntry,
  forbiddenChanges,
  forbiddenEntries,
  pathMatcher,
} from "../../../../../worker/run/push/forbidden-paths.js";

const file = (path: string, oldMode = "100644", newMode = "100644"): ChangedEntry => ({
  path,
  oldMode,
  newMode,
});
const link = (path: string, target: string, oldMode = "000000"): ChangedEntry => ({
  path,
  oldMode,
  newMode: "120000",
  linkTarget: target,
});

describe("path patterns, read the way people read globs", () => {
  it("matches the default workflow pattern at any depth and nothing beside it", () => {
    const paths = [
      ".github/workflows/ci.yml",
      ".github/workflows/sub/x.yml",
      ".github/agent-fix.yml",
      "src/a.py",
    ];
    expect(forbiddenChanges(paths, [".github/workflows/**"])).toEqual([
      ".github/workflows/ci.yml",
      ".github/workflows/sub/x.yml",
    ]);
  });

  it("takes braces as alternatives: config/{prod,staging}.yml", () => {
    const forbidden = pathMatcher(["config/{prod,staging}.yml"]);
    expect(forbidden("config/prod.yml")).toBe(true);
    expect(forbidden("config/staging.yml")).toBe(true);
    expect(forbidden("config/dev.yml")).toBe(false);
  });

  it("takes brackets as a character class: [Dd]ockerfile", () => {
    const forbidden = pathMatcher(["[Dd]ockerfile"]);
    expect(forbidden("Dockerfile")).toBe(true);
    expect(forbidden("dockerfile")).toBe(true);
    expect(forbidden("xockerfile")).toBe(false);
  });

  it("**/*.pem matches at the root, at any depth, and in hidden directories and dotfiles", () => {
    const forbidden = pathMatcher(["**/*.pem"]);
    expect(forbidden("key.pem")).toBe(true);
    expect(forbidden("deploy/certs/key.pem")).toBe(true);
    expect(forbidden(".secrets/key.pem")).toBe(true);
    expect(forbidden("certs/.key.pem")).toBe(true);
    expect(forbidden("key.pem.txt")).toBe(false);
  });

  it("a bare directory name (with or without a slash) forbids everything under it", () => {
    for (const pattern of ["secrets", "secrets/", "./secrets", "/secrets"]) {
      const forbidden = pathMatcher([pattern]);
      expect(forbidden("secrets/prod/key.txt"), pattern).toBe(true);
      expect(forbidden("secrets"), pattern).toBe(true);
      expect(forbidden("secretsx/key.txt"), pattern).toBe(false);
      expect(forbidden("app/secrets/key.txt"), pattern).toBe(false);
    }
  });

  it("** covers dotfiles: .github/** forbids .github/.hidden and .github/workflows/.x.yml", () => {
    const forbidden = pathMatcher([".github/**"]);
    expect(forbidden(".github/.hidden")).toBe(true);
    expect(forbidden(".github/workflows/.x.yml")).toBe(true);
    expect(pathMatcher(["src/**"])("src/.env")).toBe(true);
  });

  it("keeps * and ? within one segment and lets **/ match zero directories", () => {
    expect(pathMatcher(["src/*.py"])("src/a.py")).toBe(true);
    expect(pathMatcher(["src/*.py"])("src/x/a.py")).toBe(false);
    expect(pathMatcher(["**/secrets.json"])("secrets.json")).toBe(true);
    expect(pathMatcher(["**/secrets.json"])("a/b/secrets.json")).toBe(true);
    expect(pathMatcher(["a.b"])("axb")).toBe(false);
    expect(pathMatcher(["v?.txt"])("v1.txt")).toBe(true);
    expect(pathMatcher([])("anything")).toBe(false);
  });

  it("the default test-file patterns use the same matcher (dotted directories included)", () => {
    const isTest = pathMatcher(DEFAULT_TEST_PATHS);
    expect(isTest("tests/test_stats.py")).toBe(true);
    expect(isTest("pkg/.hidden/test_x.py")).toBe(true);
    expect(isTest("src/a.test.ts")).toBe(true);
    expect(isTest("src/a.ts")).toBe(false);
  });
});

describe("forbidden entries of a change: renames, deletions, modes, symlinks", () => {
  const patterns = [".github/workflows/**", ".github/agent-fix.yml", "secrets"];

  it("sees both sides of a rename, a deletion and a mode change", () => {
    const found = forbiddenEntries(
      [
        file(".github/workflows/ci.yml", "100644", "000000"), // renamed away: its old side
        file("ci.yml", "000000", "100644"),
        file("secrets/key.txt", "100644", "000000"),
        file(".github/workflows/run.sh", "100644", "100755"),
        file("src/a.py"),
      ],
      patterns,
    );
    expect(found).toEqual([
      { path: ".github/workflows/ci.yml", reason: "deleted" },
      { path: "secrets/key.txt", reason: "deleted" },
      { path: ".github/workflows/run.sh", reason: "mode changed 100644 -> 100755" },
    ]);
  });

  it("refuses a symlink in place of a forbidden directory or above it", () => {
    expect(forbiddenEntries([link(".github/workflows", "../ci")], patterns).map((f) => f.path)).toEqual([
      ".github/workflows",
    ]);
    expect(forbiddenEntries([link(".github", "dot-github")], patterns)[0]?.reason).toBe(
      "a symlink in place of a directory holding forbidden paths",
    );
  });

  it("refuses a symlink whose target is a forbidden path, or outside the repository", () => {
    const found = forbiddenEntries(
      [
        link("docs/ci.yml", "../.github/workflows/ci.yml"),
        link("wf", ".github/workflows"),
        link("conf", ".github"),
        link("keys", "secrets/prod"),
        link(".github/agent-fix.yml.bak", "/etc/passwd"),
        link("up", "../../outside"),
        link("readme", "docs/README.md"),
      ],
      patterns,
    );
    expect(found.map((f) => f.path)).toEqual([
      "docs/ci.yml",
      "wf",
      "conf",
      "keys",
      ".github/agent-fix.yml.bak",
      "up",
    ]);
    expect(found[4]?.reason).toBe("a symlink to /etc/passwd, outside the repository");
  });
});
