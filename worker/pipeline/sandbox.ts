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

/**
 * Every sandbox one run starts, so a cancel disposes all of them at once, and the time spent starting
 * them (bench/pipeline.ts reports it as overhead).
 */
export class RunSandboxes {
  private readonly live = new Set<Sandbox>();
  private closed = false;
  /** Milliseconds spent in create() so far. */
  startMs = 0;

  constructor(
    private readonly provider: SandboxProvider,
    private readonly base: Omit<StartSandboxOptions, "sourceDir" | "networkForSetup">,
  ) {}

  async start(sourceDir: string, networkForSetup = false): Promise<Sandbox> {
    const began = Date.now();
    const sandbox = await startSandbox(this.provider, { ...this.base, sourceDir, networkForSetup });
    this.startMs += Date.now() - began;
    if (this.closed) {
      // Cancelled while it started: it must not outlive the run.
      await sandbox.dispose().catch(() => {});
      throw new Error("the run was cancelled while a sandbox started");
    }
    this.live.add(sandbox);
    return sandbox;
  }

  /** Disposes one sandbox; the promise never rejects. */
  dispose(sandbox: Sandbox): Promise<void> {
    this.live.delete(sandbox);
    return sandbox.dispose().catch(() => {});
  }

  /** Runs `use` in a sandbox started for it, disposed (awaited) whatever happens. */
  async using<T>(sourceDir: string, use: (sandbox: Sandbox) => Promise<T>): Promise<T> {
    const sandbox = await this.start(sourceDir);
    try {
      return await use(sandbox);
    } finally {
      await this.dispose(sandbox);
    }
  }

  disposeAll(): Promise<void> {
    this.closed = true;
    return Promise.all([...this.live].map((sandbox) => this.dispose(sandbox))).then(() => {});
  }
}
