/** Reading and writing repository files through the sandbox, with every failure turned into a reason. */

import type { Sandbox } from "../../src/shared/contracts.js";
import { SandboxError } from "../../src/shared/errors.js";
import { looksBinary, parseTextFile, type TextFile } from "./text-file.js";

type ReadFailure = "not_found" | "is_directory" | "file_too_large" | "outside" | "binary" | "not_regular";

type ReadOutcome = { ok: true; data: Buffer; file: TextFile } | { ok: false; reason: ReadFailure };

const knownCodes: Record<string, ReadFailure> = {
  not_found: "not_found",
  is_directory: "is_directory",
  file_too_large: "file_too_large",
  path_outside_workspace: "outside",
  not_regular_file: "not_regular",
};

/** Reads a text file; other sandbox failures (a dead container) are thrown on. */
export async function readTextFile(
  sandbox: Sandbox,
  absolute: string,
  maxBytes: number,
): Promise<ReadOutcome> {
  let data: Buffer;
  try {
    data = await sandbox.readFile(absolute, { maxBytes });
  } catch (error) {
    const reason = error instanceof SandboxError ? knownCodes[error.code] : undefined;
    if (reason) return { ok: false, reason };
    throw error;
  }
  if (looksBinary(data)) return { ok: false, reason: "binary" };
  return { ok: true, data, file: parseTextFile(data) };
}

/** What the model is told when a file cannot be shown or edited. */
export function readFailureMessage(reason: ReadFailure, shown: string, maxBytes: number): string {
  switch (reason) {
    case "not_found":
      return `File ${shown} not found`;
    case "is_directory":
      return `Error: ${shown} is a directory. You can only open files. Use cd or ls to navigate directories.`;
    case "file_too_large":
      return `Error: ${shown} is larger than ${maxBytes} bytes, too large to open. Use search_file to find lines in it, or bash (e.g. sed -n '100,200p' ${shown}) to print a range.`;
    case "outside":
      return `Error: ${shown} is outside the repository. Only files inside the repository can be used; prefer paths relative to its root.`;
    case "not_regular":
      return `Error: ${shown} is not a regular file (a device, socket or pipe) and cannot be opened.`;
    case "binary":
      return `Error: ${shown} is a binary file and cannot be shown or edited as text. Use bash (e.g. file ${shown}, xxd ${shown} | head) to inspect it.`;
  }
}
