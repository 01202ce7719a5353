/**
 * Detection over GitHub's API: the default branch's file list (git trees) and the few files
 * detection reads (contents), handed to the pure detection of worker/config/detect.
 */
import { type Detection, detectCommands, filesToRead } from "../../config/detect/index.js";
import { type ContentsApi, listFiles, readContents, type Where } from "./contents.js";

/** At most this many files are read; a repository with more parts gets the first ones found. */
const MAX_READS = 40;
/** A manifest larger than this is not read (detection then works from the file names alone). */
const MAX_MANIFEST_BYTES = 512 * 1024;

export async function detectFromRepository(
  api: ContentsApi,
  where: Where & { ref: string },
): Promise<Detection> {
  const paths = await listFiles(api, where);
  const wanted = filesToRead(paths).slice(0, MAX_READS);
  const reads = await Promise.all(wanted.map((path) => readContents(api, where, path, MAX_MANIFEST_BYTES)));
  const contents = new Map<string, string>();
  reads.forEach((read, i) => {
    const path = wanted[i];
    if (read.kind === "file" && path !== undefined) contents.set(path, read.text);
  });
  return detectCommands({ paths, contents });
}
