/**
 * Symlinks in the repository never lead the ACI's searches out of the workspace, on both sandbox
 * drivers: a directory link to /etc is refused by search_dir and find_file as `open` refuses it,
 * and the links met while searching the repository are not followed.
 */
import { cp, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AciSession, drivers, fixtureRepo, startSession } from "./aci-support.js";

let source: string;
beforeAll(async () => {
  source = await mkdtemp(join(tmpdir(), "af-aci-links-"));
  await cp(fixtureRepo, source, { recursive: true });
  await symlink("/etc", join(source, "etc-link"));
  await symlink("/etc/passwd", join(source, "passwd-link"));
  await symlink("src", join(source, "src-link"));
});
afterAll(() => rm(source, { recursive: true, force: true }));

for (const driver of drivers) {
  describe(`ACI searches stay in the workspace (${driver.name} sandbox)`, async () => {
    const provider = await driver.provider();
    let s: AciSession;
    const outside = (input: string) =>
      `Error: ${input} is outside the repository. Only files under ${s.root} can be used; prefer paths relative to it.`;

    beforeAll(async () => {
      s = await startSession(provider!, {}, source);
    });
    afterAll(async () => {
      await s?.sandbox.dispose();
    });

    it("search_dir and find_file refuse a directory symlinked out of the workspace, as open does", async () => {
      expect(await s.run("search_dir", { search_term: "root", dir: "etc-link" })).toBe(outside("etc-link"));
      expect(await s.run("find_file", { file_name: "passwd", dir: "etc-link" })).toBe(outside("etc-link"));
      expect(await s.run("find_file", { file_name: "*", dir: "etc-link/ssl" })).toBe(outside("etc-link/ssl"));
      expect(await s.run("open", { path: "etc-link/passwd" })).toContain("outside the repository");
      expect(await s.run("search_file", { search_term: "root", file: "passwd-link" })).toContain(
        "outside the repository",
      );
    });

    it("a search of the whole repository does not follow the links it meets", async () => {
      expect(await s.run("search_dir", { search_term: "root:x:0:0" })).toBe(
        'No matches found for "root:x:0:0" in ./',
      );
      expect(await s.run("find_file", { file_name: "passwd" })).toBe('No matches found for "passwd" in ./');
    });

    it("a directory link inside the workspace is searched", async () => {
      expect(await s.run("search_dir", { search_term: "greet", dir: "src-link" })).toContain(
        'Found 2 matches for "greet" in src-link:',
      );
    });
  });
}
