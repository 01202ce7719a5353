import type { EcosystemRule } from "./ecosystem-rule.js";

/** npm's placeholder written by `npm init`: a package without tests. */
const NO_TEST_SPECIFIED = /no test specified/;

interface PackageJson {
  scripts?: Record<string, unknown>;
  packageManager?: unknown;
}

function parsePackageJson(text: string | undefined): PackageJson | null {
  if (text === undefined) return null;
  try {
    const data: unknown = JSON.parse(text);
    return data && typeof data === "object" ? (data as PackageJson) : null;
  } catch {
    return null;
  }
}

/**
 * yarn and pnpm are often not installed in the sandbox image: when missing they run through npx
 * (setup has network), at the version `packageManager` names when it names one.
 */
function viaTool(tool: "yarn" | "pnpm", packageManager: unknown, args: string): string {
  const pinned =
    typeof packageManager === "string" && packageManager.startsWith(`${tool}@`)
      ? packageManager.split("+")[0]
      : tool === "yarn"
        ? "yarn@1"
        : "pnpm";
  return `if command -v ${tool} >/dev/null 2>&1; then ${tool} ${args}; else npx --yes ${pinned} ${args}; fi`;
}

export const nodeRule: EcosystemRule = {
  ecosystem: "node",
  marks: (names) => names.has("package.json"),
  reads: () => ["package.json"],
  detect(part) {
    const pkg = parsePackageJson(part.text("package.json"));
    const test = pkg?.scripts?.test;
    if (typeof test !== "string" || test.trim() === "" || NO_TEST_SPECIFIED.test(test)) return null;
    const { names } = part;
    let install: string;
    let lockfile: string | null;
    if (names.has("pnpm-lock.yaml")) {
      lockfile = "pnpm-lock.yaml";
      install = viaTool("pnpm", pkg?.packageManager, "install --frozen-lockfile");
    } else if (names.has("yarn.lock")) {
      lockfile = "yarn.lock";
      install = viaTool("yarn", pkg?.packageManager, "install --frozen-lockfile");
    } else if (names.has("package-lock.json") || names.has("npm-shrinkwrap.json")) {
      lockfile = names.has("package-lock.json") ? "package-lock.json" : "npm-shrinkwrap.json";
      install = "npm ci";
    } else {
      lockfile = null;
      // Without a lockfile npm writes one into the workspace, and the pull request would add it: a
      // repository that keeps none (the npm tarball of a library, for one) gets none.
      install = "npm install --no-package-lock";
    }
    return {
      evidence: ["package.json (`test` script)", ...(lockfile ? [lockfile] : ["no lockfile"])],
      setup: [install],
      // npm runs the `test` script whichever package manager installed the dependencies.
      test: "npm test",
    };
  },
};
