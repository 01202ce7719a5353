/**
 * The code owners of a change, from the repository's CODEOWNERS file as GitHub reads it ("About code
 * owners"): the first of .github/CODEOWNERS, CODEOWNERS and docs/CODEOWNERS on the default branch; each
 * line a gitignore-style pattern and its owners (`@user`, `@org/team`, or an email address); `#` starts
 * a comment; the last pattern that matches a file decides its owners, and a pattern with no owners
 * leaves the file without any. Patterns are matched by `ignore` (gitignore's rules, which CODEOWNERS
 * follows), except what GitHub does not support there: `!` negation and `[ ]` ranges, whose lines GitHub
 * skips as errors, as this does. The file is read through the contents API, never from a checkout.
 */
import ignore from "ignore";
import { type ContentsApi, readContents, readingAhead, type Where } from "../configure/contents.js";

/** Where GitHub looks for CODEOWNERS, in the order it looks. */
const CODEOWNERS_PATHS = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"] as const;

// GitHub refuses a CODEOWNERS file over 3 MB.
const MAX_BYTES = 3 * 1024 * 1024;

interface CodeOwnersRule {
  pattern: string;
  /** As written: `@user`, `@org/team`, or an email address; empty: the files have no owner. */
  owners: string[];
  matches: (path: string) => boolean;
}

export interface CodeOwners {
  /** Where it was found. */
  path: (typeof CODEOWNERS_PATHS)[number];
  rules: CodeOwnersRule[];
}

/** The owners one can request a review from: people by login, teams by slug; emails cannot be. */
interface Reviewers {
  users: string[];
  /** Team slugs of the repository's organisation. */
  teams: string[];
  /** Owners named in a way a review cannot be requested from (an email address, another org's team). */
  unrequestable: string[];
}

/** The repository's CODEOWNERS file, or null when it has none where GitHub looks. */
export async function readCodeOwners(api: ContentsApi, where: Where): Promise<CodeOwners | null> {
  // All three asked at once; the first in GitHub's order that is a file wins, as when asked in turn.
  const read = readingAhead((path) => readContents(api, where, path, MAX_BYTES), CODEOWNERS_PATHS);
  for (const path of CODEOWNERS_PATHS) {
    const found = await read(path);
    if (found.kind === "file") return { path, rules: parseCodeOwners(found.text) };
  }
  return null;
}

/** The rules of a CODEOWNERS file, in order; lines GitHub would report as errors are skipped. */
export function parseCodeOwners(text: string): CodeOwnersRule[] {
  const rules: CodeOwnersRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = stripComment(raw).trim();
    if (!line) continue;
    const [pattern = "", ...owners] = splitWords(line);
    if (pattern.startsWith("!") || /(?<!\\)\[/.test(pattern)) continue;
    if (owners.some((owner) => !isOwner(owner))) continue;
    const matcher = ignore().add(pattern);
    rules.push({ pattern, owners, matches: (path) => matcher.ignores(path) });
  }
  return rules;
}

/** The owners of `paths`: for each, the last rule that matches it. */
export function ownersOf(rules: readonly CodeOwnersRule[], paths: readonly string[]): string[] {
  const owners = new Set<string>();
  for (const path of paths) {
    const rule = rules.findLast((r) => r.matches(path));
    for (const owner of rule?.owners ?? []) owners.add(owner);
  }
  return [...owners];
}

/** `owners` as review requests on a repository of `org` (a team of another org cannot be asked). */
export function reviewersOf(owners: readonly string[], org: string): Reviewers {
  const reviewers: Reviewers = { users: [], teams: [], unrequestable: [] };
  for (const owner of owners) {
    const team = /^@([^/\s]+)\/(\S+)$/.exec(owner);
    if (team) {
      if (team[1]?.toLowerCase() === org.toLowerCase()) reviewers.teams.push(team[2] ?? "");
      else reviewers.unrequestable.push(owner);
    } else if (owner.startsWith("@")) {
      reviewers.users.push(owner.slice(1));
    } else reviewers.unrequestable.push(owner);
  }
  return reviewers;
}

/** `#` starts a comment, unless escaped (`\#`) inside a pattern. */
function stripComment(line: string): string {
  const at = line.search(/(?<!\\)#/);
  return at < 0 ? line : line.slice(0, at);
}

/** Words split on unescaped whitespace (`\ ` keeps a space in a pattern). */
function splitWords(line: string): string[] {
  return line.split(/(?<!\\)\s+/).filter(Boolean);
}

function isOwner(word: string): boolean {
  return /^@[A-Za-z0-9-]+(\/[A-Za-z0-9_.-]+)?$/.test(word) || /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(word);
}
