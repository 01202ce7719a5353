/**
 * What the status comment says about detected commands: what was found, which toolchain versions the
 * repository declares and what met them, and the `.github/agent-fix.yml` that would change it (or, when
 * nothing was found, that would make it work).
 */
import { stringify } from "yaml";
import type { WorkspaceEnv } from "../../../src/shared/contracts.js";
import { type Detection, withEnvPrefix } from "./index.js";

const CONFIG_PATH = ".github/agent-fix.yml";

/** What the toolchain choice added to the detected commands (worker/run/configure/toolchain-choice.ts). */
interface ToolchainsUsed {
  /** The image chosen for the declared versions; undefined: the operator's default. */
  image: string | undefined;
  /** Setup commands providing a toolchain, run before the detected ones. */
  setup: string[];
  env: WorkspaceEnv;
  /** One line per declared version: from which file, and what met it. */
  lines: string[];
}

const NONE: ToolchainsUsed = { image: undefined, setup: [], env: { vars: {}, path: [] }, lines: [] };

/**
 * The config file that sets exactly what runs. A committed file's commands are used as written, with no
 * detection and so no variables in the shell: each command here sets the ones it needs itself.
 */
export function detectedSnippet(detection: Detection, toolchains: ToolchainsUsed = NONE): string {
  const env: WorkspaceEnv = {
    vars: { ...detection.env.vars, ...toolchains.env.vars },
    path: [...toolchains.env.path, ...detection.env.path],
  };
  const setup = [...toolchains.setup, ...detection.setup].map((command) => withEnvPrefix(command, env));
  const config = {
    ...(toolchains.image ? { sandbox: { image: toolchains.image } } : {}),
    ...(setup.length ? { setup: { commands: setup } } : {}),
    test: { command: withEnvPrefix(detection.test ?? "make test", env) },
  };
  return stringify(config, { lineWidth: 0 }).trimEnd();
}

/** The file a repository with nothing detectable commits: one test command, setup if it needs one. */
const STARTER_SNIPPET = "setup:\n  commands:\n    - npm ci\ntest:\n  command: npm test";

const fence = (yaml: string) => ["```yaml", yaml, "```"].join("\n");

/** One line per part found, the declared versions and what met them, then the snippet that would change what runs. */
export function describeDetection(detection: Detection, toolchains: ToolchainsUsed = NONE): string {
  const lines = [
    `No test command in ${CONFIG_PATH}, so agent-fix found one from the repository's files:`,
    ...detection.parts.map(
      (part) =>
        `- ${part.ecosystem} in \`${part.dir === "" ? "/" : `${part.dir}/`}\` (${part.evidence.join(", ")})`,
    ),
    ...(toolchains.lines.length
      ? ["", "Toolchain versions the repository declares:", ...toolchains.lines]
      : []),
    ...(toolchains.image
      ? [
          "",
          `Image: \`${toolchains.image}\`, the first of the operator's images with the toolchains these parts need (\`sandbox.image\` in ${CONFIG_PATH} chooses another).`,
        ]
      : []),
    "",
    `To change what runs, commit this as ${CONFIG_PATH} and edit it:`,
    fence(detectedSnippet(detection, toolchains)),
  ];
  return lines.join("\n");
}

/** The hint of a run that found nothing to test. */
export function nothingDetectedHint(): string {
  return [
    `Commit ${CONFIG_PATH} naming how to set up and test the repository, for example:`,
    fence(STARTER_SNIPPET),
  ].join("\n");
}

/** What was looked for, for the error message when nothing was found. */
export const LOOKED_FOR =
  "a package.json `test` script, a Python project (pyproject.toml, setup.cfg, setup.py, requirements*.txt, tox.ini), " +
  "go.mod, Cargo.toml, a Gemfile with rake or rspec, pom.xml, build.gradle, or a Makefile `test` target";
