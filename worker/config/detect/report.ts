/**
 * What the status comment says about detected commands: what was found, and the
 * `.github/agent-fix.yml` that would change it (or, when nothing was found, that would make it work).
 */
import { stringify } from "yaml";
import type { Detection } from "./index.js";

const CONFIG_PATH = ".github/agent-fix.yml";

/** The config file that sets exactly the detected commands, to be edited. */
export function detectedSnippet(detection: Detection): string {
  const config = {
    ...(detection.setup.length ? { setup: { commands: detection.setup } } : {}),
    test: { command: detection.test ?? "make test" },
  };
  return stringify(config, { lineWidth: 0 }).trimEnd();
}

/** The file a repository with nothing detectable commits: one test command, setup if it needs one. */
const STARTER_SNIPPET = "setup:\n  commands:\n    - npm ci\ntest:\n  command: npm test";

const fence = (yaml: string) => ["```yaml", yaml, "```"].join("\n");

/** One line per part found, then the snippet that would change what runs. */
export function describeDetection(detection: Detection): string {
  const lines = [
    `No test command in ${CONFIG_PATH}, so agent-fix found one from the repository's files:`,
    ...detection.parts.map(
      (part) =>
        `- ${part.ecosystem} in \`${part.dir === "" ? "/" : `${part.dir}/`}\` (${part.evidence.join(", ")})`,
    ),
    "",
    `To change what runs, commit this as ${CONFIG_PATH} and edit it:`,
    fence(detectedSnippet(detection)),
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
