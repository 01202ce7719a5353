/**
 * The requirements of a Python project's optional installs, one by one, for the fallback that installs
 * them each on its own (optional-install.ts): the lines of a requirements file, the list of an extra in
 * pyproject.toml or setup.cfg. Read from the text only, as the rest of detection.
 */
import { parse as parseToml } from "smol-toml";

/** One requirement and the pip arguments that install it alone (shell words, quoted where needed). */
export interface Requirement {
  /** As the file or the extra writes it. */
  text: string;
  args: string;
}

/** Options of a requirements file that hold for every line of it (where packages come from). */
const FILE_OPTIONS = /^(-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host|--pre|--no-index)\b/;
/** Options of a line that name something to install: another file, a constraint, an editable path. */
const LINE_OPTIONS = /^(-r|--requirement|-c|--constraint|-e|--editable)\b/;

/** A word as the shell reads it: plain when it holds nothing the shell would act on. */
export function shellWord(word: string): string {
  return /^[\w./,:=+@%-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** A line's shell words; an option's `--name=value` as two. */
const words = (line: string) =>
  line
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((word) =>
      /^--[\w-]+=/.test(word)
        ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]
        : [word],
    );

/**
 * The lines of a requirements file, each with what installs it alone: continuation lines joined,
 * comments dropped, a file-wide option (an index, `--pre`) added to every line, per-line hashes
 * dropped (pip wants all of a file's requirements hashed or none).
 */
export function requirementsFileLines(text: string): Requirement[] {
  const lines = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
  const shared = lines.filter((line) => FILE_OPTIONS.test(line)).flatMap(words);
  const sharedArgs = shared.map(shellWord);
  const found: Requirement[] = [];
  for (const line of lines) {
    if (FILE_OPTIONS.test(line)) continue;
    let args: string[];
    if (LINE_OPTIONS.test(line)) args = words(line).map(shellWord);
    else if (line.startsWith("-")) continue;
    else args = [shellWord(line.split(/\s+--?[a-z]/)[0]?.trim() ?? line)];
    found.push({ text: line, args: [...sharedArgs, ...args].join(" ") });
  }
  return found;
}

/** PEP 503's normal form of a project name: `My_Pkg` and `my-pkg` are one project. */
const normalName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");

/** The project's name, and each extra with its requirements, from pyproject.toml's `[project]` or setup.cfg. */
interface ProjectExtras {
  name: string | null;
  extras: Map<string, string[]>;
}

export function projectExtras(pyproject: string | undefined, setupCfg: string | undefined): ProjectExtras {
  const extras = new Map<string, string[]>();
  let name: string | null = null;
  const project = pyprojectTable(pyproject);
  if (project) {
    if (typeof project.name === "string") name = project.name;
    const optional = project["optional-dependencies"];
    if (optional && typeof optional === "object" && !Array.isArray(optional)) {
      for (const [extra, list] of Object.entries(optional)) {
        if (Array.isArray(list))
          extras.set(
            extra,
            list.filter((item) => typeof item === "string"),
          );
      }
    }
  }
  if (setupCfg !== undefined) {
    name ??= iniSection(setupCfg, "metadata").get("name")?.trim() || null;
    for (const [extra, value] of iniSection(setupCfg, "options.extras_require")) {
      if (!extras.has(extra)) extras.set(extra, setupCfgList(value));
    }
  }
  return { name, extras };
}

/**
 * The requirements an extra installs: its list, an entry naming the project itself (`pkg[test,lint]`)
 * replaced by those extras' lists, as pip would (installing `pkg` from the index would replace the
 * checkout's own code).
 */
export function extraRequirements(project: ProjectExtras, extra: string): Requirement[] {
  const seen = new Set<string>();
  const found: string[] = [];
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const item of project.extras.get(name) ?? []) {
      const self = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*\[([^\]]*)\]\s*$/.exec(item);
      if (
        self?.[1] &&
        self[2] !== undefined &&
        project.name &&
        normalName(self[1]) === normalName(project.name)
      ) {
        for (const inner of self[2].split(",")) visit(inner.trim());
      } else if (!found.includes(item)) found.push(item);
    }
  };
  visit(extra);
  return found.map((text) => ({ text, args: shellWord(text) }));
}

function pyprojectTable(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    const project = parseToml(text).project;
    return project && typeof project === "object" && !Array.isArray(project)
      ? (project as Record<string, unknown>)
      : null;
  } catch {
    // A pyproject.toml TOML cannot read is the project's to fix; detection works without its extras.
    return null;
  }
}

/** An INI section's keys and their values, continuation lines (indented) included. */
function iniSection(text: string, header: string): Map<string, string> {
  const values = new Map<string, string>();
  let inside = false;
  let key: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith("[")) {
      inside = trimmed === `[${header}]`;
      key = null;
      continue;
    }
    if (!inside || trimmed === "" || /^[#;]/.test(trimmed)) continue;
    const entry = /^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$/.exec(line);
    if (entry?.[1] !== undefined) {
      key = entry[1];
      values.set(key, entry[2] ?? "");
    } else if (key !== null && /^\s/.test(line)) {
      values.set(key, `${values.get(key)}\n${trimmed}`);
    }
  }
  return values;
}

/** setuptools' list of an extra: one per continuation line, or `;`-separated on the key's own line. */
function setupCfgList(value: string): string[] {
  const [first = "", ...rest] = value.split("\n");
  return [...first.split(";"), ...rest].map((item) => item.trim()).filter(Boolean);
}
