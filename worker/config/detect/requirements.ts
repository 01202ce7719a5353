/**
 * Which toolchain version each detected part declares, read from the files developers keep for it
 * (package.json's engines, .nvmrc, .node-version, .tool-versions, requires-python, .python-version,
 * go.mod's go and toolchain lines, rust-toolchain(.toml), Cargo.toml's rust-version, Maven's and
 * Gradle's Java levels), and whether a version an image has meets it. Pure: the texts come from the
 * caller, like the rest of detection. Ranges are matched by the ecosystems' own rules (npm's semver,
 * PEP 440), never by hand.
 */
import * as pep440 from "@renovatebot/pep440";
import semver from "semver";
import { parse as parseToml } from "smol-toml";
import type { Toolchain } from "../../../src/shared/contracts.js";
import type { Ecosystem, PartFiles, ToolchainRequirement } from "./ecosystem-rule.js";

export type { ToolchainRequirement } from "./ecosystem-rule.js";

/** The toolchain each ecosystem runs on (make needs none of them). */
const TOOLCHAIN_OF: Partial<Record<Ecosystem, Toolchain>> = {
  node: "node",
  python: "python",
  go: "go",
  rust: "rust",
  ruby: "ruby",
  java: "java",
};

/** The files, relative to the part, whose text says which version it needs. */
const VERSION_FILES: Partial<Record<Ecosystem, readonly string[]>> = {
  node: ["package.json", ".nvmrc", ".node-version", ".tool-versions"],
  python: ["pyproject.toml", "setup.cfg", ".python-version", ".tool-versions"],
  go: ["go.mod", ".tool-versions"],
  rust: ["rust-toolchain.toml", "rust-toolchain", "Cargo.toml", ".tool-versions"],
  java: ["pom.xml", "build.gradle", "build.gradle.kts", ".tool-versions"],
};

/** The version files of a part of `ecosystem` that it has. */
export function versionFiles(ecosystem: Ecosystem, names: ReadonlySet<string>): string[] {
  return (VERSION_FILES[ecosystem] ?? []).filter((name) => names.has(name));
}

/** Node's long-term-support code names (`lts/iron` in .nvmrc), by major version. */
const NODE_LTS: Record<string, number> = {
  argon: 4,
  boron: 6,
  carbon: 8,
  dubnium: 10,
  erbium: 12,
  fermium: 14,
  gallium: 16,
  hydrogen: 18,
  iron: 20,
  jod: 22,
  krypton: 24,
};

/** The first line of a version file that is not blank or a comment, with its 1-based number. */
function firstLine(text: string): { line: string; number: number } | null {
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/#.*/, "").trim();
    if (line) return { line, number: i + 1 };
  }
  return null;
}

/** The line number of the first line matching `pattern`, for the source. */
function lineOf(text: string, pattern: RegExp): number | null {
  const index = text.split(/\r?\n/).findIndex((line) => pattern.test(line));
  return index < 0 ? null : index + 1;
}

const at = (file: string, line: number | null) => (line === null ? file : `${file} line ${line}`);

/**
 * A version as a version manager reads it (.nvmrc `20`, `v20.19.0`, `lts/iron`): the versions it
 * allows as an npm range. A full version pins the major and asks for that version or a later one of
 * it, as the image cannot install one exact patch release; null for what names no version (`node`,
 * `lts/*`, `system`).
 */
function nodeVersionRange(written: string): string | null {
  const lts = /^lts\/([a-z]+)$/i.exec(written)?.[1]?.toLowerCase();
  if (lts !== undefined) return NODE_LTS[lts] === undefined ? null : `${NODE_LTS[lts]}.x`;
  const version = written.replace(/^v/, "");
  if (!/^\d+(\.\d+){0,2}$/.test(version)) return null;
  return version.split(".").length === 3 ? `^${version}` : `${version}.x`;
}

/** A major.minor(.patch) of Python as a PEP 440 specifier: that minor release, any patch at or above. */
function pythonVersionSpecifier(written: string): string | null {
  const match = /^(?:python-?)?(\d+)\.(\d+)(?:\.(\d+))?/.exec(written);
  if (!match) return null;
  const [, major, minor, patch] = match;
  return patch === undefined ? `==${major}.${minor}.*` : `>=${major}.${minor}.${patch},==${major}.${minor}.*`;
}

/** A Go, Rust or Java version (`1.22`, `1.75.0`, `go1.23.4`, `17`) as the lowest it allows. */
function atLeast(written: string): string | null {
  const version = semver.coerce(written.replace(/^go/, ""));
  return version ? `>=${version.version}` : null;
}

/** `.tool-versions` (asdf, mise): `nodejs 20.11.0`, `python 3.12.1`, `golang 1.22.0`, `rust 1.75.0`, `java temurin-21.0.1`. */
function toolVersion(text: string, tools: readonly string[]): { version: string; line: number } | null {
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const [tool, version] = raw.replace(/#.*/, "").trim().split(/\s+/);
    if (tool && version && tools.includes(tool)) return { version, line: i + 1 };
  }
  return null;
}

type Read = (part: PartFiles) => ToolchainRequirement[];

function requirement(
  toolchain: Toolchain,
  range: string | null,
  source: string,
  declared: string,
): ToolchainRequirement[] {
  return range === null ? [] : [{ toolchain, range, source, declared }];
}

/** package.json's engines.node, .nvmrc, .node-version, .tool-versions' nodejs. */
const readNode: Read = ({ text }) => {
  const found: ToolchainRequirement[] = [];
  const pkg = text("package.json");
  if (pkg !== undefined) {
    let engines: unknown;
    try {
      engines = (JSON.parse(pkg) as { engines?: { node?: unknown } }).engines?.node;
    } catch {
      engines = undefined; // an unreadable package.json declares nothing (its test script is not found either)
    }
    if (typeof engines === "string" && semver.validRange(engines) !== null && engines.trim() !== "*")
      found.push(
        ...requirement(
          "node",
          engines,
          `${at("package.json", lineOf(pkg, /"node"\s*:/))} (\`engines.node\`)`,
          engines,
        ),
      );
  }
  for (const file of [".nvmrc", ".node-version"]) {
    const content = text(file);
    const first = content === undefined ? null : firstLine(content);
    if (first)
      found.push(...requirement("node", nodeVersionRange(first.line), at(file, first.number), first.line));
  }
  const asdf = text(".tool-versions");
  const tool = asdf === undefined ? null : toolVersion(asdf, ["nodejs", "node"]);
  if (tool)
    found.push(
      ...requirement("node", nodeVersionRange(tool.version), at(".tool-versions", tool.line), tool.version),
    );
  return found;
};

/** pyproject's requires-python, setup.cfg's python_requires, .python-version, .tool-versions' python. */
const readPython: Read = ({ text }) => {
  const found: ToolchainRequirement[] = [];
  const pyproject = text("pyproject.toml");
  if (pyproject !== undefined) {
    let requires: unknown;
    try {
      requires = (parseToml(pyproject) as { project?: { "requires-python"?: unknown } }).project?.[
        "requires-python"
      ];
    } catch {
      requires = undefined; // invalid TOML: pip says so in setup
    }
    if (typeof requires === "string" && pep440.validRange(requires))
      found.push(
        ...requirement(
          "python",
          requires,
          `${at("pyproject.toml", lineOf(pyproject, /^\s*requires-python\s*=/))} (\`requires-python\`)`,
          requires,
        ),
      );
  }
  const cfg = text("setup.cfg");
  const cfgLine = cfg === undefined ? null : lineOf(cfg, /^\s*python_requires\s*=/);
  if (cfg !== undefined && cfgLine !== null) {
    const requires =
      cfg
        .split(/\r?\n/)
        [cfgLine - 1]?.replace(/^\s*python_requires\s*=/, "")
        .trim() ?? "";
    if (pep440.validRange(requires))
      found.push(
        ...requirement("python", requires, `${at("setup.cfg", cfgLine)} (\`python_requires\`)`, requires),
      );
  }
  const pinned = text(".python-version");
  const first = pinned === undefined ? null : firstLine(pinned);
  if (first)
    found.push(
      ...requirement(
        "python",
        pythonVersionSpecifier(first.line),
        at(".python-version", first.number),
        first.line,
      ),
    );
  const asdf = text(".tool-versions");
  const tool = asdf === undefined ? null : toolVersion(asdf, ["python"]);
  if (tool)
    found.push(
      ...requirement(
        "python",
        pythonVersionSpecifier(tool.version),
        at(".tool-versions", tool.line),
        tool.version,
      ),
    );
  return found;
};

/** go.mod's `go` line and its `toolchain` line: the higher of them is what `go` itself asks for. */
const readGo: Read = ({ text }) => {
  const found: ToolchainRequirement[] = [];
  const mod = text("go.mod");
  if (mod !== undefined) {
    for (const directive of ["go", "toolchain"]) {
      const line = lineOf(mod, new RegExp(`^${directive}\\s+\\S`));
      const written = line === null ? undefined : mod.split(/\r?\n/)[line - 1]?.trim();
      const version = written?.split(/\s+/)[1];
      if (written && version)
        found.push(
          // Said as "go 1.25.0" for both directives (`toolchain go1.25.0` names it with its prefix).
          ...requirement(
            "go",
            atLeast(version),
            `${at("go.mod", line)} (\`${directive}\`)`,
            version.replace(/^go/, ""),
          ),
        );
    }
  }
  const asdf = text(".tool-versions");
  const tool = asdf === undefined ? null : toolVersion(asdf, ["golang", "go"]);
  if (tool)
    found.push(...requirement("go", atLeast(tool.version), at(".tool-versions", tool.line), tool.version));
  return found;
};

/** rust-toolchain.toml's channel (or the plain rust-toolchain file), Cargo.toml's rust-version. */
const readRust: Read = ({ text }) => {
  const found: ToolchainRequirement[] = [];
  // A named channel (stable, nightly-2024-01-01) pins no release number the image could be checked against.
  const numbered = (channel: string) => (/^\d+\.\d+/.test(channel) ? atLeast(channel) : null);
  const toml = text("rust-toolchain.toml") ?? text("rust-toolchain");
  const file = text("rust-toolchain.toml") !== undefined ? "rust-toolchain.toml" : "rust-toolchain";
  if (toml !== undefined) {
    let channel: unknown;
    try {
      channel = (parseToml(toml) as { toolchain?: { channel?: unknown } }).toolchain?.channel;
    } catch {
      channel = firstLine(toml)?.line; // the legacy file holds the channel alone
    }
    if (typeof channel === "string")
      found.push(
        ...requirement("rust", numbered(channel), at(file, lineOf(toml, /channel|^\s*\d/)), channel),
      );
  }
  const cargo = text("Cargo.toml");
  if (cargo !== undefined) {
    let version: unknown;
    try {
      const manifest = parseToml(cargo) as {
        package?: { "rust-version"?: unknown };
        workspace?: { package?: { "rust-version"?: unknown } };
      };
      version = manifest.package?.["rust-version"] ?? manifest.workspace?.package?.["rust-version"];
    } catch {
      version = undefined; // invalid TOML: cargo says so in setup
    }
    if (typeof version === "string")
      found.push(
        ...requirement(
          "rust",
          atLeast(version),
          `${at("Cargo.toml", lineOf(cargo, /^\s*rust-version\s*=/))} (\`rust-version\`)`,
          version,
        ),
      );
  }
  const asdf = text(".tool-versions");
  const tool = asdf === undefined ? null : toolVersion(asdf, ["rust"]);
  if (tool)
    found.push(...requirement("rust", numbered(tool.version), at(".tool-versions", tool.line), tool.version));
  return found;
};

/** A Java level as written (`1.8`, `11`, `17`): its major version, the JDK that compiles it at least. */
function javaLevel(written: string): string | null {
  const level = written.trim().replace(/^1\.(?=\d$)/, "");
  return /^\d+$/.test(level) ? `>=${level}.0.0` : null;
}

/** Maven's release/source/target properties and compiler configuration; Gradle's toolchain and compatibility. */
const readJava: Read = ({ text }) => {
  const found: ToolchainRequirement[] = [];
  const pom = text("pom.xml");
  if (pom !== undefined) {
    // The highest level the POM names is the JDK it needs (release, source and target usually agree).
    const pattern =
      /<(maven\.compiler\.release|maven\.compiler\.source|maven\.compiler\.target|java\.version|release|source|target)>\s*([\d.]+)\s*<\//g;
    const levels = [...pom.matchAll(pattern)].flatMap((m) => {
      const range = javaLevel(m[2] ?? "");
      return range ? [{ tag: m[1] ?? "", written: m[2] ?? "", range, index: m.index }] : [];
    });
    const highest = levels.sort((a, b) =>
      semver.compare(semver.minVersion(b.range) ?? "0.0.0", semver.minVersion(a.range) ?? "0.0.0"),
    )[0];
    if (highest) {
      const line = pom.slice(0, highest.index).split(/\r?\n/).length;
      found.push(
        ...requirement("java", highest.range, `${at("pom.xml", line)} (\`${highest.tag}\`)`, highest.written),
      );
    }
  }
  for (const file of ["build.gradle", "build.gradle.kts"]) {
    const gradle = text(file);
    if (gradle === undefined) continue;
    const toolchain = /languageVersion(?:\.set\(|\s*=\s*)\s*JavaLanguageVersion\.of\(\s*(\d+)\s*\)/.exec(
      gradle,
    );
    const compatibility =
      /(?:sourceCompatibility|targetCompatibility)\s*=\s*(?:JavaVersion\.VERSION_(\d+(?:_\d+)?)|['"]?([\d.]+)['"]?)/.exec(
        gradle,
      );
    const match = toolchain ?? compatibility;
    const written = toolchain?.[1] ?? compatibility?.[1]?.replace("_", ".") ?? compatibility?.[2];
    if (match && written) {
      const line = gradle.slice(0, match.index).split(/\r?\n/).length;
      found.push(...requirement("java", javaLevel(written), at(file, line), match[0]));
    }
  }
  const asdf = text(".tool-versions");
  const tool = asdf === undefined ? null : toolVersion(asdf, ["java"]);
  const major = tool ? /(\d+)/.exec(tool.version.replace(/^[a-z]+-/i, ""))?.[1] : undefined;
  if (tool && major)
    found.push(...requirement("java", javaLevel(major), at(".tool-versions", tool.line), tool.version));
  return found;
};

const READERS: Partial<Record<Ecosystem, Read>> = {
  node: readNode,
  python: readPython,
  go: readGo,
  rust: readRust,
  java: readJava,
};

/**
 * What a part of `ecosystem` needs: its toolchain (any version) and each version its files declare.
 * Sources are relative to the part; the caller adds its directory.
 */
export function partRequirements(ecosystem: Ecosystem, part: PartFiles): ToolchainRequirement[] {
  const toolchain = TOOLCHAIN_OF[ecosystem];
  if (!toolchain) return [];
  const declared = READERS[ecosystem]?.(part) ?? [];
  return declared.length > 0 ? declared : [{ toolchain, range: null, source: null, declared: null }];
}

/** Whether `version` (as an image reports it: `20.19.2`, `3.13.5`, `1.24.4`, `21.0.13`) meets the requirement. */
export function versionMeets(requirement: ToolchainRequirement, version: string): boolean {
  if (requirement.range === null) return true;
  if (requirement.toolchain === "python") return pep440.satisfies(version, requirement.range);
  const coerced = semver.coerce(version);
  return coerced !== null && semver.satisfies(coerced, requirement.range);
}

/** The requirement for people: `node >=20.19 (package.json line 5 (\`engines.node\`))`. */
export function describeRequirement(requirement: ToolchainRequirement, dir = ""): string {
  if (requirement.declared === null) return requirement.toolchain;
  const where = requirement.source === null ? "" : ` (${dir === "" ? "" : `${dir}/`}${requirement.source})`;
  return `${requirement.toolchain} ${requirement.declared}${where}`;
}
