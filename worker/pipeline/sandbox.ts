import type { Sandbox, SandboxLimits, SandboxProvider } from "../../src/contracts.js";

export interface StartSandboxOptions {
  /** The host checkout, already stripped of credentials. */
  sourceDir: string;
  jobId: string;
  /** Network while setup runs; cut before the agent's first step. */
  networkForSetup: boolean;
  limits?: Partial<SandboxLimits>;
  defaultTimeoutMs?: number;
}

/**
 * Step 3: start the sandbox and copy the checkout in. Its environment is empty on purpose: setup
 * secrets are passed per command (step 4) and nothing of the worker's environment is inherited.
 */
export function startSandbox(provider: SandboxProvider, options: StartSandboxOptions): Promise<Sandbox> {
  return provider.create({
    sourceDir: options.sourceDir,
    jobId: options.jobId,
    network: options.networkForSetup,
    env: {},
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.defaultTimeoutMs ? { defaultTimeoutMs: options.defaultTimeoutMs } : {}),
  });
}
