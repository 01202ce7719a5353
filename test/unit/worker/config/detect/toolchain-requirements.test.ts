/**
 * The toolchain versions repositories declare, read from declarations as real projects write them
 * (vitest's and vite's engines, pyproject's requires-python, go.mod's go and toolchain lines, Rust's
 * channel and rust-version, Maven's and Gradle's Java levels), and whether an image's version meets them.
 */
import { describe, expect, it } from "vitest";
import type { Ecosystem } from "../../../../../worker/config/detect/ecosystem-rule.js";
import { detectCommands, filesToRead } from "../../../../../worker/config/detect/index.js";
import {
  partRequirements,
  type ToolchainRequirement,
  versionMeets,
} from "../../../../../worker/config/detect/requirements.js";

/** A part made of these files (their names and texts). */
function requirementsOf(ecosystem: Ecosystem, files: Record<string, string>): ToolchainRequirement[] {
  return partRequirements(ecosystem, {
    names: new Set(Object.keys(files)),
    text: (name) => files[name],
  });
}

const meets = (requirement: ToolchainRequirement | undefined, version: string) =>
  requirement !== undefined && versionMeets(requirement, version);

describe("Node", () => {
  it("package.json's engines.node as vitest 4 writes it: the slim image's 18 fails, the rich image's 20.19 meets it", () => {
    const pkg = `{\n  "name": "x",\n  "type": "module",\n  "engines": {\n    "node": "^20.19.0 || >=22.12.0"\n  }\n}\n`;
    const [engines] = requirementsOf("node", { "package.json": pkg });
    expect(engines).toEqual({
      toolchain: "node",
      range: "^20.19.0 || >=22.12.0",
      source: "package.json line 5 (`engines.node`)",
      declared: "^20.19.0 || >=22.12.0",
    });
    expect(meets(engines, "18.20.4")).toBe(false);
    expect(meets(engines, "20.19.2")).toBe(true);
    expect(meets(engines, "22.11.0")).toBe(false);
    expect(meets(engines, "24.1.0")).toBe(true);
  });
  it(".nvmrc and .node-version as version managers read them: a major, a full version, an LTS name, a comment", () => {
    const nvmrc = (text: string) => requirementsOf("node", { "package.json": "{}", ".nvmrc": text })[0];
    expect(nvmrc("20\n")?.range).toBe("20.x");
    expect(meets(nvmrc("22"), "20.19.2")).toBe(false);
    expect(nvmrc("v20.19.0")?.range).toBe("^20.19.0");
    expect(meets(nvmrc("v20.19.0"), "20.19.2")).toBe(true);
    expect(meets(nvmrc("v20.19.0"), "20.18.0")).toBe(false);
    expect(nvmrc("lts/iron")?.range).toBe("20.x");
    expect(nvmrc("# pinned for CI\n22.12\n")).toMatchObject({ range: "22.12.x", source: ".nvmrc line 2" });
    // `lts/*` and `node` name no version: only that Node is there.
    expect(nvmrc("lts/*")).toEqual({ toolchain: "node", range: null, source: null, declared: null });
    const both = requirementsOf("node", { "package.json": "{}", ".node-version": "22.12.0\n" });
    expect(both[0]).toMatchObject({ source: ".node-version line 1", range: "^22.12.0" });
  });
  it(".tool-versions' nodejs line; engines of `*` or an invalid range declare nothing", () => {
    const asdf = requirementsOf("node", {
      "package.json": "{}",
      ".tool-versions": "python 3.12.1\nnodejs 20.11.0\n",
    });
    expect(asdf).toEqual([
      { toolchain: "node", range: "^20.11.0", source: ".tool-versions line 2", declared: "20.11.0" },
    ]);
    for (const engines of ['"*"', '"not a range"', "20"])
      expect(
        requirementsOf("node", { "package.json": `{"engines":{"node":${engines}}}` })[0]?.range,
      ).toBeNull();
  });
});

describe("Python", () => {
  it("pyproject's requires-python as PEP 440: >=3.12 refuses 3.11, a compatible-release and an upper bound", () => {
    const pyproject = `[build-system]\nrequires = ["hatchling"]\n\n[project]\nname = "x"\nrequires-python = ">=3.12"\n`;
    const [requires] = requirementsOf("python", { "pyproject.toml": pyproject });
    expect(requires).toMatchObject({ range: ">=3.12", source: "pyproject.toml line 6 (`requires-python`)" });
    expect(meets(requires, "3.11.2")).toBe(false);
    expect(meets(requires, "3.13.5")).toBe(true);
    const capped = requirementsOf("python", {
      "pyproject.toml": '[project]\nrequires-python = ">=3.9,<3.13"\n',
    })[0];
    expect(meets(capped, "3.13.5")).toBe(false);
    expect(meets(capped, "3.11.2")).toBe(true);
    expect(
      meets(
        requirementsOf("python", { "pyproject.toml": '[project]\nrequires-python = "~=3.10"\n' })[0],
        "3.13.5",
      ),
    ).toBe(true);
  });
  it("setup.cfg's python_requires, .python-version (that minor release), and a project that declares none", () => {
    const cfg = requirementsOf("python", {
      "setup.cfg": "[options]\npackages = find:\npython_requires = >=3.8\n",
    });
    expect(cfg[0]).toMatchObject({ range: ">=3.8", source: "setup.cfg line 3 (`python_requires`)" });
    const pinned = requirementsOf("python", { "requirements.txt": "", ".python-version": "3.12.4\n" })[0];
    expect(meets(pinned, "3.12.7")).toBe(true);
    expect(meets(pinned, "3.13.5")).toBe(false);
    expect(requirementsOf("python", { "pyproject.toml": "[tool.pytest.ini_options]\n" })).toEqual([
      { toolchain: "python", range: null, source: null, declared: null },
    ]);
  });
});

describe("Go", () => {
  it("go.mod's go line and toolchain line, each a minimum", () => {
    const mod =
      "module github.com/acme/x\n\ngo 1.24.0\n\ntoolchain go1.25.3\n\nrequire golang.org/x/text v0.22.0\n";
    const [go, toolchain] = requirementsOf("go", { "go.mod": mod });
    expect(go).toEqual({
      toolchain: "go",
      range: ">=1.24.0",
      source: "go.mod line 3 (`go`)",
      declared: "1.24.0",
    });
    // `toolchain go1.25.3` is said without its prefix, as "go 1.25.3" in the status.
    expect(toolchain).toMatchObject({
      range: ">=1.25.3",
      source: "go.mod line 5 (`toolchain`)",
      declared: "1.25.3",
    });
    expect(meets(go, "1.24.4")).toBe(true);
    expect(meets(toolchain, "1.24.4")).toBe(false);
    expect(meets(requirementsOf("go", { "go.mod": "module x\n\ngo 1.21\n" })[0], "1.24.4")).toBe(true);
  });
});

describe("Rust", () => {
  it("rust-toolchain.toml's numbered channel, Cargo.toml's rust-version; a named channel pins no number", () => {
    const pinned = requirementsOf("rust", {
      "Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\nedition = "2021"\nrust-version = "1.88"\n',
      "rust-toolchain.toml": '[toolchain]\nchannel = "1.86.0"\ncomponents = ["clippy"]\n',
    });
    expect(pinned.map((r) => [r.range, r.source])).toEqual([
      [">=1.86.0", "rust-toolchain.toml line 2"],
      [">=1.88.0", "Cargo.toml line 5 (`rust-version`)"],
    ]);
    expect(meets(pinned[1], "1.85.1")).toBe(false);
    expect(
      requirementsOf("rust", { "Cargo.toml": "[package]\n", "rust-toolchain": "nightly-2025-01-01\n" }),
    ).toEqual([{ toolchain: "rust", range: null, source: null, declared: null }]);
    const workspace = requirementsOf("rust", {
      "Cargo.toml": '[workspace.package]\nrust-version = "1.70"\n',
    });
    expect(meets(workspace[0], "1.85.1")).toBe(true);
  });
});

describe("Java", () => {
  it("Maven's compiler release property, the highest level named, and Java 8's 1.8", () => {
    const pom = `<project>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.release>21</maven.compiler.release>
  </properties>
</project>`;
    const [level] = requirementsOf("java", { "pom.xml": pom });
    expect(level).toMatchObject({ range: ">=21.0.0", source: "pom.xml line 4 (`maven.compiler.release`)" });
    expect(meets(level, "21.0.13")).toBe(true);
    expect(meets(level, "17.0.2")).toBe(false);
    const eight = requirementsOf("java", {
      "pom.xml": "<project><properties><java.version>1.8</java.version></properties></project>",
    });
    expect(eight[0]?.range).toBe(">=8.0.0");
  });
  it("Gradle's toolchain languageVersion and sourceCompatibility", () => {
    const kts =
      "plugins { java }\njava {\n    toolchain {\n        languageVersion = JavaLanguageVersion.of(25)\n    }\n}\n";
    const [toolchain] = requirementsOf("java", { "build.gradle.kts": kts });
    expect(toolchain).toMatchObject({ range: ">=25.0.0", source: "build.gradle.kts line 4" });
    expect(meets(toolchain, "21.0.13")).toBe(false);
    const groovy = requirementsOf("java", {
      "build.gradle": "apply plugin: 'java'\nsourceCompatibility = JavaVersion.VERSION_11\n",
    });
    expect(groovy[0]).toMatchObject({ range: ">=11.0.0", source: "build.gradle line 2" });
  });
});

describe("through detection", () => {
  it("reads the version files of each part and gives each detected part its requirements", () => {
    const paths = ["web/package.json", "web/.nvmrc", "svc/go.mod", "Makefile"];
    expect(filesToRead(paths).sort()).toEqual(["Makefile", "svc/go.mod", "web/.nvmrc", "web/package.json"]);
    const contents = new Map([
      ["web/package.json", '{"scripts":{"test":"vitest run"}}'],
      ["web/.nvmrc", "22\n"],
      ["svc/go.mod", "module x\n\ngo 1.25.0\n"],
      ["Makefile", "test:\n\tmake -C web test\n"],
    ]);
    const found = detectCommands({ paths, contents });
    expect(found.parts.map((part) => [part.dir, part.requirements.map((r) => r.range)])).toEqual([
      ["svc", [">=1.25.0"]],
      ["web", ["22.x"]],
    ]);
  });
});
