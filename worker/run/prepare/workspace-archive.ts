/**
 * Unpacks a tar stream that came out of a sandbox onto the host, treating every header as hostile:
 * no absolute names, no `..`, no writing through a symlink (every parent must be a real directory
 * this extraction made or found), no hard links, no devices or fifos, no setuid bits, nothing under a
 * `.git` directory. What a sandbox can do is put files and symlinks below `dir`; nothing else.
 *
 * It is also bounded as it arrives: every entry and every byte a header announces is counted before
 * anything is written, so a sparse file (tar stores it whole), a hard link (stored again as a file) or
 * a hundred thousand empty files are refused at the first entry past the caller's cap, not after the
 * host's disk took them.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, symlink, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { extract, type Header } from "tar-stream";
import { SandboxError } from "../../../src/shared/errors.js";

function unsafe(name: string, why: string): SandboxError {
  return new SandboxError(`refused to unpack "${name}" from the sandbox: ${why}`, {
    code: "unsafe_archive",
    hint: "Remove or replace that entry in the workspace.",
  });
}

/**
 * The operator's limits on what the host takes in from a sandbox (worker/config/worker-env.ts): the
 * workspace's size and files for setup's export and the kept files, and the change a submit may make.
 */
export interface IntakeLimits {
  /** AGENT_FIX_WORKSPACE_SIZE in bytes: no export of a workspace can rightly hold more. */
  workspaceBytes: number;
  /** AGENT_FIX_WORKSPACE_MAX_FILES: entries of setup's export or the kept files. */
  workspaceFiles: number;
  /** AGENT_FIX_CHANGE_MAX_FILES: paths a change may add, modify or delete. */
  changeFiles: number;
  /** AGENT_FIX_CHANGE_MAX_BYTES: the change's size as a binary patch. */
  changeBytes: number;
}

export const DEFAULT_INTAKE_LIMITS: IntakeLimits = {
  workspaceBytes: 4 * 2 ** 30,
  workspaceFiles: 1_000_000,
  changeFiles: 1_000,
  changeBytes: 16 * 2 ** 20,
};

/** The limits of setup's export and of the kept files: the workspace's own. */
export function workspaceLimits(intake: IntakeLimits): ReceiveLimits {
  return {
    maxBytes: intake.workspaceBytes,
    maxEntries: intake.workspaceFiles,
    bytesLimit: "the workspace's size, AGENT_FIX_WORKSPACE_SIZE",
    entriesLimit: "AGENT_FIX_WORKSPACE_MAX_FILES",
  };
}

/** What one extraction may take in: the operator's limits, as the caller applies them. */
export interface ReceiveLimits {
  /** Bytes of file content, as the headers announce them (a sparse file at its full size). */
  maxBytes: number;
  /** Entries of any type, directories included. */
  maxEntries: number;
  /** Where the limits come from, for the refusal: e.g. "the workspace's limit (AGENT_FIX_WORKSPACE_SIZE)". */
  bytesLimit: string;
  entriesLimit: string;
}

/** A size as a person reads it: "1.5 GiB", "64 MiB", "12 KiB", "1000 bytes". */
export function readableSize(bytes: number): string {
  const round = (n: number) => Math.round(n * 10) / 10;
  if (bytes >= 2 ** 30) return `${round(bytes / 2 ** 30)} GiB`;
  if (bytes >= 2 ** 20) return `${round(bytes / 2 ** 20)} MiB`;
  if (bytes >= 2 ** 10) return `${round(bytes / 2 ** 10)} KiB`;
  return `${bytes} bytes`;
}

/** The running totals of one extraction, and the top-level names the entries came under. */
class Intake {
  private bytes = 0;
  private entries = 0;
  private readonly perTop = new Map<string, number>();

  constructor(private readonly limits: ReceiveLimits) {}

  /** Counts one entry; throws before anything of it is written when it goes past a limit. */
  count(header: Header): void {
    const top = header.name.replace(/^\.\//, "").split("/")[0] ?? "";
    this.perTop.set(top, (this.perTop.get(top) ?? 0) + 1);
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) {
      throw new SandboxError(
        `refused to take in the workspace: it holds more than ${this.limits.maxEntries.toLocaleString("en-US")} files and directories (${this.limits.entriesLimit}); most are under ${this.busiest()}`,
        { code: "receive_limit", hint: RECEIVE_HINT },
      );
    }
    this.bytes += header.size ?? 0;
    if (this.bytes > this.limits.maxBytes) {
      throw new SandboxError(
        `refused to take in the workspace: "${header.name.replace(/^\.\//, "")}" (${readableSize(header.size ?? 0)}) brings it past ${readableSize(this.limits.maxBytes)} (${this.limits.bytesLimit}); a sparse file counts at its full size and each hard link as a copy`,
        { code: "receive_limit", hint: RECEIVE_HINT },
      );
    }
  }

  private busiest(): string {
    const top = [...this.perTop]
      .filter(([name]) => name !== "")
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3);
    return top.map(([name, n]) => `${name}/ (${n.toLocaleString("en-US")} so far)`).join(", ");
  }
}

/** What the agent can do about a refusal: the sandbox's files are its to delete. */
export const RECEIVE_HINT =
  "Delete what the change does not need; files your .git/info/exclude hides from git still count (only the repository's .gitignore and its build-output rules leave files out).";

/** The name's components, or null for the archive's root; throws on anything that could leave `dir`. */
function safeComponents(name: string): string[] | null {
  if (name.includes("\0")) throw unsafe(name, "the name holds a NUL byte");
  if (name.startsWith("/")) throw unsafe(name, "the name is absolute");
  const parts = name.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw unsafe(name, "the name climbs out with ..");
  return parts.length === 0 ? null : parts;
}

/** Makes sure every component of `parts` below `dir` is a real directory (created when missing). */
async function ensureDirectory(dir: string, parts: string[], known: Set<string>): Promise<void> {
  let path = dir;
  for (const [i, part] of parts.entries()) {
    path = join(path, part);
    if (known.has(path)) continue;
    const info = await lstat(path).catch(() => null);
    if (!info) await mkdir(path, { mode: 0o755 });
    else if (!info.isDirectory())
      throw unsafe(parts.slice(0, i + 1).join("/"), "a parent is not a directory");
    known.add(path);
  }
}

/** Clears the way for a file or symlink at `path`: an earlier file or link goes, a directory stays an error. */
async function clearLeaf(path: string, name: string): Promise<void> {
  const info = await lstat(path).catch(() => null);
  if (!info) return;
  if (info.isDirectory()) throw unsafe(name, "a directory of that name exists");
  await unlink(path);
}

/** An entry's content as tar-stream hands it over (a streamx Readable). */
interface EntryContent extends AsyncIterable<unknown> {
  resume(): unknown;
}

async function writeEntry(
  dir: string,
  header: Header,
  content: EntryContent,
  known: Set<string>,
  intake: Intake,
): Promise<void> {
  intake.count(header);
  const parts = safeComponents(header.name);
  if (parts === null || parts.includes(".git")) return void content.resume();
  const path = join(dir, ...parts);
  const type = header.type ?? "file";
  if (type === "directory") {
    content.resume();
    return ensureDirectory(dir, parts, known);
  }
  if (type === "link") throw unsafe(header.name, "hard links are refused");
  if (type !== "file" && type !== "contiguous-file" && type !== "symlink") return void content.resume();
  await ensureDirectory(dir, parts.slice(0, -1), known);
  await clearLeaf(path, header.name);
  if (type === "symlink") {
    content.resume();
    return symlink(header.linkname ?? "", path);
  }
  // O_EXCL + O_NOFOLLOW: the leaf was just cleared; if anything appeared there since, refuse it.
  const mode = (header.mode ?? 0o644) & 0o111 ? 0o755 : 0o644;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(path, flags, mode);
  try {
    for await (const chunk of content) await handle.write(chunk as Buffer);
    // The file's time as the sandbox had it, as tar keeps it: setup's build output (target/, Maven's
    // classes) is then newer than the sources it was built from in every sandbox after setup, and
    // incremental builds (cargo, Maven, make) do not build it all again.
    if (header.mtime) await handle.utimes(header.mtime, header.mtime);
  } finally {
    await handle.close();
  }
}

/**
 * Unpacks `archive` into `dir` (which must exist); resolves when every entry is written. Throws
 * SandboxError `receive_limit` at the first entry past `limits` (what came before it stays in `dir`).
 */
export async function extractArchive(archive: Readable, dir: string, limits: ReceiveLimits): Promise<void> {
  const extractor = extract();
  const known = new Set<string>([dir]);
  const intake = new Intake(limits);
  archive.on("error", (error: Error) => extractor.destroy(error));
  archive.pipe(extractor as unknown as Writable);
  try {
    for await (const entry of extractor) await writeEntry(dir, entry.header, entry, known, intake);
  } catch (error) {
    archive.destroy();
    extractor.destroy();
    throw error;
  }
}
