/**
 * Unpacks a tar stream that came out of a sandbox onto the host, treating every header as hostile:
 * no absolute names, no `..`, no writing through a symlink (every parent must be a real directory
 * this extraction made or found), no hard links, no devices or fifos, no setuid bits, nothing under a
 * `.git` directory. What a sandbox can do is put files and symlinks below `dir`; nothing else.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, symlink, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { extract, type Header } from "tar-stream";
import { SandboxError } from "../../src/errors.js";

function unsafe(name: string, why: string): SandboxError {
  return new SandboxError(`refused to unpack "${name}" from the sandbox: ${why}`, {
    code: "unsafe_archive",
    hint: "Remove or replace that entry in the workspace.",
  });
}

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
): Promise<void> {
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
  } finally {
    await handle.close();
  }
}

/** Unpacks `archive` into `dir` (which must exist); resolves when every entry is written. */
export async function extractArchive(archive: Readable, dir: string): Promise<void> {
  const extractor = extract();
  const known = new Set<string>([dir]);
  archive.on("error", (error: Error) => extractor.destroy(error));
  archive.pipe(extractor as unknown as Writable);
  try {
    for await (const entry of extractor) await writeEntry(dir, entry.header, entry, known);
  } catch (error) {
    archive.destroy();
    extractor.destroy();
    throw error;
  }
}
