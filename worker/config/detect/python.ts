import type { EcosystemRule, PartFiles } from "./ecosystem-rule.js";
import { type OptionalInstall, optionalCommand } from "./optional-install.js";
import {
  extraRequirements,
  projectExtras,
  type Requirement,
  requirementsFileLines,
  shellWord,
} from "./python-requirements.js";
import { MAKEFILES, makeHasTestTarget } from "./ruby-make.js";

const PIP = ".venv/bin/python -m pip install";

/**
 * The virtual environment, seeing the system's packages. Without a pip of its own: the venv's python
 * runs the image's pip, which installs into the venv, and ensurepip's copy of pip into every new venv
 * took ~11 s (3.6 s of CPU) of setup on a loaded machine, 0.1 s without. An image without a system pip
 * gets the venv's own from ensurepip, as before.
 */
const VENV =
  "python3 -m venv --system-site-packages --without-pip .venv && (.venv/bin/python -m pip --version || .venv/bin/python -m ensurepip)";
/** Extras that conventionally hold the test dependencies, in order of preference. */
const TEST_EXTRAS = ["test", "tests", "testing", "dev"];

/** requirements.txt, requirements-dev.txt, requirements_test.txt, dev-requirements.txt, test-requirements.txt… */
const isRequirements = (name: string) =>
  /^(?:requirements[^/]*|[A-Za-z0-9]+[-_]requirements)\.txt$/.test(name);
/** The one requirements file whose failure stops setup: the others (dev, test, docs…) are optional. */
const MAIN_REQUIREMENTS = "requirements.txt";

/**
 * Test files that make a directory a Python project even without a project file: `tests/test_*.py`
 * (or `test/`, any depth, `*_test.py` too), or `test_*.py`, `tests.py`, `test.py` beside the code.
 */
const TEST_LAYOUT = /^(?:tests?\/(?:[^/]+\/)*(?:test_[^/]*|[^/]+_test)\.py|test_[^/]*\.py|tests?\.py)$/;
/** At most this many test files are read for how they are written (pytest or unittest). */
const TEST_FILES_READ = 5;

/** The keys of a TOML/INI section such as `[project.optional-dependencies]`, read line by line. */
function sectionKeys(text: string | undefined, header: string): string[] {
  if (text === undefined) return [];
  const keys: string[] = [];
  let inside = false;
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("[")) {
      inside = trimmed === `[${header}]`;
      continue;
    }
    const key = inside && !/^\s/.test(line) ? /^([A-Za-z0-9_.-]+)\s*[=:]/.exec(trimmed)?.[1] : undefined;
    if (key) keys.push(key);
  }
  return keys;
}

/** Whether the directory is a package pip can install (pyproject with a build or project table, setup.py/cfg). */
function installable(part: PartFiles): boolean {
  const pyproject = part.text("pyproject.toml") ?? "";
  return (
    part.names.has("setup.py") ||
    /^\[(project|build-system|tool\.poetry)\]/m.test(pyproject) ||
    /^\[metadata\]/m.test(part.text("setup.cfg") ?? "")
  );
}

/** A test file written for pytest: it imports pytest, or its tests are plain functions. */
const pytestStyle = (text: string) =>
  /^\s*(?:import pytest|from pytest\b)|@pytest\./m.test(text) ||
  (/^def test_/m.test(text) && !/\bunittest\b/.test(text));

function usesPytest(part: PartFiles, readNames: string[]): boolean {
  if (part.names.has("pytest.ini")) return true;
  if ([...part.names].some((name) => name === "conftest.py" || name.endsWith("/conftest.py"))) return true;
  if (readNames.some((name) => /\bpytest\b/.test(part.text(name) ?? ""))) return true;
  return testFilesRead(part.names).some((name) => pytestStyle(part.text(name) ?? ""));
}

/** unittest's discovery only enters packages: a tests directory without __init__.py is named. */
function unittestCommand(names: ReadonlySet<string>): string {
  for (const dir of ["tests", "test"]) {
    const has = [...names].some((name) => name.startsWith(`${dir}/`));
    if (has && !names.has(`${dir}/__init__.py`)) return `.venv/bin/python -m unittest discover -s ${dir}`;
  }
  return ".venv/bin/python -m unittest discover";
}

/** pytest collects test_*.py and *_test.py: root tests.py or test.py alone are named to it. */
function pytestCommand(names: ReadonlySet<string>): string {
  const layout = [...names].filter((name) => TEST_LAYOUT.test(name));
  const unnamed = layout.filter((name) => /^tests?\.py$/.test(name));
  const base = ".venv/bin/python -m pytest";
  return layout.length > 0 && unnamed.length === layout.length ? `${base} ${unnamed.sort().join(" ")}` : base;
}

const MANIFESTS = ["pyproject.toml", "setup.cfg", "setup.py", "tox.ini"];

/** Whether the directory names itself a Python project: a project file or a requirements file. */
const hasManifest = (names: ReadonlySet<string>) =>
  MANIFESTS.some((name) => names.has(name)) || [...names].some(isRequirements);

/**
 * A directory that is Python by its test files alone (no project file). parts.ts lets another ecosystem's
 * part in or around it win: a script's test beside a Go module does not make the module a Python project.
 */
export const pythonByTestsOnly = (names: ReadonlySet<string>) =>
  !hasManifest(names) &&
  [...names].some((name) => TEST_LAYOUT.test(name)) &&
  // and the code they test: a lone file named like a test (test data, a scratch script) is no project.
  [...names].some((name) => name.endsWith(".py") && !TEST_LAYOUT.test(name) && !/^tests?\//.test(name));

/** The first few test files, read only when there is no project file to say how the tests run. */
function testFilesRead(names: ReadonlySet<string>): string[] {
  if (hasManifest(names)) return [];
  return [...names]
    .filter((name) => TEST_LAYOUT.test(name))
    .sort()
    .slice(0, TEST_FILES_READ);
}

/** The optional install of a requirements file other than requirements.txt: its lines one by one on failure. */
function requirementsFileInstall(name: string, text: string | undefined): OptionalInstall {
  return optionalInstall(
    `${PIP} -r ${shellWord(name)}`,
    name,
    [],
    text === undefined ? [] : requirementsFileLines(text),
  );
}

function optionalInstall(
  install: string,
  what: string,
  instead: string[],
  each: Requirement[],
): OptionalInstall {
  return {
    install,
    what,
    instead,
    each: each.map((requirement) => ({
      requirement: requirement.text,
      command: `${PIP} ${requirement.args}`,
    })),
  };
}

export const pythonRule: EcosystemRule = {
  ecosystem: "python",
  marks: (names) => hasManifest(names) || pythonByTestsOnly(names),
  reads: (names) => [
    ...["pyproject.toml", "setup.cfg", "tox.ini"].filter((name) => names.has(name)),
    ...[...names].filter(isRequirements).sort(),
    ...testFilesRead(names),
    // A Makefile's `test` target says how a directory with no project file is tested.
    ...(hasManifest(names) ? [] : MAKEFILES.filter((name) => names.has(name)).slice(0, 1)),
  ],
  detect(part) {
    if (!hasManifest(part.names)) {
      const makefile = MAKEFILES.find((name) => part.names.has(name));
      const makeText = makefile === undefined ? undefined : part.text(makefile);
      // `make test` is how its maintainers run the tests: the Makefile rule gives it.
      if (makeText !== undefined && makeHasTestTarget(makeText)) return null;
    }
    const requirements = [...part.names].filter(isRequirements).sort();
    const read = [...["pyproject.toml", "setup.cfg", "tox.ini"], ...requirements];
    const pytest = usesPytest(part, read);
    // The system's packages stay visible (pip installs over them in the venv): pytest from the image's
    // Debian packages needs no PyPI, so a project testing with nothing else sets up and runs offline.
    const setup = [VENV];
    const optional: OptionalInstall[] = [];
    const addOptional = (step: OptionalInstall) => {
      optional.push(step);
      setup.push(optionalCommand(step));
    };
    if (requirements.includes(MAIN_REQUIREMENTS)) setup.push(`${PIP} -r ${MAIN_REQUIREMENTS}`);
    for (const name of requirements.filter((name) => name !== MAIN_REQUIREMENTS)) {
      addOptional(requirementsFileInstall(name, part.text(name)));
    }
    const extras = [
      ...sectionKeys(part.text("pyproject.toml"), "project.optional-dependencies"),
      ...sectionKeys(part.text("setup.cfg"), "options.extras_require"),
    ];
    const extra = TEST_EXTRAS.find((name) => extras.includes(name));
    if (installable(part)) {
      if (extra === undefined) setup.push(`${PIP} -e .`);
      else {
        // The extra is optional: when it cannot be installed, the project alone, then the extra's
        // requirements one by one (a test plugin installs though a linter beside it does not).
        const project = projectExtras(part.text("pyproject.toml"), part.text("setup.cfg"));
        addOptional(
          optionalInstall(
            `${PIP} -e ".[${extra}]"`,
            `the \`${extra}\` extra`,
            [`${PIP} -e .`],
            extraRequirements(project, extra),
          ),
        );
      }
    }
    // Already installed (a pinned one included) it is left as it is; otherwise the runner is added.
    if (pytest) setup.push(`${PIP} pytest`);
    const tests = [...part.names].filter((name) => TEST_LAYOUT.test(name)).sort();
    const evidence = hasManifest(part.names)
      ? [
          ...MANIFESTS.filter((name) => part.names.has(name)),
          ...requirements,
          ...(extra ? [`extra [${extra}]`] : []),
        ]
      : [`${tests[0]}${tests.length > 1 ? ` and ${tests.length - 1} more test files` : ""}, no project file`];
    return {
      evidence: [...evidence, pytest ? "pytest" : "unittest"],
      setup,
      test: pytest ? pytestCommand(part.names) : unittestCommand(part.names),
      ...(optional.length ? { optional } : {}),
    };
  },
};
