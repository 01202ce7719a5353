/**
 * The image (and what setup provides on top of it) for a repository that names no image: the first of
 * the operator's images whose toolchains meet every version the detected parts declare, the default
 * first; else the first where what is missing can be provided from a registry during setup, which has
 * the network (Node from the npm registry's `node` package, Go by its own toolchain download from the
 * module proxy); else a refusal naming what the repository declares, what the images have and how to
 * provide it, given before any sandbox starts or model is called. Pure: the images' versions are
 * probed by the caller (sandbox provider's `toolchains`).
 */
import semver from "semver";
import type { ImageToolchains, Toolchain, WorkspaceEnv } from "../../../src/shared/contracts.js";
import { ConfigError } from "../../../src/shared/errors.js";
import { CACHE_DIR, type DetectedPart } from "../../config/detect/ecosystem-rule.js";
import {
  describeRequirement,
  type ToolchainRequirement,
  versionMeets,
} from "../../config/detect/requirements.js";
import { REPO_CONFIG_PATH } from "../../config/repo.js";

/** One image the run may use: undefined is the provider's default, as the sandboxes name it. */
export interface ToolchainCandidate {
  image: string | undefined;
  toolchains: ImageToolchains;
}

export interface ToolchainChoice {
  /** The image to run; undefined: the provider's default. */
  image: string | undefined;
  /** Setup commands that provide what the image lacks, run before the repository's own. */
  setup: string[];
  /** The variables for what was provided (a provided Node's bin directory on PATH, GOTOOLCHAIN). */
  env: WorkspaceEnv;
  /** For the status comment: each declared version, from which file, and what met it. */
  lines: string[];
}

/** Where a provided Node is installed, in the workspace's cache, and its bin directory for PATH. */
const NODE_PREFIX = `${CACHE_DIR}/node`;
export const NODE_BIN = `${NODE_PREFIX}/node_modules/.bin`;

/** Majors of Node to provide, in order of preference: the long-term-support releases, newest first. */
const NODE_MAJORS = [24, 22, 20, 18, 26];

/** The first Go that downloads a newer toolchain itself when go.mod asks for one (GOTOOLCHAIN). */
const GO_SWITCHING = "1.21.0";

interface Need {
  requirement: ToolchainRequirement;
  dir: string;
}

/** How one requirement is met on one image: by its own version, provided in setup, or not at all. */
type Meeting =
  | { kind: "has"; version: string }
  | { kind: "provide"; toolchain: "node" | "go" }
  | { kind: "no" };

function meet(need: Need, versions: ImageToolchains["versions"], network: boolean): Meeting {
  const { requirement } = need;
  const version = versions[requirement.toolchain];
  if (version !== undefined && versionMeets(requirement, version)) return { kind: "has", version };
  if (!network || version === undefined) return { kind: "no" };
  // npm (beside the image's node) installs another Node from the registry; Go 1.21 and later fetch
  // the toolchain go.mod names from the module proxy into GOMODCACHE, kept with the workspace.
  if (requirement.toolchain === "node") return { kind: "provide", toolchain: "node" };
  const go = semver.coerce(version);
  if (requirement.toolchain === "go" && go && semver.gte(go, GO_SWITCHING))
    return { kind: "provide", toolchain: "go" };
  return { kind: "no" };
}

/** The npm spec of the `node` package meeting every Node range declared: a long-term-support major first. */
export function nodeSpec(ranges: readonly string[]): string | null {
  for (const major of NODE_MAJORS) {
    const within = `>=${major}.0.0 <${major + 1}.0.0-0`;
    if (!ranges.every((range) => semver.intersects(range, within))) continue;
    // Space joins comparators into one set (all must hold); a range with `||` is left to the major alone.
    const simple = ranges.filter((range) => !range.includes("||"));
    return [within, ...simple].join(" ");
  }
  return null;
}

const imageName = (candidate: ToolchainCandidate) => `\`${candidate.toolchains.image}\``;

/** The choice on one candidate when every need is met (natively only, unless `provide`); else null. */
function chooseOn(
  candidate: ToolchainCandidate,
  needs: readonly Need[],
  options: { network: boolean; provide: boolean },
): ToolchainChoice | null {
  const meetings = needs.map((need) => ({
    need,
    meeting: meet(need, candidate.toolchains.versions, options.network),
  }));
  if (
    meetings.some(({ meeting }) => meeting.kind === "no" || (meeting.kind === "provide" && !options.provide))
  )
    return null;
  const setup: string[] = [];
  const env: WorkspaceEnv = { vars: {}, path: [] };
  const lines: string[] = [];
  const nodeRanges = meetings.flatMap(({ need, meeting }) =>
    meeting.kind === "provide" && meeting.toolchain === "node" && need.requirement.range !== null
      ? [need.requirement.range]
      : [],
  );
  // All of Node's declared ranges together: the one Node provided meets each of them.
  const nodeRangesAll = needs.flatMap(({ requirement }) =>
    requirement.toolchain === "node" && requirement.range !== null ? [requirement.range] : [],
  );
  let providedNode: string | null = null;
  if (nodeRanges.length > 0) {
    providedNode = nodeSpec(nodeRangesAll);
    if (providedNode === null) return null;
    setup.push(
      `npm install --prefix ${NODE_PREFIX} --no-save --no-package-lock --no-audit --no-fund "node@${providedNode}"`,
    );
    env.path.push(NODE_BIN);
  }
  for (const { need, meeting } of meetings) {
    if (need.requirement.declared === null) continue;
    const what = describeRequirement(need.requirement, need.dir);
    if (meeting.kind === "has") lines.push(`- ${what}: ${imageName(candidate)} has ${meeting.version}`);
    else if (meeting.kind === "provide" && meeting.toolchain === "node")
      lines.push(
        `- ${what}: ${imageName(candidate)} has ${candidate.toolchains.versions.node}; setup installs Node ${providedNode} from the npm registry's \`node\` package (on PATH in every sandbox of the run)`,
      );
    else if (meeting.kind === "provide") {
      env.vars.GOTOOLCHAIN = { value: "auto" };
      lines.push(
        `- ${what}: ${imageName(candidate)} has ${candidate.toolchains.versions.go}; Go downloads the toolchain go.mod names during setup (GOTOOLCHAIN, from the Go module proxy)`,
      );
    }
  }
  return { image: candidate.image, setup, env, lines };
}

/** What each candidate has of the toolchains the repository needs, for the refusal. */
function imagesHave(candidates: readonly ToolchainCandidate[], toolchains: readonly Toolchain[]): string {
  return candidates
    .map(({ toolchains: probed }) => {
      const have = toolchains.map((name) => `${name} ${probed.versions[name] ?? "not installed"}`).join(", ");
      return `\`${probed.image}\` (${have})`;
    })
    .join("; ");
}

/**
 * The image (and what setup provides) meeting every detected part's declared toolchain versions; a
 * ConfigError naming each unmet declaration, what the operator's images have, and how to provide it.
 */
export function chooseToolchains(
  parts: readonly DetectedPart[],
  candidates: readonly ToolchainCandidate[],
  options: { setupNetwork: boolean },
): ToolchainChoice {
  const needs = parts.flatMap((part) =>
    part.requirements.map((requirement) => ({ requirement, dir: part.dir })),
  );
  const network = options.setupNetwork;
  for (const provide of [false, true]) {
    for (const candidate of candidates) {
      const choice = chooseOn(candidate, needs, { network, provide });
      if (choice) return choice;
    }
  }
  const unmet = needs.filter((need) =>
    candidates.every((candidate) => meet(need, candidate.toolchains.versions, network).kind === "no"),
  );
  const shown = unmet.length > 0 ? unmet : needs.filter((need) => need.requirement.declared !== null);
  const toolchains = [...new Set(needs.map((need) => need.requirement.toolchain))];
  throw new ConfigError(
    `The repository needs ${shown.map((need) => describeRequirement(need.requirement, need.dir)).join(", ")}, which none of the operator's images provides together${network ? "" : " (setup has no network, so nothing is installed from a registry)"}: ${imagesHave(candidates, toolchains)}`,
    {
      code: "repo_toolchain_unavailable",
      hint: `The operator adds an image with that version to repository.images (or sets repository.toolchainImage to it); or the repository names one in \`sandbox.image\` of ${REPO_CONFIG_PATH}, or changes the version it declares.`,
    },
  );
}
