/**
 * The versions an image's tools print, as the probe (sandbox/docker/toolchains.ts) reads them: each
 * tool's own format, Java 8's `1.8.0_412` as major 8, and a tool that is missing left out.
 */
import { describe, expect, it } from "vitest";
import { parseToolchainVersions } from "../../../../sandbox/docker/toolchains.js";

describe("parseToolchainVersions", () => {
  it("reads each tool's own way of printing its version", () => {
    const output = [
      "node: v20.19.2",
      "python: Python 3.13.5",
      "go: go version go1.24.4 linux/amd64",
      "rust: rustc 1.85.1 (4eb161250 2025-03-15) (built from a source tarball)",
      "ruby: ruby 3.3.8 (2025-04-09 revision b200bad6cd) [x86_64-linux-gnu]",
      'java: openjdk version "21.0.13" 2026-10-20',
      "probed",
    ].join("\n");
    expect(parseToolchainVersions(output)).toEqual({
      node: "20.19.2",
      python: "3.13.5",
      go: "1.24.4",
      rust: "1.85.1",
      ruby: "3.3.8",
      java: "21.0.13",
    });
  });
  it("Java 8 as major 8; a tool not installed, or one printing no version, is absent", () => {
    expect(parseToolchainVersions('java: openjdk version "1.8.0_412"\nprobed\n')).toEqual({
      java: "8.0.412",
    });
    expect(parseToolchainVersions("node: v18.20.4\ngo: go: cannot find GOROOT\nprobed\n")).toEqual({
      node: "18.20.4",
    });
  });
});
