/**
 * find_file, search_dir, search_file: summarised and capped. Directory searches run ripgrep inside the
 * sandbox and stop reading after one more result than the cap, so a flood costs no more than the cap.
 */
import { z } from "zod";
import type { ToolContext } from "../../../src/shared/contracts.js";
import { readFailureMessage, readTextFile } from "../files.js";
import { displayPath, outsideRepositoryMessage, resolveRepoPath, shellQuote } from "../paths.js";
import {
  type AciRuntime,
  type AciTool,
  booleanArg,
  defineTool,
  integerArg,
  noFileOpen,
  observation,
  stringArg,
} from "../tool.js";
import { matchingLines, regexProblem } from "./search-lines.js";

const noDirectory = "__ACI_NO_SUCH_DIRECTORY__";
const outsideWorkspace = "__ACI_OUTSIDE_WORKSPACE__";
const isFile = "__ACI_IS_A_FILE__";

/**
 * Shell code that prints a marker instead of searching when `quoted` is not a directory (a file gets
 * its own), or when its real path (symlinks resolved) lies outside the workspace: ripgrep follows a
 * symlink given as its path, so a link to /etc would list the container's files, which the file tools refuse.
 */
function directoryGuard(quoted: string): string {
  return (
    `d=$(realpath -e -- ${quoted} 2>/dev/null); r=$(realpath -e .); ` +
    `if [ -z "$d" ]; then echo ${noDirectory}; ` +
    `elif [ "$d" != "$r" ] && [ "\${d#"$r"/}" = "$d" ]; then echo ${outsideWorkspace}; ` +
    `elif [ -f "$d" ]; then echo ${isFile}; elif [ ! -d "$d" ]; then echo ${noDirectory}; else `
  );
}

/**
 * Runs `rgArgs` over a directory in the sandbox: null when the directory does not exist, "outside"
 * when it leads out of the workspace, "file" when it is a file. Without --follow, ripgrep skips the
 * symlinks it meets inside.
 */
async function ripgrepLines(runtime: AciRuntime, context: ToolContext, relativeDir: string, rgArgs: string) {
  // An explicit "." keeps rg from reading stdin; its "./" prefix is removed below.
  const quoted = relativeDir === "" ? "." : shellQuote(relativeDir);
  const search = `rg ${rgArgs} -- ${quoted} 2>/dev/null | head -n ${runtime.config.searchCap + 1}`;
  const command = `${directoryGuard(quoted)}${search}; fi`;
  const result = await context.sandbox.exec(command, {
    cwd: runtime.root,
    timeoutMs: runtime.config.toolTimeoutMs,
    ...(context.signal ? { signal: context.signal } : {}),
  });
  if (result.timedOut) return { timedOut: true } as const;
  const lines = result.output
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (relativeDir === "" && line.startsWith("./") ? line.slice(2) : line));
  if (lines[0] === noDirectory) return null;
  if (lines[0] === outsideWorkspace) return "outside" as const;
  if (lines[0] === isFile) return "file" as const;
  return { lines } as const;
}

/**
 * search_file with ripgrep in the sandbox, stopped past the cap: for a file too large to read whole,
 * and for a regular expression, so search_file and search_dir take the same (ripgrep's) syntax.
 */
async function ripgrepFile(
  runtime: AciRuntime,
  context: ToolContext,
  relative: string,
  searchTerm: string,
  regex: boolean,
) {
  const cap = runtime.config.searchCap;
  const term = `"${searchTerm}" in ${relative}`;
  const result = await context.sandbox.exec(
    `rg -n --no-messages ${regex ? "" : "-F "}-e ${shellQuote(searchTerm)} -- ${shellQuote(relative)} | head -n ${cap + 1}`,
    {
      cwd: runtime.root,
      timeoutMs: runtime.config.toolTimeoutMs,
      ...(context.signal ? { signal: context.signal } : {}),
    },
  );
  if (result.timedOut) return timedOutMessage(term);
  const matches = result.output
    .split("\n")
    .filter((line) => /^\d+:/.test(line))
    .map((line) => `Line ${line}`);
  return matchFrame(term, matches, cap, "lines");
}

function resolveDir(runtime: AciRuntime, context: ToolContext, dir: string | undefined) {
  if (dir === undefined || dir.trim() === "") return { relative: "" };
  return resolveRepoPath(runtime.root, context.state.workingDir, dir);
}

const timedOutMessage = (what: string) =>
  `The search for ${what} took too long and was stopped. Search a smaller directory or a more specific term.`;

/** "1 match", "3 matches". */
const matchCount = (count: number) => `${count} ${count === 1 ? "match" : "matches"}`;

/**
 * The frame every search answers in (SWE-agent's texts): none, too many (narrow it), or the entries between a
 * header and a footer. `total` is the number of matches when an entry stands for several (search_dir).
 */
function matchFrame(
  term: string,
  entries: string[],
  cap: number,
  unit: "files" | "lines",
  total = entries.length,
) {
  if (entries.length === 0) return `No matches found for ${term}`;
  if (entries.length > cap) return `More than ${cap} ${unit} matched for ${term}. Please narrow your search.`;
  return [`Found ${matchCount(total)} for ${term}:`, ...entries, `End of matches for ${term}`].join("\n");
}

/** What find_file says when its dir is a file (search_dir searches that file instead). */
const fileGivenToFindFile = (path: string) =>
  `Error: ${path} is a file, not a directory: find_file looks for files by name inside dir. Give the directory to look in (or leave dir out to search the whole repository).`;

/** find_file and search_dir: resolve dir, run ripgrep there, and give back its lines or the observation to send. */
async function searchDirectory(
  runtime: AciRuntime,
  context: ToolContext,
  tool: "find_file" | "search_dir",
  dirArg: string | undefined,
  what: string,
  rgArgs: string,
): Promise<{ lines: string[]; term: string } | { answer: string } | { file: string }> {
  const dir = resolveDir(runtime, context, dirArg);
  if (!dir) return { answer: outsideRepositoryMessage(dirArg!, runtime.root) };
  const found = await ripgrepLines(runtime, context, dir.relative, rgArgs);
  if (found === null) return { answer: `Directory ${dirArg} not found` };
  if (found === "outside") return { answer: outsideRepositoryMessage(dirArg!, runtime.root) };
  if (found === "file")
    return tool === "find_file" ? { answer: fileGivenToFindFile(dirArg!) } : { file: dir.relative };
  if ("timedOut" in found) return { answer: timedOutMessage(`"${what}"`) };
  return { lines: found.lines, term: `"${what}" in ${displayPath(dir.relative)}` };
}

// Said once in each search tool's definition, and in a few words: every request carries them (issue 27).
const dirArg = stringArg("the directory (default: the repository root)").optional();
const regexArg = booleanArg("search_term is a regular expression, in ripgrep's syntax").optional();
const literally = "The term is matched literally and case-sensitively unless regex is true.";

function findFileTool(runtime: AciRuntime): AciTool {
  const cap = runtime.config.searchCap;
  return defineTool({
    name: "find_file",
    doc: "Finds the files named file_name, or matching it as a glob (e.g. *.py), under dir. Skips hidden files and those .gitignore ignores.",
    parameters: z.object({
      file_name: stringArg("a file name or glob pattern").min(1),
      dir: dirArg,
    }),
    run: async (args, context) => {
      const found = await searchDirectory(
        runtime,
        context,
        "find_file",
        args.dir,
        args.file_name,
        `--files --no-messages -g ${shellQuote(args.file_name)}`,
      );
      if ("answer" in found) return observation(found.answer);
      if ("file" in found) return observation(fileGivenToFindFile(args.dir!));
      return observation(matchFrame(found.term, found.lines.sort(), cap, "files"));
    },
  });
}

interface SearchDirArgs {
  search_term: string;
  dir?: string | undefined;
  regex?: boolean | undefined;
  lines?: number | undefined;
}

/**
 * Matching is case-sensitive (a search for `begin` must not flood with `Begin`), so when nothing
 * matched, the files that match ignoring case are named (issue 24): a model that guessed the wrong
 * case learns it at once instead of concluding the term is absent.
 */
async function caseInsensitiveHint(
  runtime: AciRuntime,
  context: ToolContext,
  dirArg: string | undefined,
  pattern: string,
  cap: number,
): Promise<string> {
  const found = await ripgrepLines(
    runtime,
    context,
    resolveDir(runtime, context, dirArg)!.relative,
    `-l -i --no-messages ${pattern}`,
  );
  if (found === null || typeof found === "string" || "timedOut" in found || found.lines.length === 0)
    return "";
  const files = [...found.lines].sort();
  const count =
    files.length > cap
      ? `More than ${cap} files`
      : `${files.length} ${files.length === 1 ? "file matches" : "files match"}`;
  const listed = files.length > cap ? "" : `: ${files.join(", ")}`;
  return `; ${count} ignoring case${listed}. Matching is case-sensitive: search again with the case the code uses.`;
}

async function searchDir(runtime: AciRuntime, context: ToolContext, args: SearchDirArgs) {
  const cap = runtime.config.searchCap;
  if (args.search_term.includes("\n")) return observation("Error: search_term must be a single line.");
  const pattern = `${args.regex ? "" : "-F "}-e ${shellQuote(args.search_term)}`;
  if (args.regex) {
    const problem = await regexProblem(runtime, context, args.search_term);
    if (problem) return observation(problem);
  }
  const found = await searchDirectory(
    runtime,
    context,
    "search_dir",
    args.dir,
    args.search_term,
    `-c --no-messages ${pattern}`,
  );
  if ("answer" in found) return observation(found.answer);
  // A file given as dir is searched as search_file would (issue 24): refusing only cost a turn.
  if ("file" in found)
    return observation(
      await searchOneFile(runtime, context, found.file, args.search_term, args.regex ?? false),
    );
  const counts = found.lines
    .map((line) => {
      const colon = line.lastIndexOf(":");
      return { path: line.slice(0, colon), count: Number(line.slice(colon + 1)) };
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const total = counts.reduce((sum, entry) => sum + entry.count, 0);
  const wanted = Math.min(args.lines ?? 0, cap);
  if (counts.length === 0) {
    const hint = await caseInsensitiveHint(runtime, context, args.dir, pattern, cap);
    return observation(`${matchFrame(found.term, [], cap, "files")}${hint}`);
  }
  if (counts.length > cap || wanted === 0) {
    const entries = counts.map((entry) => `${entry.path} (${matchCount(entry.count)})`);
    return observation(matchFrame(found.term, entries, cap, "files", total));
  }
  const dir = resolveDir(runtime, context, args.dir)!.relative;
  const shown = await matchingLines(runtime, context, dir, pattern, wanted);
  const entries = counts.flatMap((entry) => [
    `${entry.path} (${matchCount(entry.count)})`,
    ...(shown.get(entry.path) ?? []).map((line) => `  ${line}`),
  ]);
  const listed = [...shown.values()].flat().length;
  const note = listed < total ? `\n(${listed} of ${total} matching lines shown)` : "";
  return observation(`${matchFrame(found.term, entries, Number.POSITIVE_INFINITY, "files", total)}${note}`);
}

function searchDirTool(runtime: AciRuntime): AciTool {
  const cap = runtime.config.searchCap;
  return defineTool({
    name: "search_dir",
    doc: `Lists the files under dir that contain search_term, with their number of matching lines (a file as dir is searched as search_file does). ${literally} With no match, names the files that match ignoring case. Skips hidden and binary files and those .gitignore ignores.`,
    parameters: z.object({
      search_term: stringArg("the term to search for").min(1),
      dir: dirArg,
      regex: regexArg,
      lines: integerArg(
        `also show up to this many matching lines (at most ${cap}) with their numbers (default 0: counts only)`,
      )
        .pipe(z.number().int().min(0))
        .optional(),
    }),
    run: (args, context) => searchDir(runtime, context, args),
  });
}

export function searchTools(runtime: AciRuntime): AciTool[] {
  return [findFileTool(runtime), searchDirTool(runtime), searchFileTool(runtime)];
}

/**
 * search_file. Without a file it searches the open file, which in the `editor` bundle is the file last
 * viewed or edited: that bundle has no `open`, so its texts never send the model there.
 */
function searchFileTool(runtime: AciRuntime): AciTool {
  const editor = runtime.config.bundle === "editor";
  const openFile = editor ? "the file last viewed or edited" : "the open file";
  const noFile = editor
    ? "Error: no file was given and none has been viewed or edited yet. Give the file to search in as file (or view it first)."
    : noFileOpen;
  return defineTool({
    name: "search_file",
    doc: `Shows each line of file that contains search_term, with its line number. ${literally}`,
    parameters: z.object({
      search_term: stringArg("the term to search for").min(1),
      file: stringArg(`the file (default: ${openFile})`).optional(),
      regex: regexArg,
    }),
    run: async (args, context) => {
      let relative: string;
      if (args.file === undefined || args.file.trim() === "") {
        if (context.state.openFile === null) return observation(noFile);
        relative = context.state.openFile;
      } else {
        const target = resolveRepoPath(runtime.root, context.state.workingDir, args.file);
        if (!target) return observation(outsideRepositoryMessage(args.file, runtime.root));
        relative = target.relative;
      }
      return observation(
        await searchOneFile(runtime, context, relative, args.search_term, args.regex ?? false, args.file),
      );
    },
  });
}

/** search_file's answer for one file (also search_dir's, when its dir is a file). */
async function searchOneFile(
  runtime: AciRuntime,
  context: ToolContext,
  relative: string,
  searchTerm: string,
  regex: boolean,
  fileArg?: string,
): Promise<string> {
  const cap = runtime.config.searchCap;
  if (searchTerm.includes("\n")) return "Error: search_term must be a single line.";
  if (regex) {
    const problem = await regexProblem(runtime, context, searchTerm);
    if (problem) return problem;
  }
  const read = await readTextFile(
    context.sandbox,
    `${runtime.root}/${relative}`,
    runtime.config.maxFileBytes,
  );
  if (!read.ok) {
    if (read.reason === "not_found" || read.reason === "is_directory") {
      return `Usage: search_file <search_term> [<file>]\nError: File name ${fileArg ?? relative} not found. Please provide a valid file name.`;
    }
    if (read.reason === "file_too_large") return ripgrepFile(runtime, context, relative, searchTerm, regex);
    return readFailureMessage(read.reason, relative, runtime.config.maxFileBytes);
  }
  // ripgrep's syntax, not JavaScript's, so a pattern means what it means in search_dir.
  if (regex) return ripgrepFile(runtime, context, relative, searchTerm, true);
  const term = `"${searchTerm}" in ${relative}`;
  const matches: string[] = [];
  read.file.lines.forEach((line, index) => {
    if (line.includes(searchTerm)) matches.push(`Line ${index + 1}:${line}`);
  });
  return matchFrame(term, matches, cap, "lines");
}
