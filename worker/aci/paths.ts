/** Paths given by the model, resolved like a shell would (against the current directory) and kept in the repository. */
import path from "node:path";

interface RepoPath {
  /** Absolute inside the sandbox. */
  absolute: string;
  /** Relative to the repository root; "" for the root itself. */
  relative: string;
}

/** Resolves `input`; null when it points outside the repository root. */
export function resolveRepoPath(root: string, cwd: string, input: string): RepoPath | null {
  const absolute = path.posix.resolve(cwd, input.trim());
  const relative = path.posix.relative(root, absolute);
  if (relative === ".." || relative.startsWith("../") || path.posix.isAbsolute(relative)) return null;
  return { absolute, relative };
}

/** How a repository path is shown: relative to the root, the root itself as `./`. */
export function displayPath(relative: string): string {
  return relative === "" ? "./" : relative;
}

export function outsideRepositoryMessage(input: string, root: string): string {
  return `Error: ${input} is outside the repository. Only files under ${root} can be used; prefer paths relative to it.`;
}

/** Single-quotes a string for bash. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
