/**
 * What determines the environment setup prepares (the run's prepare step): the repository by
 * its immutable id and its installation, never by name (two repositories never share one, whatever
 * their lockfiles, and whoever re-creates a deleted repository's name, or is handed it, never finds the
 * former one's environment, nor its standbys, which start from the kept image alone), the image, the
 * setup commands, their variables and how they run, and the dependency manifests and lockfiles of every ecosystem
 * worker/config/detect knows, by the base commit's blob ids (their contents). The provider adds the
 * image's id. Also what decides which kept files the host needs (the directories its tree skips) and
 * the setup secrets (names and values, through scrypt first, since the key is an image label anyone
 * with the engine can read, so a guessable secret costs a guesser scrypt's work per guess, not one
 * SHA-256): the credential scan belongs to keeping, so a kept environment is reused only with the very
 * secrets it was scanned for; a changed secret prepares anew, and is scanned then.
 */
import { createHash, scryptSync } from "node:crypto";
import type { SetupUser, WorkspaceEnv } from "../../../src/shared/contracts.js";
import { type BaseCommit, skippedDirs } from "./workspace-tree.js";

/** File names (anywhere in the tree) whose contents decide what setup installs. */
const MANIFEST_NAMES = new RegExp(
  "^(" +
    [
      // Node
      "package\\.json|package-lock\\.json|npm-shrinkwrap\\.json|yarn\\.lock|pnpm-lock\\.yaml|pnpm-workspace\\.yaml",
      "\\.npmrc|\\.yarnrc|\\.yarnrc\\.yml|\\.nvmrc|\\.node-version",
      // Python
      "pyproject\\.toml|setup\\.py|setup\\.cfg|requirements[^/]*\\.txt|[A-Za-z0-9]+[-_]requirements\\.txt",
      "constraints[^/]*\\.txt|Pipfile|Pipfile\\.lock",
      "poetry\\.lock|uv\\.lock|pdm\\.lock|tox\\.ini|\\.python-version",
      // Go, Rust, Ruby
      "go\\.mod|go\\.sum|go\\.work|go\\.work\\.sum|Cargo\\.toml|Cargo\\.lock|rust-toolchain|rust-toolchain\\.toml",
      "Gemfile|Gemfile\\.lock|[^/]+\\.gemspec|\\.ruby-version",
      // Java
      "pom\\.xml|build\\.gradle|build\\.gradle\\.kts|settings\\.gradle|settings\\.gradle\\.kts|gradle\\.properties",
      "gradle-wrapper\\.properties|maven-wrapper\\.properties|libs\\.versions\\.toml",
    ].join("|") +
    ")$",
);

/** A repository as GitHub identifies it for good: its id (a rename keeps it) and the installation it is in. */
export interface RepositoryIdentity {
  id: number;
  installationId: number;
}

interface EnvironmentKeyInput {
  repository: RepositoryIdentity;
  /** The repository's image choice; the provider's default when undefined. */
  image: string | undefined;
  commands: readonly string[];
  /** The toolchain variables setup ran with: another cache directory or Node on PATH prepares anew. */
  env?: WorkspaceEnv | undefined;
  user: SetupUser;
  network: boolean;
  base: BaseCommit;
  secrets: Record<string, string>;
}

/** The tracked manifests and lockfiles with their blob ids, sorted by path. */
function manifestsOf(base: BaseCommit): [string, string][] {
  return [...base.tracked]
    .filter(([path, entry]) => entry.mode !== "160000" && MANIFEST_NAMES.test(path.split("/").pop() ?? ""))
    .map(([path, entry]): [string, string] => [path, entry.oid])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function environmentKey(input: EnvironmentKeyInput): string {
  const material = JSON.stringify({
    repository: { id: input.repository.id, installation: input.repository.installationId },
    image: input.image ?? null,
    commands: input.commands,
    // Absent when there are none, so the keys of runs without detected variables stay as they were.
    ...(input.env ? { env: input.env } : {}),
    user: input.user,
    network: input.network,
    manifests: manifestsOf(input.base),
    skippedDirs: skippedDirs(input.base),
    secrets: secretsDigest(input.secrets),
  });
  return createHash("sha256").update(material).digest("hex");
}

/** The setup secrets, names and values, through scrypt (about 50 ms, 16 MiB); none: null. */
function secretsDigest(secrets: Record<string, string>): string | null {
  const entries = Object.entries(secrets).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return null;
  return scryptSync(JSON.stringify(entries), "agent-fix environment key", 32, { N: 2 ** 14 }).toString("hex");
}
