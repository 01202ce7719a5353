/**
 * The image for the toolchain versions a repository declares: among the operator's images (as probed),
 * the first meeting every declaration, the default first; else one where setup can provide what is
 * missing (Node from the npm registry, Go's own toolchain download); else a refusal that says what is
 * declared, where, what the images have and how to provide it.
 */
import { describe, expect, it } from "vitest";
import type { ImageToolchains } from "../../../../../src/shared/contracts.js";
import { ConfigError } from "../../../../../src/shared/errors.js";
import type { DetectedPart, Ecosystem } from "../../../../../worker/config/detect/ecosystem-rule.js";
import { partRequirements } from "../../../../../worker/config/detect/requirements.js";
import {
  chooseToolchains,
  NODE_BIN,
  nodeSpec,
} from "../../../../../worker/run/configure/toolchain-choice.js";

/** The two images as a probe reports them (the versions of sandbox/image's Dockerfiles). */
const SLIM: ImageToolchains = {
  image: "agent-fix-sandbox:0.2.0",
  versions: { node: "18.20.4", python: "3.11.2" },
};
const RICH: ImageToolchains = {
  image: "agent-fix-sandbox-rich:0.1.4",
  versions: { node: "20.19.2", python: "3.13.5", go: "1.24.4", rust: "1.85.1", java: "21.0.13" },
};
const candidates = [
  { image: undefined, toolchains: SLIM },
  { image: RICH.image, toolchains: RICH },
];

function part(ecosystem: Ecosystem, files: Record<string, string>, dir = ""): DetectedPart {
  const names = new Set(Object.keys(files));
  return {
    dir,
    ecosystem,
    evidence: [],
    setup: [],
    test: "t",
    env: {},
    requirements: partRequirements(ecosystem, { names, text: (name) => files[name] }),
  };
}

const engines = (range: string) => `{\n  "engines": {\n    "node": "${range}"\n  }\n}\n`;

describe("an image that has the declared versions", () => {
  it("is the default when it meets them all (nothing provided, nothing said for undeclared versions)", () => {
    const choice = chooseToolchains(
      [part("node", { "package.json": "{}" }), part("python", { "setup.py": "" }, "py")],
      candidates,
      { setupNetwork: true },
    );
    expect(choice).toEqual({ image: undefined, setup: [], env: { vars: {}, path: [] }, lines: [] });
  });
  it("is the rich image for vitest 4's engines, which the slim image's Node 18 does not meet", () => {
    const choice = chooseToolchains(
      [part("node", { "package.json": engines("^20.19.0 || >=22.12.0") })],
      candidates,
      {
        setupNetwork: true,
      },
    );
    expect(choice).toEqual({
      image: "agent-fix-sandbox-rich:0.1.4",
      setup: [],
      env: { vars: {}, path: [] },
      lines: [
        "- node ^20.19.0 || >=22.12.0 (package.json line 3 (`engines.node`)): `agent-fix-sandbox-rich:0.1.4` has 20.19.2",
      ],
    });
  });
  it("is the rich image for Go, Rust and Java, which the slim image lacks", () => {
    for (const [ecosystem, file] of [
      ["go", "go.mod"],
      ["rust", "Cargo.toml"],
      ["java", "pom.xml"],
    ] as const)
      expect(
        chooseToolchains([part(ecosystem, { [file]: "" })], candidates, { setupNetwork: true }).image,
      ).toBe(RICH.image);
  });
});

describe("what setup provides when no image has it", () => {
  it("Node 22 from the npm registry, on the default image, on PATH for the run", () => {
    const choice = chooseToolchains(
      [part("node", { "package.json": "{}", ".nvmrc": "22\n" }, "web")],
      candidates,
      { setupNetwork: true },
    );
    expect(choice.image).toBeUndefined();
    expect(choice.setup).toEqual([
      'npm install --prefix .agent-fix-cache/node --no-save --no-package-lock --no-audit --no-fund "node@>=22.0.0 <23.0.0-0 22.x"',
    ]);
    expect(choice.env).toEqual({ vars: {}, path: [NODE_BIN] });
    expect(choice.lines).toEqual([
      "- node 22 (web/.nvmrc line 1): `agent-fix-sandbox:0.2.0` has 18.20.4; setup installs Node >=22.0.0 <23.0.0-0 22.x from the npm registry's `node` package (on PATH in every sandbox of the run)",
    ]);
  });
  it("a newer Go than the image's: Go's own toolchain download, on the rich image (the slim one has no Go)", () => {
    const choice = chooseToolchains([part("go", { "go.mod": "module x\n\ngo 1.25.0\n" })], candidates, {
      setupNetwork: true,
    });
    expect(choice.image).toBe(RICH.image);
    expect(choice.setup).toEqual([]);
    expect(choice.env.vars).toEqual({ GOTOOLCHAIN: { value: "auto" } });
    expect(choice.lines[0]).toContain("Go downloads the toolchain go.mod names during setup");
  });
  it("Node's major is a long-term-support one meeting every declared range", () => {
    expect(nodeSpec([">=20.19"])).toBe(">=24.0.0 <25.0.0-0 >=20.19");
    expect(nodeSpec(["^20.19.0 || >=22.12.0", "22.x"])).toBe(">=22.0.0 <23.0.0-0 22.x");
    expect(nodeSpec(["16.x"])).toBeNull();
  });
});

describe("nothing fits", () => {
  it("refuses, naming the declaration and its file, what each image has, and how to provide it", () => {
    const python = part("python", {
      "pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.14"\n',
    });
    let error: unknown;
    try {
      chooseToolchains([python], candidates, { setupNetwork: true });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("repo_toolchain_unavailable");
    expect((error as ConfigError).message).toBe(
      "The repository needs python >=3.14 (pyproject.toml line 3 (`requires-python`)), which none of the operator's images provides together: `agent-fix-sandbox:0.2.0` (python 3.11.2); `agent-fix-sandbox-rich:0.1.4` (python 3.13.5)",
    );
    expect((error as ConfigError).hint).toContain("repository.images");
    expect((error as ConfigError).hint).toContain("`sandbox.image`");
  });
  it("provides nothing without setup's network, and says so", () => {
    const node = part("node", { "package.json": "{}", ".nvmrc": "24\n" });
    expect(() => chooseToolchains([node], candidates, { setupNetwork: false })).toThrow(
      /node 24 \(\.nvmrc line 1\).*\(setup has no network, so nothing is installed from a registry\)/,
    );
  });
});
