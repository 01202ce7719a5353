/**
 * What a change (staged, or between two trees) does to each path, as the forbidden-path check needs it: both sides of a rename
 * (listed as a deletion and an addition), deletions, mode changes and symlinks with their targets.
 */

import { git } from "../checkout/git.js";
import type { ChangedEntry } from "./forbidden-paths.js";

const SYMLINK_MODE = "120000";

/** The index's changes against HEAD in the host checkout `dir` (`indexFile`: another index than its own). */
export async function stagedChanges(dir: string, indexFile?: string): Promise<ChangedEntry[]> {
  // --no-renames lists both sides of a rename, so moving a file out of a forbidden path is caught too.
  const raw = await git(["diff", "--cached", "--raw", "--no-renames", "--no-abbrev", "-z"], {
    cwd: dir,
    ...(indexFile ? { indexFile } : {}),
  });
  return changedEntries(dir, raw);
}

/** What changes from one tree (or commit) to another, both in the host checkout `dir`'s object store. */
export async function changesBetween(dir: string, from: string, to: string): Promise<ChangedEntry[]> {
  const raw = await git(["diff-tree", "-r", "--raw", "--no-renames", "--no-abbrev", "-z", from, to], {
    cwd: dir,
  });
  return changedEntries(dir, raw);
}

/** git's raw diff (-z): ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS" NUL "PATH" NUL, repeated. */
async function changedEntries(dir: string, raw: string): Promise<ChangedEntry[]> {
  const fields = raw.split("\0");
  const entries: ChangedEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode = "", newMode = "", , newSha = ""] = (fields[i] ?? "").replace(/^:/, "").split(" ");
    const path = fields[i + 1] ?? "";
    if (path === "") continue;
    const entry: ChangedEntry = { path, oldMode, newMode };
    if (newMode === SYMLINK_MODE) {
      entry.linkTarget = await git(["cat-file", "blob", newSha], { cwd: dir });
    }
    entries.push(entry);
  }
  return entries;
}
