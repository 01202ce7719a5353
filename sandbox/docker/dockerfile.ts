/**
 * The one parser of a repository's Dockerfile (a devcontainer's build.dockerfile). The worker checks
 * the file with it before anything runs (worker/run/configure/devcontainer-build.ts) and the provider
 * executes what it returns, step by step (sandbox/docker/repo-build.ts): the engine never receives the
 * Dockerfile's text, so no second parser (the engine's, with its escape directive, exec-form ADD or
 * ONBUILD) can read it differently from the check. What this parser does not understand is refused,
 * naming the line and how to fix it.
 */
import { ConfigError } from "../../src/shared/errors.js";

/** One instruction as written: its keyword, its `--name=value` flags and its arguments. */
export interface DockerfileInstruction {
  line: number;
  keyword: string;
  flags: Record<string, string>;
  /** The arguments' text (continuations joined), for the shell form and for words(). */
  args: string;
  /** The exec (JSON) form's strings, when the arguments are one. */
  json: string[] | null;
}

interface DockerfileStage {
  line: number;
  /** An allowed image, or the index of an earlier stage it starts from. */
  from: { image: string } | { stage: number };
  name: string | undefined;
  steps: DockerfileInstruction[];
}

interface ParsedDockerfile {
  /** The escape character (`\`, or `` ` `` by the escape directive). */
  escapeChar: string;
  stages: DockerfileStage[];
  /** The images the stages start from, each allowed. */
  bases: string[];
}

const HINT =
  "Keep the Dockerfile to images the operator allows (repository.images), files of the repository and the instructions FROM, RUN, COPY, ADD (local files), ENV, ARG, LABEL, WORKDIR, USER, CMD, ENTRYPOINT, SHELL, EXPOSE, VOLUME, STOPSIGNAL; or set `sandbox.image` in .github/agent-fix.yml.";

function refuseDockerfile(where: string, line: number, message: string, fix?: string): ConfigError {
  return new ConfigError(`${where}:${line}: ${message}`, {
    code: "repo_image_not_allowed",
    hint: fix ? `${fix}\n${HINT}` : HINT,
  });
}

/** Names the worker gives its own images: a Dockerfile never starts from them, whatever the operator allows. */
const WORKER_IMAGE_NAMES =
  /^(agent-fix-build|agent-fix-repo|agent-fix-kept[^:]*|agent-fix-derived[^:]*)(:|$)/;

const CONFIG_KEYWORDS = new Set([
  "ENV",
  "ARG",
  "LABEL",
  "WORKDIR",
  "USER",
  "CMD",
  "ENTRYPOINT",
  "SHELL",
  "EXPOSE",
  "VOLUME",
  "STOPSIGNAL",
  "HEALTHCHECK",
  "MAINTAINER",
]);

/** Directives at the top (`# escape=`, `# syntax=`); they end at the first other line. */
function directives(lines: string[], where: string): { escapeChar: string; first: number } {
  let escapeChar = "\\";
  let index = 0;
  for (; index < lines.length; index++) {
    const m = /^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$/.exec(lines[index] ?? "");
    if (!m) break;
    const name = m[1]!.toLowerCase();
    if (name === "escape") {
      if (m[2] !== "\\" && m[2] !== "`")
        throw refuseDockerfile(where, index + 1, `the escape directive ${m[2]} is neither \\ nor \``);
      escapeChar = m[2];
    }
    // `syntax` names a BuildKit frontend: nothing runs it here, the worker executes the file itself.
  }
  return { escapeChar, first: index };
}

/** The logical lines: continuations (the escape character at a line's end) joined, comments dropped. */
function logicalLines(
  text: string,
  where: string,
): { escapeChar: string; lines: { line: number; text: string }[] } {
  const physical = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const { escapeChar, first } = directives(physical, where);
  const continued = new RegExp(`${escapeChar === "\\" ? "\\\\" : "`"}[ \\t]*$`);
  const lines: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | null = null;
  for (let i = first; i < physical.length; i++) {
    const raw = physical[i] ?? "";
    const trimmed = raw.trim();
    // A comment line, also inside a continuation (the engine drops those too).
    if (trimmed.startsWith("#")) continue;
    if (current === null && trimmed === "") continue;
    const more = continued.test(raw);
    const part = more ? raw.replace(continued, "") : raw;
    if (current === null) current = { line: i + 1, text: part.trimStart() };
    else current.text += part;
    if (!more) {
      lines.push(current);
      current = null;
    }
  }
  if (current !== null) lines.push(current);
  return { escapeChar, lines };
}

/** The exec form: a JSON array of strings, else null (the shell form). */
function execForm(args: string): string[] | null {
  if (!args.startsWith("[")) return null;
  try {
    const value: unknown = JSON.parse(args);
    return Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : null;
  } catch {
    return null;
  }
}

function instruction(line: number, text: string): DockerfileInstruction {
  const m = /^(\S+)\s*([\s\S]*)$/.exec(text.trim());
  const keyword = (m?.[1] ?? "").toUpperCase();
  let args = (m?.[2] ?? "").trim();
  const flags: Record<string, string> = {};
  for (;;) {
    const flag = /^--([a-zA-Z][a-zA-Z0-9-]*)(?:=(\S*))?\s*/.exec(args);
    if (!flag || !["FROM", "RUN", "COPY", "ADD", "HEALTHCHECK"].includes(keyword)) break;
    flags[flag[1]!.toLowerCase()] = flag[2] ?? "";
    args = args.slice(flag[0].length);
  }
  return { line, keyword, flags, args, json: execForm(args) };
}

/**
 * The words of an instruction's arguments as the shell form reads them: quotes removed, the escape
 * character honoured, `$NAME`, `${NAME}`, `${NAME:-word}` and `${NAME:+word}` replaced from `vars`.
 */
export function words(args: string, escapeChar: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  const variable = (): string => {
    // At a `$`: returns its value and moves past the reference.
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}/.exec(args.slice(i));
    if (braced) {
      i += braced[0].length;
      const value = vars[braced[1]!];
      if (braced[2] === ":-") return value ? value : (braced[3] ?? "");
      if (braced[2] === ":+") return value ? (braced[3] ?? "") : "";
      return value ?? "";
    }
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(args.slice(i));
    if (plain) {
      i += plain[0].length;
      return vars[plain[1]!] ?? "";
    }
    i += 1;
    return "$";
  };
  while (i < args.length) {
    const c = args[i]!;
    if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = "";
      inWord = false;
      i += 1;
      continue;
    }
    inWord = true;
    if (c === escapeChar && i + 1 < args.length) {
      word += args[i + 1];
      i += 2;
    } else if (c === "'") {
      const end = args.indexOf("'", i + 1);
      word += args.slice(i + 1, end === -1 ? args.length : end);
      i = end === -1 ? args.length : end + 1;
    } else if (c === '"') {
      i += 1;
      while (i < args.length && args[i] !== '"') {
        if (args[i] === escapeChar && i + 1 < args.length && ['"', "$", escapeChar].includes(args[i + 1]!)) {
          word += args[i + 1];
          i += 2;
        } else if (args[i] === "$") word += variable();
        else word += args[i++];
      }
      i += 1;
    } else if (c === "$") word += variable();
    else {
      word += c;
      i += 1;
    }
  }
  if (inWord) out.push(word);
  return out;
}

/** `ENV a=1 b=2` / `LABEL a=1`, or the old `ENV a 1`: the pairs, values substituted. */
export function pairs(
  step: DockerfileInstruction,
  escapeChar: string,
  vars: Record<string, string>,
): [string, string][] {
  const all = words(step.args, escapeChar, vars);
  if (all.length > 0 && !all[0]!.includes("=")) {
    const rest = words(step.args.replace(/^\S+\s*/, ""), escapeChar, vars);
    return [[all[0]!, rest.join(" ")]];
  }
  return all.map((w) => {
    const at = w.indexOf("=");
    return [w.slice(0, at), w.slice(at + 1)];
  });
}

const URL_OR_GIT = /^[a-z][a-z0-9+.-]*:\/\/|^git@|^[a-z][a-z0-9+.-]*::/i;
const ARCHIVE = /\.(tar|tgz|tar\.gz|tar\.bz2|tbz2?|tar\.xz|txz|tar\.zst)$/i;

/** The sources and destination of a COPY or ADD (last word the destination). */
export function copyPaths(step: DockerfileInstruction, escapeChar: string, vars: Record<string, string>) {
  const all = step.json ?? words(step.args, escapeChar, vars);
  return { sources: all.slice(0, -1), dest: all[all.length - 1] ?? "" };
}

/**
 * Parses and checks a Dockerfile: every stage starts from an allowed image (named literally) or an
 * earlier stage, nothing is fetched, `--from` names only its own stages, and every instruction is one
 * the worker executes. Throws a ConfigError naming the line otherwise.
 */
export function parseDockerfile(
  text: string,
  where: string,
  allowed: (image: string) => boolean,
): ParsedDockerfile {
  const { escapeChar, lines } = logicalLines(text, where);
  const stages: DockerfileStage[] = [];
  const bases: string[] = [];
  const stageIndex = (name: string): number | undefined => {
    if (/^\d+$/.test(name)) return Number(name) < stages.length ? Number(name) : undefined;
    const i = stages.findIndex((s) => s.name === name.toLowerCase());
    return i === -1 ? undefined : i;
  };
  for (const { line, text: logical } of lines) {
    const step = instruction(line, logical);
    const refuse = (message: string, fix?: string) => refuseDockerfile(where, line, message, fix);
    const shown = logical.length > 100 ? `${logical.slice(0, 100)}…` : logical;
    if (step.keyword === "FROM") {
      if (Object.keys(step.flags).length > 0)
        throw refuse(
          `${shown}: FROM takes no flags here`,
          "Remove --platform: the worker builds for its own platform.",
        );
      const [image = "", as, name, ...extra] = step.args.split(/\s+/);
      if (extra.length > 0 || (as !== undefined && (as.toUpperCase() !== "AS" || !name)))
        throw refuse(`${shown}: expected FROM image [AS name]`);
      const stage = stageIndex(image);
      if (stage !== undefined && !/^\d+$/.test(image)) {
        stages.push({ line, from: { stage }, name: name?.toLowerCase(), steps: [] });
        continue;
      }
      if (image.includes("$"))
        throw refuse(`FROM ${image} names its image with a variable`, "Name the image literally.");
      if (image === "scratch")
        throw refuse(
          "FROM scratch is not supported: the worker runs each step in a container of the image",
          "Start from an allowed image.",
        );
      if (WORKER_IMAGE_NAMES.test(image) || !allowed(image))
        throw refuse(`the Dockerfile builds on ${image}, which is not one of the images the operator allows`);
      bases.push(image);
      stages.push({ line, from: { image }, name: name?.toLowerCase(), steps: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    // An ARG before the first FROM only serves FROM lines, whose images are named literally anyway.
    if (!stage && step.keyword === "ARG") continue;
    if (!stage) throw refuse(`${shown}: the first instruction must be FROM`);
    switch (step.keyword) {
      case "ONBUILD":
        throw refuse(
          `${shown}: ONBUILD is not supported (it would run in a later build of another Dockerfile)`,
          "Remove the ONBUILD instruction.",
        );
      case "RUN":
        if (Object.keys(step.flags).length > 0)
          throw refuse(
            `${shown}: RUN --${Object.keys(step.flags)[0]} is not supported`,
            "Remove the flag: every RUN has no network and no mounts.",
          );
        break;
      case "COPY":
      case "ADD": {
        for (const flag of Object.keys(step.flags)) {
          if (flag === "from") {
            if (step.keyword === "ADD" || stageIndex(step.flags.from!) === undefined)
              throw refuse(
                `${shown}: --from=${step.flags.from} is not a stage defined above`,
                "COPY --from may name only a stage of this Dockerfile (FROM … AS name); copy from an image by starting a stage FROM it.",
              );
          } else if (flag === "chown") {
            if (!/^\d+(:\d+)?$/.test(step.flags.chown!))
              throw refuse(
                `${shown}: --chown=${step.flags.chown} is not a numeric uid[:gid]`,
                "Write the numeric ids (e.g. --chown=1000:1000), or RUN chown after the COPY.",
              );
          } else throw refuse(`${shown}: ${step.keyword} --${flag} is not supported`, "Remove the flag.");
        }
        const { sources } = copyPaths(step, escapeChar, {});
        if (sources.length === 0) throw refuse(`${shown}: ${step.keyword} needs a source and a destination`);
        for (const source of sources) {
          if (URL_OR_GIT.test(source))
            throw refuse(
              `${shown}: ${source} is fetched from the network, which the build has not`,
              "Commit the file to the repository and COPY it.",
            );
          if (step.keyword === "ADD" && ARCHIVE.test(source))
            throw refuse(
              `${shown}: ADD of an archive (${source}) is not supported`,
              "COPY the archive and RUN tar to unpack it.",
            );
        }
        break;
      }
      default:
        if (!CONFIG_KEYWORDS.has(step.keyword))
          throw refuse(`${shown}: ${step.keyword || "the line"} is not an instruction the worker executes`);
    }
    stage.steps.push(step);
  }
  if (stages.length === 0) throw refuseDockerfile(where, 1, "the Dockerfile has no FROM");
  return { escapeChar, stages, bases };
}
