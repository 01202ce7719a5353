import type {
  RepoImageBuildSpec,
  Sandbox,
  SandboxLimits,
  SandboxProvider,
  SetupUser,
  WorkspaceEnv,
} from "../../../src/shared/contracts.js";
import { CancelledError } from "../../../src/shared/errors.js";

interface StartSandboxOptions {
  /** The host checkout, already stripped of credentials. */
  sourceDir: string;
  jobId: string;
  /** Network while setup runs; cut before the agent's first step. */
  networkForSetup: boolean;
  limits?: Partial<SandboxLimits>;
  defaultTimeoutMs?: number;
  /** The run's image (the repository's allowed choice); the provider's default otherwise. */
  image?: string;
  /** Or the image built from the repository's checkout (its devcontainer's build.dockerfile). */
  imageBuild?: RepoImageBuildSpec;
  /** Setup's sandbox, whose result may be kept, and who runs its commands. */
  setupUser?: SetupUser;
  /** The run's end: stops a build of its image. */
  signal?: AbortSignal;
  /** The detected commands' variables, in every shell of every sandbox of the run. */
  workspaceEnv?: WorkspaceEnv;
}

/**
 * Starts a sandbox and copies the checkout in (setup's, and every sandbox after it). Its environment is empty on purpose: setup secrets are passed per command and nothing of the
 * worker's environment is inherited; only the run's toolchain variables (workspace paths) are added.
 */
function startSandbox(provider: SandboxProvider, options: StartSandboxOptions): Promise<Sandbox> {
  return provider.create({
    sourceDir: options.sourceDir,
    jobId: options.jobId,
    network: options.networkForSetup,
    env: {},
    ...(options.workspaceEnv ? { workspaceEnv: options.workspaceEnv } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.defaultTimeoutMs ? { defaultTimeoutMs: options.defaultTimeoutMs } : {}),
    ...(options.image ? { image: options.image } : {}),
    ...(options.imageBuild ? { imageBuild: options.imageBuild } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.setupUser ? { setup: { user: options.setupUser } } : {}),
  });
}

/**
 * Every sandbox one run starts, so a cancel disposes all of them at once, and the time spent starting
 * them (bench/pipeline.ts reports it as overhead).
 */
export class RunSandboxes {
  private readonly live = new Set<Sandbox>();
  /** Removals started and not awaited (a container's removal takes a good part of a second). */
  private readonly removals = new Set<Promise<void>>();
  /** Starts in flight: once `closed` each disposes its sandbox itself, and disposeAll waits for that. */
  private readonly starting = new Set<Promise<unknown>>();
  private closed = false;
  /** Aborted by disposeAll (the run's cancel, its end): a build of the repository's image stops. */
  private readonly stopping = new AbortController();
  /** Fresh sandboxes started ahead of need (while the agent thinks), and the directory each came from. */
  private spares: { sourceDir: string; sandbox: Promise<Sandbox> }[] = [];
  /** Milliseconds spent in create() so far. */
  startMs = 0;

  /** The run's signal, when given: a cancel disposes every sandbox at once. */
  private readonly signal: AbortSignal | undefined;

  /** The run's own provider: its kept environment, its image and its sandboxes in one place. */
  private readonly provider: SandboxProvider;

  constructor(
    provider: SandboxProvider,
    private base: Omit<StartSandboxOptions, "sourceDir" | "networkForSetup" | "setupUser" | "signal">,
    signal?: AbortSignal,
  ) {
    this.provider = provider.forRun?.(base.jobId) ?? provider;
    this.signal = signal;
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  private readonly onAbort = () => void this.disposeAll();

  /** Where setup's result is kept, when the provider keeps one. */
  get environments() {
    return this.provider.environments;
  }

  /** The image the repository chose (undefined: the provider's default); null when built from its checkout. */
  get imageChoice(): string | undefined | null {
    return this.base.imageBuild ? null : this.base.image;
  }

  /** The run's toolchain variables, part of what the kept environment was prepared with. */
  get workspaceEnv(): WorkspaceEnv | undefined {
    return this.base.workspaceEnv;
  }

  /** The id of the image built from the checkout (built now, once a run); null when none is built. */
  async builtImage(): Promise<string | null> {
    const build = this.base.imageBuild;
    return build && this.provider.repoImage ? this.provider.repoImage(build, this.stopping.signal) : null;
  }

  /** Every later sandbox starts from the environment setup prepared (a kept image). */
  useImage(image: string): void {
    const { imageBuild: _built, ...rest } = this.base;
    this.base = { ...rest, image };
  }

  start(sourceDir: string, networkForSetup = false, setupUser?: SetupUser): Promise<Sandbox> {
    const started = this.startOne(sourceDir, networkForSetup, setupUser);
    const settled = started.catch(() => {});
    this.starting.add(settled);
    void settled.finally(() => this.starting.delete(settled));
    return started;
  }

  private async startOne(
    sourceDir: string,
    networkForSetup: boolean,
    setupUser?: SetupUser,
  ): Promise<Sandbox> {
    const began = Date.now();
    const sandbox = await startSandbox(this.provider, {
      ...this.base,
      signal: this.stopping.signal,
      sourceDir,
      networkForSetup,
      ...(setupUser ? { setupUser } : {}),
    });
    this.startMs += Date.now() - began;
    if (this.closed) {
      // Cancelled while it started: it must not outlive the run (one that fails to go is the reaper's).
      await sandbox.dispose().catch(() => {});
      throw new CancelledError("the run was cancelled while a sandbox started");
    }
    this.live.add(sandbox);
    return sandbox;
  }

  /**
   * Disposes one sandbox; the promise never rejects. A sandbox that fails to go carries this worker's
   * label: the reaper removes it once the worker is gone, so the run does not fail for it.
   */
  dispose(sandbox: Sandbox): Promise<void> {
    this.live.delete(sandbox);
    return sandbox.dispose().catch(() => {});
  }

  /** Starts disposing a sandbox without waiting; disposeAll waits for it. */
  release(sandbox: Sandbox): void {
    const removal = this.dispose(sandbox).finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /**
   * Starts sandboxes from `sourceDir` in the background until `count` wait for the next `using`s of that
   * directory (a gate's, and the proof beside it).
   */
  prewarm(sourceDir: string, count = 1): void {
    while (!this.closed && this.spares.filter((spare) => spare.sourceDir === sourceDir).length < count) {
      const sandbox = this.start(sourceDir);
      // Not lost: take() awaits it and starts another when it failed.
      sandbox.catch(() => {});
      this.spares.push({ sourceDir, sandbox });
    }
  }

  /** A spare sandbox that came from `sourceDir` and started well, else a new one. */
  private async take(sourceDir: string): Promise<Sandbox> {
    const at = this.spares.findIndex((spare) => spare.sourceDir === sourceDir);
    // None: asked for at once, not a tick later (the baseline's start goes out beside the spares').
    if (at < 0) return this.start(sourceDir);
    const [spare] = this.spares.splice(at, 1);
    const sandbox = await spare?.sandbox.catch(() => null);
    return sandbox ?? this.start(sourceDir);
  }

  /**
   * Runs `use` in a sandbox nothing ran in before, disposed whatever happens (in the background:
   * disposeAll waits for it); with `prewarmNext`, the next one starts alongside.
   */
  async using<T>(
    sourceDir: string,
    use: (sandbox: Sandbox) => Promise<T>,
    options: { prewarmNext?: boolean } = {},
  ): Promise<T> {
    const sandbox = await this.take(sourceDir);
    // Started now, the next one is ready by the time the agent (or the proof) needs it.
    if (options.prewarmNext) this.prewarm(sourceDir);
    try {
      return await use(sandbox);
    } finally {
      this.release(sandbox);
    }
  }

  disposeAll(): Promise<void> {
    this.signal?.removeEventListener("abort", this.onAbort);
    this.closed = true;
    this.stopping.abort();
    // A spare still starting is disposed by start() itself once `closed` is seen; wait for that too.
    const spares = this.spares.map((spare) =>
      spare.sandbox.then(
        (sandbox) => this.dispose(sandbox),
        () => {},
      ),
    );
    const all = [
      ...[...this.live].map((sandbox) => this.dispose(sandbox)),
      ...this.removals,
      ...this.starting,
      ...spares,
    ];
    return Promise.all(all).then(() => {});
  }
}
