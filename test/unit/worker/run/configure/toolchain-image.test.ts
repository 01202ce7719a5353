import { describe, expect, it } from "vitest";
import { SANDBOX_RICH_IMAGE } from "../../../../../sandbox/version.js";
import type { DetectedPart, Ecosystem } from "../../../../../worker/config/detect/ecosystem-rule.js";
import { repositoryPolicySchema } from "../../../../../worker/config/repo-policy.js";
import { toolchainImageChoice } from "../../../../../worker/run/configure/image-choice.js";

const part = (ecosystem: Ecosystem, dir = ""): DetectedPart => ({
  dir,
  ecosystem,
  evidence: [],
  setup: [],
  test: "t",
  env: {},
  requirements: [],
});
const defaults = repositoryPolicySchema.parse({});

describe("the toolchain image of a repository that chose none", () => {
  it("is the rich image by default when a detected part needs Go, Rust, Ruby or Java", () => {
    expect(defaults.toolchainImage).toBe(SANDBOX_RICH_IMAGE);
    expect(toolchainImageChoice([part("python"), part("go", "svc"), part("rust", "cli")], defaults)).toEqual({
      image: SANDBOX_RICH_IMAGE,
      note: `Image: \`${SANDBOX_RICH_IMAGE}\`, which has the go, rust toolchain (the operator's image for toolchains the default image lacks; \`sandbox.image\` in .github/agent-fix.yml chooses another).`,
    });
    for (const ecosystem of ["ruby", "java"] as const)
      expect(toolchainImageChoice([part(ecosystem)], defaults)?.image).toBe(SANDBOX_RICH_IMAGE);
  });
  it("is none for what the slim image runs, when the operator sets null, or when images do not allow it", () => {
    expect(toolchainImageChoice([part("python"), part("node"), part("make")], defaults)).toBeUndefined();
    expect(toolchainImageChoice([], defaults)).toBeUndefined();
    expect(toolchainImageChoice([part("go")], { ...defaults, toolchainImage: null })).toBeUndefined();
    expect(
      toolchainImageChoice([part("go")], { ...defaults, images: ["agent-fix-sandbox:*"] }),
    ).toBeUndefined();
    expect(
      toolchainImageChoice([part("java")], {
        toolchainImage: "ghcr.io/acme/jdk:21",
        images: ["ghcr.io/acme/**"],
      })?.image,
    ).toBe("ghcr.io/acme/jdk:21");
  });
});
