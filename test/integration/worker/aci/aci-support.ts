/**
 * Shared by the ACI integration tests: the sandbox drivers they run against and an environment over
 * a fresh copy of the fixture repository. Every golden test runs once per driver.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DockerSandboxProvider } from "../../../../sandbox/docker/provider.js";
import { LocalSandboxProvider } from "../../../../sandbox/local.js";
import type { Environment, Sandbox, SandboxProvider } from "../../../../src/shared/contracts.js";
import { createEnvironment } from "../../../../worker/aci/index.js";
import { type AciConfigInput, aciConfigSchema } from "../../../../worker/config/aci.js";
import { requireSandboxImage } from "../../../support/services.js";

export const fixtureRepo = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../fixtures/aci-repo",
);

interface Driver {
  name: "local" | "docker";
  /** Resolves to a provider, or null when the driver cannot run here (skipped loudly, failed in CI). */
  provider(): Promise<SandboxProvider | null>;
}

export const drivers: Driver[] = [
  { name: "local", provider: async () => new LocalSandboxProvider({ warn: () => undefined }) },
  {
    name: "docker",
    provider: async () => ((await requireSandboxImage()) ? new DockerSandboxProvider() : null),
  },
];

export interface AciSession {
  sandbox: Sandbox;
  env: Environment;
  root: string;
  /** Runs a tool and returns its observation without the two state lines at the end. */
  run(name: string, args?: unknown): Promise<string>;
  /** The two state lines every observation ends with. */
  footer(openFile?: string | null, dir?: string): string;
}

export async function startSession(
  provider: SandboxProvider,
  config: AciConfigInput = {},
  sourceDir = fixtureRepo,
): Promise<AciSession> {
  const sandbox = await provider.create({ sourceDir, jobId: `aci-test-${process.pid}` });
  const env = await createEnvironment({ sandbox, config: aciConfigSchema.parse(config) });
  const root = sandbox.workdir;
  return {
    sandbox,
    env,
    root,
    async run(name, args = {}) {
      const result = await env.execute(name, args);
      const lines = result.observation.split("\n");
      return lines.slice(0, -2).join("\n");
    },
    footer(openFile = env.state().openFile, dir = root) {
      return `(Open file: ${openFile ?? "n/a"})\n(Current directory: ${dir})`;
    },
  };
}
