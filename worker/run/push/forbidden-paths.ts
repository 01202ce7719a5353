/**
 * Path patterns of the repository config (forbidden paths, test files), matched the way people read
 * globs, by picomatch: `**` spans directories, `*` and `?` stay within one segment, `{a,b}` and `[Dd]`
 * work as in a shell, dotfiles match like any other name. Patterns are relative to the repository
 * root; a bare name or one ending in `/` also covers everything below it.
 */
import { posix } from "node:path";
import picomatch from "picomatch";

/** One entry of a change as git lists it (`git diff --raw --no-renames`): both sides of a rename are two entries. */
export interface ChangedEntry {
  path: string;
  /** Git modes of the two sides ("000000" where a side does not exist, "120000" a symlink). */
  oldMode: string;
  newMode: string;
  /** A symlink's target as committed (new side), when the new side is a symlink. */
  linkTarget?: string;
}

interface ForbiddenChange {
  path: string;
  /** Why, in words: which side touched the pattern. */
  reason: string;
}

const SYMLINK_MODE = "120000";

function normalizePattern(pattern: string): string {
  const trimmed = pattern.trim().replace(/^\.\//, "").replace(/^\/+/, "");
  return trimmed.endsWith("/") ? `${trimmed}**` : trimmed;
}

function normalizePath(path: string): string {
  return path.replace(/^\.\//, "").replace(/\/+$/, "");
}

/** A predicate for `patterns`: true when any of them matches the repository-relative path. */
export function pathMatcher(patterns: readonly string[]): (path: string) => boolean {
  const globs = patterns.map(normalizePattern).filter((p) => p !== "");
  if (globs.length === 0) return () => false;
  // A pattern also covers what lies below what it names: `secrets` forbids `secrets/key.pem`.
  const isMatch = picomatch([...globs, ...globs.map((glob) => `${glob}/**`)], { dot: true });
  return (path) => isMatch(normalizePath(path));
}

/** Directories every match of a pattern lies in (`.github/workflows` for `.github/workflows/**`). */
function patternBases(patterns: readonly string[]): string[] {
  return patterns
    .map((pattern) => picomatch.scan(normalizePattern(pattern)).base)
    .filter((base) => base !== "");
}

/** Where a symlink at `path` pointing at `target` leads, relative to the root; null when outside it. */
function symlinkDestination(path: string, target: string): string | null {
  if (posix.isAbsolute(target)) return null;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  if (resolved === ".." || resolved.startsWith("../")) return null;
  return resolved === "." ? "" : resolved;
}

/**
 * The entries of a change that touch a forbidden path: either side of a rename, a deletion, a mode
 * change, a symlink at or above a forbidden path (a link in place of `.github` or `.github/workflows`
 * would make GitHub read what the agent wrote elsewhere), and a symlink leading into a forbidden path
 * or out of the repository.
 */
export function forbiddenEntries(
  entries: readonly ChangedEntry[],
  patterns: readonly string[],
): ForbiddenChange[] {
  const isForbidden = pathMatcher(patterns);
  const bases = patternBases(patterns);
  const coversForbidden = (path: string) =>
    path === "" || isForbidden(path) || bases.some((base) => base.startsWith(`${path}/`));
  const found: ForbiddenChange[] = [];
  for (const entry of entries) {
    const path = normalizePath(entry.path);
    const isLink = entry.newMode === SYMLINK_MODE;
    if (isForbidden(path)) {
      found.push({ path, reason: describeChange(entry) });
    } else if (isLink && coversForbidden(path)) {
      found.push({ path, reason: "a symlink in place of a directory holding forbidden paths" });
    } else if (isLink && entry.linkTarget !== undefined) {
      const destination = symlinkDestination(path, entry.linkTarget);
      if (destination === null) {
        found.push({ path, reason: `a symlink to ${entry.linkTarget}, outside the repository` });
      } else if (coversForbidden(destination)) {
        found.push({ path, reason: `a symlink to ${entry.linkTarget}, a forbidden path` });
      }
    }
  }
  return found;
}

function describeChange(entry: ChangedEntry): string {
  if (entry.newMode === "000000") return "deleted";
  if (entry.oldMode === "000000") return entry.newMode === SYMLINK_MODE ? "added as a symlink" : "added";
  if (entry.oldMode !== entry.newMode) return `mode changed ${entry.oldMode} -> ${entry.newMode}`;
  return "changed";
}

/** The changed paths (plain names, e.g. from a diff's headers) that some forbidden pattern matches. */
export function forbiddenChanges(paths: readonly string[], patterns: readonly string[]): string[] {
  const isForbidden = pathMatcher(patterns);
  return paths.filter((path) => isForbidden(path));
}
