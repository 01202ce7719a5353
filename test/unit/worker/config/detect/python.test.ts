import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectCommands, filesToRead } from "../../../../../worker/config/detect/index.js";
import { detectedSetupSteps, optionalCommand } from "../../../../../worker/config/detect/optional-install.js";
import { detectDirectory } from "../../../../support/detect-fixture.js";

const FIXTURES = new URL("../../../../fixtures/detect/", import.meta.url).pathname;
const detectFixture = (name: string) => detectDirectory(join(FIXTURES, name));
const PIP = ".venv/bin/python -m pip install";

describe("a Python repository with tests and no project file", () => {
  it("tests/test_*.py in unittest style: python, unittest naming the tests directory", async () => {
    const found = await detectFixture("python-tests-only");
    expect(found.parts.map((p) => [p.ecosystem, p.dir, p.evidence])).toEqual([
      ["python", "", ["tests/test_wordcount.py, no project file", "unittest"]],
    ]);
    expect(found.setup).toEqual([
      "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
    ]);
    expect(found.test).toBe(".venv/bin/python -m unittest discover -s tests");
    // The test file was read for how it is written.
    expect(found.read).toEqual(["tests/test_wordcount.py"]);
  });
  it("tests/test_*.py with plain test functions: pytest, installed in setup", async () => {
    const found = await detectFixture("python-tests-only-pytest");
    expect(found.setup).toEqual([
      "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
      `${PIP} pytest`,
    ]);
    expect(found.test).toBe(".venv/bin/python -m pytest");
    expect(found.parts[0]?.evidence).toEqual(["tests/test_slug.py, no project file", "pytest"]);
  });
  it("a root tests.py: unittest's discovery finds it", async () => {
    const found = await detectFixture("python-root-tests");
    expect(found.test).toBe(".venv/bin/python -m unittest discover");
    expect(found.parts[0]?.evidence).toEqual(["tests.py, no project file", "unittest"]);
  });
  it("a root tests.py written for pytest is named to it (pytest does not collect tests.py itself)", () => {
    const found = detectCommands({
      paths: ["tests.py", "calc.py"],
      contents: new Map([["tests.py", "import pytest\n\ndef test_add():\n    assert 1 + 1 == 2\n"]]),
    });
    expect(found.test).toBe(".venv/bin/python -m pytest tests.py");
  });
  it("with a Makefile `test` target, the Makefile says how", async () => {
    const found = await detectFixture("python-tests-make");
    expect(found.parts.map((p) => p.ecosystem)).toEqual(["make"]);
    expect(found.test).toBe("make test");
  });
  it("a test script beside a Go module does not make it a Python project", async () => {
    const found = await detectFixture("go-python-script");
    expect(found.parts.map((p) => `${p.ecosystem}:${p.dir}`)).toEqual(["go:"]);
    expect(found.read).not.toContain("test.py");
  });
  it("tests at the root do not hide a package below that has a project file to install", () => {
    const found = detectCommands({
      paths: ["app.py", "tests/test_app.py", "plugins/extra/pyproject.toml", "plugins/extra/extra.py"],
      contents: new Map([["plugins/extra/pyproject.toml", '[project]\nname = "extra"\n']]),
    });
    expect(found.parts.map((p) => `${p.ecosystem}:${p.dir}`)).toEqual(["python:", "python:plugins/extra"]);
    expect(found.setup).toContain("cd plugins/extra && .venv/bin/python -m pip install -e .");
  });
  it("a lone file named like a test, with no code beside it, is no project: nothing to test", () => {
    const found = detectCommands({ paths: ["src/test_data.py", "README.md"], contents: new Map() });
    expect(found.test).toBeNull();
  });
});

describe("optional installs: tried as written, with what the tests need when they fail", () => {
  it("the dev extra: the project alone, then the extra's requirements one by one (a self-reference expanded)", async () => {
    const found = await detectFixture("python-dev-extra");
    const [part] = found.parts;
    expect(part?.optional).toEqual([
      {
        install: `${PIP} -e ".[dev]"`,
        what: "the `dev` extra",
        instead: [`${PIP} -e .`],
        each: [
          { requirement: "pytest>=7", command: `${PIP} 'pytest>=7'` },
          { requirement: "pytest-mock", command: `${PIP} pytest-mock` },
          {
            requirement: 'tomli; python_version < "3.11"',
            command: `${PIP} 'tomli; python_version < "3.11"'`,
          },
          // slugs-kit[lint] is the project itself (Slugs_Kit): its lint extra's list, not a release from PyPI.
          { requirement: "flake8==0.0.0", command: `${PIP} flake8==0.0.0` },
        ],
      },
    ]);
    expect(found.setup).toEqual([
      "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)",
      `${PIP} -e ".[dev]" || (${PIP} -e . && { ${PIP} 'pytest>=7'; ${PIP} pytest-mock; ${PIP} 'tomli; python_version < "3.11"'; ${PIP} flake8==0.0.0; true; })`,
      `${PIP} pytest`,
    ]);
    expect(found.parts[0]?.evidence).toEqual(["pyproject.toml", "extra [dev]", "pytest"]);
  });

  it("requirements.txt must install; other requirements files are optional, line by line with the file's index", async () => {
    const found = await detectFixture("python-dev-requirements");
    const [part] = found.parts;
    expect(found.read).toEqual(["docs-requirements.txt", "requirements-dev.txt", "requirements.txt"]);
    expect(part?.setup[1]).toBe(`${PIP} -r requirements.txt`);
    const index = "--extra-index-url https://pypi.example.org/simple";
    expect(part?.optional).toEqual([
      {
        install: `${PIP} -r docs-requirements.txt`,
        what: "docs-requirements.txt",
        instead: [],
        each: [{ requirement: "sphinx", command: `${PIP} sphinx` }],
      },
      {
        install: `${PIP} -r requirements-dev.txt`,
        what: "requirements-dev.txt",
        instead: [],
        each: [
          { requirement: "-r requirements.txt", command: `${PIP} ${index} -r requirements.txt` },
          { requirement: "pytest>=7", command: `${PIP} ${index} 'pytest>=7'` },
          {
            // The hash is dropped: pip wants every line of a file hashed or none.
            requirement:
              "coverage[toml]==7.6.1      --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000",
            command: `${PIP} ${index} 'coverage[toml]==7.6.1'`,
          },
          {
            requirement: 'flake8==0.0.0; python_version >= "3.8"',
            command: `${PIP} ${index} 'flake8==0.0.0; python_version >= "3.8"'`,
          },
        ],
      },
    ]);
    expect(found.test).toBe(".venv/bin/python -m pytest");
  });

  it("the shell form (what the snippet shows) does what the run does: the install, else the fallback, exit 0", async () => {
    const found = await detectFixture("python-dev-extra");
    const dir = await mkdtemp(join(tmpdir(), "af-optional-"));
    try {
      // A pip that logs what it is asked and cannot install the extra nor flake8 (no such release).
      await mkdir(join(dir, ".venv", "bin"), { recursive: true });
      const python = join(dir, ".venv", "bin", "python");
      await writeFile(
        python,
        [
          "#!/bin/sh",
          "shift 3",
          'echo "$*" >> pip.log',
          'case "$*" in *flake8*|*"[dev]"*) echo "ERROR: No matching distribution found" >&2; exit 1;; esac',
          "",
        ].join("\n"),
      );
      await chmod(python, 0o755);
      for (const command of found.setup.slice(1))
        execFileSync("sh", ["-c", command], { cwd: dir, stdio: "pipe" });
      expect((await readFile(join(dir, "pip.log"), "utf8")).trim().split("\n")).toEqual([
        "-e .[dev]",
        "-e .",
        "pytest>=7",
        "pytest-mock",
        'tomli; python_version < "3.11"',
        "flake8==0.0.0",
        "pytest",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a part in a directory: its steps run there, the install and each fallback command", () => {
    const pyproject = '[project]\nname = "api"\n\n[project.optional-dependencies]\ntest = ["pytest"]\n';
    const detection = detectCommands({
      paths: ["services/api/pyproject.toml", "services/api/tests/test_api.py", "web/package.json"],
      contents: new Map([
        ["services/api/pyproject.toml", pyproject],
        ["web/package.json", '{"scripts": {"test": "vitest"}}'],
      ]),
    });
    const steps = detectedSetupSteps(detection);
    expect(steps.map((step) => step.command)).toEqual(detection.setup);
    const optional = steps.filter((step) => step.optional);
    expect(optional).toHaveLength(1);
    expect(optional[0]?.optional).toEqual({
      install: `cd services/api && ${PIP} -e ".[test]"`,
      what: "the `test` extra",
      instead: [`cd services/api && ${PIP} -e .`],
      each: [{ requirement: "pytest", command: `cd services/api && ${PIP} pytest` }],
    });
    const own = detection.parts.find((part) => part.ecosystem === "python")?.optional?.[0] ?? never();
    expect(optional[0]?.command).toBe(`cd services/api && ${optionalCommand(own)}`);
  });

  it("reads requirements files and setup.cfg's extras as detection reads any file: by the list it asked for", () => {
    const paths = ["setup.cfg", "setup.py", "test-requirements.txt", "tests/test_a.py"];
    expect(filesToRead(paths)).toEqual(["setup.cfg", "test-requirements.txt"]);
    const setupCfg =
      "[metadata]\nname = a\n\n[options.extras_require]\ntesting =\n    pytest\n    hypothesis\n";
    const found = detectCommands({
      paths,
      contents: new Map([
        ["setup.cfg", setupCfg],
        ["test-requirements.txt", "mock\n"],
      ]),
    });
    expect(found.parts[0]?.optional?.map((step) => [step.what, step.each.map((e) => e.requirement)])).toEqual(
      [
        ["test-requirements.txt", ["mock"]],
        ["the `testing` extra", ["pytest", "hypothesis"]],
      ],
    );
  });
});

function never(): never {
  throw new Error("no optional step");
}
