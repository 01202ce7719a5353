/**
 * What detection works on and what it finds. Detection is a pure function of the repository's file
 * list and the text of a few of its files (read through GitHub's contents API by the caller): no
 * repository code runs on the host, and the same input always gives the same commands.
 */
import type { Toolchain, WorkspaceEnv } from "../../../src/shared/contracts.js";
import type { OptionalInstall } from "./optional-install.js";

/** The repository as detection sees it: its file paths (regular files only) and the files it asked for. */
export interface RepoFiles {
  /** Every regular file of the default branch, `/`-separated from the repository root. */
  paths: readonly string[];
  /** The text of the files `filesToRead` named (a missing entry: not readable, e.g. too large). */
  contents: ReadonlyMap<string, string>;
}

export type Ecosystem = "node" | "python" | "go" | "rust" | "ruby" | "java" | "make";

/** One part of the repository (its root or a directory of a monorepo) and how to set it up and test it. */
export interface DetectedPart {
  /** The directory, from the repository root; "" is the root. */
  dir: string;
  ecosystem: Ecosystem;
  /** What was found, for people: the files and what they said, e.g. "package-lock.json", "pytest". */
  evidence: string[];
  setup: string[];
  test: string;
  /** The commands of `setup` that install optional extras, as data: each is in `setup` as `optionalCommand(it)`. */
  optional?: OptionalInstall[];
  /**
   * Variables its commands need, naming directories of the workspace (its caches): put in every
   * sandbox's shell for the run rather than before each command, so the model types `go test ./...`.
   */
  env: WorkspaceEnv["vars"];
  /** The toolchain it runs on, and the versions its files declare. */
  requirements: ToolchainRequirement[];
}

/** How one ecosystem recognises a part and derives its commands. */
export interface EcosystemRule {
  ecosystem: Ecosystem;
  /** Whether `dir` (its files' names, relative to it) holds a part of this ecosystem. */
  marks(names: ReadonlySet<string>): boolean;
  /** The files of `dir` (relative to it) whose text the rule reads. */
  reads(names: ReadonlySet<string>): string[];
  /** The part, or null when the directory has nothing to test this way. */
  detect(dir: PartFiles):
    | (Omit<DetectedPart, "dir" | "ecosystem" | "env" | "requirements"> & {
        env?: WorkspaceEnv["vars"];
      })
    | null;
}

/** One directory's view: its files' names (relative, including those below it) and their texts. */
export interface PartFiles {
  names: ReadonlySet<string>;
  text(name: string): string | undefined;
}

/**
 * Where setup keeps what it downloads (module caches, installed gems, a provided Node): inside the
 * workspace, at its root, because setup's $HOME is discarded with its sandbox, and ignored by the
 * change (see artefacts.ts).
 */
export const CACHE_DIR = ".agent-fix-cache";

/** A directory of the cache, as a workspace variable's value. */
export const cachePath = (what: string, prefix?: string) => ({
  path: `${CACHE_DIR}/${what}`,
  ...(prefix ? { prefix } : {}),
});

/** One version constraint a part's files declare, or only that its toolchain must be there (`range` null). */
export interface ToolchainRequirement {
  toolchain: Toolchain;
  /**
   * The versions that fit: an npm semver range for Node, a PEP 440 specifier for Python, and for Go,
   * Rust and Java a semver range (`>=1.22.0`) over their version numbers. null: any version.
   */
  range: string | null;
  /** Where it was declared, for people: `package.json` (`engines.node`), `.nvmrc` line 1; null when not declared. */
  source: string | null;
  /** What the file said, as written (`>=20.19`, `go 1.25.0`). */
  declared: string | null;
}
